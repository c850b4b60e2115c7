#!/usr/bin/env python3
"""The MCP server's everyday cases: small calls through the real `workbench mcp` server,
driven as a client drives it, against the raw command they run (a benchmark,
not a timed test).

Usage: mcp_calls.py [--calls N] [--clients N] [--per-client N]
                    [--tree DIR] [--only stdio,http,parallel] WORKBENCH_BINARY

The small case: the 50-file tree of `engine/benches/make-small-tree.sh`
(default /tmp/fsb-small, generated when missing), `grep {"pattern":"alpha"}`
(50 matches, nothing spilled). The raw command is the contract's, as issue
27 states it: `bash -c "rg --json --regexp='alpha' </dev/null"`, spawned in
the tree with its stdout read from a pipe to the end.

- stdio: one `workbench mcp` over stdin/stdout (initialize, initialized),
  then `--calls` iterations (default 200, after 10 untimed), each timing one
  `tools/call` (request written, answer read; notifications skipped) and one
  raw command, in alternating order.
- http: one `workbench mcp --listen 127.0.0.1:0` and one client session on
  one keep-alive connection (http.client, which sets TCP_NODELAY), the same
  alternation.
- parallel: `--clients` (default 16) processes, each with its own session
  and connection, each making `--per-client` (default 100) calls back to
  back, all started together; against 16 processes each running the raw
  command 100 times back to back. Reports calls per second (all calls over
  the wall time from the common start to the last end), the ratio, and the
  p50 / p99 latency of single calls.

Each part prints medians, the ratio of medians and the median of the
per-iteration ratios ("paired"). python3 stdlib only. Build with `cargo
build --release -p fs-search-workbench`.
"""
import argparse
import http.client
import json
import math
import multiprocessing
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MAKE_SMALL = os.path.join(HERE, "..", "..", "engine", "benches", "make-small-tree.sh")
RAW = ["bash", "-c", "rg --json --regexp='alpha' </dev/null"]
ARGS = {"pattern": "alpha"}
CONFIG = '{"sampleOverCapGlobResults": true}'
WARM_UP = 10
PROTOCOL = "2025-06-18"


def raw_call(tree):
    """Milliseconds for one raw command, stdout read to its end."""
    start = time.perf_counter()
    proc = subprocess.Popen(RAW, cwd=tree, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    out = proc.stdout.read()
    proc.wait()
    elapsed = (time.perf_counter() - start) * 1e3
    if proc.returncode != 0 or out.count(b'"type":"match"') != 50:
        sys.exit(f"raw command: exit {proc.returncode}, {len(out)} bytes")
    return elapsed


def quantile(xs, q):
    """The `q` quantile of `xs` by nearest rank."""
    xs = sorted(xs)
    return xs[min(len(xs), max(1, math.ceil(q * len(xs)))) - 1]


def report(name, raw, served):
    paired = statistics.median(b / a for a, b in zip(raw, served))
    a, b = statistics.median(raw), statistics.median(served)
    print(f"{name}: raw median {a:.2f} ms, call median {b:.2f} ms, "
          f"ratio {b / a:.3f}, paired {paired:.3f}, +{b - a:.2f} ms; "
          f"p99 raw {quantile(raw, 0.99):.2f} ms, call {quantile(served, 0.99):.2f} ms "
          f"(n = {len(raw)})", flush=True)


def server_env(state):
    env = dict(os.environ)
    env["XDG_STATE_HOME"] = state
    env.pop("WORKBENCH_MCP_TOKEN", None)
    return env


def check_answer(answer):
    result = answer.get("result") or {}
    if result.get("isError") or "error" in answer:
        sys.exit(f"call failed: {json.dumps(answer)[:400]}")
    text = "".join(c.get("text", "") for c in result.get("content", []))
    if text.count("alpha_") != 50:
        sys.exit(f"unexpected answer: {text[:400]}")


# ------------------------------------------------------------------ stdio

class Stdio:
    def __init__(self, binary, tree, state, spill):
        self.proc = subprocess.Popen(
            [binary, "mcp", "--workdir", tree, "--config", CONFIG, "--spill-dir", spill],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            env=server_env(state))
        self.next_id = 0
        self.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                    "clientInfo": {"name": "mcp_calls.py", "version": "1"}})
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, message):
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def request(self, method, params):
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        while True:
            line = self.proc.stdout.readline()
            if not line:
                sys.exit("the stdio server closed its output")
            message = json.loads(line)
            if message.get("id") == self.next_id:
                return message

    def call(self):
        start = time.perf_counter()
        answer = self.request("tools/call", {"name": "grep", "arguments": ARGS})
        elapsed = (time.perf_counter() - start) * 1e3
        check_answer(answer)
        return elapsed

    def close(self):
        self.proc.stdin.close()
        self.proc.wait(timeout=30)


# ------------------------------------------------------------------- http

def start_http(binary, tree, state, spill):
    proc = subprocess.Popen(
        [binary, "mcp", "--listen", "127.0.0.1:0", "--workdir", tree, "--config", CONFIG,
         "--spill-dir", spill],
        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        env=server_env(state))
    line = proc.stderr.readline().decode().strip()
    prefix = "workbench mcp: listening on http://"
    if not line.startswith(prefix):
        proc.kill()
        sys.exit(f"no address on the server's stderr: {line!r}")
    host, port = line[len(prefix):].removesuffix("/mcp").rsplit(":", 1)
    return proc, host, int(port)


