#!/usr/bin/env python3
"""Questions asked right after a checkout, against the same questions once every change is in.

    cargo build --release && python3 tests/benches/after_checkout.py [REPO...]

One daemon, watching (as installed). For each repository of ../shared/eval/repos (real
histories; all five by default): a clone at HEAD is indexed, then each of its questions of
../shared/eval/questions is asked right after a checkout (HEAD~200 and HEAD in turn: about 200
files rewritten), the way an agent asks after switching branches, and again once the daemon has
applied the checkout and brought its ranking index current. Printed: how many of the first
answers hold the same ten files and the same ten chunks as the later ones, and the first
answer's latency (the whole client process; it includes whatever the daemon waits for).
`BOOGER_BIN_DIR` runs other builds' binaries; `BOOGER_BENCH_APART` sets how many commits
apart the two checkouts are.
"""
import json, os, shutil, statistics, subprocess, sys, tarfile, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BIN = os.environ.get("BOOGER_BIN_DIR") or os.path.join(REPO, "target", "release")
SHARED = os.path.join(REPO, "..", "shared", "eval")
APART = int(os.environ.get("BOOGER_BENCH_APART", "200"))


def main():
    repos = sys.argv[1:] or ["axum", "requests", "cobra", "hiredis", "zustand"]
    questions = [json.loads(l) for l in open(os.path.join(SHARED, "questions", "questions.jsonl"))]
    tmp = tempfile.mkdtemp(prefix="booger-after-checkout-")
    env = dict(os.environ, BOOGER_HOME=f"{tmp}/home", BOOGER_SOCKET=f"{tmp}/s.sock")
    env.pop("BOOGER_NO_WATCH", None)
    run = lambda *a: subprocess.run(a, env=env, capture_output=True, text=True)
    booger = lambda *a: run(os.path.join(BIN, "booger"), *a)
    daemon = subprocess.Popen(
        [os.path.join(BIN, "boogerd"), "--socket", env["BOOGER_SOCKET"], "--home", env["BOOGER_HOME"]],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while not os.path.exists(env["BOOGER_SOCKET"]):
            time.sleep(0.05)

        def settled(root):
            for _ in range(600):
                try:
                    index = json.loads(booger("status", root, "--json").stdout)["project"]["index"]
                    watch = index.get("watch") or {}
                    if (
                        index["ranking_index"] == "ready"
                        and not index.get("progress")
                        and not watch.get("applying")
                        and not watch.get("queue")
                    ):
                        return
                except (ValueError, KeyError):
                    pass
                time.sleep(0.1)

        def ask(root, query):
            t = time.perf_counter()
            out = booger("search", query, "--project", root, "--output-mode", "signatures", "--json")
            ms = (time.perf_counter() - t) * 1000
            hits = json.loads(out.stdout).get("results") or []
            return [f"{h['path']}:{h.get('start_line')}" for h in hits[:10]], ms

        print("| repository | questions | same 10 files | same 10 chunks | right after: p50 | p90 | settled: p50 |")
        print("|---|---|---|---|---|---|---|")
        totals = {"n": 0, "files": 0, "chunks": 0, "first": [], "later": []}
        for name in repos:
            with tarfile.open(os.path.join(SHARED, "repos", f"{name}.git.tar.gz")) as t:
                t.extractall(f"{tmp}/{name}-bare", filter="data")
            bare = next(os.path.join(dp, d) for dp, ds, _ in os.walk(f"{tmp}/{name}-bare") for d in ds if d.endswith(".git"))
            root = f"{tmp}/{name}"
            subprocess.run(["git", "clone", "-q", bare, root], check=True)
            rev = lambda r: subprocess.run(["git", "-C", root, "rev-parse", r], capture_output=True, text=True).stdout.strip()
            head, back = rev("HEAD"), rev(f"HEAD~{APART}")
            booger("index", root, "--json")
            settled(root)
            at, same_files, same_chunks, first_ms, later_ms = head, 0, 0, [], []
            mine = [q for q in questions if q["repo"] == name]
            for q in mine:
                at = back if at == head else head
                subprocess.run(["git", "-C", root, "checkout", "-q", at], check=True)
                first, ms = ask(root, q["query"])
                settled(root)
                later, ms_later = ask(root, q["query"])
                files = lambda l: sorted({p.rsplit(":", 1)[0] for p in l})
                same_files += files(first) == files(later)
                same_chunks += first == later
                first_ms.append(ms)
                later_ms.append(ms_later)
            print(
                f"| {name} | {len(mine)} | {same_files} | {same_chunks} | {statistics.median(first_ms):.0f} ms"
                f" | {sorted(first_ms)[int(len(first_ms) * 0.9)]:.0f} ms | {statistics.median(later_ms):.0f} ms |",
                flush=True,
            )
            totals["n"] += len(mine)
            totals["files"] += same_files
            totals["chunks"] += same_chunks
            totals["first"] += first_ms
            totals["later"] += later_ms
        n = max(totals["n"], 1)
        print(
            f"| **all** | {totals['n']} | {totals['files']} ({100 * totals['files'] / n:.0f}%)"
            f" | {totals['chunks']} ({100 * totals['chunks'] / n:.0f}%) | {statistics.median(totals['first']):.0f} ms"
            f" | {sorted(totals['first'])[int(n * 0.9)]:.0f} ms | {statistics.median(totals['later']):.0f} ms |"
        )
    finally:
        daemon.kill()
        daemon.wait()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
