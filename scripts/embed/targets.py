"""Teacher embeddings of real code texts, the targets the static table is fitted to.

  python3 scripts/embed/targets.py --cache DIR --corpus STDLIB_DIR

From every Python file under the corpus (sorted, site-packages left out) it takes functions
and classes with the `ast` module and makes three kinds of text, as booger embeds them and as
agents ask: `path words, parent, name, signature, docstring`; the docstring's first sentence
alone (query-like); the code itself (first 1,500 characters). Up to --per-kind of each, spread
evenly over the corpus. Writes DIR/targets.json (the texts) and DIR/targets.npy (384-d unit
vectors). Takes about 15 minutes on 2 cores.
"""

import argparse
import ast
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from teacher import Teacher, model_dir  # noqa: E402

MAX_TOKENS = 128


def texts_of(corpus: Path) -> dict[str, list[str]]:
    kinds = {"signature": [], "sentence": [], "code": []}
    for path in sorted(p for p in corpus.rglob("*.py") if "site-packages" not in p.parts):
        try:
            source = path.read_text(encoding="utf-8")
            tree = ast.parse(source)
        except (SyntaxError, UnicodeDecodeError, ValueError):
            continue
        rel = path.relative_to(corpus).with_suffix("")
        words = " ".join(rel.parts)
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            doc = ast.get_docstring(node) or ""
            segment = ast.get_source_segment(source, node) or ""
            header = segment.split(":\n", 1)[0] if segment else node.name
            kinds["signature"].append(f"{words} {node.name} {header} {doc}".strip())
            if doc:
                kinds["sentence"].append(doc.split(". ")[0].split("\n\n")[0].strip())
            kinds["code"].append(segment[:1500])
    return kinds


def spread(items: list[str], n: int) -> list[str]:
    if len(items) <= n:
        return items
    step = len(items) / n
    return [items[int(i * step)] for i in range(n)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--corpus", type=Path, required=True)
    ap.add_argument("--per-kind", type=int, default=5000)
    args = ap.parse_args()
    from tokenizers import Tokenizer

    folder = model_dir(args.cache)
    teacher = Teacher(folder)
    tok = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    kinds = texts_of(args.corpus)
    texts = []
    for name, items in kinds.items():
        chosen = [t for t in spread(items, args.per_kind) if t.strip()]
        print(f"{name}: {len(chosen)} of {len(items)}", file=sys.stderr)
        texts.extend(chosen)
    ids = [e.ids for e in tok.encode_batch(texts)]
    # Similar lengths together: less padding.
    order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
    out = np.zeros((len(texts), 384), dtype=np.float32)
    started = time.time()
    for lo in range(0, len(order), 64):
        batch = order[lo : lo + 64]
        out[batch] = teacher.embed_ids([ids[i] for i in batch])
        if lo % 1280 == 0:
            print(f"targets {lo}/{len(order)} {time.time() - started:.0f}s", file=sys.stderr)
    np.save(args.cache / "targets.npy", out)
    (args.cache / "targets.json").write_text(json.dumps(texts))
    print(f"wrote {len(texts)} targets in {time.time() - started:.0f}s", file=sys.stderr)


if __name__ == "__main__":
    main()
