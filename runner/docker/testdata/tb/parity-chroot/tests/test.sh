if [ -c /tmp/null-copy ] && grep -q done /tmp/out.txt; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
