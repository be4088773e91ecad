//! A rewritten file's chunks that did not change keep their rows. A checkout rewrites hundreds
//! of files whose chunks are mostly the same (78% of them in a checkout of axum 300 commits
//! back): deleting and inserting each again cost FTS5 a delete, an insert and the segment
//! rewrites the deletions bring, and cost each chunk its vector. A kept row keeps its
//! full-text row, its trigram row and its vectors; only its position is updated.
//!
//! A chunk is the same when every field its rows are made from is: kind, name, signature,
//! parent, doc and content (the full-text row, the trigram row and the vector's text come
//! from those alone, within the same file).

use std::collections::HashMap;

use crate::source::chunk::Chunk;

use super::FileWrite;
use super::tally::{Counted, counted_columns};

/// Everything a chunk's rows are made from, hashed.
fn fingerprint(kind: &str, name: &str, signature: &str, parent: &str, doc: &str, content: &str) -> blake3::Hash {
    let mut h = blake3::Hasher::new();
    for part in [kind, name, signature, parent, doc, content] {
        h.update(&(part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    h.finalize()
}

fn of_chunk(c: &Chunk) -> blake3::Hash {
    let (parent, doc) = (c.parent.as_deref().unwrap_or_default(), c.doc.as_deref().unwrap_or_default());
    fingerprint(c.kind.as_str(), &c.name, &c.signature, parent, doc, &c.content)
}

/// What a batch keeps of its rewritten files' old chunks, and what it drops.
#[derive(Default)]
pub(super) struct Plan {
    /// Per rewritten path: for each new chunk (by index), the old row it keeps.
    kept: HashMap<String, Vec<Option<i64>>>,
    /// Old rows no new chunk keeps, with their kinds (for the counts).
    pub dropped: Vec<Counted>,
}

impl Plan {
    /// Matches each rewritten file's new chunks with its old rows, in the caller's
    /// transaction, before anything is deleted.
    pub(super) fn make(tx: &rusqlite::Transaction, writes: &[FileWrite]) -> rusqlite::Result<Plan> {
        let mut plan = Plan::default();
        let mut old = tx.prepare_cached(concat!(
            "SELECT ",
            counted_columns!(),
            ", c.name, ",
            super::in_text::signature_of_c!(),
            ", coalesce(c.parent, ''), coalesce(",
            super::in_text::doc_of_c!(),
            ", ''), booger_text(c.content)
             FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1 ORDER BY c.id",
        ))?;
        for w in writes {
            let Some(chunks) = &w.chunks else { continue };
            let mut rows: HashMap<blake3::Hash, Vec<Counted>> = HashMap::new();
            let mut q = old.query([&w.path])?;
            while let Some(r) = q.next()? {
                let row = Counted::read(r, 0)?;
                let key = fingerprint(
                    &row.kind,
                    r.get_ref(3)?.as_str()?,
                    r.get_ref(4)?.as_str()?,
                    r.get_ref(5)?.as_str()?,
                    r.get_ref(6)?.as_str()?,
                    super::text::read(r, 7)?,
                );
                rows.entry(key).or_default().push(row);
            }
            if rows.is_empty() {
                continue;
            }
            // The same chunk twice in a file takes the old rows in order.
            for list in rows.values_mut() {
                list.reverse();
            }
            let kept: Vec<Option<i64>> =
                chunks.iter().map(|c| rows.get_mut(&of_chunk(c)).and_then(Vec::pop).map(|r| r.id)).collect();
            plan.dropped.extend(rows.into_values().flatten());
            plan.kept.insert(w.path.clone(), kept);
        }
        plan.dropped.sort_unstable();
        Ok(plan)
    }

    /// The old row the `k`th new chunk of `path` keeps, if any.
    pub(super) fn kept(&self, path: &str, k: usize) -> Option<i64> {
        self.kept.get(path).and_then(|v| v.get(k).copied().flatten())
    }
}

#[cfg(test)]
mod tests {
    use crate::engine::index::{Options, Progress, run};
    use crate::store::Store;

    fn ids(store: &Store) -> Vec<(String, i64, u32)> {
        store
            .read(|c| {
                let mut s =
                    c.prepare("SELECT name, id, start_line FROM chunks WHERE kind = 'function' ORDER BY start_line")?;
                let rows = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                rows.collect()
            })
            .unwrap()
    }

    /// The lines holding `needle`, as grep reads them: narrowed by the trigram rows.
    fn lines_with(store: &Store, needle: &str) -> Vec<usize> {
        let mut found = Vec::new();
        let grams = crate::domain::search::grams::required(needle, false);
        let filters = crate::store::search::Filters::default();
        let keep = |_: &str| crate::store::scan::Keep::Yes;
        store
            .scan(&filters, grams.as_deref(), keep, &mut |c: &crate::store::scan::Scanned, text: &str| {
                let hits = text.lines().enumerate().filter(|(_, l)| l.contains(needle));
                found.extend(hits.map(|(k, _)| c.start_line as usize + k));
                true
            })
            .unwrap();
        found
    }

    /// A rewrite keeps the rows of the chunks it did not change, at their new lines, with
    /// their full-text and trigram rows; the changed one is new; the index equals a fresh one.
    #[test]
    fn unchanged_chunks_keep_their_rows_and_answers_stay_exact() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        let f = |name: &str, body: &str| format!("def {name}():\n    return {body}\n\n\n");
        std::fs::write(root.join("a.py"), [f("one", "1"), f("two", "2"), f("three", "3")].concat()).unwrap();
        let store = Store::open(&dir.path().join("idx"), &root).unwrap();
        let progress = Progress::default();
        run(&root, &store, Options::default(), &progress).unwrap();
        let before = ids(&store);
        std::fs::write(root.join("a.py"), [f("zero", "0"), f("one", "1"), f("two", "22"), f("three", "3")].concat())
            .unwrap();
        run(&root, &store, Options::default(), &progress).unwrap();
        let after = ids(&store);
        let id = |rows: &[(String, i64, u32)], n: &str| rows.iter().find(|r| r.0 == n).map(|r| (r.1, r.2)).unwrap();
        assert_eq!(id(&after, "one").0, id(&before, "one").0, "kept");
        assert_eq!(id(&after, "three").0, id(&before, "three").0, "kept");
        assert_eq!((id(&before, "three").1, id(&after, "three").1), (9, 13), "moved down four lines");
        assert_ne!(id(&after, "two").0, id(&before, "two").0, "changed: a new row");
        // Full-text and trigram rows follow: a kept chunk is found by both, at its new line.
        let hits = store.fts_candidates("three", &crate::store::search::Filters::default(), 10).unwrap();
        assert!(hits.iter().any(|h| h.id == id(&after, "three").0), "{hits:?}");
        assert_eq!(lines_with(&store, "return 3"), [14]);
        crate::store::grams::assert_rows_cover_every_chunk(&store);
        let fresh = store.read(crate::store::tally::Tally::count).unwrap();
        assert_eq!(store.with_tally(|t| t.clone()).unwrap(), fresh, "kept counts equal a fresh count");
    }

    /// A rewrite large enough to leave trigram rows to the background pass: the pass writes the
    /// rows of the files' kept and new chunks alike; grep finds both kinds exactly.
    #[test]
    fn the_background_pass_writes_the_rows_of_kept_and_new_chunks() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("p");
        std::fs::create_dir(&root).unwrap();
        let f = |name: &str, body: &str| format!("def {name}():\n    return {body}\n\n\n");
        for i in 0..100 {
            std::fs::write(root.join(format!("m{i}.py")), [f("one", "1"), f("two", "2"), f("three", "3")].concat())
                .unwrap();
        }
        let store = Store::open(&dir.path().join("idx"), &root).unwrap();
        let progress = Progress::default();
        run(&root, &store, Options::default(), &progress).unwrap();
        while store.fill_grams(1000).unwrap() > 0 {}
        for i in 0..100 {
            std::fs::write(
                root.join(format!("m{i}.py")),
                [f("zero", "0"), f("one", "1"), f("two", "22"), f("three", "3")].concat(),
            )
            .unwrap();
        }
        run(&root, &store, Options::default(), &progress).unwrap();
        assert!(store.grams_pending().unwrap() > 0, "a run of 100 files leaves its trigram rows to the pass");
        while store.fill_grams(1000).unwrap() > 0 {}
        for (needle, line) in [("return 3", 14), ("return 22", 10), ("return 0", 2)] {
            assert_eq!(lines_with(&store, needle), vec![line; 100], "{needle}");
        }
        crate::store::grams::assert_rows_cover_every_chunk(&store);
    }
}
