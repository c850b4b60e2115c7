#!/usr/bin/env bash
# freeze-real-size.sh WORKBENCH TREE OUTDIR [CALLS]
#
# The size and time of `workbench freeze` on a real-size repository
# (docs/transcripts.md#minimal-fixture-trees): records 15 varied calls on
# TREE (a u-boot-sized tree: a checkout, or a generated tree of 38k files)
# with `workbench record`, freezes them into OUTDIR, and prints the
# tree's bytes, the fixture's bytes (manifest and transcript) and the
# freeze's wall time. A measurement, not a test: run it by hand.
# CALLS, when given, is a file of `workbench record` calls to use instead
# of the generated tree's (uboot-calls.jsonl: 15 calls on a u-boot
# checkout); `@TREE@` in it stands for TREE's absolute path.
set -euo pipefail
if [ $# -ne 3 ] && [ $# -ne 4 ]; then
  echo "usage: $0 WORKBENCH TREE OUTDIR [CALLS]" >&2; exit 2
fi
WB=$1 TREE=$(cd "$2" && pwd) OUT=$3
mkdir -p "$OUT"
call() { printf '{"call":"%s","tool":"%s","args":%s}\n' "$1" "$2" "$3"; }
if [ $# -eq 4 ]; then
  sed "s|@TREE@|$TREE|g" "$4" > "$OUT/calls.jsonl"
else
{
  call glob-c glob '{"pattern":"**/*.c"}'
  call glob-md glob '{"pattern":"**/*.md"}'
  call glob-toml-core glob '{"pattern":"*.toml","path":"core"}'
  call glob-minjs glob '{"pattern":"**/*.min.js"}'
  call glob-missing glob '{"pattern":"*","path":"no_such_dir"}'
  call grep-unique grep '{"pattern":"NEEDLE_UNIQUE_7f3a"}'
  call grep-rare grep '{"pattern":"RARE_MARKER_q9"}'
  call grep-todo-rs grep '{"pattern":"TODO","include":"*.rs","path":"net"}'
  call grep-einval-c grep '{"pattern":"return -EINVAL","include":"*.c","path":"driver"}'
  call grep-regex-error grep '{"pattern":"(unclosed"}'
  call grep-missing grep '{"pattern":"x","path":"no_such_dir"}'
  call grep-empty-lines grep '{"pattern":"^$","path":"core/core_19"}'
  call grep-impl-for grep '{"pattern":"impl \\w+ for \\w+","include":"*.rs","path":"fs"}'
  call grep-error-txt grep '{"pattern":"error: .* failed","include":"*.txt","path":"net"}'
  call grep-absolute grep "{\"pattern\":\"TODO\",\"path\":\"$TREE/api\"}"
} > "$OUT/calls.jsonl"
fi
"$WB" record --tree "$TREE" --config '{"sampleOverCapGlobResults":true}' \
  --out "$OUT/session.jsonl" < "$OUT/calls.jsonl"
start=$(date +%s.%N)
"$WB" freeze "$OUT/session.jsonl" --workdir "$TREE" \
  --out "$OUT/fixture/session.jsonl" --tree-out "$OUT/fixture/tree"
end=$(date +%s.%N)
tree_bytes=$(du -sb --apparent-size "$TREE" | cut -f1)
fixture_bytes=$(du -sb --apparent-size "$OUT/fixture" | cut -f1)
python3 - "$tree_bytes" "$fixture_bytes" "$start" "$end" <<'PY'
import sys
tree, fixture, start, end = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
print(f"tree {tree} bytes; fixture {fixture} bytes ({100 * fixture / tree:.2f} % of the tree); freeze {end - start:.1f} s")
PY
