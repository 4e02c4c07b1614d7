#!/bin/bash
# Stands for the task's own tests/test.sh (it scores the submitted policy).
echo 0 > /logs/verifier/reward.txt
