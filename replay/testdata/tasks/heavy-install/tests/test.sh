#!/bin/sh
if grep -q installed /root/installed 2>/dev/null; then
  echo 1 > /logs/verifier/reward.txt
else
  echo "no /root/installed"
  echo 0 > /logs/verifier/reward.txt
fi
