#!/usr/bin/env bash
# make-small-tree.sh OUTDIR
#
# The small case: the tree an agent's everyday call searches.
# 50 text files in 5 directories (25 `.rs`, 25 `.md`, 30 lines each), each
# with exactly one line containing `alpha`: `grep alpha` finds 50 matches
# (27 KB of `rg --json`, far under every cap, nothing spilled) and
# `glob *.rs` lists 25 files. Deterministic; OUTDIR must not exist. Only
# needs bash + python3 (stdlib).
set -euo pipefail
if [ $# -ne 1 ]; then
  echo "usage: $0 OUTDIR" >&2; exit 2
fi
OUT=$1
if [ -e "$OUT" ]; then echo "$OUT exists; remove it first" >&2; exit 1; fi
exec python3 - "$OUT" <<'PY'
import os, sys

out = sys.argv[1]
base = 1600000000  # 2020-09-13, as make-tree.sh
for d in range(5):
    for f in range(10):
        n = d * 10 + f
        ext = "rs" if f % 2 == 0 else "md"
        path = os.path.join(out, f"mod{d}", f"file{n:02}.{ext}")
        os.makedirs(os.path.dirname(path), exist_ok=True)
        lines = [f"// line {i} of file {n}: beta gamma delta {i * n}" for i in range(30)]
        lines[7 + n % 20] = f"let alpha_{n} = compute(beta, {n}); // the match"
        with open(path, "w") as fh:
            fh.write("\n".join(lines) + "\n")
        os.utime(path, (base + n * 61, base + n * 61))
PY
