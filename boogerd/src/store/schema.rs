//! The index schema and its migrations.
//!
//! Migrations are applied in order against `PRAGMA user_version`, each in one transaction.
//! Never edit or remove an entry: add a new one. The layout follows the seeds' schema v5
//! (files, chunks, chunks_fts, embeddings, annotations, workset, meta).

/// `MIGRATIONS[i]` brings a database from version `i` to `i + 1`.
pub(super) const MIGRATIONS: &[&str] = &[
    // 1: the index.
    r#"
    CREATE TABLE meta (
        key   TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );
    CREATE TABLE files (
        id           INTEGER PRIMARY KEY,
        path         TEXT NOT NULL UNIQUE,
        content_hash TEXT NOT NULL,
        size_bytes   INTEGER NOT NULL,
        mtime_ns     INTEGER NOT NULL,
        language     TEXT NOT NULL,
        indexed_at   TEXT NOT NULL,
        -- Why the file was not chunked structurally (parse timeout, too large, not UTF-8).
        problem      TEXT
    );
    -- content last: the ranking reads the other columns of hundreds of rows per query, and
    -- SQLite reads a row's columns in order (through overflow pages for long content).
    CREATE TABLE chunks (
        id         INTEGER PRIMARY KEY,
        file_id    INTEGER NOT NULL REFERENCES files(id) ON DELETE CASCADE,
        kind       TEXT NOT NULL,
        name       TEXT NOT NULL DEFAULT '',
        start_line INTEGER NOT NULL,
        end_line   INTEGER NOT NULL,
        start_byte INTEGER NOT NULL,
        end_byte   INTEGER NOT NULL,
        signature  TEXT NOT NULL DEFAULT '',
        parent     TEXT,
        doc        TEXT,
        content    TEXT NOT NULL
    );
    CREATE INDEX chunks_file ON chunks(file_id);
    CREATE INDEX chunks_name ON chunks(name) WHERE name <> '';

    -- Contentless: the text lives once, in chunks; rows are deleted by rowid. `words` holds
    -- mixed-case identifiers split into words. (Path words rank files in the daemon's
    -- in-memory ranking index, which answers most queries; repeating every chunk's path here
    -- cost 9% of the index on disk for header-heavy trees.)
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        name, content, words,
        content = '',
        contentless_delete = 1,
        tokenize = 'porter unicode61'
    );
    CREATE TRIGGER chunks_ai AFTER INSERT ON chunks BEGIN
        INSERT INTO chunks_fts(rowid, name, content, words)
        VALUES (new.id, new.name, new.content, booger_words(new.name, new.content));
    END;
    CREATE TRIGGER chunks_ad AFTER DELETE ON chunks BEGIN
        DELETE FROM chunks_fts WHERE rowid = old.id;
    END;
    CREATE TRIGGER chunks_au AFTER UPDATE OF name, content ON chunks BEGIN
        DELETE FROM chunks_fts WHERE rowid = old.id;
        INSERT INTO chunks_fts(rowid, name, content, words)
        VALUES (new.id, new.name, new.content, booger_words(new.name, new.content));
    END;

    CREATE TABLE embeddings (
        chunk_id   INTEGER PRIMARY KEY REFERENCES chunks(id) ON DELETE CASCADE,
        model      TEXT NOT NULL,
        embedding  BLOB NOT NULL
    );
    -- Volatile context belongs to the agents: it survives re-indexing and file deletion.
    CREATE TABLE annotations (
        id         INTEGER PRIMARY KEY,
        target     TEXT NOT NULL,
        note       TEXT NOT NULL,
        session_id TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT
    );
    CREATE TABLE workset (
        id         INTEGER PRIMARY KEY,
        path       TEXT NOT NULL,
        kind       TEXT NOT NULL CHECK (kind IN ('focus', 'visited')),
        session_id TEXT,
        created_at TEXT NOT NULL
    );
    "#,
    // 2: a vector per (chunk, model), so two embedders' vectors can live side by side and a
    // model change leaves the other's intact. The table was never written before.
    r#"
    DROP TABLE embeddings;
    CREATE TABLE embeddings (
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        model    TEXT NOT NULL,
        vector   BLOB NOT NULL,
        PRIMARY KEY (chunk_id, model)
    ) WITHOUT ROWID;
    CREATE INDEX embeddings_model ON embeddings(model);
    "#,
    // 3: the full-text rows are written by the store itself, not by triggers. A statement
    // that fires a trigger (or a foreign-key cascade) runs under a statement savepoint, and
    // FTS5 flushes its pending rows to a new segment at every savepoint: one tiny segment per
    // chunk, merged again and again (on a large index a 900-file batch spent most of its
    // time merging). Written directly, the rows of a whole transaction become one segment.
    r#"
    DROP TRIGGER IF EXISTS chunks_ai;
    DROP TRIGGER IF EXISTS chunks_ad;
    DROP TRIGGER IF EXISTS chunks_au;
    "#,
    // 4: the agents' notes and work set move to their own database (`notes.db`, attached as
    // `notes`), so that setting a damaged index aside and rebuilding it cannot lose them.
    r#"
    INSERT OR IGNORE INTO notes.annotations SELECT * FROM main.annotations;
    INSERT OR IGNORE INTO notes.workset SELECT * FROM main.workset;
    DROP TABLE main.annotations;
    DROP TABLE main.workset;
    "#,
    // 5: every chunk's text by trigram, for `grep`: a regex's literals narrow it to the few
    // chunks that can match before the regex engine confirms. Contentless (the text is in
    // `chunks`), no positions: only which chunks hold which trigrams, about 0.4x the source
    // on disk. (Deleting rows of a contentless table needs its column sizes.) Left unfilled
    // now: migration 6 replaces it.
    r#"
    CREATE VIRTUAL TABLE chunks_tri USING fts5(
        content,
        content = '',
        contentless_delete = 1,
        tokenize = 'trigram',
        detail = 'none'
    );
    "#,
    // 6: each chunk's distinct trigrams, taken by booger (`store::grams`) rather than by
    // FTS5's tokenizer: FTS5 sees each once (the standard library: 12 million tokens instead
    // of 31). Files whose rows are not written yet are listed in `grams_pending` (a large run
    // leaves them to a background pass, which had made full indexing 55% slower); grep reads
    // those whole.
    r#"
    DROP TABLE chunks_tri;
    CREATE VIRTUAL TABLE chunk_grams USING fts5(
        grams,
        content = '',
        contentless_delete = 1,
        tokenize = 'ascii',
        detail = 'none'
    );
    CREATE TABLE grams_pending (file_id INTEGER PRIMARY KEY);
    INSERT INTO grams_pending SELECT id FROM files;
    "#,
    // 7: the chunker now keeps every line of a file in some chunk (a comment after an item on
    // its line, runs of closing braces and rulers as `gap` chunks), so that grep finds what
    // `rg` finds. The index is emptied and the next run indexes every file afresh, 5x faster
    // than replacing each file's chunks (25,000 files: 52 s against 292 s). The generation
    // moves on so that no ranking segment of the old chunks is taken for current.
    r#"
    DELETE FROM embeddings;
    DELETE FROM grams_pending;
    INSERT INTO chunks_fts(chunks_fts) VALUES ('delete-all');
    INSERT INTO chunk_grams(chunk_grams) VALUES ('delete-all');
    DELETE FROM chunks;
    DELETE FROM files;
    UPDATE meta SET value = CAST(value AS INTEGER) + 1 WHERE key = 'generation';
    "#,
    // 8: the trigram rows now frame each chunk with newlines (so `^` and `$` narrow) and hold
    // the shapes of its characters (for patterns without a literal): written again by the
    // background pass, which reads the chunks already stored; grep reads the files still
    // pending whole meanwhile.
    r#"
    INSERT INTO chunk_grams(chunk_grams) VALUES ('delete-all');
    DELETE FROM grams_pending;
    INSERT INTO grams_pending SELECT id FROM files;
    "#,
    // 9: JavaScript and TypeScript test-runner calls (`describe`, `it`) are now `test` chunks.
    // Those files are marked as changed, so the next run chunks them again through the usual
    // path (the file's old chunks replaced in one transaction); the rest are untouched.
    r#"
    UPDATE files SET mtime_ns = -1, content_hash = ''
    WHERE language IN ('javascript', 'typescript', 'tsx');
    "#,
    // 10: Java, Kotlin, C#, C++, Ruby, PHP, Swift, Scala, Lua, Bash and Elixir are chunked
    // structurally, and a `.h` header that reads as C++ is C++: files stored as plain text or C
    // are chunked again by the next run, as in 9.
    r#"
    UPDATE files SET mtime_ns = -1, content_hash = ''
    WHERE language IN ('text', 'c');
    "#,
    // 11: the trigram rows leave out the 512 most common byte trigrams (`common_grams.rs`, a
    // third of the tokens FTS5 took), and both FTS5 tables merge 16 segments of a level rather
    // than 4: a transaction flushes a segment, and merging them was a fifth of the trigram
    // pass and an eighth of an index run's writer (/usr/include: 10.9 s -> 9.5 s, median of
    // four; an FTS5 query reads more segments, about 1 ms more for `references`). The
    // trigram rows are written again by the background pass; grep reads the files still
    // pending whole meanwhile.
    r#"
    INSERT INTO chunk_grams(chunk_grams) VALUES ('delete-all');
    INSERT INTO chunk_grams(chunk_grams, rank) VALUES ('automerge', 16);
    INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('automerge', 16);
    DELETE FROM grams_pending;
    INSERT INTO grams_pending SELECT id FROM files;
    "#,
    // 12: vectors are stored in 4 bits a dimension (`domain::embed::vectors`), and name their
    // model by a number into `embedding_models`, with no index on it: on /usr/include the
    // vectors took 212 MB rather than 245, the model's index 25 MB more, of a 699 MB index.
    // A model's vectors are read in one pass over the table, as they were through the
    // index; a chunk's by its key. The stored vectors are dropped: the embedding tiers make
    // them again in the background, as after a fresh index.
    r#"
    DROP TABLE embeddings;
    DROP TABLE IF EXISTS embedding_models;
    CREATE TABLE embedding_models (
        id   INTEGER PRIMARY KEY,
        name TEXT NOT NULL UNIQUE
    );
    CREATE TABLE embeddings (
        chunk_id INTEGER NOT NULL REFERENCES chunks(id) ON DELETE CASCADE,
        model    INTEGER NOT NULL,
        vector   BLOB NOT NULL,
        PRIMARY KEY (chunk_id, model)
    ) WITHOUT ROWID;
    "#,
    // 13: a short chunk's signature that starts its content is stored as its length
    // (`store::signature`): 28 of the 41 MB of signatures in /usr/include's index.
    r#"
    UPDATE chunks SET signature = CAST(CAST(length(signature) AS TEXT) AS BLOB)
    WHERE typeof(signature) = 'text' AND signature <> '' AND length(CAST(content AS BLOB)) <= 1000
      AND substr(content, 1, length(signature)) = signature;
    "#,
    // 14: a chunk's text past 1,000 bytes is written compressed (`store::text`); rows written
    // before stay text, and read as they are. The version marks the format: an index file
    // offered with a published commit is taken only by a booger that reads it.
    r#"
    DELETE FROM meta WHERE 0;
    "#,
    // 15: an FTS5 segment is rewritten for its deleted rows once half of them are deleted,
    // not a tenth (FTS5's default). A checkout rewrites a part of the files, whose old rows sit
    // in the large segment the first index wrote: past a tenth, the transaction that deleted
    // them rewrote that whole segment at its commit (axum, 300 commits apart: 13.6% of the
    // rows; the commit 74 ms of the run's 116 ms of writes). Levels still merge 16 at a time,
    // which drops the deleted rows as well.
    r#"
    INSERT INTO chunk_grams(chunk_grams, rank) VALUES ('deletemerge', 50);
    INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('deletemerge', 50);
    "#,
    // 16: a trigram row covers a few consecutive chunks of a file (`store::grams`, its id says
    // which), not one: the rows are written again by the background pass; grep reads the
    // files still pending whole meanwhile.
    r#"
    INSERT INTO chunk_grams(chunk_grams) VALUES ('delete-all');
    DELETE FROM grams_pending;
    INSERT INTO grams_pending SELECT id FROM files;
    "#,
    // 17: bare chunks (one line, no doc: a constant, a `#define`, a type alias) get no vector
    // (`store::bare`): on /usr/include they held 350,000 of 775,000 vectors. The rule is
    // written out, not taken from `bare.rs`: a migration stays as it ran, the rule may move on.
    r#"
    DELETE FROM embeddings WHERE chunk_id IN (
        SELECT id FROM chunks
        WHERE start_line = end_line AND coalesce(doc, '') = ''
          AND kind IN ('const', 'macro', 'block', 'impl', 'mod', 'namespace', 'typedef', 'type'));
    "#,
    // 18: short chunk texts are compressed with the project's dictionaries (`store::text`),
    // trained from its own chunks as the index grows; rows written before stay as they are.
    r#"
    CREATE TABLE IF NOT EXISTS text_dicts (
        id     INTEGER PRIMARY KEY,
        chunks INTEGER NOT NULL,
        dict   BLOB NOT NULL
    );
    "#,
    // 19: C prototypes without a doc join the bare chunks (`store::bare`): no vector (on
    // /usr/include 175,000 of the 402,000 vectors left after migration 17). Written out, as
    // 17 is.
    r#"
    DELETE FROM embeddings WHERE chunk_id IN (
        SELECT id FROM chunks WHERE coalesce(doc, '') = '' AND kind = 'declaration');
    "#,
    // 20: the full-text rows keep which columns hold a word, not where (`store::fulltext`):
    // positions were half of them and a fifth of the writer's time, and no query
    // needs them. A layout is fixed when a table is made, so the table is made again and
    // refilled from the chunks when the store opens (`fulltext::refill_if_asked`).
    r#"
    DROP TABLE chunks_fts;
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        name, content, words,
        content = '',
        contentless_delete = 1,
        detail = 'column',
        tokenize = 'porter unicode61'
    );
    INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('automerge', 16);
    INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('deletemerge', 50);
    INSERT OR REPLACE INTO meta(key, value) SELECT 'fulltext_refill', '1' WHERE EXISTS (SELECT 1 FROM chunks);
    "#,
    // 21: the full-text rows are written as terms made where the chunks were made
    // (`store::words::ChunkWords`), read back by booger's own tokenizer (`fulltext`): split and
    // stemmed as the ranking index splits and stems (Snowball English; FTS5's `porter
    // unicode61` stemmed otherwise and folded accents), so both find the same chunks for a
    // word, and the one writer no longer splits and stems every word. Refilled from the
    // chunks when the store opens, as after 20.
    r#"
    DROP TABLE chunks_fts;
    CREATE VIRTUAL TABLE chunks_fts USING fts5(
        name, content, words,
        content = '',
        contentless_delete = 1,
        detail = 'column',
        tokenize = 'booger'
    );
    INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('automerge', 16);
    INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('deletemerge', 50);
    INSERT OR REPLACE INTO meta(key, value) SELECT 'fulltext_refill', '1' WHERE EXISTS (SELECT 1 FROM chunks);
    "#,
    // 22: the names index keys a chunk by a hash of its name (`store::names`), not by the
    // name the table already holds: the large tree's names index 48 -> 22.9 MB.
    r#"
    DROP INDEX IF EXISTS chunks_name;
    CREATE INDEX chunks_name ON chunks(booger_name_key(name)) WHERE name <> '';
    "#,
];

