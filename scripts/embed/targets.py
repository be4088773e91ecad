"""Teacher embeddings of real code texts, the targets the static table is fitted to.

From every Python file under the corpus (sorted, site-packages left out) it takes functions
and classes with the `ast` module and makes three kinds of text, as booger embeds them and as
agents ask: `path words, parent, name, signature, docstring`; the docstring's first sentence
alone (query-like); the code itself (first 1,500 characters). Up to `per_kind` of each, spread
evenly over the corpus. Cached as targets.json (the texts) and targets.npy (384-d unit
vectors). Takes about 15 minutes on 2 cores.
"""

import ast
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from teacher import Teacher  # noqa: E402

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
        lines = source.splitlines()
        for node in ast.walk(tree):
            if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                continue
            doc = ast.get_docstring(node) or ""
            segment = "\n".join(lines[node.lineno - 1 : node.end_lineno])
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


def build(teacher: Teacher, tokenizer_json: Path, corpus: Path, cache: Path, per_kind: int):
    """(texts, unit vectors [n, 384]), computed once and cached."""
    texts_file, vectors_file = cache / "targets.json", cache / "targets.npy"
    if texts_file.exists() and vectors_file.exists():
        return json.loads(texts_file.read_text()), np.load(vectors_file)
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_json))
    tok.no_padding()
    tok.enable_truncation(MAX_TOKENS)
    texts = []
    for name, items in texts_of(corpus).items():
        chosen = [t for t in spread(items, per_kind) if t.strip()]
        print(f"targets: {name}: {len(chosen)} of {len(items)}", file=sys.stderr)
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
    np.save(vectors_file, out)
    texts_file.write_text(json.dumps(texts))
    return texts, out
