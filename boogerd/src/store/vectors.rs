//! Chunk vectors for semantic search, stored per (chunk, model). A chunk's vectors go with
//! it (the store deletes them with their chunk); a re-indexed file's unchanged chunks keep
//! their rows and so their vectors (see `reuse`), and its new chunks are not embedded yet.
//! The encoding of a vector is the embed module's business; here it is a blob.

use booger_proto::tools::ChunkKind;
use rusqlite::params;

use super::bare::bare_sql;
use super::{Result, Store};
use crate::base::sync::Recover;

/// Import chunks are left out: they name modules, they do not say what code does; so are
/// gaps (closing braces, comment rulers), which say nothing, and bare chunks
/// ([`super::bare::is_bare`]).
pub(super) const EMBEDDABLE: &str = concat!("c.kind NOT IN ('import', 'gap') AND NOT ", bare_sql!());

/// Bytes of a chunk's text kept for its vector, when it has no signature and no doc.
const CONTENT_BYTES: usize = 2000;

/// What a chunk is, for building the text its vector is made from.
#[derive(Debug, Clone)]
pub(crate) struct EmbedInput {
    pub id: i64,
    pub path: String,
    pub kind: ChunkKind,
    pub name: String,
    pub signature: String,
    pub parent: Option<String>,
    pub doc: Option<String>,
    /// The start of the content (enough for any embedder's window), for chunks with no
    /// signature and no doc (the others are described without it: see `embed::text`).
    pub content: String,
}

/// How far a model's vectors cover the index.
#[derive(Debug, Clone, Copy, Default, serde::Serialize)]
pub(crate) struct Coverage {
    pub embedded: u64,
    pub embeddable: u64,
}

/// Embeddable chunks with no vector of the model `?1`, for callers to narrow.
fn without_vectors() -> String {
    format!(
        "SELECT c.id, f.path, c.kind, c.name, {}, c.parent, {},
                CASE WHEN c.signature = '' AND coalesce(c.doc, '') = '' AND c.kind <> 'block'
                     THEN booger_text(c.content) END
         FROM chunks c JOIN files f ON f.id = c.file_id
         WHERE {EMBEDDABLE}
           AND NOT EXISTS (SELECT 1 FROM embeddings e WHERE e.chunk_id = c.id AND e.model = {MODEL})",
        super::in_text::signature_of_c!(),
        super::in_text::doc_of_c!()
    )
}

/// The number of the model named `?1` (NULL when it has no vectors yet): a vector names its
/// model by number (see migration 12).
const MODEL: &str = "(SELECT id FROM embedding_models WHERE name = ?1)";

/// `model`'s number, given it the first time one of its vectors is written.
fn numbered(c: &rusqlite::Connection, model: &str) -> rusqlite::Result<i64> {
    c.execute("INSERT OR IGNORE INTO embedding_models(name) VALUES (?1)", [model])?;
    c.query_row("SELECT id FROM embedding_models WHERE name = ?1", [model], |r| r.get(0))
}

fn embed_input(r: &rusqlite::Row<'_>) -> rusqlite::Result<EmbedInput> {
    Ok(EmbedInput {
        id: r.get(0)?,
        path: r.get(1)?,
        kind: crate::source::chunk::kind_named(r.get_ref(2)?.as_str()?),
        name: r.get(3)?,
        signature: r.get(4)?,
        parent: r.get(5)?,
        doc: r.get(6)?,
        content: {
            let text = super::text::read(r, 7)?;
            text[..text.floor_char_boundary(CONTENT_BYTES)].to_owned()
        },
    })
}