/// `NOTES_MIGRATIONS[i]` brings the notes database (attached as `notes`) from version `i` to
/// `i + 1`. Volatile context belongs to the agents: it survives re-indexing, file deletion and
/// a rebuild of the index.
pub(super) const NOTES_MIGRATIONS: &[&str] = &[
    // 1: annotations and the work set (focus, visited), by session (NULL: shared).
    r#"
    CREATE TABLE notes.annotations (
        id         INTEGER PRIMARY KEY,
        target     TEXT NOT NULL,
        note       TEXT NOT NULL,
        session_id TEXT,
        created_at TEXT NOT NULL,
        expires_at TEXT
    );
    CREATE TABLE notes.workset (
        id         INTEGER PRIMARY KEY,
        path       TEXT NOT NULL,
        kind       TEXT NOT NULL CHECK (kind IN ('focus', 'visited')),
        session_id TEXT,
        created_at TEXT NOT NULL
    );
    "#,
];

#[cfg(test)]
mod tests {
    use crate::engine::index::{Options, Progress, run};
    use crate::store::Store;

    /// A database made anew where one was (emptied, deleted) never reaches a content
    /// generation its predecessor had: a ranking index on disk built for the old one must
    /// not pass for current.
    #[test]
    fn a_database_made_anew_counts_past_its_predecessor() {
        let (_dir, root, index) = crate::store::testing::project(&[("a.rs", "fn alpha() {}\n")]);
        let old = {
            let store = Store::open(&index, &root).unwrap();
            run(&root, &store, Options::default(), &Progress::default()).unwrap();
            store.content_generation()
        };
        std::fs::File::create(index.join(crate::store::DB_FILE)).unwrap();
        let store = Store::open(&index, &root).unwrap();
        run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert!(store.content_generation() > old, "{} after {old}", store.content_generation());
    }

