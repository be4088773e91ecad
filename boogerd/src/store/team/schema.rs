//! The team index's schema, by version. A migration runs once, under an advisory lock (two
//! daemons meeting a fresh server do not both create it); a server whose schema is newer than
//! this booger knows is refused with a clear error, never written to.

use postgres::Client;

use super::{Result, TeamError};

/// A key for `pg_advisory_xact_lock`, booger's own.
const MIGRATION_LOCK: i64 = 0x626f_6f67_6572;

/// Each migration, in order; the schema version is how many have run.
const MIGRATIONS: &[&str] = &[
    // 1: repositories, commits and their files by blob id, blobs and their chunks. Commits'
    // files are partitioned by repository, so one server holds thousands of repositories and
    // a distributed PostgreSQL can spread them.
    "CREATE TABLE repos (
         id   bigserial PRIMARY KEY,
         name text NOT NULL UNIQUE
     );
     CREATE TABLE blobs (
         blob_id      text PRIMARY KEY,
         -- What the local index records for the same bytes (BLAKE3): a clone filled from the
         -- team index has the Merkle root of one indexed from scratch.
         content_hash text NOT NULL,
         language     text NOT NULL,
         size_bytes bigint NOT NULL,
         problem    text
     );
     CREATE TABLE chunks (
         blob_id    text NOT NULL REFERENCES blobs ON DELETE CASCADE,
         ord        integer NOT NULL,
         kind       text NOT NULL,
         name       text NOT NULL,
         signature  text NOT NULL,
         parent     text,
         doc        text,
         start_line integer NOT NULL,
         end_line   integer NOT NULL,
         start_byte bigint NOT NULL,
         end_byte   bigint NOT NULL,
         content    text NOT NULL,
         PRIMARY KEY (blob_id, ord)
     );
     CREATE TABLE commits (
         repo_id      bigint NOT NULL REFERENCES repos,
         sha          text NOT NULL,
         files        integer NOT NULL,
         published_at timestamptz NOT NULL DEFAULT now(),
         PRIMARY KEY (repo_id, sha)
     );
     CREATE TABLE commit_files (
         repo_id bigint NOT NULL,
         sha     text NOT NULL,
         path    text NOT NULL,
         blob_id text NOT NULL,
         PRIMARY KEY (repo_id, sha, path)
     ) PARTITION BY HASH (repo_id);
     CREATE TABLE commit_files_0 PARTITION OF commit_files FOR VALUES WITH (MODULUS 4, REMAINDER 0);
     CREATE TABLE commit_files_1 PARTITION OF commit_files FOR VALUES WITH (MODULUS 4, REMAINDER 1);
     CREATE TABLE commit_files_2 PARTITION OF commit_files FOR VALUES WITH (MODULUS 4, REMAINDER 2);
     CREATE TABLE commit_files_3 PARTITION OF commit_files FOR VALUES WITH (MODULUS 4, REMAINDER 3);",
    // 2: what team search and grep read. Each chunk's words (booger's tokens and stems,
    // weighted by field) and its name's alone (a small index: a search for any of several
    // words looks there, not among every chunk that uses a common word), each blob's trigrams (the local index's `chunk_grams` tokens of
    // all its chunks: a file's chunks share most of theirs, so a blob's set is a fraction of
    // its chunks' sets), each under a GIN index; which commit is a repository's latest on its
    // default branch; which commits hold a blob. Blobs and chunks stored before this version
    // have neither: grep and search do not find them (publish them again to a fresh server).
    // New entries wait in a GIN pending list of up to 64 MB and are merged in bulk: inserted
    // one by one, the 32 million trigram entries of a 27,000-file tree cost twice as much.
    "ALTER TABLE repos ADD COLUMN default_branch text;
     ALTER TABLE commits ADD COLUMN branch text;
     ALTER TABLE chunks ADD COLUMN words tsvector;
     ALTER TABLE chunks ADD COLUMN names tsvector;
     ALTER TABLE blobs ADD COLUMN grams tsvector;
     CREATE INDEX chunks_words ON chunks USING gin (words) WITH (gin_pending_list_limit = 65536);
     CREATE INDEX chunks_names ON chunks USING gin (names) WITH (gin_pending_list_limit = 65536);
     CREATE INDEX blobs_grams ON blobs USING gin (grams) WITH (gin_pending_list_limit = 65536);
     CREATE INDEX commit_files_blob ON commit_files (blob_id);",
    // 3: blobs the team index does not take (binary, huge, holding a NUL), so that a publish
    // reads each once; whether a blob's first bytes say it was generated (a clone's run sets
    // such a file aside where its walk lets the header decide, so the seed leaves it to it).
    "CREATE TABLE refused_blobs (blob_id text PRIMARY KEY);
     ALTER TABLE blobs ADD COLUMN generated_header boolean NOT NULL DEFAULT false;",
    // 4: who reads the team index through the team server. A token is kept as its BLAKE3
    // hash (the secret is 32 random bytes: nothing to guess, so no slow hash is needed), with
    // the repositories it may read as `LIKE` patterns every query checks, and a rate. At most
    // one live token per name. The audit says who asked what, of which repository, how long
    // it took and how much it found.
    "CREATE TABLE tokens (
         id          bigserial PRIMARY KEY,
         name        text NOT NULL,
         hash        bytea NOT NULL UNIQUE,
         globs       text[] NOT NULL,
         likes       text[] NOT NULL,
         per_minute  integer NOT NULL,
         created_at  timestamptz NOT NULL DEFAULT now(),
         revoked_at  timestamptz
     );
     CREATE UNIQUE INDEX tokens_live_name ON tokens (name) WHERE revoked_at IS NULL;
     CREATE TABLE audit (
         at       timestamptz NOT NULL DEFAULT now(),
         token_id bigint NOT NULL REFERENCES tokens,
         tool     text NOT NULL,
         repo     text,
         millis   integer NOT NULL,
         results  integer NOT NULL,
         ok       boolean NOT NULL
     );
     CREATE INDEX audit_token_at ON audit (token_id, at);",
    // 5: prebuilt local indexes: a publisher's own index of a commit, offered whole
    // (compressed, in parts) so that a fresh clone of that commit starts from it instead of
    // writing every row. The latest per repository and branch is kept. Parts are stored as
    // they come (they are compressed already: no second compression by the server).
    "CREATE TABLE snapshots (
         sha     text PRIMARY KEY,
         repo_id bigint NOT NULL REFERENCES repos,
         branch  text,
         -- The local index's schema version: only a booger of the same one takes it.
         format  integer NOT NULL,
         -- Its size once unpacked, and the BLAKE3 of the parts in order.
         bytes   bigint NOT NULL,
         hash    text NOT NULL,
         made_at timestamptz NOT NULL DEFAULT now()
     );
     CREATE TABLE snapshot_parts (
         sha  text NOT NULL,
         part integer NOT NULL,
         data bytea NOT NULL,
         PRIMARY KEY (sha, part)
     );
     ALTER TABLE snapshot_parts ALTER COLUMN data SET STORAGE EXTERNAL;
     -- Read by key only: a vacuum after a large insert (which would read it all, competing
     -- with searches right after a publish) does nothing for it. Deletions still bring one.
     ALTER TABLE snapshot_parts SET (autovacuum_vacuum_insert_threshold = -1,
                                     toast.autovacuum_vacuum_insert_threshold = -1);",
    // 6: a commit's file list as what differs from a base: a commit of the same repository
    // whose list is whole. Its own rows are the paths it adds or changes, and the paths it
    // no longer has, with no blob; every other path is the base's. A branch or the next
    // commit adds a row per file it changed, not one per path of the tree. A blob's trigrams
    // are stored as they are: compressing them saved nothing (they are near random) and cost
    // the first publish of a 27,000-file tree a seventh of its time.
    "ALTER TABLE commits ADD COLUMN base text;
     ALTER TABLE commit_files ALTER COLUMN blob_id DROP NOT NULL;
     ALTER TABLE blobs ALTER COLUMN grams SET STORAGE EXTERNAL;",
    // 7: a prebuilt index's vectors stored apart from it: a clone's index is complete without
    // them (as a from-scratch index is before its embedding), and they follow in the
    // background instead of being a third of what the clone writes before its first run.
    "ALTER TABLE snapshots ADD COLUMN vector_bytes bigint NOT NULL DEFAULT 0,
                           ADD COLUMN vector_hash text NOT NULL DEFAULT '';
     CREATE TABLE snapshot_vectors (
         sha  text NOT NULL,
         part integer NOT NULL,
         data bytea NOT NULL,
         PRIMARY KEY (sha, part)
     );
     ALTER TABLE snapshot_vectors ALTER COLUMN data SET STORAGE EXTERNAL;
     ALTER TABLE snapshot_vectors SET (autovacuum_vacuum_insert_threshold = -1,
                                       toast.autovacuum_vacuum_insert_threshold = -1);",
    // 8: a blob's trigrams as numbers (`int4[]`, see `grams::team_gram`) instead of
    // `tsvector` words: the GIN index grows a fifth cheaper, the column is a third smaller,
    // and nothing is parsed. The words stored before are turned into their numbers here
    // (five base-32 digits; a shape trigram's four after an `x`, numbered above 2^24).
    "CREATE FUNCTION pg_temp.booger_digit(t text, i int) RETURNS int4 LANGUAGE sql IMMUTABLE AS $$
         SELECT strpos('0123456789abcdefghijklmnopqrstuv', substr(t, i, 1)) - 1 $$;
     CREATE FUNCTION pg_temp.booger_gram(t text) RETURNS int4 LANGUAGE sql IMMUTABLE AS $$
         SELECT (CASE WHEN left(t, 1) = 'x' THEN 16777216 ELSE (pg_temp.booger_digit(t, 1) << 20) END)
                | (pg_temp.booger_digit(t, 2) << 15) | (pg_temp.booger_digit(t, 3) << 10)
                | (pg_temp.booger_digit(t, 4) << 5) | pg_temp.booger_digit(t, 5) $$;
     ALTER TABLE blobs ADD COLUMN gram_ids int4[];
     ALTER TABLE blobs ALTER COLUMN gram_ids SET STORAGE EXTERNAL;
     UPDATE blobs SET gram_ids = ARRAY(SELECT pg_temp.booger_gram(t) FROM unnest(tsvector_to_array(grams)) AS t
                                       ORDER BY 1)
      WHERE grams IS NOT NULL;
     ALTER TABLE blobs DROP COLUMN grams;
     CREATE INDEX blobs_gram_ids ON blobs USING gin (gram_ids) WITH (gin_pending_list_limit = 65536);",
    // 9: trigrams indexed by group of blobs (a publish's neighbours, see `GROUP` in the
    // store): the GIN index holds a group's trigrams, the union of its blobs', and a blob's own
    // are only rechecked. Blobs stored before are grouped here by blob id. The planner needs
    // no statistics of a blob's own (ANALYZE spent most of its time on them: 2.7 s of a
    // 32,637-file tree's 3.3).
    "CREATE TABLE blob_groups (
         id       bigserial PRIMARY KEY,
         gram_ids int4[] NOT NULL
     );
     ALTER TABLE blob_groups ALTER COLUMN gram_ids SET STORAGE EXTERNAL;
     ALTER TABLE blobs ADD COLUMN group_id bigint;
     ALTER TABLE blobs ALTER COLUMN gram_ids SET STATISTICS 0;
     CREATE TEMP TABLE booger_grouping ON COMMIT DROP AS
         SELECT blob_id, (row_number() OVER (ORDER BY blob_id) - 1) / 16 + 1 AS g FROM blobs WHERE gram_ids IS NOT NULL;
     INSERT INTO blob_groups (id, gram_ids)
         SELECT m.g, ARRAY(SELECT DISTINCT x FROM booger_grouping o JOIN blobs b USING (blob_id), unnest(b.gram_ids) AS x
                           WHERE o.g = m.g ORDER BY 1)
         FROM (SELECT DISTINCT g FROM booger_grouping) m;
     UPDATE blobs b SET group_id = m.g FROM booger_grouping m WHERE m.blob_id = b.blob_id;
     SELECT setval('blob_groups_id_seq', coalesce(max(id), 0) + 1, false) FROM blob_groups;
     DROP INDEX blobs_gram_ids;
     CREATE INDEX blob_groups_gram_ids ON blob_groups USING gin (gram_ids) WITH (gin_pending_list_limit = 65536);
     CREATE INDEX blobs_group ON blobs (group_id);",
    // 10: which repository a name is: the root commit of the history first published under
    // it (none from a shallow clone). A publish of other history under the name is refused
    // unless forced; names published before this version take the next publish's.
    "ALTER TABLE repos ADD COLUMN IF NOT EXISTS root_commit text;",
];

/// Checks that the server's schema is this booger's, changing nothing.
pub(super) fn check(client: &mut Client) -> Result<()> {
    let known = MIGRATIONS.len() as i32;
    let exists: bool = client.query_one("SELECT to_regclass('booger_schema') IS NOT NULL", &[])?.try_get(0)?;
    let found: i32 = match exists {
        true => client.query_opt("SELECT version FROM booger_schema", &[])?.map_or(Ok(0), |r| r.try_get(0))?,
        false => 0,
    };
    match found.cmp(&known) {
        std::cmp::Ordering::Equal => Ok(()),
        std::cmp::Ordering::Greater => Err(TeamError::TooNew { found, known }),
        std::cmp::Ordering::Less => Err(TeamError::NotReady { found, known }),
    }
}

/// Brings the server's schema up to [`MIGRATIONS`], or refuses a newer one.
pub(super) fn migrate(client: &mut Client) -> Result<()> {
    let known = MIGRATIONS.len() as i32;
    let mut tx = client.transaction()?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])?;
    // "already exists, skipping" is not news.
    tx.batch_execute("SET LOCAL client_min_messages TO warning")?;
    tx.batch_execute("CREATE TABLE IF NOT EXISTS booger_schema (version integer NOT NULL)")?;
    let found: i32 = match tx.query_opt("SELECT version FROM booger_schema", &[])? {
        Some(row) => row.try_get(0)?,
        None => {
            tx.execute("INSERT INTO booger_schema (version) VALUES (0)", &[])?;
            0
        }
    };
    if found > known {
        return Err(TeamError::TooNew { found, known });
    }
    for (i, m) in MIGRATIONS.iter().enumerate().skip(found as usize) {
        tx.batch_execute(m)?;
        tx.execute("UPDATE booger_schema SET version = $1", &[&(i as i32 + 1)])?;
        tracing::info!(version = i + 1, "team index schema migrated");
    }
    tx.commit()?;
    Ok(())
}
