#!/usr/bin/env bash
# Builds the large tree of the `explain` bench: the Linux 6.1
# sources as Debian ships them, made a git work tree (so rg applies their
# .gitignore files) and dressed as after a build, so that the ignore rules
# exclude real numbers of files. Nothing is compiled: a build's outputs are
# stood in for by small files with the names a build gives them.
#
# Usage: tui/benches/make-linux-tree.sh [DEST]    (default /work/bench/linux)
# Needs: the Debian package linux-source-6.1 (apt-get install -y
# linux-source-6.1, which installs /usr/src/linux-source-6.1.tar.xz), git,
# python3. DEST must not exist. Then:
#   EXPLAIN_BENCH_TREE=DEST cargo bench -p fs-search-workbench --bench explain
#
# What it changes: the top .gitignore loses the block Debian appends.
# What it adds (all of it matched by the sources' own .gitignore files):
# - for every `*.c` outside Documentation/, samples/, scripts/ and tools/:
#   `NAME.o` (an ELF header, NUL bytes included) and `.NAME.o.cmd` (the
#   dependency line kbuild writes), as `make` would leave them;
# - `.config`, `vmlinux`, `System.map`, `Module.symvers`, `modules.order`;
# - `include/generated/` and `include/config/` (a few hundred headers),
#   `arch/x86/include/generated/asm/`.
# No commit is made: rg needs only the `.git` directory to apply .gitignore.
set -euo pipefail

dest=${1:-/work/bench/linux}
tarball=/usr/src/linux-source-6.1.tar.xz
if [[ -e $dest ]]; then
    echo "$dest exists; remove it or name another" >&2
    exit 2
fi
if [[ ! -f $tarball ]]; then
    echo "$tarball is missing: apt-get install -y linux-source-6.1" >&2
    exit 2
fi
mkdir -p "$dest"
tar -xJf "$tarball" -C "$dest" --strip-components=1
git -C "$dest" init --quiet
# Debian's packaging appends `/*` and `!/debian/` to the top .gitignore
# (its own git repository holds only debian/); drop that block, so that
# the rules are the kernel's own.
python3 - "$dest/.gitignore" <<'PY'
import sys
path = sys.argv[1]
text = open(path).read()
cut = text.find("#\n# Debian packaging")
if cut >= 0:
    open(path, "w").write(text[:cut].rstrip("\n") + "\n")
PY
python3 - "$dest" <<'PY'
import os, sys

root = sys.argv[1]
skip = {"Documentation", "samples", "scripts", "tools"}
elf = b"\x7fELF\x02\x01\x01\x00" + b"\x00" * 56 + b"kernel object stand-in\n"
sources = []
for top in sorted(os.listdir(root)):
    if top in skip or top.startswith(".") or not os.path.isdir(os.path.join(root, top)):
        continue
    for d, dirs, files in os.walk(os.path.join(root, top)):
        dirs.sort()
        sources.extend(os.path.join(d, f) for f in sorted(files) if f.endswith(".c"))
for c in sources:
    d, name = os.path.split(c)
    obj = name[:-2] + ".o"
    with open(os.path.join(d, obj), "wb") as f:
        f.write(elf)
    with open(os.path.join(d, "." + obj + ".cmd"), "w") as f:
        f.write(f"cmd_{obj} := gcc -c -o {obj} {name}\nsource_{obj} := {name}\n")

def write(rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(data)

write(".config", b"CONFIG_64BIT=y\nCONFIG_X86_64=y\n")
write("vmlinux", elf * 64)
write("System.map", b"ffffffff81000000 T _text\n" * 1000)
write("Module.symvers", b"0x00000000\tprintk\tvmlinux\tEXPORT_SYMBOL\t\n" * 100)
write("modules.order", b"drivers/net/dummy.ko\n")
for i in range(300):
    write(f"include/config/option_{i:03}", b"")
for name in ("autoconf.h", "bounds.h", "compile.h", "utsrelease.h", "asm-offsets.h"):
    write(f"include/generated/{name}", b"#define CONFIG_64BIT 1\n")
for i in range(100):
    write(f"arch/x86/include/generated/asm/gen_{i:03}.h", b"#include <asm-generic/x.h>\n")
print(f"{len(sources)} objects stood in for under {root}")
PY
echo "files under $dest: $(find "$dest" -not -type d | wc -l)"
