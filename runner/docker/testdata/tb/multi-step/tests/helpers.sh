# Shared by each step's test.sh: the top-level tests/ is merged with the step's.
pass() { echo 1 > /logs/verifier/reward.txt; exit 0; }
fail() { echo 0 > /logs/verifier/reward.txt; exit 0; }
