#!/bin/bash
pytest -rA tests/
