//! Looking a definition up by its name: the `chunks_name` index keys each named chunk by a
//! 31-bit hash of its name ([`name_key`], in SQL `booger_name_key(name)`), not by the name.
//!
//! A lookup by name is exact and rare (a question's identifier, `tests_for`), and the names
//! themselves are in the table: an index of the names repeated them (48 MB of a 36,000-file
//! tree's 1,263 MB index). A key is at most four bytes in the index's rows; a lookup reads the
//! few rows of its key and keeps those whose name is the one asked for.
//!
//! The key is part of every index written: its function may never change. Every connection
//! that writes or deletes chunks registers it ([`register`]); one that only reads (the
//! `sqlite3` shell) needs nothing.

use rusqlite::Connection;
use rusqlite::functions::FunctionFlags;
use rusqlite::types::ValueRef;

/// The names index, as the store makes it (migration 22, and after a first index: see
/// [`super::Store::pause_names_index`]).
pub(super) const NAMES_INDEX: &str =
    "CREATE INDEX IF NOT EXISTS chunks_name ON chunks(booger_name_key(name)) WHERE name <> ''";

/// The lookup a query filters on: `{NAME_MATCH}` with the name as `?1` and its key as `?2`
/// (the key in the index's own form, so that SQLite reads the index; the name so that a
/// name of the same key is not taken for it).
pub(super) const NAME_MATCH: &str = "booger_name_key(c.name) = ?2 AND c.name = ?1 AND c.name <> ''";

/// A name's key: FNV-1a over its bytes, the top bit cleared (a positive integer of at most
/// four bytes in a row).
pub(super) fn name_key(name: &str) -> i64 {
    let mut hash: u32 = 0x811c_9dc5;
    for &b in name.as_bytes() {
        hash ^= u32::from(b);
        hash = hash.wrapping_mul(0x0100_0193);
    }
    i64::from(hash & 0x7fff_ffff)
}

/// Adds `booger_name_key(name)` to `c` (NULL for what is not text).
pub(super) fn register(c: &Connection) -> rusqlite::Result<()> {
    let flags = FunctionFlags::SQLITE_UTF8 | FunctionFlags::SQLITE_DETERMINISTIC | FunctionFlags::SQLITE_INNOCUOUS;
    c.create_scalar_function("booger_name_key", 1, flags, |ctx| {
        Ok(match ctx.get_raw(0) {
            ValueRef::Text(t) => std::str::from_utf8(t).ok().map(name_key),
            _ => None,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The keys of an index already written: a change of the function would make every
    /// index's lookups by name miss.
    #[test]
    fn the_key_is_fixed() {
        assert_eq!(name_key(""), 0x011c_9dc5);
        assert_eq!(name_key("a"), 0xe40c_292c & 0x7fff_ffff, "FNV-1a of `a`, the top bit cleared");
        assert_eq!(name_key("parse_config"), name_key("parse_config"));
        assert_ne!(name_key("parse_config"), name_key("parse_confih"));
        assert!((0..1000).all(|i| (0..=i64::from(i32::MAX)).contains(&name_key(&format!("name_{i}")))));
    }

    /// A lookup by name reads the index, and finds the name among others of its key.
    #[test]
    fn a_lookup_by_name_reads_the_index() {
        let (_dir, root, index) = crate::store::testing::project(&[("a.py", "def alpha():\n    pass\n")]);
        let store = crate::store::Store::open(&index, &root).unwrap();
        crate::engine::index::run(&root, &store, Default::default(), &Default::default()).unwrap();
        let plan: Vec<String> = store
            .read(|c| {
                let sql = format!("EXPLAIN QUERY PLAN SELECT c.id FROM chunks c WHERE {NAME_MATCH}");
                let mut stmt = c.prepare(&sql)?;
                let rows = stmt.query_map(rusqlite::params!["alpha", name_key("alpha")], |r| r.get::<_, String>(3))?;
                rows.collect()
            })
            .unwrap();
        assert!(plan.iter().any(|p| p.contains("USING INDEX chunks_name")), "{plan:?}");
        assert_eq!(store.chunks_named("alpha", &Default::default(), 10).unwrap().len(), 1);
        assert!(store.chunks_named("alphb", &Default::default(), 10).unwrap().is_empty());
    }

    /// An index written before the names were keyed (its names index on the name itself)
    /// gets the keyed one when it is opened, its chunks kept.
    #[test]
    fn an_index_of_the_schema_before_is_keyed_when_opened() {
        let (_dir, root, index) = crate::store::testing::project(&[("a.py", "def alpha():\n    pass\n")]);
        let store = crate::store::Store::open(&index, &root).unwrap();
        crate::engine::index::run(&root, &store, Default::default(), &Default::default()).unwrap();
        let version = crate::store::schema::MIGRATIONS.len() as i64 - 1;
        store
            .write(|c| {
                c.execute_batch("DROP INDEX chunks_name; CREATE INDEX chunks_name ON chunks(name) WHERE name <> '';")?;
                c.pragma_update(None, "user_version", version)
            })
            .unwrap();
        drop(store);
        let store = crate::store::Store::open(&index, &root).unwrap();
        let made: String = store
            .read(|c| c.query_row("SELECT sql FROM sqlite_master WHERE name = 'chunks_name'", [], |r| r.get(0)))
            .unwrap();
        assert!(made.contains("booger_name_key(name)"), "{made}");
        assert_eq!(store.chunks_named("alpha", &Default::default(), 10).unwrap().len(), 1);
    }
}
