#!/usr/bin/env python3
"""Two builds of booger side by side: `booger search` whole process, interleaved A/B.

    python3 tests/benches/ab_search.py BASE_BIN_DIR NEW_BIN_DIR [CORPUS]

Each build gets its own daemon (socket and data directory in a temporary folder) and indexes
the same corpus (default: the Python standard library). Then every query runs once per
round on A and on B, in alternating order, so both see the same machine load; the table
gives each build's median and p95 whole-process time and B/A. The machines are shared and
noisy: the ratio of medians is the figure to read. Both builds' background tiers finish before
any query is timed.
"""

import json
import os
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time

QUERIES = [
    "parse config file",
    "http request retry",
    "json decode error",
    "thread pool executor shutdown",
    "how does the tokenizer handle unicode",
    "TextIOWrapper",
    "read csv rows",
    "socket timeout",
    "def urlparse",
    "fix: decimal rounding of negative numbers",
]
ROUNDS = 15


def env_for(home):
    env = dict(os.environ)
    env["BOOGER_HOME"] = home
    env["BOOGER_SOCKET"] = os.path.join(home, "boogerd.sock")
    env["BOOGER_LOG"] = "warn"
    return env


def run(bin_dir, env, args, cwd):
    return subprocess.run(
        [os.path.join(bin_dir, "booger"), *args], env=env, cwd=cwd, capture_output=True, text=True, check=False
    )


def settle(name, bin_dir, env, corpus, limit_s=600):
    deadline = time.time() + limit_s
    while time.time() < deadline:
        out = run(bin_dir, env, ["status", "--json"], corpus)
        try:
            index = json.loads(out.stdout)["project"]["index"]
        except (ValueError, KeyError, TypeError):
            index = {}
        e = index.get("embeddings") or {}
        embedded = e.get("running") is False and e.get("embedded") == e.get("embeddable")
        if index.get("ranking_index") == "ready" and (index.get("grep_index") or {}).get("ready") and embedded:
            return
        time.sleep(1)
    sys.exit(f"{name}: background tiers not done within {limit_s} s")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    base, new = sys.argv[1], sys.argv[2]
    corpus = sys.argv[3] if len(sys.argv) > 3 else sysconfig.get_paths()["stdlib"]
    with tempfile.TemporaryDirectory() as tmp:
        builds = []
        for name, bin_dir in (("A", base), ("B", new)):
            home = os.path.join(tmp, name)
            os.makedirs(home, mode=0o700)
            env = env_for(home)
            env["PATH"] = bin_dir + os.pathsep + env["PATH"]
            out = run(bin_dir, env, ["index", corpus], corpus)
            if out.returncode != 0:
                sys.exit(f"{name}: index failed: {out.stderr}")
            builds.append((name, bin_dir, env))
        # Every background tier done on both (the ranking index, grep's trigram rows, the
        # embeddings) before timing: a build still embedding answers slower, and a fixed wait
        # favoured whichever build indexed first.
        for name, bin_dir, env in builds:
            settle(name, bin_dir, env, corpus)
        for name, bin_dir, env in builds:
            for q in QUERIES:
                run(bin_dir, env, ["search", q], corpus)
        times = {"A": [], "B": []}
        for r in range(ROUNDS):
            for q in QUERIES:
                order = builds if r % 2 == 0 else list(reversed(builds))
                for name, bin_dir, env in order:
                    t = time.perf_counter()
                    out = run(bin_dir, env, ["search", q], corpus)
                    times[name].append((time.perf_counter() - t) * 1000)
                    if out.returncode != 0:
                        sys.exit(f"{name}: search {q!r} failed: {out.stderr}")
        for name, bin_dir, env in builds:
            subprocess.run([os.path.join(bin_dir, "booger"), "daemon", "stop"], env=env, capture_output=True)

    def p95(v):
        return sorted(v)[int(len(v) * 0.95) - 1]

    a, b = statistics.median(times["A"]), statistics.median(times["B"])
    print(f"# booger search, whole process, {len(QUERIES)} queries x {ROUNDS} rounds, interleaved")
    print("| build | p50 | p95 |")
    print("|---|---|---|")
    print(f"| A {base} | {a:.2f} ms | {p95(times['A']):.2f} ms |")
    print(f"| B {new} | {b:.2f} ms | {p95(times['B']):.2f} ms |")
    print(f"B/A p50: {b / a:.3f}")


if __name__ == "__main__":
    main()
