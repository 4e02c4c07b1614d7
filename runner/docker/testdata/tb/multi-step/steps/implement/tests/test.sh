#!/bin/bash
source /tests/helpers.sh
# This step's env over the task's, its own fixture beside it, the
# workdir's setup.sh gone after it ran, and the last step's reward cleared.
[ "$SHARED" = from-task ] || fail
[ -e /logs/verifier/reward.txt ] && fail
[ ! -e /app/setup.sh ] || fail
[ -f /app/setup-ran ] || fail
[ "$(/app/greet.sh)" = "$EXPECTED_GREETING" ] || fail
[ "$(/app/greet.sh)" = "$(cat /tests/expected.txt)" ] && pass
fail