impl Store {
    /// Up to `limit` embeddable chunks with no vector of `model` and an id above `after`,
    /// oldest first. A pass continues from the last id it saw: starting over each batch
    /// re-read every chunk embedded so far, quadratic on a large project.
    pub(crate) fn chunks_without_vectors(&self, model: &str, after: i64, limit: usize) -> Result<Vec<EmbedInput>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!("{} AND c.id > ?3 ORDER BY c.id LIMIT ?2", without_vectors()))?;
            let rows = stmt.query_map(params![model, limit as i64, after], embed_input)?;
            rows.collect()
        })
    }

    /// The embeddable chunks of `paths` with no vector of `model`: what an edit added. Costs
    /// those files' chunks, not a pass over the project.
    pub(crate) fn chunks_without_vectors_in(&self, model: &str, paths: &[String]) -> Result<Vec<EmbedInput>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!("{} AND f.path = ?2 ORDER BY c.id", without_vectors()))?;
            let mut out = Vec::new();
            for path in paths {
                for row in stmt.query_map(params![model, path], embed_input)? {
                    out.push(row?);
                }
            }
            Ok(out)
        })
    }

    /// Saves vectors of `model` in one transaction. A chunk deleted since it was read (its
    /// file changed meanwhile) is skipped.
    pub(crate) fn save_vectors(&self, model: &str, vectors: &[(i64, Vec<u8>)]) -> Result<usize> {
        self.write(|c| {
            let tx = c.transaction()?;
            let (mut saved, mut new) = (0, 0);
            {
                let number = numbered(&tx, model)?;
                let mut known = tx.prepare_cached("SELECT 1 FROM embeddings WHERE chunk_id = ?1 AND model = ?2")?;
                let mut insert = tx.prepare_cached(
                    "INSERT OR REPLACE INTO embeddings(chunk_id, model, vector)
                     SELECT ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM chunks WHERE id = ?1)",
                )?;
                for (id, v) in vectors {
                    let replaces = known.exists(params![id, number])?;
                    let n = insert.execute(params![id, number, v])?;
                    saved += n;
                    new += if replaces { 0 } else { n as i64 };
                }
            }
            tx.commit()?;
            // Still holding the writer: the counts change with the commit.
            let mut change = super::tally::Change::default();
            change.vector(model, new);
            self.tallied(&change);
            Ok(saved)
        })
    }

    /// Deletes every vector of `model` (to embed everything again).
    pub(crate) fn drop_vectors(&self, model: &str) -> Result<usize> {
        self.write(|c| {
            let n = c.execute(&format!("DELETE FROM embeddings WHERE model = {MODEL}"), [model])?;
            self.tally_models(|m| m != model);
            Ok(n)
        })
    }

    /// Deletes the vectors of every model not in `keep` (stale ones); returns how many.
    pub(crate) fn drop_other_vectors(&self, keep: &[&str]) -> Result<usize> {
        self.write(|c| {
            let n = c.execute(
                &format!(
                    "DELETE FROM embeddings WHERE model NOT IN (SELECT id FROM embedding_models WHERE name IN ({}))",
                    placeholders(keep)
                ),
                rusqlite::params_from_iter(keep),
            )?;
            self.tally_models(|m| keep.contains(&m));
            Ok(n)
        })
    }

    /// Vectors of models not in `keep`: stale, dropped once the current models cover the index.
    pub(crate) fn stale_vectors(&self, keep: &[&str]) -> Result<u64> {
        self.with_tally(|t| t.vectors.iter().filter(|(m, _)| !keep.contains(&m.as_str())).map(|(_, n)| n).sum())
    }

    pub(crate) fn coverage(&self, model: &str) -> Result<Coverage> {
        self.with_tally(|t| Coverage {
            embedded: t.vectors.get(model).copied().unwrap_or(0),
            embeddable: t.embeddable(),
        })
    }

    /// How many vectors of `model` are stored: whoever loads them reserves once (grown by
    /// doubling, two million vectors' sign bits were briefly held three times over). From
    /// the kept counts when they are there (counting the rows reads every vector); not by
    /// counting them all, which holds the writer.
    pub(crate) fn count_vectors(&self, model: &str) -> Result<usize> {
        if let Some(t) = self.tally.lock().recover().as_ref() {
            return Ok(t.vectors.get(model).copied().unwrap_or(0) as usize);
        }
        self.read(|c| {
            c.query_row(&format!("SELECT count(*) FROM embeddings WHERE model = {MODEL}"), [model], |r| {
                r.get::<_, i64>(0)
            })
        })
        .map(|n| n.max(0) as usize)
    }

    /// Calls `each` with every vector of `model` without holding them all (loading a
    /// project's vectors into memory should cost their size, not twice that).
    pub(crate) fn each_vector(&self, model: &str, mut each: impl FnMut(i64, &[u8])) -> Result<()> {
        self.read(|c| {
            let mut stmt =
                c.prepare_cached(&format!("SELECT chunk_id, vector FROM embeddings WHERE model = {MODEL}"))?;
            let mut rows = stmt.query([model])?;
            while let Some(r) = rows.next()? {
                each(r.get(0)?, r.get_ref(1)?.as_blob()?);
            }
            Ok(())
        })
    }
}

