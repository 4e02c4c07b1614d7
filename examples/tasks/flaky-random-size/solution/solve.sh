#!/bin/bash
# The reference solution. Its working set is drawn at random on every run
# (from os.urandom: no seed, so no two runs are alike): 160 MiB plus up to
# 310 MiB more, as a real task whose memory depends on what it fetched, a
# thread pool's timing, or a hash seed.
cd /app
python3 - <<'PY'
import os
extra = int.from_bytes(os.urandom(2), "big") % 311
need = 160 + extra
print(f"working set this run: {need} MiB", flush=True)
held = []
for _ in range(need // 8):
    chunk = bytearray(8 * 1024 * 1024)
    for i in range(0, len(chunk), 4096):
        chunk[i] = 1
    held.append(chunk)
rows = total = 0
for line in open("/app/events.csv"):
    rows += 1
    total += int(line.split(",")[1])
open("/app/summary.txt", "w").write(f"{rows} {total}\n")
print("summary", rows, total)
PY
