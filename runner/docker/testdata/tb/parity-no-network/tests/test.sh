# Only the loopback interface: no network at all.
ls /sys/class/net
if [ "$(ls /sys/class/net)" = lo ]; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