impl Store {
    /// The stored vectors of `model` for these chunks (those that have one).
    pub(crate) fn vectors_of(&self, model: &str, ids: &[i64]) -> Result<Vec<(i64, Vec<u8>)>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let list = ids.iter().map(i64::to_string).collect::<Vec<_>>().join(",");
        self.read(|c| {
            let mut stmt = c.prepare(&format!(
                "SELECT chunk_id, vector FROM embeddings WHERE model = {MODEL} AND chunk_id IN ({list})"
            ))?;
            let rows = stmt.query_map([model], |r| Ok((r.get(0)?, r.get(1)?)))?;
            rows.collect()
        })
    }
}

/// A vector as it travels with a prebuilt index: its chunk's id there, and what makes that
/// chunk the same one here (its bytes in a file of that path and content), so a vector is
/// saved only onto the chunk it was made from, whatever ids the index reused since.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg(feature = "team")]
pub(crate) struct ChunkVector {
    pub chunk_id: i64,
    pub start_byte: i64,
    pub end_byte: i64,
    pub path: String,
    pub content_hash: String,
    pub model: String,
    pub vector: Vec<u8>,
}

impl Store {
    /// Saves `vectors` that came with a prebuilt index, each only onto the chunk it was made
    /// from and only where that chunk has none of its model yet; how many were saved.
    #[cfg(feature = "team")]
    pub(crate) fn save_chunk_vectors(&self, vectors: &[ChunkVector]) -> Result<usize> {
        self.write(|c| {
            let tx = c.transaction()?;
            let mut change = super::tally::Change::default();
            let mut saved = 0;
            {
                // A stream's vectors come model by model.
                let mut number: Option<(&str, i64)> = None;
                // A sender's vector of a bare chunk (an older booger's) is not taken.
                let mut insert = tx.prepare_cached(concat!(
                    "INSERT OR IGNORE INTO embeddings(chunk_id, model, vector)
                     SELECT c.id, ?2, ?3 FROM chunks c JOIN files f ON f.id = c.file_id
                     WHERE c.id = ?1 AND c.start_byte = ?4 AND c.end_byte = ?5 AND f.path = ?6
                       AND f.content_hash = ?7 AND NOT ",
                    bare_sql!()
                ))?;
                for v in vectors {
                    let model_id = match number {
                        Some((model, id)) if model == v.model => id,
                        _ => numbered(&tx, &v.model)?,
                    };
                    number = Some((&v.model, model_id));
                    let n = insert.execute(params![
                        v.chunk_id,
                        model_id,
                        v.vector,
                        v.start_byte,
                        v.end_byte,
                        v.path,
                        v.content_hash
                    ])?;
                    change.vector(&v.model, n as i64);
                    saved += n;
                }
            }
            tx.commit()?;
            self.tallied(&change);
            Ok(saved)
        })
    }
}

