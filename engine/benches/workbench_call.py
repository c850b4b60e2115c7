#!/usr/bin/env python3
"""Issue 11's own method: whole `workbench call` processes against the raw rg command.

Usage: workbench_call.py TREE REPS WORKBENCH_BINARY [WORKBENCH_BINARY ...]

Each repetition runs `bash -c "rg --json --regexp='Err' | cat >/dev/null"`
in TREE, every binary's `workbench call grep {"pattern":"Err"}` (rotating
order, spilling into a temporary directory), and the raw command again. A
binary's ratio for the repetition is its wall time (and the CPU of its
whole process tree: workbench, bash, rg) over the mean of the two raw runs
around it (bash, rg, cat). Prints the medians. Unlike compare.py, this
includes the one-shot process's start: the binary and the load's
`command -v rg` probe. Build with `cargo build --release -p
fs-search-workbench` and copy `target/release/workbench` aside; the tree is
`engine/benches/make-tree.sh OUT 10000`.
"""
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

RAW = ["bash", "-c", "rg --json --regexp='Err' | cat >/dev/null"]


def run(cmd, tree):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(cmd, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    tree, reps, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    spill = tempfile.mkdtemp(prefix="workbench-call-spill-")
    call = ["call", "grep", "--workdir", tree, "--args", '{"pattern":"Err"}',
            "--spill-dir", spill, "--config", '{"sampleOverCapGlobResults": true}']
    ratios = {b: ([], []) for b in binaries}
    try:
        for i in range(reps):
            order = binaries[i % len(binaries):] + binaries[: i % len(binaries)]
            before = run(RAW, tree)
            got = {b: run([b, *call], tree) for b in order}
            after = run(RAW, tree)
            raw_wall, raw_cpu = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
            for b in binaries:
                ratios[b][0].append(got[b][0] / raw_wall)
                ratios[b][1].append(got[b][1] / raw_cpu)
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    for b in binaries:
        wall, cpu = ratios[b]
        print(f"{b}: wall / raw median {statistics.median(wall):.3f}, "
              f"process-tree CPU / raw median {statistics.median(cpu):.3f}, n = {reps}")


if __name__ == "__main__":
    main()
