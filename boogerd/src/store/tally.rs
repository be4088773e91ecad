//! Counts that `status` shows on every call: files, bytes and languages, chunks by kind,
//! and vectors per model. Counting them is a scan of millions of rows on a large project,
//! and the indexer and the embedder write every few hundred milliseconds, so they are
//! counted once and then kept exact by the writes themselves: each write transaction
//! reports its [`Change`] while it still holds the writer, right after it commits.

use std::collections::{BTreeMap, HashMap};

use rusqlite::Connection;

#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Tally {
    /// Files and their bytes, per language.
    pub languages: BTreeMap<String, (u64, u64)>,
    pub kinds: BTreeMap<String, u64>,
    /// Chunks that get no vector for what they are (`bare::is_bare`).
    pub bare: u64,
    pub vectors: HashMap<String, u64>,
}

/// What one committed transaction did to the counts.
#[derive(Debug, Default)]
pub(super) struct Change {
    languages: HashMap<String, (i64, i64)>,
    kinds: HashMap<String, i64>,
    bare: i64,
    vectors: HashMap<String, i64>,
}

/// A chunk row as the counts see it.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Counted {
    pub id: i64,
    pub kind: String,
    /// `bare::is_bare`.
    pub bare: bool,
}

impl Counted {
    /// Reads `id, kind, bare` from columns `at..at + 3` of `r`.
    pub(super) fn read(r: &rusqlite::Row<'_>, at: usize) -> rusqlite::Result<Counted> {
        Ok(Counted { id: r.get(at)?, kind: r.get(at + 1)?, bare: r.get(at + 2)? })
    }
}

/// The columns [`Counted::read`] reads, of the row of `chunks` named `c`.
macro_rules! counted_columns {
    () => {
        concat!("c.id, c.kind, ", super::bare::bare_sql!())
    };
}
pub(super) use counted_columns;

impl Change {
    pub(super) fn file(&mut self, language: &str, files: i64, bytes: i64) {
        let e = slot(&mut self.languages, language);
        e.0 += files;
        e.1 += bytes;
    }

    pub(super) fn chunk(&mut self, kind: &str, bare: bool, by: i64) {
        *slot(&mut self.kinds, kind) += by;
        if bare {
            self.bare += by;
        }
    }

    pub(super) fn vector(&mut self, model: &str, by: i64) {
        *slot(&mut self.vectors, model) += by;
    }
}

/// The entry for `key`, allocating its key only the first time (called once per chunk
/// written).
fn slot<'m, V: Default>(map: &'m mut HashMap<String, V>, key: &str) -> &'m mut V {
    if !map.contains_key(key) {
        map.insert(key.to_owned(), V::default());
    }
    map.get_mut(key).expect("inserted above")
}

impl Tally {
    /// Counts from scratch (on the writer's connection, so no write lands in between).
    pub(super) fn count(c: &Connection) -> rusqlite::Result<Tally> {
        let mut t = Tally::default();
        let mut by_lang =
            c.prepare("SELECT language, count(*), coalesce(sum(size_bytes), 0) FROM files GROUP BY language")?;
        for row in by_lang.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, i64>(2)?)))? {
            let (lang, files, bytes) = row?;
            t.languages.insert(lang, (files as u64, bytes as u64));
        }
        // Counted here, not by `GROUP BY`: chunks have no index on their kind, so SQLite
        // would sort every chunk's kind first, in memory (`temp_store = MEMORY`): two million
        // chunks put 60 MB on the daemon's first `status` after a large index.
        let mut kinds = c.prepare(concat!("SELECT c.kind, ", super::bare::bare_sql!(), " FROM chunks c"))?;
        let mut rows = kinds.query([])?;
        while let Some(r) = rows.next()? {
            t.bare += u64::from(r.get::<_, bool>(1)?);
            let kind = r.get_ref(0)?.as_str().unwrap_or_default();
            match t.kinds.get_mut(kind) {
                Some(n) => *n += 1,
                None => {
                    t.kinds.insert(kind.to_owned(), 1);
                }
            }
        }
        // Counted here too: the vectors have no index on their model (see migration 12).
        let mut by_number: HashMap<i64, u64> = HashMap::new();
        let mut models = c.prepare("SELECT model FROM embeddings")?;
        let mut rows = models.query([])?;
        while let Some(r) = rows.next()? {
            *by_number.entry(r.get(0)?).or_default() += 1;
        }
        let mut names = c.prepare("SELECT id, name FROM embedding_models")?;
        for row in names.query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))? {
            let (number, name) = row?;
            if let Some(&n) = by_number.get(&number) {
                t.vectors.insert(name, n);
            }
        }
        Ok(t)
    }

    pub(super) fn apply(&mut self, change: &Change) {
        let add = |n: &mut u64, by: i64| *n = n.saturating_add_signed(by);
        for (lang, (files, bytes)) in &change.languages {
            let e = self.languages.entry(lang.clone()).or_default();
            add(&mut e.0, *files);
            add(&mut e.1, *bytes);
        }
        for (kind, by) in &change.kinds {
            add(self.kinds.entry(kind.clone()).or_default(), *by);
        }
        add(&mut self.bare, change.bare);
        for (model, by) in &change.vectors {
            add(self.vectors.entry(model.clone()).or_default(), *by);
        }
        self.languages.retain(|_, (files, _)| *files > 0);
        self.kinds.retain(|_, n| *n > 0);
        self.vectors.retain(|_, n| *n > 0);
    }

    /// Chunks that get a vector (`EMBEDDABLE` in `vectors.rs`: all but imports, gaps and
    /// bare chunks).
    pub(super) fn embeddable(&self) -> u64 {
        let kinds: u64 =
            self.kinds.iter().filter(|(k, _)| !matches!(k.as_str(), "import" | "gap")).map(|(_, n)| n).sum();
        kinds.saturating_sub(self.bare)
    }
}
