#!/usr/bin/env python3
"""How far rg 13's `--sort=modified` order is from a global mtime order.

Usage: python3 engine/benches/glob_order.py TREE
(docs/performance.md, the globSortInEngine opt-in). Lists TREE with the
contract's glob command for `*`, sorts the same paths by (mtime, path
bytes) and prints how the two orders differ.
"""
import os
import subprocess
import sys

tree = sys.argv[1]
excludes = []
for name in [".git", ".svn", ".hg", ".bzr", ".jj", ".sl"]:
    excludes += [f"--glob=!**/{name}", f"--glob=!**/{name}/**"]
out = subprocess.run(
    ["rg", "--files", "--glob=*", "--sort=modified", "--no-ignore", "--hidden"] + excludes,
    cwd=tree, capture_output=True, check=False,
).stdout
paths = [p for p in out.split(b"\n") if p]


def key(p):
    try:
        return (os.lstat(os.path.join(os.fsencode(tree), p)).st_mtime_ns, p)
    except OSError:
        return (-1, p)


glob = sorted(paths, key=key)
n = len(paths)
same = sum(a == b for a, b in zip(paths, glob))
pos = {p: i for i, p in enumerate(glob)}
disp = sum(abs(i - pos[p]) for i, p in enumerate(paths)) / n
inv = sum(1 for a, b in zip(paths, paths[1:]) if key(a) > key(b))
top = len(set(paths[:100]) & set(glob[:100]))
span_rg = max(key(p)[0] for p in paths[:100]) - min(key(p)[0] for p in paths[:100])
span_global = key(glob[99])[0] - key(glob[0])[0]
day = 1e9 * 86400
print(
    f"{tree}: {n} paths; same position {same}; mean displacement {disp:.0f} "
    f"({100 * disp / n:.1f}% of n); adjacent pairs out of global order {inv} "
    f"({100 * inv / (n - 1):.1f}%); first-100 overlap {top}/100; first-100 mtime span "
    f"{span_rg / day:.1f} days (rg) vs {span_global / day:.1f} days (global)"
)
