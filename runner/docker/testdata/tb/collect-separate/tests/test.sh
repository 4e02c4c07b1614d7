#!/bin/bash
# Grades only what was collected: the patch of the agent's commits,
# applied to this container's own checkout (which has no network).
cd /app
reward() { echo "$1" > /logs/verifier/reward.txt; exit 0; }
ls /sys/class/net
if [ -s /logs/artifacts/model.patch ]; then
  git apply /logs/artifacts/model.patch || reward 0
else
  echo "no committed work collected"
fi
[ "$(cat answer.txt)" = 42 ] && reward 1
reward 0
