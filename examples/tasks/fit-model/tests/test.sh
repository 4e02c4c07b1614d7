#!/bin/bash
# Harbor's convention: write the reward, whatever happens.
if python3 -c "
a, b = map(float, open('/app/fit.txt').read().split())
assert abs(a - 2) < 0.01 and abs(b - 1) < 0.1
"; then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi
