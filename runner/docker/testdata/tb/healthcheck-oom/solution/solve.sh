echo done > /tmp/agent-ok
