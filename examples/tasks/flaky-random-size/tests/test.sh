#!/bin/bash
# Harbor's convention: write the reward, whatever happens.
mkdir -p /logs/verifier
if python3 -c "
rows, total = map(int, open('/app/summary.txt').read().split())
assert rows == 50000 and total == sum(i % 97 for i in range(50000))
"; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
