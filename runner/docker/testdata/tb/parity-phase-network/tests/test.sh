# The agent saw only lo; the verifier sees lo and the bridge.
echo "agent: $(cat /tmp/agent-net)  verifier: $(ls /sys/class/net | tr '\n' ' ')"
if [ "$(cat /tmp/agent-net)" = "lo " ] && [ "$(ls /sys/class/net | wc -l)" -ge 2 ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
