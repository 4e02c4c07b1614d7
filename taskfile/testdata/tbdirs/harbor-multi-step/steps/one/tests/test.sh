#!/bin/bash
source /tests/helpers.sh
[ -f /app/out.txt ] && pass
