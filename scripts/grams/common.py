#!/usr/bin/env python3
"""Writes boogerd/src/store/common_grams.rs: the byte trigrams in so many chunks of code
that grep's trigram rows leave them out (see that file).

usage: python3 scripts/grams/common.py INDEX.db... > boogerd/src/store/common_grams.rs

Each INDEX.db is a booger index (`~/.local/share/booger/indexes/*/index.db`) of a corpus; the
list was made from three, one language each: /usr/include (C), the cargo registry's sources
(Rust) and the Python standard library. A trigram's score is the share of chunks holding it,
averaged over the corpora (each sampled to at most 150,000 chunks), so that no one language
decides; the COUNT highest are kept. Trigrams are of each chunk's text framed by newlines,
ASCII folded to lower case, as the index takes them.
"""

import random
import sqlite3
import sys
from collections import Counter

COUNT = 512
SAMPLE = 150_000


def shares(path):
    rows = sqlite3.connect(f"file:{path}?mode=ro", uri=True).execute("SELECT content FROM chunks").fetchall()
    random.seed(1)
    if len(rows) > SAMPLE:
        rows = random.sample(rows, SAMPLE)
    df = Counter()
    for (content,) in rows:
        text = ("\n" + content + "\n").encode()
        text = bytes(b + 32 if 65 <= b <= 90 else b for b in text)
        df.update({text[i : i + 3] for i in range(len(text) - 2)})
    return {g: n / len(rows) for g, n in df.items()}


def main():
    corpora = [shares(p) for p in sys.argv[1:]]
    grams = set().union(*corpora)
    score = {g: sum(c.get(g, 0.0) for c in corpora) / len(corpora) for g in grams}
    common = sorted(sorted(grams, key=lambda g: (-score[g], g))[:COUNT], key=lambda g: int.from_bytes(g, "big"))
    least = min(score[g] for g in common)
    print("//! The byte trigrams grep's trigram rows leave out: each is in so many chunks of code (at")
    print(f"//! least {least:.1%} of them, averaged over C, Rust and Python corpora) that it narrows")
    print("//! little, and together they are a third of a chunk's distinct trigrams. A literal made only")
    print("//! of these is not narrowed (its matches are in a large share of the chunks anyway).")
    print("//!")
    print("//! Written by `scripts/grams/common.py`; a change to the list needs the rows written again")
    print("//! (a migration).")
    print()
    print("/// Each trigram's three bytes, big-endian; sorted, for [`is_common`]'s binary search.")
    print(f"const COMMON: [u32; {len(common)}] = [")
    line = "   "
    for g in common:
        item = f" 0x{int.from_bytes(g, 'big'):06x},"
        if len(line) + len(item) > 120:
            print(line)
            line = "   "
        line += item
    print(line)
    print("];")
    print()
    print("/// Whether grep's trigram rows leave out the trigram `g` (three bytes, big-endian).")
    print("pub(crate) fn is_common(g: u32) -> bool {")
    print("    COMMON.binary_search(&g).is_ok()")
    print("}")
    print()
    print("#[cfg(test)]")
    print("mod tests {")
    print("    #[test]")
    print("    fn the_list_is_sorted_and_each_a_trigram() {")
    print("        assert!(super::COMMON.windows(2).all(|w| w[0] < w[1]));")
    print("        assert!(super::COMMON.iter().all(|&g| g <= 0x00ff_ffff));")
    print("    }")
    print("}")


if __name__ == "__main__":
    main()
