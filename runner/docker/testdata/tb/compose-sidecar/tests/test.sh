#!/bin/bash
# Reach the sidecar by its service name from the task's container.
exec 3<>"/dev/tcp/$ECHO_HOST/7000"
read -r greeting <&3
echo "the sidecar said: $greeting (from $(pwd))"
if [ "$greeting" = "hello from the sidecar" ] && [ "$(pwd)" = /srv ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
