#!/bin/bash
set -uo pipefail
cd /testbed

# Run the tests, recording their output.
LOG_FILE=$(mktemp)
python3 $TEST_DIR/test_calc.py 2>&1 | tee "$LOG_FILE" || true

# The grader: resolved when every FAIL_TO_PASS and PASS_TO_PASS test passed.
cat > /tmp/grade.py <<'PY'
import os
log = open(os.environ["LOG_FILE"]).read()
tests = ["tests/test_calc.py::test_add", "tests/test_calc.py::test_mul"]
resolved = all(f"PASSED {t}" in log for t in tests)
print("SWEBench results starts here")
print("PASSED" if resolved else "FAILED")
print("SWEBench results ends here")
PY
LOG_FILE=$LOG_FILE python3 /tmp/grade.py
