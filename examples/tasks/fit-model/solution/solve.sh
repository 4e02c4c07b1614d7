#!/bin/bash
# The reference solution: load everything, with a generous in-memory copy
# (~120 MB) the way a quick script would.
cd /app
wc -l data.csv
python3 - <<'PY'
rows = [tuple(map(float, l.split(","))) for l in open("/app/data.csv")]
cache = [bytearray(1024 * 1024) for _ in range(120)]   # the heavy part
n = len(rows); sx = sum(x for x, _ in rows); sy = sum(y for _, y in rows)
sxx = sum(x * x for x, _ in rows); sxy = sum(x * y for x, y in rows)
a = (n * sxy - sx * sy) / (n * sxx - sx * sx); b = (sy - a * sx) / n
open("/app/fit.txt", "w").write(f"{a} {b}\n")
print("fit", a, b)
PY
echo done
