#!/bin/bash
source /tests/helpers.sh
[ "$SHARED" = from-task ] || fail
[ "$(/app/greet.sh 2>/dev/null)" = hello ] && pass
fail
