#!/bin/sh
mkdir -p /logs/verifier
if grep -qx hello /app/out.txt; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