    /// Both full-text tables merge 16 segments of a level, and rewrite a segment for its
    /// deleted rows only once half of them are gone (migrations 11 and 15).
    #[test]
    fn full_text_tables_merge_by_level_and_late_for_deleted_rows() {
        let (_dir, root, index) = crate::store::testing::project(&[("a.rs", "fn alpha() {}\n")]);
        let store = Store::open(&index, &root).unwrap();
        for table in ["chunks_fts", "chunk_grams"] {
            let sql = format!(
                "SELECT group_concat(k || '=' || v, ' ') FROM
                 (SELECT k, v FROM {table}_config WHERE k IN ('automerge', 'deletemerge') ORDER BY k)"
            );
            let config: String = store.read(|c| c.query_row(&sql, [], |r| r.get(0))).unwrap();
            assert_eq!(config, "automerge=16 deletemerge=50", "{table}");
        }
    }

    /// Migration 7 empties an index of the old chunks (every table, the full-text ones
    /// consistent) and moves the generation on; the next run indexes it afresh.
    #[test]
    fn an_index_made_by_the_old_chunker_is_rebuilt() {
        let (_dir, root, index) = crate::store::testing::project(&[("a.rs", "impl A {\n    fn alpha() {}\n}\n")]);
        let count = |store: &Store, table: &str| -> i64 {
            store.read(|c| c.query_row(&format!("SELECT count(*) FROM {table}"), [], |r| r.get(0))).unwrap()
        };
        let old_generation = {
            let store = Store::open(&index, &root).unwrap();
            run(&root, &store, Options::default(), &Progress::default()).unwrap();
            assert!(count(&store, "chunks") > 0);
            store.write(|c| c.pragma_update(None, "user_version", 6)).unwrap();
            store.content_generation()
        };
        let store = Store::open(&index, &root).unwrap();
        assert_eq!((count(&store, "files"), count(&store, "chunks")), (0, 0));
        assert_eq!(store.fts_count("alpha").unwrap(), 0);
        assert!(store.content_generation() > old_generation);
        let report = run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert_eq!(report.parsed, 1);
        assert_eq!(store.fts_count("alpha").unwrap(), 1);
        let gaps: i64 =
            store.read(|c| c.query_row("SELECT count(*) FROM chunks WHERE kind = 'gap'", [], |r| r.get(0))).unwrap();
        assert_eq!(gaps, 1, "the impl's closing brace");
        for table in ["chunks_fts", "chunk_grams"] {
            store
                .write(|c| c.execute(&format!("INSERT INTO {table}({table}, rank) VALUES ('integrity-check', 0)"), []))
                .unwrap();
        }
    }

