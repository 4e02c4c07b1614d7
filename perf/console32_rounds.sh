#!/usr/bin/env bash
# The console's cost with 32 live trials, two headroom builds side by side,
# interleaved in rounds: each opens the console on perf/testdata in a
# 200×50 tmux pane, starts perf/live at concurrency 32 from the setup
# screen, waits for 32 to run, reads its CPU time from /proc over 20 s,
# then quits (which stops and removes the trials). make bench's row 7 is
# the same measure for one build.
#   perf/console32_rounds.sh OLD_BINARY NEW_BINARY [ROUNDS]
set -euo pipefail
a=$1; b=$2; rounds=${3:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cd "$(dirname "$0")"
run() { # binary
  local s="hr-rounds32-$$" pid t0 t1 s0 s1 i
  tmux new-session -d -s "$s" -x 200 -y 50 "exec $1 --tasks-dir testdata --concurrency 32 --repeats 12 --theme plain --out $out/exp"
  pid=$(tmux display-message -p -t "$s" '#{pane_pid}')
  for i in $(seq 100); do tmux capture-pane -p -t "$s" | grep -q perf/live && break; sleep 0.3; done
  tmux send-keys -t "$s" /; tmux send-keys -t "$s" -l perf/live; tmux send-keys -t "$s" Enter Space Enter
  for i in $(seq 600); do tmux capture-pane -p -t "$s" | grep -q 'running 32 · queued' && break; sleep 0.2; done
  t0=$(awk '{print $14+$15}' "/proc/$pid/stat"); s0=$(date +%s.%N)
  sleep 20 # the measured period itself
  t1=$(awk '{print $14+$15}' "/proc/$pid/stat"); s1=$(date +%s.%N)
  python3 -c "print('$1: %.1f%% of a core over %.1f s, $(grep VmHWM "/proc/$pid/status" | tr -s '\t ' ' ')' % (($t1 - $t0) / ($s1 - $s0), $s1 - $s0))"
  tmux send-keys -t "$s" q; sleep 1; tmux send-keys -t "$s" y
  for i in $(seq 240); do [ -d "/proc/$pid" ] || break; sleep 0.5; done
  tmux kill-session -t "$s" 2>/dev/null || true
}
for _ in $(seq "$rounds"); do run "$a"; run "$b"; done
