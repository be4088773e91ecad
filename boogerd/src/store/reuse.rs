//! A rewritten file's chunks that did not change keep their rows. A checkout rewrites hundreds
//! of files whose chunks are mostly the same (78% of them in a checkout of axum 300 commits
//! back): deleting and inserting each again cost FTS5 a delete, an insert and the segment
//! rewrites the deletions bring, and cost each chunk its vector. A kept row keeps its
//! full-text row, its trigram row and its vectors; only its position is updated.
//!
//! A chunk is the same when every field its rows are made from is: kind, name, signature,
//! parent, doc and content (the full-text row, the trigram row and the vector's text come
//! from those alone, within the same file). Each side is fingerprinted, the old rows read as
//! stored and decoded here (not through SQL's `booger_text`, which copied each text up to
//! three times: matching axum's checkout took 19.5 ms of the writer's time that way).

use std::borrow::Cow;
use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::LazyLock;

use crate::source::chunk::Chunk;

use super::FileWrite;
use super::dictionaries::Dictionaries;
use super::tally::{Counted, counted_columns};

/// The fingerprints' keys, drawn once per process: SipHash keyed at random gives 64 bits no
/// file can be written to collide (a repository is untrusted input), and by chance two
/// different chunks of a file share a print about once in 10^15 files rewritten.
static KEYS: LazyLock<RandomState> = LazyLock::new(RandomState::new);

/// Everything a chunk's rows are made from, hashed.
fn fingerprint(kind: &str, name: &str, signature: &str, parent: &str, doc: &str, content: &str) -> u64 {
    let mut h = KEYS.build_hasher();
    for part in [kind, name, signature, parent, doc, content] {
        h.write_usize(part.len());
        h.write(part.as_bytes());
    }
    h.finish()
}

fn of_chunk(c: &Chunk) -> u64 {
    let (parent, doc) = (c.parent.as_deref().unwrap_or_default(), c.doc.as_deref().unwrap_or_default());
    fingerprint(c.kind.as_str(), &c.name, &c.signature, parent, doc, &c.content)
}

/// The fingerprint of the old row `r` (selected by [`Plan::make`]).
fn of_row(r: &rusqlite::Row<'_>, kind: &str, dictionaries: &Dictionaries) -> rusqlite::Result<u64> {
    let content = super::text::decoded(r, 7, dictionaries)?;
    let part = |i: usize| -> rusqlite::Result<Cow<'_, str>> {
        Ok(super::in_text::stored_value(r.get_ref(i)?, &content).unwrap_or_default())
    };
    let (name, parent) = (super::text::read(r, 3)?, super::text::read(r, 5)?);
    Ok(fingerprint(kind, name, &part(4)?, parent, &part(6)?, &content))
}

/// An old row a new chunk keeps.
#[derive(Debug, Clone, Copy)]
pub(super) struct Kept {
    pub id: i64,
    /// Whether the chunk moved (its lines or bytes are not the row's): a row in place is
    /// not written at all (a checkout's rewrites leave most chunks above their first change
    /// where they were).
    pub moved: bool,
}

/// A chunk's place in its file, as a row stores it.
type Place = (i64, i64, i64, i64);

fn place_of(c: &Chunk) -> Place {
    (i64::from(c.start_line), i64::from(c.end_line), c.start_byte as i64, c.end_byte as i64)
}

/// What a batch keeps of its rewritten files' old chunks, and what it drops.
#[derive(Default)]
pub(super) struct Plan {
    /// Per rewritten path: for each new chunk (by index), the old row it keeps.
    kept: HashMap<String, Vec<Option<Kept>>>,
    /// Old rows no new chunk keeps, with their kinds (for the counts).
    pub dropped: Vec<Counted>,
    /// Every old row of the rewritten files, kept or dropped (their trigram rows are among
    /// them).
    pub rows: Vec<i64>,
}

impl Plan {
    /// Matches each rewritten file's new chunks with its old rows, in the caller's
    /// transaction, before anything is deleted.
    pub(super) fn make(
        tx: &rusqlite::Transaction,
        writes: &[FileWrite],
        dictionaries: &Dictionaries,
    ) -> rusqlite::Result<Plan> {
        let mut plan = Plan::default();
        let mut old = tx.prepare_cached(concat!(
            "SELECT ",
            counted_columns!(),
            ", c.name, c.signature, coalesce(c.parent, ''), c.doc, c.content,
             c.start_line, c.end_line, c.start_byte, c.end_byte FROM chunks c JOIN files f ON f.id = c.file_id WHERE f.path = ?1 ORDER BY c.id",
        ))?;
        for w in writes {
            let Some(chunks) = &w.chunks else { continue };
            let mut rows: HashMap<u64, Vec<(Counted, Place)>> = HashMap::new();
            let mut q = old.query([&w.path])?;
            while let Some(r) = q.next()? {
                let row = Counted::read(r, 0)?;
                plan.rows.push(row.id);
                let key = of_row(r, &row.kind, dictionaries)?;
                let place = (r.get(8)?, r.get(9)?, r.get(10)?, r.get(11)?);
                rows.entry(key).or_default().push((row, place));
            }
            if rows.is_empty() {
                continue;
            }
            // The same chunk twice in a file takes the old rows in order.
            for list in rows.values_mut() {
                list.reverse();
            }
            let kept: Vec<Option<Kept>> = chunks
                .iter()
                .map(|c| {
                    let (row, place) = rows.get_mut(&of_chunk(c)).and_then(Vec::pop)?;
                    Some(Kept { id: row.id, moved: place != place_of(c) })
                })
                .collect();
            plan.dropped.extend(rows.into_values().flatten().map(|(row, _)| row));
            plan.kept.insert(w.path.clone(), kept);
        }
        plan.dropped.sort_unstable();
        Ok(plan)
    }