    /// Migration 9 has the next run chunk JavaScript and TypeScript files again (their test
    /// calls become `test` chunks) and leaves every other file as it was.
    #[test]
    fn javascript_and_typescript_are_chunked_again_for_their_tests() {
        let files = [("a.test.ts", "it('adds', () => {\n  add()\n})\n"), ("b.rs", "fn beta() {}\n")];
        let (_dir, root, index) = crate::store::testing::project(&files);
        let kinds = |store: &Store| -> Vec<String> {
            let sql = "SELECT kind FROM chunks JOIN files ON files.id = file_id WHERE path = 'a.test.ts'";
            store.read(|c| c.prepare(sql)?.query_map([], |r| r.get(0))?.collect()).unwrap()
        };
        {
            let store = Store::open(&index, &root).unwrap();
            run(&root, &store, Options::default(), &Progress::default()).unwrap();
            assert_eq!(kinds(&store), ["test"]);
            // As the chunker before migration 9 left it.
            store.write(|c| c.execute("UPDATE chunks SET kind = 'block'", [])).unwrap();
            store.write(|c| c.pragma_update(None, "user_version", 8)).unwrap();
        }
        let store = Store::open(&index, &root).unwrap();
        let report = run(&root, &store, Options::default(), &Progress::default()).unwrap();
        assert_eq!((report.parsed, report.unchanged), (1, 1));
        assert_eq!(kinds(&store), ["test"]);
    }