/// `?1, ?2, …` for `items` (at least one, so `NOT IN ()` never appears).
fn placeholders<T>(items: &[T]) -> String {
    (1..=items.len().max(1)).map(|i| format!("?{i}")).collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use crate::store::Store;

    #[test]
    fn vectors_follow_their_chunks_and_their_model() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.py"), "import os\n\ndef one():\n    pass\n\ndef two():\n    pass\n").unwrap();
        let store = Store::open(&root.join(".booger"), root).unwrap();
        let progress = crate::engine::index::Progress::default();
        crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();

        let todo = store.chunks_without_vectors("m1", 0, 100).unwrap();
        let names: Vec<&str> = todo.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["one", "two"], "imports are not embedded");
        assert_eq!(
            store.save_vectors("m1", &[(todo[0].id, vec![1]), (todo[1].id, vec![2]), (9999, vec![3])]).unwrap(),
            2
        );
        assert!(store.chunks_without_vectors("m1", 0, 100).unwrap().is_empty());
        let cov = store.coverage("m1").unwrap();
        assert_eq!((cov.embedded, cov.embeddable), (2, 2));
        assert_eq!(store.stale_vectors(&["m1"]).unwrap(), 0);
        assert_eq!(store.chunks_without_vectors("m2", 0, 100).unwrap().len(), 2, "another model starts from nothing");

        // A changed file: a chunk that changed waits for its vector; one that did not (moved
        // up two lines) keeps its vector, now on its new row.
        std::fs::write(root.join("a.py"), "def one():\n    return 1\n\ndef two():\n    pass\n").unwrap();
        crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
        assert_eq!(store.coverage("m1").unwrap().embedded, 1);
        let todo = store.chunks_without_vectors("m1", 0, 100).unwrap();
        assert_eq!(todo.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["one"]);
        assert_tally_exact(&store);
        let two = store.chunks_without_vectors("m2", 0, 100).unwrap().into_iter().find(|c| c.name == "two").unwrap();
        assert_eq!(store.vectors_of("m1", &[two.id]).unwrap(), [(two.id, vec![2])]);
        store.drop_vectors("m1").unwrap();

        let todo = store.chunks_without_vectors("m1", 0, 100).unwrap();
        store.save_vectors("m1", &[(todo[0].id, vec![1])]).unwrap();
        store.save_vectors("m2", &[(todo[0].id, vec![7])]).unwrap();
        assert_eq!(store.stale_vectors(&["m2"]).unwrap(), 1);
        assert_eq!(store.drop_other_vectors(&["m1", "m2"]).unwrap(), 0);
        assert_eq!(store.drop_other_vectors(&["m2"]).unwrap(), 1);
        let mut left = Vec::new();
        store.each_vector("m2", |id, v| left.push((id, v.to_vec()))).unwrap();
        assert_eq!(left, [(todo[0].id, vec![7])]);
        assert_tally_exact(&store);

        // Coverage is kept by the writes: it equals a fresh count after each kind of write.
        std::fs::write(root.join("b.py"), "import sys\n\ndef three():\n    pass\n").unwrap();
        crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
        assert_tally_exact(&store);
        let todo = store.chunks_without_vectors("m2", 0, 100).unwrap();
        store.save_vectors("m2", &todo.iter().map(|c| (c.id, vec![1])).collect::<Vec<_>>()).unwrap();
        store.save_vectors("m2", &[(todo[0].id, vec![2])]).unwrap();
        assert_tally_exact(&store);
        std::fs::remove_file(root.join("a.py")).unwrap();
        crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
        assert_tally_exact(&store);
        crate::engine::index::run(
            root,
            &store,
            crate::engine::index::Options { full: true, ..Default::default() },
            &progress,
        )
        .unwrap();
        assert_tally_exact(&store);
        store.drop_vectors("m2").unwrap();
        assert_tally_exact(&store);
    }

    /// Bare chunks (no doc; one line naming a value or a type, or a function declared
    /// elsewhere) get no vector, and SQL's rule is the writer's: the counts agree with the rows.
    #[test]
    fn bare_chunks_get_no_vector() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(
            root.join("a.c"),
            "#define LIMIT 16\n#define TWICE(x) \\\n    ((x) * 2)\ntypedef int count_t;\nint open_all(void);\nint read_all(int fd,\n             char *buf);\n\n/** Closes every file. */\nint close_all(void);\n",
        )
        .unwrap();
        std::fs::write(
            root.join("b.rs"),
            "pub const MAX: u32 = 1;\n/// The most a queue holds.\npub const QUEUE: u32 = 2;\npub type Id = u64;\n\npub fn run() {\n    go();\n}\n",
        )
        .unwrap();
        let store = Store::open(&root.join(".booger"), root).unwrap();
        let progress = crate::engine::index::Progress::default();
        crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
        let rows: Vec<(String, String, u32, u32, Option<String>, bool)> = store
            .read(|c| {
                let mut s = c.prepare(concat!(
                    "SELECT c.name, c.kind, c.start_line, c.end_line, ",
                    crate::store::in_text::doc_of_c!(),
                    ", ",
                    crate::store::bare::bare_sql!(),
                    " FROM chunks c ORDER BY c.id"
                ))?;
                let rows =
                    s.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))?;
                rows.collect()
            })
            .unwrap();
        for (name, kind, start, end, doc, bare) in &rows {
            let kind = crate::source::chunk::kind_named(kind);
            assert_eq!(crate::store::bare::is_bare(kind, *start, *end, doc.as_deref()), *bare, "{name}");
        }
        let bare: Vec<&str> = rows.iter().filter(|r| r.5).map(|r| r.0.as_str()).collect();
        for wanted in ["LIMIT", "MAX", "Id", "open_all", "read_all"] {
            assert!(bare.contains(&wanted), "{wanted} is bare: {bare:?}");
        }
        let todo = store.chunks_without_vectors("m1", 0, 100).unwrap();
        let names: Vec<&str> = todo.iter().map(|c| c.name.as_str()).collect();
        for wanted in ["TWICE", "close_all", "QUEUE", "run"] {
            assert!(names.contains(&wanted), "{wanted} is embedded: {names:?}");
        }
        assert!(names.iter().all(|n| !bare.contains(n)), "{names:?}");
        assert_eq!(store.coverage("m1").unwrap().embeddable, todo.len() as u64);
        assert_tally_exact(&store);
    }

    /// A vector that came with a prebuilt index lands only on the chunk it was made from: the
    /// same id, bytes, path and file content, and only where there is none yet.
    #[cfg(feature = "team")]
    #[test]
    fn a_received_vector_lands_only_on_its_own_chunk() {
        use super::ChunkVector;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        std::fs::write(root.join("a.py"), "def one():\n    pass\n").unwrap();
        let store = Store::open(&root.join(".booger"), root).unwrap();
        let progress = crate::engine::index::Progress::default();
        crate::engine::index::run(root, &store, crate::engine::index::Options::default(), &progress).unwrap();
        let (id, start, end, hash): (i64, i64, i64, String) = store
            .read(|c| {
                c.query_row(
                    "SELECT c.id, c.start_byte, c.end_byte, f.content_hash FROM chunks c JOIN files f ON f.id = c.file_id
                     WHERE c.name = 'one'",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
            })
            .unwrap();
        let right = ChunkVector {
            chunk_id: id,
            start_byte: start,
            end_byte: end,
            path: "a.py".to_owned(),
            content_hash: hash,
            model: "m1".to_owned(),
            vector: vec![1],
        };
        let wrong = [
            ChunkVector { start_byte: start + 1, ..right.clone() },
            ChunkVector { end_byte: end + 1, ..right.clone() },
            ChunkVector { path: "b.py".to_owned(), ..right.clone() },
            ChunkVector { content_hash: "0".repeat(64), ..right.clone() },
            ChunkVector { chunk_id: id + 1, ..right.clone() },
        ];
        assert_eq!(store.save_chunk_vectors(&wrong).unwrap(), 0);
        assert_eq!(store.save_chunk_vectors(std::slice::from_ref(&right)).unwrap(), 1);
        assert_eq!(store.save_chunk_vectors(&[ChunkVector { vector: vec![2], ..right.clone() }]).unwrap(), 0);
        assert_eq!(store.vectors_of("m1", &[id]).unwrap(), [(id, vec![1])]);
        assert_tally_exact(&store);
    }

    fn assert_tally_exact(store: &Store) {
        let fresh = store.read(crate::store::tally::Tally::count).unwrap();
        assert_eq!(store.with_tally(|t| t.clone()).unwrap(), fresh, "kept counts equal a fresh count");
        for model in ["m1", "m2"] {
            let kept = store.coverage(model).unwrap();
            let counted = fresh.vectors.get(model).copied().unwrap_or(0);
            assert_eq!((kept.embedded, kept.embeddable), (counted, fresh.embeddable()), "model {model}");
        }
        assert_eq!(store.stale_vectors(&["m1"]).unwrap(), fresh.vectors.get("m2").copied().unwrap_or(0));
    }
}