    /// The old row the `k`th new chunk of `path` keeps, if any.
    pub(super) fn kept(&self, path: &str, k: usize) -> Option<Kept> {
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

    /// Rows stored compressed (a long text on its own, short ones with the project's trained
    /// dictionary) and with their signature and doc read back from the text are matched as
    /// well: a rewrite that changes one chunk keeps every other row.
    #[test]
    fn compressed_rows_and_docs_read_from_their_text_are_kept_too() {
        let header = |i: usize, changed: usize| -> String {
            let mut text = String::new();
            for j in 0..40 {
                let value = if j == changed { 99 } else { j };
                text.push_str(&format!("/* Limit {j} of table {i}. */\n#define LIMIT_{i}_{j} (BASE_{i} + {value})\n"));
            }
            let body: String = (0..60).map(|k| format!("    total += table_{i}[{k}] * weight_{k};\n")).collect();
            text.push_str(&format!(
                "/* Sums table {i}. */\nint sum_{i}(void) {{\n    int total = 0;\n{body}    return total;\n}}\n"
            ));
            text
        };
        let files: Vec<(String, String)> = (0..12).map(|i| (format!("t{i}.h"), header(i, usize::MAX))).collect();
        let list: Vec<(&str, &str)> = files[..10].iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
        let (_dir, root, index) = crate::store::testing::project(&list);
        let store = Store::open(&index, &root).unwrap();
        let progress = Progress::default();
        run(&root, &store, Options::default(), &progress).unwrap();
        let start = std::time::Instant::now();
        while !store.texts.has_trained() {
            assert!(start.elapsed().as_secs() < 20, "a dictionary is trained");
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        // The next run stores the dictionary, the one after compresses with it.
        for (path, text) in &files[10..] {
            std::fs::write(root.join(path), text).unwrap();
            run(&root, &store, Options::default(), &progress).unwrap();
        }
        let rows = |store: &Store| -> Vec<(i64, String, String)> {
            store
                .read(|c| {
                    let mut s = c.prepare(
                        "SELECT c.id, c.name, typeof(c.content) FROM chunks c JOIN files f ON f.id = c.file_id
                         WHERE f.path = 't11.h' ORDER BY c.start_byte",
                    )?;
                    let rows = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                    rows.collect()
                })
                .unwrap()
        };
        let before = rows(&store);
        assert!(before.iter().filter(|r| r.2 == "blob").count() > 30, "compressed: {before:?}");
        std::fs::write(root.join("t11.h"), header(11, 3)).unwrap();
        run(&root, &store, Options::default(), &progress).unwrap();
        let after = rows(&store);
        assert_eq!(before.len(), after.len());
        let changed: Vec<&str> =
            before.iter().zip(&after).filter(|(b, a)| b.0 != a.0).map(|(b, _)| b.1.as_str()).collect();
        assert_eq!(changed, ["LIMIT_11_3"], "only the changed chunk has a new row");
        // Every row is where the file's chunks are now, those written in place and those moved.
        std::fs::write(root.join("t11.h"), format!("\n\n{}", header(11, 3))).unwrap();
        run(&root, &store, Options::default(), &progress).unwrap();
        assert_eq!(rows(&store).iter().map(|r| r.0).collect::<Vec<_>>(), after.iter().map(|r| r.0).collect::<Vec<_>>());
        // All moved back up; then the first half in place and the rest moved down a line.
        let split = header(11, 3).replace("/* Limit 20 ", "\n/* Limit 20 ");
        for text in [header(11, 3), split] {
            std::fs::write(root.join("t11.h"), &text).unwrap();
            run(&root, &store, Options::default(), &progress).unwrap();
            let made = crate::source::chunk::chunk_file(std::path::Path::new("t11.h"), text.as_bytes(), false).chunks;
            let places: Vec<(i64, i64, i64)> = store
                .read(|c| {
                    let mut s = c.prepare(
                        "SELECT c.start_line, c.end_line, c.start_byte FROM chunks c JOIN files f ON f.id = c.file_id
                         WHERE f.path = 't11.h' ORDER BY c.start_byte",
                    )?;
                    let rows = s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
                    rows.collect()
                })
                .unwrap();
            let want: Vec<(i64, i64, i64)> =
                made.iter().map(|c| (i64::from(c.start_line), i64::from(c.end_line), c.start_byte as i64)).collect();
            assert_eq!(places, want);
        }
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
