#!/usr/bin/env python3
"""Compare engine builds on one case of the `calls` bench, in one run.

Usage: compare.py CASE_INDEX REPS BENCH_BINARY [BENCH_BINARY ...]

Each repetition runs the raw rg command (`--child raw`, from the first
binary), every binary's engine call (`--child engine`, in rotating order),
and the raw command again; a binary's ratio for the repetition is its wall
time over the mean of the two raw runs around it. Prints, per binary, the
median of those ratios (with quartiles) and the median of engine CPU over
rg's CPU. Build a binary with `cargo bench -p fs-search-engine --bench
calls --no-run` and copy `target/release/deps/calls-*` aside. CASE_INDEX
is the case's place in `cases()` in calls.rs, from 0 (0: glob `*` on the
10k tree, sampling on; 4: the same on the 200k tree; 10: glob `*` on
u-boot; 13: grep `u32` on u-boot; 15: grep `Err` on the 10k tree, 19 MB
of `--json`).
"""
import statistics
import subprocess
import sys


def run(binary, mode, case):
    out = subprocess.run([binary, "--child", mode, case], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("SAMPLE"):
            fields = line.split("\t")
            return float(fields[1]), float(fields[2]), float(fields[3])
    raise SystemExit(f"{binary} --child {mode} {case} printed no sample")


def main():
    case, reps, binaries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    wall = {b: [] for b in binaries}
    cpu = {b: [] for b in binaries}
    for i in range(reps):
        order = binaries[i % len(binaries):] + binaries[: i % len(binaries)]
        before = run(binaries[0], "raw", case)
        engine = {b: run(b, "engine", case) for b in order}
        after = run(binaries[0], "raw", case)
        raw = (before[0] + after[0]) / 2
        for b in binaries:
            wall[b].append(engine[b][0] / raw)
            cpu[b].append(engine[b][1] / engine[b][2])
    for b in binaries:
        ratios = sorted(wall[b])
        q1, q3 = ratios[len(ratios) // 4], ratios[3 * len(ratios) // 4]
        print(
            f"{b}: wall / raw median {statistics.median(ratios):.3f} "
            f"(quartiles {q1:.3f}-{q3:.3f}), engine CPU / rg CPU "
            f"median {statistics.median(cpu[b]):.3f}, n = {reps}"
        )


if __name__ == "__main__":
    main()
