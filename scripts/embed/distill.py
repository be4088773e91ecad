"""Builds booger's static embedding table from the teacher (all-MiniLM-L6-v2), without torch.

  pip install numpy safetensors tokenizers
  python3 scripts/embed/distill.py --cache ~/.cache/booger-distill \
      --corpus "$(python3 -c "import sysconfig;print(sysconfig.get_paths()['stdlib'])")" \
      --out boogerd/assets/static-embed.bin

Steps (each cached under --cache, so a re-run only redoes what changed):
1. vocab: the teacher's embedding of every WordPiece token alone (`[CLS] token [SEP]`, mean
   pooled), 30,522 x 384.
2. PCA: centre and project to DIMS dimensions (the raw vectors all point the same way).
3. weights: each token's vector is scaled by a smooth inverse frequency, a / (a + p(token)),
   with p from a code corpus, so that frequent tokens (`self`, `(`, `the`) count for little.
The table is written as int8 with one scale per row (see `boogerd/src/embed/static_table.rs`).
Needs: numpy, safetensors, tokenizers (pip).
"""

import argparse
import struct
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from teacher import Teacher, model_dir  # noqa: E402

DIMS = 256
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


def token_counts(tokenizer, corpus: list[Path], vocab_size: int) -> np.ndarray:
    counts = np.ones(vocab_size, dtype=np.float64)
    for path in corpus:
        text = path.read_text(encoding="utf-8", errors="replace")
        for ids in (tokenizer.encode(chunk).ids for chunk in text.split("\n\n") if chunk.strip()):
            np.add.at(counts, ids, 1)
    return counts


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True, help="a folder of code to take token frequencies from")
    ap.add_argument("--out", type=Path, required=True)
    args = ap.parse_args()
    from tokenizers import Tokenizer

    folder = model_dir(args.cache)
    t = Teacher(folder)
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()

    raw = vocab_vectors(t, args.cache)
    centred = raw - raw.mean(0)
    _, _, vt = np.linalg.svd(centred, full_matrices=False)
    table = centred @ vt[:DIMS].T

    counts_file = args.cache / "counts.npy"
    if counts_file.exists():
        counts = np.load(counts_file)
    else:
        files = sorted(p for p in args.corpus.rglob("*.py") if "site-packages" not in p.parts)
        counts = token_counts(tokenizer, files, len(t.vocab))
        np.save(counts_file, counts)
    p = counts / counts.sum()
    table *= (SIF_A / (SIF_A + p))[:, None]
    write_table(args.out, table.astype(np.float32), t.vocab)


def write_table(out: Path, table: np.ndarray, vocab: list[str]):
    """`BOOGEMB1`, rows, dims, then per row an f32 scale and dims int8, then the vocabulary
    (one token per line)."""
    scale = np.abs(table).max(1) / 127.0
    scale[scale == 0] = 1.0
    q = np.clip(np.round(table / scale[:, None]), -127, 127).astype(np.int8)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out, "wb") as f:
        f.write(b"BOOGEMB1")
        f.write(struct.pack("<II", table.shape[0], table.shape[1]))
        for row in range(table.shape[0]):
            f.write(struct.pack("<f", float(scale[row])))
            f.write(q[row].tobytes())
        f.write("\n".join(vocab).encode("utf-8"))
    print(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB)", file=sys.stderr)


if __name__ == "__main__":
    main()