    /// Migration 12 drops the int8 vectors (the tiers embed again) with the index on their
    /// model's name; vectors written after it name their model by number.
    #[test]
    fn vectors_are_made_again_in_four_bits_with_numbered_models() {
        let (_dir, root, index) =
            crate::store::testing::project(&[("a.py", "def one():\n    pass\n\ndef two():\n    pass\n")]);
        let one = {
            let store = Store::open(&index, &root).unwrap();
            run(&root, &store, Options::default(), &Progress::default()).unwrap();
            let one = store.chunks_without_vectors("m1", 0, 100).unwrap()[0].id;
            // The vectors as an index before migration 12 held them: migration 2's table.
            let old = format!(
                "DROP TABLE embedding_models; {}
                 INSERT INTO embeddings VALUES ({one}, 'm1', x'0000803f01');
                 PRAGMA user_version = 11;",
                super::MIGRATIONS[1]
            );
            store.write(|c| c.execute_batch(&old)).unwrap();
            one
        };
        let store = Store::open(&index, &root).unwrap();
        assert_eq!(store.chunks_without_vectors("m1", 0, 100).unwrap().len(), 2, "every chunk is embedded again");
        assert_eq!(store.count_vectors("m1").unwrap(), 0);
        let indexes: i64 = store
            .read(|c| {
                c.query_row("SELECT count(*) FROM sqlite_master WHERE name = 'embeddings_model'", [], |r| r.get(0))
            })
            .unwrap();
        assert_eq!(indexes, 0);
        store.save_vectors("m1", &[(one, vec![1])]).unwrap();
        store.save_vectors("m2", &[(one, vec![2])]).unwrap();
        let numbers: Vec<(i64, String)> = store
            .read(|c| {
                c.prepare(
                    "SELECT e.model, m.name FROM embeddings e JOIN embedding_models m ON m.id = e.model ORDER BY 1",
                )?
                .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect()
            })
            .unwrap();
        assert_eq!(numbers, [(1, "m1".to_owned()), (2, "m2".to_owned())]);
        let fresh = store.read(crate::store::tally::Tally::count).unwrap();
        assert_eq!(store.with_tally(|t| t.clone()).unwrap(), fresh);
    }

