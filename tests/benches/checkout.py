#!/usr/bin/env python3
"""Re-indexing after a checkout against a fresh index of the same tree, same daemon, same run.

    cargo build --release && python3 tests/benches/checkout.py [ROUNDS]

For each repository of ../shared/eval/repos (real histories): a fresh clone at HEAD is indexed
(`booger index`, timed: the whole client process), then a second clone at HEAD~300 is indexed,
checked out to HEAD and indexed again (timed). Per changed file (parsed + deleted) against per
file of the fresh index, as the call's latency and as the daemon's CPU until it is idle again
(every tier: ranking index, trigram rows, embeddings), and the same per megabyte parsed: the
files a checkout rewrites are the large ones (on axum 242 files of 486 hold 90% of the bytes),
so per file flatters the fresh index. The daemon is let go idle before each timed run. Medians
over ROUNDS (default 3).
"""
import json, os, shutil, statistics, subprocess, sys, tarfile, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
B = os.path.join(REPO, "target", "release", "booger")
SETS = os.path.join(REPO, "..", "shared", "eval", "repos")
APART = 300


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    tmp = tempfile.mkdtemp(prefix="booger-checkout-")
    # No watcher: it would take some of a checkout's files before the timed `booger index`
    # does, and the call would time only what was left.
    env = dict(os.environ, BOOGER_HOME=f"{tmp}/home", BOOGER_SOCKET=f"{tmp}/s.sock", BOOGER_NO_WATCH="1")
    run = lambda *a, **k: subprocess.run(a, env=env, capture_output=True, text=True, **k)
    run(B, "daemon", "start")
    pid = json.loads(run(B, "status", "--json").stdout)["pid"]

    def ticks():
        f = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
        return int(f[11]) + int(f[12])

    def idle():
        for _ in range(300):
            t = ticks()
            time.sleep(1)
            if ticks() - t <= 2:
                return

    def index(root):
        t = time.perf_counter()
        out = run(B, "index", root, "--json")
        return (time.perf_counter() - t) * 1000, json.loads(out.stdout)["report"]

    def timed(root, files_of, first=lambda: None):
        """Once the daemon is idle, does `first` (a checkout) and indexes `root` at once:
        (call ms, daemon CPU ms until idle again, files, MB)."""
        idle()
        first()
        c0 = ticks()
        ms, r = index(root)
        idle()
        return ms, (ticks() - c0) * 10, max(files_of(r), 1), max(r["bytes_parsed"], 1) / 1e6

    def git(*a, cwd=None):
        subprocess.run(["git", *a], cwd=cwd, check=True, capture_output=True)

    print("| repository | changed files | MB parsed (fresh / re-index) | ms/file ratio | CPU/file ratio | ms/MB ratio | CPU/MB ratio |")
    print("|---|---|---|---|---|---|---|")
    for name in ["axum", "requests", "cobra", "hiredis", "zustand"]:
        bare = f"{tmp}/{name}.git"
        with tarfile.open(os.path.join(SETS, f"{name}.git.tar.gz")) as t:
            t.extractall(tmp, filter="data")
        head = subprocess.run(["git", "-C", bare, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
        old = subprocess.run(["git", "-C", bare, "rev-parse", f"HEAD~{APART}"], capture_output=True, text=True).stdout.strip()
        # Per round, for the fresh index and the re-index: (ms, CPU ms, files, MB).
        fresh, again = [], []
        for k in range(rounds):
            a, b = f"{tmp}/{name}-a{k}", f"{tmp}/{name}-b{k}"
            git("clone", "-q", "--no-checkout", bare, a)
            git("checkout", "-q", head, cwd=a)
            fresh.append(timed(a, lambda r: r["parsed"]))
            git("clone", "-q", "--no-checkout", bare, b)
            git("checkout", "-q", old, cwd=b)
            index(b)
            checkout = lambda: git("checkout", "-q", head, cwd=b)  # noqa: E731
            again.append(timed(b, lambda r: r["parsed"] + r["deleted"], checkout))

        def ratio(cost, per):
            m = statistics.median
            return m([x[cost] / x[per] for x in again]) / m([x[cost] / x[per] for x in fresh])

        print(f"| {name} | {again[-1][2]} | {fresh[-1][3]:.2f} / {again[-1][3]:.2f} | {ratio(0, 2):.2f} | "
              f"{ratio(1, 2):.2f} | {ratio(0, 3):.2f} | {ratio(1, 3):.2f} |", flush=True)
    run(B, "daemon", "stop")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
