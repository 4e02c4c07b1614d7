#!/bin/bash
echo fitted > /app/out.txt