    /// Migration 13 stores by length the signatures an older index held whole, and they read
    /// back the same.
    #[test]
    fn signatures_held_whole_are_stored_by_length() {
        let (_dir, root, index) = crate::store::testing::project(&[(
            "a.c",
            "#define LIMIT 16
int open_it(const char *p);
",
        )]);
        let count = |store: &Store, kind: &str| -> i64 {
            let sql = format!("SELECT count(*) FROM chunks WHERE typeof(signature) = '{kind}' AND signature <> ''");
            store.read(|c| c.query_row(&sql, [], |r| r.get(0))).unwrap()
        };
        let before = {
            let store = Store::open(&index, &root).unwrap();
            run(&root, &store, Options::default(), &Progress::default()).unwrap();
            let before = store.chunks_of("a.c").unwrap();
            // As an index before migration 13 held them.
            store
                .write(|c| {
                    c.execute_batch(
                        "UPDATE chunks SET signature = substr(content, 1, CAST(signature AS INTEGER))
                         WHERE typeof(signature) = 'blob';
                         PRAGMA user_version = 12;",
                    )
                })
                .unwrap();
            assert_eq!((count(&store, "blob"), count(&store, "text")), (0, 2));
            before
        };
        let store = Store::open(&index, &root).unwrap();
        assert_eq!((count(&store, "blob"), count(&store, "text")), (2, 0));
        let after = store.chunks_of("a.c").unwrap();
        let sigs = |v: &[crate::source::chunk::Chunk]| v.iter().map(|c| c.signature.clone()).collect::<Vec<_>>();
        assert_eq!(sigs(&after), sigs(&before));
        assert_eq!(sigs(&after), ["#define LIMIT 16", "int open_it(const char *p);"]);
    }
}
