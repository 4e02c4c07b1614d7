#!/bin/bash
# Reach the sidecar by its service name from the task's container.
exec 3<>"/dev/tcp/$ECHO_HOST/7000"
read -r greeting <&3
echo "the sidecar said: $greeting (from $(pwd))"
echo "mark $(cat /mark), $(cat /tmp/started)"
# The volume the sidecar writes is mounted read-only here.
shared=$(cat /srv/shared/greeting)
if touch /srv/shared/forged 2>/dev/null; then readonly=no; else readonly=yes; fi
echo "shared volume: $shared (read-only: $readonly)"
if [ "$greeting" = "hello from the sidecar" ] && [ "$(pwd)" = /srv ] && [ "$(cat /mark)" = from-compose ] && [ -f /tmp/started ] &&
  [ "$shared" = "$greeting" ] && [ "$readonly" = yes ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
