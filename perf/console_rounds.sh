#!/usr/bin/env bash
# Console cost of two headroom builds side by side, interleaved in rounds:
# each runs `demo --concurrency 8` (600 trials, so 8 run throughout) in a
# 200×50 tmux pane for 40 s under
# /usr/bin/time -v, then quits. A first, unmeasured run of each builds its
# workload image.
#   perf/console_rounds.sh OLD_BINARY NEW_BINARY [ROUNDS]
set -euo pipefail
a=$1; b=$2; rounds=${3:-3}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
run() { # binary label
  local tf="$out/time.txt" s="hr-rounds-$$"
  rm -f "$tf"
  tmux new-session -d -s "$s" -x 200 -y 50 "/usr/bin/time -v -o $tf $1 demo --concurrency 8 --repeats 200 --seed 1 --theme plain --out $out/exp"
  local start; start=$(date +%s.%N)
  sleep 40 # the measured period itself
  tmux send-keys -t "$s" q; sleep 1; tmux send-keys -t "$s" y
  for _ in $(seq 120); do grep -q "Maximum resident" "$tf" 2>/dev/null && break; sleep 0.5; done
  local end; end=$(date +%s.%N)
  tmux kill-session -t "$s" 2>/dev/null || true
  [ "$2" = warmup ] && return
  python3 - "$tf" "$start" "$end" "$2" <<'PY'
import sys
f, start, end, label = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
t = {l.split(":")[0].strip(): l.rsplit(":", 1)[1].strip() for l in open(f) if ":" in l}
cpu = float(t["User time (seconds)"]) + float(t["System time (seconds)"])
print(f"{label}: {cpu:.2f} s CPU over {end - start:.1f} s = {100 * cpu / (end - start):.2f}% of a core, peak RSS {int(t['Maximum resident set size (kbytes)']) // 1024} MiB")
PY
}
run "$a" warmup; run "$b" warmup
for _ in $(seq "$rounds"); do run "$a" "$a"; run "$b" "$b"; done
