#!/bin/bash
set -e
cd /app
source $TEST_DIR/setup-uv-pytest.sh
bash $TEST_DIR/run-uv-pytest.sh
