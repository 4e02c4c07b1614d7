#!/bin/bash
# The agent phase has no network (its [agent] network_mode).
[ "$(ls /sys/class/net)" = lo ] || { echo "the agent has a network: $(ls /sys/class/net)"; exit 3; }
cd /app
echo 42 > answer.txt
# Only committed work is graded.
git add -A
git commit -qm "Apply reference solution"
