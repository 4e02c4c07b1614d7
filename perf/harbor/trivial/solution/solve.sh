#!/bin/sh
mkdir -p /app && echo hello > /app/out.txt