class Http:
    """One client session on one keep-alive connection."""

    def __init__(self, host, port):
        self.conn = http.client.HTTPConnection(host, port, timeout=60)
        self.session = None
        self.next_id = 0
        init = self.post({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                          "params": {"protocolVersion": PROTOCOL, "capabilities": {},
                                     "clientInfo": {"name": "mcp_calls.py", "version": "1"}}})
        if not init:
            sys.exit("no answer to initialize")
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def post(self, message):
        headers = {"Content-Type": "application/json",
                   "Accept": "application/json, text/event-stream"}
        if self.session:
            headers["Mcp-Session-Id"] = self.session
            headers["MCP-Protocol-Version"] = PROTOCOL
        self.conn.request("POST", "/mcp", body=json.dumps(message).encode(), headers=headers)
        response = self.conn.getresponse()
        body = response.read()
        if response.status not in (200, 202):
            sys.exit(f"HTTP {response.status}: {body[:300]!r}")
        self.session = self.session or response.getheader("mcp-session-id")
        answers = [json.loads(line[5:]) for line in body.decode().splitlines()
                   if line.startswith("data:") and line[5:].strip()]
        if response.getheader("content-type", "").startswith("application/json") and body:
            answers = [json.loads(body)]
        return [a for a in answers if "id" in a and a.get("id") == message.get("id")]

    def call(self):
        self.next_id += 1
        start = time.perf_counter()
        answers = self.post({"jsonrpc": "2.0", "id": self.next_id, "method": "tools/call",
                             "params": {"name": "grep", "arguments": ARGS}})
        elapsed = (time.perf_counter() - start) * 1e3
        if not answers:
            sys.exit("no answer to tools/call")
        check_answer(answers[0])
        return elapsed


# ------------------------------------------------------------- the parts

def alternate(calls, tree, call):
    raw, served = [], []
    for n in range(WARM_UP + calls):
        if n % 2 == 0:
            a = raw_call(tree)
            b = call()
        else:
            b = call()
            a = raw_call(tree)
        if n >= WARM_UP:
            raw.append(a)
            served.append(b)
    return raw, served


def client_loop(kind, host, port, tree, count, start_at, out):
    """One parallel client: waits for the common start, runs `count` calls."""
    client = Http(host, port) if kind == "http" else None
    if client:
        client.call()  # its session's first call, untimed
    while time.time() < start_at:
        time.sleep(0.0005)
    latencies = []
    for _ in range(count):
        latencies.append(client.call() if client else raw_call(tree))
    out.put((latencies, time.time()))


def parallel(kind, host, port, tree, clients, per_client):
    """(calls per second, latencies) of `clients` processes in parallel."""
    ctx = multiprocessing.get_context("fork")
    out = ctx.Queue()
    start_at = time.time() + 2.0
    procs = [ctx.Process(target=client_loop,
                         args=(kind, host, port, tree, per_client, start_at, out))
             for _ in range(clients)]
    for p in procs:
        p.start()
    results = [out.get(timeout=600) for _ in procs]
    for p in procs:
        p.join()
        if p.exitcode != 0:
            sys.exit(f"a {kind} client failed")
    end = max(r[1] for r in results)
    latencies = [x for r in results for x in r[0]]
    return len(latencies) / (end - start_at), latencies


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("binary")
    parser.add_argument("--calls", type=int, default=200)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--per-client", type=int, default=100)
    parser.add_argument("--tree", default="/tmp/fsb-small")
    parser.add_argument("--only", default="stdio,http,parallel")
    args = parser.parse_args()
    parts = args.only.split(",")
    tree = args.tree
    if not os.path.isdir(tree):
        subprocess.run(["bash", MAKE_SMALL, tree], check=True)
    scratch = tempfile.mkdtemp(prefix="mcp-calls-")
    state, spill = os.path.join(scratch, "state"), os.path.join(scratch, "spill")
    os.makedirs(spill)
    try:
        if "stdio" in parts:
            server = Stdio(args.binary, tree, state, spill)
            try:
                report("stdio", *alternate(args.calls, tree, server.call))
            finally:
                server.close()
        if "http" in parts or "parallel" in parts:
            proc, host, port = start_http(args.binary, tree, state, spill)
            try:
                if "http" in parts:
                    client = Http(host, port)
                    report("http", *alternate(args.calls, tree, client.call))
                if "parallel" in parts:
                    n = args.clients * args.per_client
                    # Alternate which side goes first over two rounds.
                    rounds = {"raw": [], "http": []}
                    for order in (("raw", "http"), ("http", "raw")):
                        for kind in order:
                            rounds[kind].append(parallel(kind, host, port, tree,
                                                         args.clients, args.per_client))
                    for i, ((raw_rate, raw_lat), (http_rate, http_lat)) in enumerate(
                            zip(rounds["raw"], rounds["http"])):
                        print(f"parallel round {i + 1}: {args.clients} clients x "
                              f"{args.per_client} calls ({n}): raw {raw_rate:.1f} calls/s, "
                              f"http {http_rate:.1f} calls/s, ratio {http_rate / raw_rate:.3f}; "
                              f"latency p50 raw {statistics.median(raw_lat):.2f} ms, "
                              f"http {statistics.median(http_lat):.2f} ms; p99 raw "
                              f"{quantile(raw_lat, 0.99):.2f} ms, http "
                              f"{quantile(http_lat, 0.99):.2f} ms", flush=True)
            finally:
                proc.terminate()
                proc.wait(timeout=30)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
