//! The per-project index database, `index.db` in the folder [`crate::base::storage`] gives the
//! project.
//!
//! **Architecture invariant: this module is the only place with SQL.** Everything else
//! calls the methods below.
//!
//! One writer connection (SQLite allows one writer; the indexer batches its writes into
//! transactions) and an r2d2 pool of readers, all in WAL mode so reads never wait for the
//! writer. A read-only caller uses [`Store::open_existing`], which never creates anything.

pub(crate) mod bag;
mod bare;
mod batch;
mod common_grams;
pub(crate) mod context;
mod dictionaries;
mod files;
pub(crate) mod fulltext;
pub(crate) mod grams;
mod grams_pending;
pub(crate) mod in_text;
mod names;
#[cfg(feature = "team")]
pub(crate) mod prebuilt;
pub(crate) mod recover;
mod reuse;
pub(crate) mod scan;
mod schema;
pub mod search;
mod tally;
#[cfg(feature = "team")]
pub mod team;
#[cfg(test)]
pub(crate) mod testing;
mod text;
pub(crate) mod vectors;
pub(crate) mod words;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use parking_lot::FairMutex;
use r2d2::Pool;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;

pub(crate) use files::{FileState, FileWrite, Stats, Summary};
pub(crate) use text::Packer;

pub(crate) use crate::base::storage::DB_FILE;

use crate::base::sync::Recover;

#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("index database {path}: {source}")]
    Sqlite { path: PathBuf, source: rusqlite::Error },
    #[error("index database {path}: {source}")]
    Pool { path: PathBuf, source: r2d2::Error },
    #[error("cannot create {path}: {source}")]
    Create { path: PathBuf, source: std::io::Error },
    #[error(
        "index database {path} has schema version {found}, newer than this boogerd understands ({known}); upgrade booger"
    )]
    TooNew { path: PathBuf, found: i64, known: i64 },
    #[error("the index run was cancelled: the project was removed")]
    Cancelled,
}

pub(crate) type Result<T> = std::result::Result<T, StoreError>;

pub struct Store {
    path: PathBuf,
    /// Fair: writers waiting get it in turn, so no pass of many batches keeps the others
    /// (the embedding pass, the watcher's edits) waiting until it ends.
    writer: FairMutex<Connection>,
    /// Set by [`close`](Self::close): every later write is refused, so the checkpoint made
    /// there is the last write (a background pass still holding the store cannot leave
    /// newer pages in the write-ahead log after the daemon stops).
    closed: std::sync::atomic::AtomicBool,
    /// A large run's WAL is waiting for the next [`Store::checkpoint`] (see
    /// [`Store::bulk_writes`]).
    bulk: std::sync::atomic::AtomicBool,
    readers: Pool<SqliteConnectionManager>,
    /// Bumped by every write (notes and focus too): read caches are valid for one count.
    writes: std::sync::atomic::AtomicU64,
    /// Bumped only when files or chunks change (not by notes): the ranking index
    /// is valid for one content generation.
    content_generation: std::sync::atomic::AtomicU64,
    cache: Mutex<search::Cache>,
    /// Bumped after every commit of files or chunks (after, unlike `content_generation`).
    file_commits: std::sync::atomic::AtomicU64,
    /// What `status` shows of the index, computed once per file commit: on a large
    /// index each part is a full scan.
    summary: Mutex<Option<(u64, std::sync::Arc<files::Summary>)>>,
    /// Chunks that can be embedded and vectors per model: counted once, then kept by the
    /// writes (`None` until first asked).
    tally: Mutex<Option<tally::Tally>>,
    /// The problem files of one files generation (a scan of `files`: asked for by every
    /// `status` and every refresh of the status page).
    problems: Mutex<Option<(u64, files::Problems)>>,
    /// A query found the database (or the notes) damaged: what SQLite said.
    damage: Mutex<Option<String>>,
    /// `meta` values read on every query (a project's calibration), until `set_meta`.
    meta_cache: Mutex<std::collections::HashMap<String, Option<std::sync::Arc<str>>>>,
    /// The dictionaries short chunk texts are compressed with (`text`).
    texts: std::sync::Arc<dictionaries::Dictionaries>,
}

/// Where a database with no content yet starts counting its content generations: the
/// microseconds since the epoch. A ranking index on disk is trusted when its generation equals
/// the store's, so a database made anew (emptied by a crash, deleted by hand) must never count
/// through a number its predecessor reached: that one counted from an earlier start, at most
/// once per write, and writes are far rarer than one a microsecond.
fn first_generation() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_micros() as u64)
}

