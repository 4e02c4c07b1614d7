ls /sys/class/net | tr '\n' ' ' > /tmp/agent-net
