#!/usr/bin/env python3
"""Whole `workbench call` processes against the raw rg command.

Usage: workbench_call.py TREE REPS WORKBENCH_BINARY [WORKBENCH_BINARY ...]
       workbench_call.py --small [TREE] REPS WORKBENCH_BINARY [WORKBENCH_BINARY ...]

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

`--small` is the everyday case: the 50-file tree of `make-small-tree.sh`
(default /tmp/fsb-small, generated when missing), `workbench call grep
{"pattern":"alpha"} --no-spill` (50 matches) against `bash -c "rg --json
--regexp='alpha' </dev/null"`; every side's stdout is read from a pipe to
its end. It also prints the medians in milliseconds and the median
difference to the raw command.
"""
import resource
import shutil
import statistics
import subprocess
import sys
import os
import tempfile
import time

RAW = ["bash", "-c", "rg --json --regexp='Err' | cat >/dev/null"]


SMALL_RAW = ["bash", "-c", "rg --json --regexp='alpha' </dev/null"]
MAKE_SMALL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make-small-tree.sh")


def run(cmd, tree, piped=False):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    if piped:
        # The output read from a pipe, as a caller reads it (rg may stop
        # early when its stdout is /dev/null).
        proc = subprocess.Popen(cmd, cwd=tree, stdin=subprocess.DEVNULL,
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        out = proc.stdout.read()
        if proc.wait() != 0 or out.count(b"alpha_") < 50:
            sys.exit(f"{cmd[0]}: exit {proc.returncode}, {len(out)} bytes")
    else:
        subprocess.run(cmd, cwd=tree, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                       check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def main():
    argv = sys.argv[1:]
    small = argv[:1] == ["--small"]
    if small:
        argv = argv[1:]
        if not argv[0].isdigit():
            tree, argv = argv[0], argv[1:]
        else:
            tree = "/tmp/fsb-small"
        if not os.path.isdir(tree):
            subprocess.run(["bash", MAKE_SMALL, tree], check=True)
        reps, binaries = int(argv[0]), argv[1:]
    else:
        tree, reps, binaries = argv[0], int(argv[1]), argv[2:]
    spill = tempfile.mkdtemp(prefix="workbench-call-spill-")
    config = ["--config", '{"sampleOverCapGlobResults": true}']
    if small:
        raw = SMALL_RAW
        call = ["call", "grep", "--workdir", tree, "--args", '{"pattern":"alpha"}',
                "--no-spill", *config]
    else:
        raw = RAW
        call = ["call", "grep", "--workdir", tree, "--args", '{"pattern":"Err"}',
                "--spill-dir", spill, *config]
    ratios = {b: ([], []) for b in binaries}
    walls = {b: [] for b in ["raw", *binaries]}
    try:
        for i in range(reps):
            order = binaries[i % len(binaries):] + binaries[: i % len(binaries)]
            before = run(raw, tree, small)
            got = {b: run([b, *call], tree, small) for b in order}
            after = run(raw, tree, small)
            raw_wall, raw_cpu = (before[0] + after[0]) / 2, (before[1] + after[1]) / 2
            walls["raw"].append(raw_wall)
            for b in binaries:
                ratios[b][0].append(got[b][0] / raw_wall)
                ratios[b][1].append(got[b][1] / raw_cpu)
                walls[b].append(got[b][0])
    finally:
        shutil.rmtree(spill, ignore_errors=True)
    raw_ms = statistics.median(walls["raw"]) * 1e3
    if small:
        print(f"raw: median {raw_ms:.2f} ms")
    for b in binaries:
        wall, cpu = ratios[b]
        line = (f"{b}: wall / raw median {statistics.median(wall):.3f}, "
                f"process-tree CPU / raw median {statistics.median(cpu):.3f}, n = {reps}")
        if small:
            ms = statistics.median(walls[b]) * 1e3
            line += f"; median {ms:.2f} ms (+{ms - raw_ms:.2f} ms)"
        print(line)


if __name__ == "__main__":
    main()
