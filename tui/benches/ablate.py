#!/usr/bin/env python3
"""The performance check of `workbench ablate`: with 6 variants against a
plain `workbench replay` of the same files (a benchmark, not a timed test).

Usage: ablate.py REPS WORKBENCH_BINARY [TRANSCRIPT ...]

Default transcript: fixtures/transcripts/futures-util-session.jsonl (the
shipped corpus, 113 calls). Run from the repository root. Each repetition
runs, in alternating order, `workbench replay FILES` and `workbench ablate
FILES --set globMaxResults=50,100,200 --set grepMaxMatches=50,250` (6
variants + the baseline), measuring wall time, CPU of the whole process
tree (workbench, bash, rg) and the peak resident set of the process. Prints
the medians and the ratio ablate / replay of the medians. Both load the
tokenizer (the corpus's records carry token counts, so replay counts too).
Build with `cargo build --release -p fs-search-workbench`.
"""
import os
import resource
import statistics
import subprocess
import sys
import time

SETS = ["--set", "globMaxResults=50,100,200", "--set", "grepMaxMatches=50,250"]


def run(cmd):
    """Wall seconds, CPU seconds of the process tree, peak RSS in MiB."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(cmd)} failed: {proc.stderr.read().decode()}")
    # wait4's usage covers the child itself; its children (bash, rg) are
    # only in RUSAGE_CHILDREN, which also holds every earlier run: the
    # difference around the run is the tree's CPU.
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


def main():
    reps, binary = int(sys.argv[1]), sys.argv[2]
    files = sys.argv[3:] or ["fixtures/transcripts/futures-util-session.jsonl"]
    commands = {
        "replay": [binary, "replay", *files],
        "ablate": [binary, "ablate", *files, *SETS],
    }
    figures = {name: [] for name in commands}
    for rep in range(reps):
        order = list(commands) if rep % 2 == 0 else list(reversed(commands))
        for name in order:
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            wall, _, rss = run(commands[name])
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            figures[name].append((wall, cpu, rss))
    medians = {}
    for name, runs in figures.items():
        wall = statistics.median(r[0] for r in runs)
        cpu = statistics.median(r[1] for r in runs)
        rss = statistics.median(r[2] for r in runs)
        medians[name] = (wall, cpu, rss)
        print(f"{name:7} wall {wall:7.3f} s  cpu {cpu:7.3f} s  peak RSS {rss:6.1f} MiB  ({reps} runs, medians)")
    ratio_wall = medians["ablate"][0] / medians["replay"][0]
    ratio_cpu = medians["ablate"][1] / medians["replay"][1]
    print(f"ablate / replay: wall {ratio_wall:.2f}x, cpu {ratio_cpu:.2f}x (target: at most 2x)")


if __name__ == "__main__":
    main()
