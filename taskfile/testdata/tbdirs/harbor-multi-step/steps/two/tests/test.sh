#!/bin/bash
source /tests/helpers.sh
grep -q two /app/out.txt && pass
