//! The per-project index database: `<project>/.booger/index.db`.
//!
//! **Architecture invariant: this module is the only place with SQL.** Everything else
//! calls the methods below.
//!
//! One writer connection (SQLite allows one writer; the indexer batches its writes into
//! transactions) and an r2d2 pool of readers, all in WAL mode so reads never wait for the
//! writer. A read-only caller uses [`Store::open_existing`], which never creates `.booger/`.

pub mod context;
mod files;
mod schema;
pub mod search;
pub mod vectors;
pub mod words;

use std::path::{Path, PathBuf};
use std::sync::Mutex;

use r2d2::Pool;
use r2d2_sqlite::SqliteConnectionManager;
use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;

pub use files::{FileState, FileWrite, Stats};

pub const DIR: &str = ".booger";
pub const DB_FILE: &str = "index.db";

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
}

pub type Result<T> = std::result::Result<T, StoreError>;

pub struct Store {
    path: PathBuf,
    writer: Mutex<Connection>,
    readers: Pool<SqliteConnectionManager>,
    /// Bumped by every write: read caches are valid for one generation.
    generation: std::sync::atomic::AtomicU64,
    /// Bumped only when files or chunks change (not by notes): the in-memory ranking index
    /// is valid for one content generation.
    content_generation: std::sync::atomic::AtomicU64,
    cache: Mutex<search::Cache>,
}

impl Store {
    /// Opens the index of `root`, creating `.booger/` (with a `.gitignore` of `*`) if needed.
    pub fn open(root: &Path) -> Result<Store> {
        let dir = root.join(DIR);
        if !dir.is_dir() {
            std::fs::create_dir_all(&dir).map_err(|source| StoreError::Create { path: dir.clone(), source })?;
        }
        let ignore = dir.join(".gitignore");
        if !ignore.exists() {
            std::fs::write(&ignore, "*\n").map_err(|source| StoreError::Create { path: ignore, source })?;
        }
        Self::open_path(&dir.join(DB_FILE))
    }

    /// Opens the index of `root` only if it exists; never creates anything.
    pub fn open_existing(root: &Path) -> Result<Option<Store>> {
        let path = root.join(DIR).join(DB_FILE);
        if !path.is_file() {
            return Ok(None);
        }
        Self::open_path(&path).map(Some)
    }

    fn open_path(path: &Path) -> Result<Store> {
        let sql = |source| StoreError::Sqlite { path: path.to_owned(), source };
        let mut writer = Connection::open(path).map_err(sql)?;
        configure(&writer, WRITER_CACHE_KIB).map_err(sql)?;
        migrate(&mut writer, path)?;
        let manager = SqliteConnectionManager::file(path)
            .with_flags(rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY | rusqlite::OpenFlags::SQLITE_OPEN_NO_MUTEX)
            .with_init(|c| configure(c, READER_CACHE_KIB));
        let readers = Pool::builder()
            .max_size(8)
            .min_idle(Some(0))
            .build(manager)
            .map_err(|source| StoreError::Pool { path: path.to_owned(), source })?;
        let saved: Option<String> = {
            use rusqlite::OptionalExtension;
            writer
                .query_row("SELECT value FROM meta WHERE key = 'generation'", [], |r| r.get(0))
                .optional()
                .map_err(sql)?
        };
        let content_generation = saved.and_then(|g| g.parse().ok()).unwrap_or(0);
        Ok(Store {
            path: path.to_owned(),
            writer: Mutex::new(writer),
            readers,
            generation: std::sync::atomic::AtomicU64::new(0),
            content_generation: std::sync::atomic::AtomicU64::new(content_generation),
            cache: Mutex::new(search::Cache::default()),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Bytes on disk: the database and its WAL.
    pub fn size_on_disk(&self) -> u64 {
        let wal = PathBuf::from(format!("{}-wal", self.path.display()));
        [&self.path, &wal].iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
    }

    fn read<T>(&self, f: impl FnOnce(&Connection) -> rusqlite::Result<T>) -> Result<T> {
        let conn = self.readers.get().map_err(|source| StoreError::Pool { path: self.path.clone(), source })?;
        f(&conn).map_err(|source| StoreError::Sqlite { path: self.path.clone(), source })
    }

    fn write<T>(&self, f: impl FnOnce(&mut Connection) -> rusqlite::Result<T>) -> Result<T> {
        let mut conn = self.writer.lock().unwrap_or_else(|p| p.into_inner());
        let out = f(&mut conn).map_err(|source| StoreError::Sqlite { path: self.path.clone(), source });
        self.generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        out
    }

    /// Changes whenever files or chunks change; saved with them, so it keeps counting up
    /// across restarts (answers carry it as the index generation).
    pub fn content_generation(&self) -> u64 {
        self.content_generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    fn content_changed(&self) {
        self.content_generation.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    }

    /// Changes with every write; equal generations read the same data.
    pub fn generation(&self) -> u64 {
        self.generation.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// Folds the WAL back into the database and truncates it, after a run's writes.
    pub fn checkpoint(&self) -> Result<()> {
        self.write(|c| c.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);"))
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        self.read(|c| {
            use rusqlite::OptionalExtension;
            c.query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0)).optional()
        })
    }

    pub fn set_meta(&self, pairs: &[(&str, &str)]) -> Result<()> {
        self.write(|c| {
            let tx = c.transaction()?;
            for (k, v) in pairs {
                tx.execute("INSERT INTO meta(key, value) VALUES (?1, ?2) ON CONFLICT(key) DO UPDATE SET value = excluded.value", [k, v])?;
            }
            tx.commit()
        })
    }
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

/// Pragmas and functions every connection needs.
fn configure(c: &Connection, cache_kib: u32) -> rusqlite::Result<()> {
    c.busy_timeout(std::time::Duration::from_secs(5))?;
    c.execute_batch(&format!(
        "PRAGMA journal_mode = WAL;
         PRAGMA synchronous = NORMAL;
         PRAGMA foreign_keys = ON;
         PRAGMA temp_store = MEMORY;
         PRAGMA cache_size = -{cache_kib};"
    ))?;
    c.create_scalar_function(
        "booger_words",
        2,
        FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC,
        |ctx| {
            let name: String = ctx.get(0)?;
            let content: String = ctx.get(1)?;
            Ok(words::words_for(&name, &content))
        },
    )
}

fn migrate(c: &mut Connection, path: &Path) -> Result<()> {
    let sql = |source| StoreError::Sqlite { path: path.to_owned(), source };
    let version: i64 = c.query_row("PRAGMA user_version", [], |r| r.get(0)).map_err(sql)?;
    let known = schema::MIGRATIONS.len() as i64;
    if version > known {
        return Err(StoreError::TooNew { path: path.to_owned(), found: version, known });
    }
    for (i, m) in schema::MIGRATIONS.iter().enumerate().skip(version as usize) {
        let tx = c.transaction().map_err(sql)?;
        tx.execute_batch(m).map_err(sql)?;
        tx.pragma_update(None, "user_version", i as i64 + 1).map_err(sql)?;
        tx.commit().map_err(sql)?;
        tracing::info!(db = %path.display(), version = i + 1, "index schema migrated");
    }
    Ok(())
}
