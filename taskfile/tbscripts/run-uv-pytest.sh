#!/bin/bash
# headroom's own run-uv-pytest.sh, for older terminal-bench tasks that name
# it in test_scripts: runs the task's tests/test_outputs.py with pytest in
# the project setup-uv-pytest.sh made, printing the -rA summary that
# terminal-bench's pytest parser reads.
uv run pytest "$TEST_DIR/test_outputs.py" -rA