impl Store {
    /// Opens the index in `dir` (the project's index folder, see [`crate::base::storage`]),
    /// creating the folder and the database, private to the user, if needed.
    pub fn open(dir: &Path, root: &Path) -> Result<Store> {
        let path = dir.join(DB_FILE);
        crate::base::storage::prepare(dir, root)
            .and_then(|()| crate::base::storage::create_private_file(&path))
            .map_err(|source| StoreError::Create { path: path.clone(), source })?;
        Self::open_path(&path)
    }

    /// Opens the index in `dir` only if it exists; never creates anything.
    pub fn open_existing(dir: &Path) -> Result<Option<Store>> {
        let path = dir.join(DB_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        Self::open_path(&path).map(Some)
    }

    fn open_path(path: &Path) -> Result<Store> {
        let sql = |source| StoreError::Sqlite { path: path.to_owned(), source };
        let mut writer = Connection::open(path).map_err(sql)?;
        configure(&writer, WRITER_CACHE_KIB).map_err(sql)?;
        let notes = path.with_file_name(crate::base::storage::NOTES_FILE);
        context::open_notes(&mut writer, &notes)?;
        // Before the migrations: they make the full-text table, with its tokenizer.
        register_chunk_functions(&writer).map_err(sql)?;
        migrate(&mut writer, "main", schema::MIGRATIONS, path)?;
        let texts = std::sync::Arc::new(dictionaries::Dictionaries::load(&writer).map_err(sql)?);
        text::register(&writer, texts.clone()).map_err(sql)?;
        fulltext::refill_if_asked(&mut writer, &texts).map_err(sql)?;
        let reader_texts = texts.clone();
        // A first index stopped before it made its names index (see `names::NAMES_INDEX`).
        writer.execute_batch(names::NAMES_INDEX).map_err(sql)?;
        let manager = SqliteConnectionManager::file(path)
            .with_flags(rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(move |c| {
                configure(c, READER_CACHE_KIB)?;
                text::register(c, reader_texts.clone())?;
                register_chunk_functions(c)?;
                // `rarray(?)`: a list of ids as one parameter (grep's candidates).
                rusqlite::vtab::array::load_module(c)?;
                context::attach_notes(c, &notes)
            });
        let readers = Pool::builder()
            .max_size(8)
            .min_idle(Some(0))
            // No reaper: it would wake every 30 s per project. Idle connections go when the
            // daemon releases an idle project's whole store.
            .idle_timeout(None)
            .max_lifetime(None)
            .thread_pool(pool_thread())
            .build(manager)
            .map_err(|source| StoreError::Pool { path: path.to_owned(), source })?;
        let saved: Option<String> = {
            use rusqlite::OptionalExtension;
            writer
                .query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| r.get(0))
                .optional()
                .map_err(sql)?
        };
        let content_generation = saved.and_then(|g| g.parse().ok()).unwrap_or_else(first_generation);
        Ok(Store {
            path: path.to_owned(),
            writer: FairMutex::new(writer),
            closed: std::sync::atomic::AtomicBool::new(false),
            bulk: std::sync::atomic::AtomicBool::new(false),
            readers,
            writes: std::sync::atomic::AtomicU64::new(0),
            content_generation: std::sync::atomic::AtomicU64::new(content_generation),
            cache: Mutex::new(search::Cache::default()),
            file_commits: std::sync::atomic::AtomicU64::new(0),
            summary: Mutex::default(),
            tally: Mutex::default(),
            problems: Mutex::default(),
            damage: Mutex::default(),
            meta_cache: Mutex::default(),
            texts,
        })
    }

    /// What compresses chunk texts as this store keeps them (a file's, where it is chunked).
    pub(crate) fn packer(&self) -> Packer {
        text::Packer::of(&self.texts)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes on disk: the database, its WAL and whatever else is in its folder.
    pub(crate) fn size_on_disk(&self) -> u64 {
        self.path.parent().map_or(0, crate::base::storage::size_on_disk)
    }

    /// Runs `f` on a reader; past the calling thread's deadline (a heavy call's, see
    /// [`crate::base::deadline`]) its statements are interrupted.
    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let conn = self.readers.get().map_err(|source| StoreError::Pool { path: self.path.clone(), source })?;
        let deadline = crate::base::deadline::current();
        if let Some(deadline) = deadline {
            // Checked every few thousand virtual-machine steps: some microseconds apart.
            conn.progress_handler(4_000, Some(move || std::time::Instant::now() > deadline))
                .map_err(|s| self.failed(s))?;
        }
        let out = f(&conn).map_err(|source| self.failed(source));
        if deadline.is_some() {
            let _ = conn.progress_handler(0, None::<fn() -> bool>);
        }
        out
    }

    fn write<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T> {
        let mut conn = self.writer.lock();
        if self.closed.load(std::sync::atomic::Ordering::SeqCst) {
            return Err(StoreError::Cancelled);
        }
        let out = f(&mut conn).map_err(|source| self.failed(source));
        self.writes.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        out
    }

    /// Every SQLite error of a read or write passes here: damage is remembered, for the
    /// project to set the index aside after the call (see [`take_damage`](Self::take_damage)).
    fn failed(&self, source: rusqlite::Error) -> StoreError {
        let e = StoreError::Sqlite { path: self.path.clone(), source };
        if e.is_corrupt() {
            let mut damage = self.damage.lock().recover();
            damage.get_or_insert_with(|| e.to_string());
        }
        e
    }

    /// What SQLite said when a query found the database damaged, if one did since last asked.
    pub(crate) fn take_damage(&self) -> Option<String> {
        self.damage.lock().recover().take()
    }

    /// Reads the counts of [`tally::Tally`], counting them first if nobody has asked yet.
    fn with_tally<T>(&self, f: impl FnOnce(&tally::Tally) -> T) -> Result<T> {
        if let Some(t) = self.tally.lock().recover().as_ref() {
            return Ok(f(t));
        }
        // Counted on the writer's connection, holding it: no write can land in between.
        let conn = self.writer.lock();
        let counted = tally::Tally::count(&conn).map_err(|source| self.failed(source))?;
        let out = f(&counted);
        *self.tally.lock().recover() = Some(counted);
        Ok(out)
    }

    /// True if the index holds no file (one row read).
    #[cfg(feature = "team")]
    pub(crate) fn is_empty(&self) -> Result<bool> {
        self.read(|c| c.query_row("SELECT NOT EXISTS (SELECT 1 FROM files)", [], |r| r.get(0)))
    }

    /// A committed write changed the counts.
    fn tallied(&self, change: &tally::Change) {
        if let Some(t) = self.tally.lock().recover().as_mut() {
            t.apply(change);
        }
    }

    /// Vectors of the models `keep` refuses were deleted.
    fn tally_models(&self, keep: impl Fn(&str) -> bool) {
        if let Some(t) = self.tally.lock().recover().as_mut() {
            t.vectors.retain(|m, _| keep(m));
        }
    }

    /// Changes whenever files or chunks change; saved with them, so it keeps counting up
    /// across restarts (answers carry it as the index generation).
    pub(crate) fn content_generation(&self) -> u64 {
        self.content_generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn content_changed(&self) {
        self.content_generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Changes with every write; equal counts read the same data.
    pub(crate) fn write_count(&self) -> u64 {
        self.writes.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Folds the WAL back into the database and truncates it, after a run's writes or a
    /// background pass; ends a large run's bulk writing (see [`Store::bulk_writes`]).
    pub(crate) fn checkpoint(&self) -> Result<()> {
        let bulk = self.bulk.swap(false, std::sync::atomic::Ordering::SeqCst);
        self.write(|c| {
            if bulk {
                c.execute_batch(&format!("PRAGMA wal_autocheckpoint = {};", batch::CHECKPOINT_PAGES))?;
            }
            c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);")
        })
    }

    /// Whether a large run's WAL waits for the background pass after it to fold it back.
    pub(crate) fn folds_later(&self) -> bool {
        self.bulk.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// The project is let go (removed, or the daemon stops): the WAL is folded back and
    /// truncated, and every write after it is refused ([`StoreError::Cancelled`]).
    pub(crate) fn close(&self) -> Result<()> {
        let conn = self.writer.lock();
        self.closed.store(true, std::sync::atomic::Ordering::SeqCst);
        conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);").map_err(|source| self.failed(source))
    }

    /// SQLite's `quick_check`: `ok`, or what is wrong.
    pub fn integrity_check(&self) -> Result<String> {
        self.read(|c| c.query_row("PRAGMA quick_check", [], |r| r.get(0)))
    }

    pub(crate) fn meta(&self, key: &str) -> Result<Option<String>> {
        self.read(|c| {
            use rusqlite::OptionalExtension;
            c.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()
        })
    }

    /// `meta(key)`, read once and kept until `set_meta` changes it.
    pub(crate) fn cached_meta(&self, key: &str) -> Result<Option<std::sync::Arc<str>>> {
        // Read under the lock (once per key), so `set_meta` cannot slip in between.
        let mut cache = self.meta_cache.lock().recover();
        if let Some(v) = cache.get(key) {
            return Ok(v.clone());
        }
        let v: Option<std::sync::Arc<str>> = self.meta(key)?.map(Into::into);
        cache.insert(key.to_owned(), v.clone());
        Ok(v)
    }

    pub(crate) fn set_meta(&self, pairs: &[(&str, &str)]) -> Result<()> {
        // Held over the write: a reader cannot put the old value back in between.
        let mut cache = self.meta_cache.lock().recover();
        for (k, _) in pairs {
            cache.remove(*k);
        }
        self.write(|c| {
            let tx = c.transaction()?;
            for (k, v) in pairs {
                tx.execute("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [k, v])?;
            }
            tx.commit()
        })
    }
}

/// The one thread every reader pool shares for its housekeeping (r2d2 starts three per pool
/// by default, which made threads grow with projects).
pub(crate) fn pool_thread() -> std::sync::Arc<scheduled_thread_pool::ScheduledThreadPool> {
    static POOL: std::sync::OnceLock<std::sync::Arc<scheduled_thread_pool::ScheduledThreadPool>> =
        std::sync::OnceLock::new();
    POOL.get_or_init(|| {
        std::sync::Arc::new(
            scheduled_thread_pool::ScheduledThreadPool::builder()
                .num_threads(1)
                .thread_name_pattern("booger-pool")
                .build(),
        )
    })
    .clone()
}

/// Records the content generation in the transaction that changes the content.
fn save_generation(tx: &rusqlite::Transaction, generation: u64) -> rusqlite::Result<()> {
    tx.execute(
        "INSERT INTO meta(key, value) VALUES ('generation', ?1) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
        [generation.to_string()],
    )?;
    Ok(())
}

/// Page cache of the one writer: index runs rewrite the same B-tree pages over and over.
const WRITER_CACHE_KIB: u32 = 16_000;
/// Page cache of each reader (up to 8 per project, each kept while it is reused): queries
/// touch a few pages each, and the OS caches the file anyway. SQLite's default size; at the
/// writer's size, readers warmed by embedding and hybrid queries held ~50 MB more RSS.
const READER_CACHE_KIB: u32 = 2_000;

/// Pragmas every connection needs. Foreign keys are off (the bundled SQLite turns them on by
/// default): the store removes a file's chunks, their full-text rows and their vectors
/// itself, because a cascade, like a trigger, runs its statement under a savepoint, where
/// FTS5 flushes (see migration 3 in `schema.rs`).
/// Registers the SQL functions every connection that reads or writes chunks may call: the
/// full-text table's tokenizer and ranking, the names index's key, and what a chunk's text
/// already holds (`booger_text`, which needs the index's dictionaries, apart).
pub(super) fn register_chunk_functions(c: &Connection) -> rusqlite::Result<()> {
    fulltext::register(c)?;
    names::register(c)?;
    in_text::register(c)
}

fn configure(c: &Connection, cache_kib: u32) -> rusqlite::Result<()> {
    c.busy_timeout(std::time::Duration::from_secs(5))?;
    c.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = NORMAL;
         PRAGMA foreign_keys = OFF;
         PRAGMA temp_store = MEMORY;
         PRAGMA cache_size = -{cache_kib};"
    ))
}

/// Brings the database attached as `schema` (whose file is `path`) up to `migrations`.
fn migrate(c: &mut Connection, schema: &str, migrations: &[&str], path: &Path) -> Result<()> {
    let sql = |source| StoreError::Sqlite { path: path.to_owned(), source };
    let version: i64 = c.query_row(&format!("PRAGMA {schema}.user_version"), [], |r| r.get(0)).map_err(sql)?;
    let known = migrations.len() as i64;
    if version > known {
        return Err(StoreError::TooNew { path: path.to_owned(), found: version, known });
    }
    for (i, m) in migrations.iter().enumerate().skip(version as usize) {
        let tx = c.transaction().map_err(sql)?;
        tx.execute_batch(m).map_err(sql)?;
        tx.pragma_update(Some(schema), "user_version", i as i64 + 1).map_err(sql)?;
        tx.commit().map_err(sql)?;
        tracing::info!(db = %path.display(), version = i + 1, "schema migrated");
    }
    Ok(())
}
