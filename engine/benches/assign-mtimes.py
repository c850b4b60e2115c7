#!/usr/bin/env python3
"""assign-mtimes.py TREE [SEED]

Gives every file and directory under TREE (TREE itself excluded) a
distinct, reproducible modification time, so rg's `--sort=modified` order
of a freshly checked-out tree (whose mtimes are all within a second or
two) is the same on every machine: the entries' relative paths, sorted
bytewise, are shuffled with random.Random(SEED) (default 1) and the i-th
gets 2020-09-13 12:26:40 UTC + 61 * i seconds. Symbolic links are left
alone. Used by docs/sampling.md's measurements (engine/benches/sampling.rs).
"""
import os
import random
import sys

if len(sys.argv) < 2:
    sys.exit(__doc__)
tree = sys.argv[1]
seed = int(sys.argv[2]) if len(sys.argv) > 2 else 1
entries = []
for top, dirs, files in os.walk(tree):
    for name in dirs + files:
        full = os.path.join(top, name)
        if not os.path.islink(full):
            entries.append(os.fsencode(os.path.relpath(full, tree)))
entries.sort()
random.Random(seed).shuffle(entries)
BASE = 1_600_000_000
# Files first, then directories: writing a file's time never touches its
# directory's, but set the directories last anyway.
order = sorted(range(len(entries)), key=lambda i: os.path.isdir(os.path.join(os.fsencode(tree), entries[i])))
for i in order:
    t = BASE + 61 * i
    os.utime(os.path.join(os.fsencode(tree), entries[i]), (t, t), follow_symlinks=False)
print(f"{len(entries)} entries of {tree} given distinct mtimes (seed {seed})")
