#!/bin/bash
set -euo pipefail
python -m pytest /app/tests/test_outputs.py --tb=short -rA --color=no --disable-warnings -v
