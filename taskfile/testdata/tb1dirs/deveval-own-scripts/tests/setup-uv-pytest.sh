#!/bin/bash
echo the task s own setup
