#!/usr/bin/env python3
"""Writes THIRD-PARTY-NOTICES.md: the licence and notice files of every
crate compiled into the `workbench` binary, as their licences ask of a
distributed binary (MIT, BSD and ISC: the copyright and permission notice;
Apache-2.0: the licence and any NOTICE file).

Usage: python3 .ci/third_party_notices.py [OUT]   (default: print to stdout)

The crates are the normal (not build, not dev) dependencies of
fs-search-workbench for x86_64-unknown-linux-gnu, proc-macro crates left
out (their code is not in the binary), from `cargo metadata` and the
crates' sources in cargo's registry (run `cargo fetch` first). Identical
texts are written once, with the crates that carry them.
"""
import json
import os
import re
import subprocess
import sys

ROOT = "fs-search-workbench"
TARGET = "x86_64-unknown-linux-gnu"
NOTICE_FILE = re.compile(r"^(licen[cs]e|copying|copyright|notice)([-._].*)?$", re.IGNORECASE)


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--locked", "--filter-platform", TARGET],
        check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def shipped(meta):
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    root = next(p["id"] for p in meta["packages"] if p["name"] == ROOT)
    seen, stack = set(), [root]
    while stack:
        node = nodes[stack.pop()]
        for dep in node["deps"]:
            normal = any(k["kind"] is None for k in dep["dep_kinds"])
            pkg = packages[dep["pkg"]]
            macro = any("proc-macro" in t["kind"] for t in pkg["targets"])
            if normal and not macro and dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                stack.append(dep["pkg"])
    return sorted((packages[i] for i in seen if packages[i]["source"]), key=lambda p: (p["name"], p["version"]))


def notices(package):
    folder = os.path.dirname(package["manifest_path"])
    names = sorted(n for n in os.listdir(folder) if NOTICE_FILE.match(n) and os.path.isfile(os.path.join(folder, n)))
    texts = []
    for name in names:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            texts.append((name, f.read().strip()))
    return texts


def main():
    meta = metadata()
    by_text = {}
    lines = [
        "# Third-party notices",
        "",
        "The `workbench` binary contains code of the crates below. Their",
        "licences ask that their copyright and licence notices go with the",
        "binary; they follow, each distinct text once. Written by",
        "`python3 .ci/third_party_notices.py THIRD-PARTY-NOTICES.md`; CI checks",
        "that it is current.",
        "",
        "| crate | version | licence |",
        "|---|---|---|",
    ]
    for package in shipped(meta):
        label = f"{package['name']} {package['version']}"
        lines.append(f"| {package['name']} | {package['version']} | {package['license'] or package.get('license_file') or '(none declared)'} |")
        texts = notices(package)
        if not texts:
            texts = [("(no licence file in the package)", f"Licence: {package['license']}")]
        for name, text in texts:
            by_text.setdefault(text, []).append(f"{label} ({name})")
    lines.append("")
    for text, carriers in by_text.items():
        lines.append("## " + ", ".join(carriers))
        lines.append("")
        lines.append("```text")
        lines.append(text.replace("```", "'''"))
        lines.append("```")
        lines.append("")
    document = "\n".join(lines)
    if len(sys.argv) > 1:
        with open(sys.argv[1], "w", encoding="utf-8") as f:
            f.write(document)
    else:
        sys.stdout.write(document)


if __name__ == "__main__":
    main()
