//! The team index on PostgreSQL: repositories, their published commits with each commit's
//! files by git blob id, and each blob's chunks, stored once however many commits, branches,
//! forks or teammates hold it. The local store (SQLite) stays what a daemon answers from;
//! this is the shared base a fresh clone can be filled from and a team can search.
//!
//! Every statement is parameterised; a URL's password never reaches an error or a log.

mod access;
mod browse;
mod commit_files;
mod connect;
mod identity;
mod prebuilt;
mod schema;
mod search;
mod tsvector;

pub(crate) use access::{Audited, Reader, Token};

pub use connect::{server_of, trust_ca};
pub(crate) use identity::Lineage;
pub(crate) use prebuilt::{Piece, PrebuiltInfo, Stored, Upload};
pub(crate) use search::{Matched, TeamFilters, TeamGrams, TeamHit};
pub(crate) use tsvector::{MAX_POSITION, TsVector, Weight};

use std::collections::{HashMap, HashSet};

use postgres::Client;

use crate::source::chunk::Chunk;
use crate::store::grams;

#[derive(Debug, thiserror::Error)]
pub enum TeamError {
    #[error("cannot reach the team index at {server}: {}", chain(.source))]
    Connect { server: String, source: postgres::Error },
    #[error("the team index: {}", said(.0))]
    Sql(#[from] postgres::Error),
    #[error("TLS to the team index: {0}")]
    Tls(String),
    #[error(
        "the team index was made by a newer booger (schema {found}; this booger knows up to {known}): \
         upgrade booger to use it"
    )]
    TooNew { found: i32, known: i32 },
    #[error(
        "the team index holds no booger schema {known} (found {found}): a publish with this booger makes \
         or upgrades it; reading never writes"
    )]
    NotReady { found: i32, known: i32 },
    #[error(
        "{name} in the team index holds another repository's history (its first publish came from a repository \
         with other root commits): publish under another name (`--repository owner/name`), or take the name \
         over with `--force`"
    )]
    Unrelated { name: String },
}

pub(crate) type Result<T> = std::result::Result<T, TeamError>;

/// What the server said, when it said something ("db error" alone says nothing).
fn said(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => format!("{} ({})", db.message(), db.code().code()),
        None => e.to_string(),
    }
}

/// An error with the causes under it ("error performing TLS handshake: invalid peer
/// certificate: UnknownIssuer"), each once.
fn chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let said = c.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        cause = c.source();
    }
    text
}

/// The chunk in `r`'s columns from `first` on: kind, name, signature, parent, start and end
/// line, start and end byte, content (the order search, grep and a seed read them in).
fn chunk_at(r: &postgres::Row, first: usize, doc: Option<String>) -> Result<Chunk> {
    let kind: String = r.try_get(first)?;
    Ok(Chunk {
        kind: crate::source::chunk::kind_named(&kind),
        name: r.try_get(first + 1)?,
        signature: r.try_get(first + 2)?,
        parent: r.try_get(first + 3)?,
        doc,
        start_line: r.try_get::<_, i32>(first + 4)? as u32,
        end_line: r.try_get::<_, i32>(first + 5)? as u32,
        start_byte: r.try_get::<_, i64>(first + 6)? as usize,
        end_byte: r.try_get::<_, i64>(first + 7)? as usize,
        content: r.try_get(first + 8)?,
    })
}

/// One file's content as the team index stores it: its chunks, its language, and why it was
/// not chunked structurally, if it was not.
pub struct Blob<'a> {
    pub id: &'a str,
    /// The local index's hash of the same bytes ([`crate::source::hash::file_hash`]).
    pub content_hash: &'a str,
    pub language: &'a str,
    pub size: usize,
    pub problem: Option<&'a str>,
    /// Its first bytes say it was generated (the index run's header check, on its bytes).
    pub generated_header: bool,
    pub chunks: &'a [Chunk],
    /// Each chunk's words (what team search matches).
    pub words: &'a [TsVector],
    /// Each chunk's name's words.
    pub names: &'a [TsVector],
}

/// The words of a chunk that has none.
static NO_WORDS: TsVector = TsVector::new();

/// Blob ids asked about per query: a statement's array stays a few hundred KB.
const ASKED: usize = 5_000;

/// Blobs per trigram group: a group's trigrams (the union of its blobs') are what the GIN
/// index holds, a blob's own only rechecked. A publish sends its blobs in path order, so a
/// group is the tree's neighbours, sharing most of theirs: the 26,633 blobs of a 32,637-file
/// tree hold 41 million trigram entries, their groups of 16 hold 14 million (of 32, 10
/// million), and those entries were up to two fifths of the server's work in its first
/// publish. Larger groups leave a grep more blobs to recheck: at 32, greps took about a
/// tenth longer than at 16.
const GROUP: usize = 16;

/// The trigrams of each [`GROUP`] of blobs in a row, as one array and each group's slice of
/// it (1-based, inclusive, as PostgreSQL slices).
struct Groups {
    grams: Vec<i32>,
    firsts: Vec<i32>,
    lasts: Vec<i32>,
}

impl Groups {
    /// The groups of the blobs whose trigrams (each sorted) are `grams[first - 1..last]`.
    fn of(grams: &[i32], firsts: &[i32], lasts: &[i32]) -> Self {
        let mut out = Self { grams: Vec::new(), firsts: Vec::new(), lasts: Vec::new() };
        let spans: Vec<(usize, usize)> =
            firsts.iter().zip(lasts).map(|(&f, &l)| (f as usize - 1, l as usize)).collect();
        let mut union = Vec::new();
        for group in spans.chunks(GROUP) {
            union.clear();
            for &(from, to) in group {
                union.extend_from_slice(&grams[from..to]);
            }
            union.sort_unstable();
            union.dedup();
            out.firsts.push(out.grams.len() as i32 + 1);
            out.grams.extend_from_slice(&union);
            out.lasts.push(out.grams.len() as i32);
        }
        out
    }

    fn count(&self) -> usize {
        self.firsts.len()
    }
}

/// Chunks as columns, for one statement of arrays.
#[derive(Default)]
struct ChunkRows<'a> {
    blob: Vec<&'a str>,
    ord: Vec<i32>,
    kind: Vec<&'a str>,
    name: Vec<&'a str>,
    signature: Vec<&'a str>,
    parent: Vec<Option<&'a str>>,
    doc: Vec<Option<&'a str>>,
    start_line: Vec<i32>,
    end_line: Vec<i32>,
    start_byte: Vec<i64>,
    end_byte: Vec<i64>,
    content: Vec<&'a str>,
    words: Vec<&'a TsVector>,
    names: Vec<&'a TsVector>,
}

impl<'a> ChunkRows<'a> {
    fn push(&mut self, blob: &'a str, ord: usize, c: &'a Chunk, words: &'a TsVector, names: &'a TsVector) {
        self.blob.push(blob);
        self.ord.push(ord as i32);
        self.kind.push(c.kind.as_str());
        self.name.push(&c.name);
        self.signature.push(&c.signature);
        self.parent.push(c.parent.as_deref());
        self.doc.push(c.doc.as_deref());
        self.start_line.push(c.start_line as i32);
        self.end_line.push(c.end_line as i32);
        self.start_byte.push(c.start_byte as i64);
        self.end_byte.push(c.end_byte as i64);
        self.content.push(&c.content);
        self.words.push(words);
        self.names.push(names);
    }
}

/// Where a published commit sits: the branch it was published from, and the repository's
/// default branch as the publisher saw it (team search reads each repository at its latest
/// commit on that branch).
#[derive(Debug, Clone, Default)]
pub struct Refs {
    pub branch: Option<String>,
    pub default_branch: Option<String>,
}

/// A blob as the team index holds it, chunks and all.
pub struct StoredBlob {
    pub id: String,
    pub content_hash: String,
    pub language: String,
    pub problem: Option<String>,
    pub generated_header: bool,
    pub chunks: Vec<Chunk>,
}

/// A connection to the team index, its schema brought up to this booger's.
pub struct TeamStore {
    client: Client,
}

impl TeamStore {
    /// Connects (see [`connect`] for the password, TLS and timeout) and brings the schema up
    /// to this booger's.
    pub fn connect(url: &str) -> Result<Self> {
        let mut store = Self { client: connect::open(url)? };
        schema::migrate(&mut store.client)?;
        Ok(store)
    }

    /// Connects to read: the schema must be this booger's already (a reader never creates or
    /// upgrades one, so pointing it at a database writes nothing there).
    pub(crate) fn connect_to_read(url: &str) -> Result<Self> {
        let mut store = Self { client: connect::open(url)? };
        schema::check(&mut store.client)?;
        Ok(store)
    }

    /// Has the server cancel any statement of this connection that runs longer than `ms`.
    pub(crate) fn limit_statements(&mut self, ms: u32) -> Result<()> {
        self.client.batch_execute(&format!("SET statement_timeout TO {ms}"))?;
        Ok(())
    }

    /// One round trip: the connection still answers.
    pub(crate) fn ping(&mut self) -> Result<()> {
        self.client.simple_query("")?;
        Ok(())
    }

    /// Readies this connection for a large publish: the GIN indexes' pending lists, which
    /// the inserting connection merges when they fill, are merged in larger sorted runs with
    /// more memory (PostgreSQL's 4 MB default made it the larger part of a first publish).
    pub(crate) fn for_bulk_writes(&mut self) -> Result<()> {
        self.client.batch_execute("SET work_mem TO '256MB'; SET maintenance_work_mem TO '512MB'")?;
        Ok(())
    }

    /// True once the connection is gone (the server stopped, the network dropped it).
    pub(crate) fn is_closed(&self) -> bool {
        self.client.is_closed()
    }

    /// Of `ids`, the blobs the team index does not hold yet (asked [`ASKED`] at a time).
    pub(crate) fn missing_blobs(&mut self, ids: &[String]) -> Result<HashSet<String>> {
        let mut held: HashSet<String> = HashSet::new();
        for group in ids.chunks(ASKED) {
            let rows = self.client.query(
                "SELECT blob_id FROM blobs WHERE blob_id = ANY($1)
                 UNION ALL SELECT blob_id FROM refused_blobs WHERE blob_id = ANY($1)",
                &[&group],
            )?;
            for r in &rows {
                held.insert(r.try_get(0)?);
            }
        }
        Ok(ids.iter().filter(|id| !held.contains(*id)).cloned().collect())
    }

    /// Records blobs the team index does not take (binary, huge, holding a NUL): later
    /// publishes do not read them again, and a clone indexes them itself.
    pub(crate) fn refuse(&mut self, ids: &[String]) -> Result<()> {
        if !ids.is_empty() {
            self.client.execute(
                "INSERT INTO refused_blobs (blob_id) SELECT unnest($1::text[]) ON CONFLICT DO NOTHING",
                &[&ids],
            )?;
        }
        Ok(())
    }

    /// Stores `blobs` with their chunks in one transaction, each table in one statement of
    /// arrays (a statement a row cost the first publish of a large tree 2.6x its index time);
    /// a blob another publisher stored meanwhile is left as it is.
    pub(crate) fn put_blobs(&mut self, blobs: &[Blob<'_>]) -> Result<()> {
        let mut tx = self.client.transaction()?;
        let blob_ids: Vec<&str> = blobs.iter().map(|b| b.id).collect();
        let hashes: Vec<&str> = blobs.iter().map(|b| b.content_hash).collect();
        let languages: Vec<&str> = blobs.iter().map(|b| b.language).collect();
        let sizes: Vec<i64> = blobs.iter().map(|b| i64::try_from(b.size).unwrap_or(i64::MAX)).collect();
        let problems: Vec<Option<&str>> = blobs.iter().map(|b| b.problem).collect();
        let generated: Vec<bool> = blobs.iter().map(|b| b.generated_header).collect();
        // Every blob's trigrams in one array, each blob's a slice of it (arrays of arrays must
        // be of one length); likewise each group's, the union of its blobs'.
        let (mut grams, mut firsts, mut lasts) = (Vec::new(), Vec::new(), Vec::new());
        for b in blobs {
            firsts.push(grams.len() as i32 + 1);
            grams.extend(grams::blob_grams(b.chunks.iter().map(grams::chunk_text)));
            lasts.push(grams.len() as i32);
        }
        let groups = Groups::of(&grams, &firsts, &lasts);
        let group_ids: Vec<i64> = tx
            .query(
                "SELECT nextval('blob_groups_id_seq') FROM generate_series(1, $1::int)",
                &[&(groups.count() as i32)],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()?;
        let group_of: Vec<i64> = (0..blobs.len()).map(|i| group_ids[i / GROUP]).collect();
        let stored: HashSet<String> = tx
            .query(
                "WITH g AS (INSERT INTO blob_groups (id, gram_ids)
                            SELECT id, ($10::int4[])[g1:g2] FROM unnest($11::bigint[], $12::int4[], $13::int4[]) AS r(id, g1, g2))
                 INSERT INTO blobs (blob_id, content_hash, language, size_bytes, problem, gram_ids, generated_header, group_id)
                 SELECT b, h, l, s, p, ($6::int4[])[g1:g2], gh, gr
                 FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[], $7::int4[], $8::int4[],
                             $9::bool[], $14::bigint[])
                      AS r(b, h, l, s, p, g1, g2, gh, gr)
                 ON CONFLICT (blob_id) DO NOTHING RETURNING blob_id",
                &[
                    &blob_ids,
                    &hashes,
                    &languages,
                    &sizes,
                    &problems,
                    &grams,
                    &firsts,
                    &lasts,
                    &generated,
                    &groups.grams,
                    &group_ids,
                    &groups.firsts,
                    &groups.lasts,
                    &group_of,
                ],
            )?
            .iter()
            .map(|r| r.try_get(0))
            .collect::<std::result::Result<_, _>>()?;
        insert_chunks(&mut tx, blobs, &stored)?;
        tx.commit()?;
        Ok(())
    }

    /// Records `sha` of `repo` with its files (path, blob id), all in one transaction: a
    /// commit appears whole or not at all. Its list is kept as what differs from a base when
    /// that is small (see [`commit_files::file_rows`]). False if it was published already.
    pub(crate) fn publish_commit(
        &mut self,
        repo: &str,
        sha: &str,
        refs: &Refs,
        lineage: &Lineage,
        files: &[(String, String)],
    ) -> Result<bool> {
        let mut tx = self.client.transaction()?;
        let row = tx.query_one(
            "INSERT INTO repos (name, default_branch) VALUES ($1, $2)
             ON CONFLICT (name) DO UPDATE SET default_branch = coalesce(EXCLUDED.default_branch, repos.default_branch)
             RETURNING id, default_branch, root_commit",
            &[&repo, &refs.default_branch],
        )?;
        let (repo_id, default_branch): (i64, Option<String>) = (row.try_get(0)?, row.try_get(1)?);
        identity::claim(&mut tx, repo_id, repo, row.try_get::<_, Option<String>>(2)?.as_deref(), lineage)?;
        if tx.query_opt("SELECT 1 FROM commits WHERE repo_id = $1 AND sha = $2", &[&repo_id, &sha])?.is_some() {
            return Ok(false);
        }
        let branches = [refs.branch.as_deref(), default_branch.as_deref()];
        let (base, rows) = commit_files::file_rows(&mut tx, repo_id, sha, branches, files)?;
        let count = files.len() as i32;
        let fresh = tx.execute(
            "INSERT INTO commits (repo_id, sha, files, branch, base) VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING",
            &[&repo_id, &sha, &count, &refs.branch, &base],
        )?;
        if fresh == 0 {
            return Ok(false); // a racing publisher's
        }
        let paths: Vec<&str> = rows.iter().map(|(p, _)| p.as_ref()).collect();
        let blobs: Vec<Option<&str>> = rows.iter().map(|(_, b)| *b).collect();
        tx.execute(
            "INSERT INTO commit_files (repo_id, sha, path, blob_id)
             SELECT $1, $2, path, blob_id FROM unnest($3::text[], $4::text[]) AS f(path, blob_id)",
            &[&repo_id, &sha, &paths, &blobs],
        )?;
        tx.commit()?;
        Ok(true)
    }

    /// After a publish that sent `blobs`: merges the entries it left in the GIN indexes'
    /// pending lists into the indexes themselves, so searches do not read them one by one;
    /// refreshes the planner's statistics of the commits and repositories (small, and what
    /// every search starts from) and, with `analyze`, of every table (without them, a search
    /// over a fresh tree read every chunk of it instead of using the word index: 1.1 s
    /// instead of 0.16). Best effort: a server that does not allow it (the tables belong to
    /// another role) does both on its own schedule (autovacuum).
    pub(crate) fn settle(&mut self, blobs: usize, analyze: bool) {
        let mut sql = String::new();
        if blobs > 0 {
            sql.push_str(
                "SELECT gin_clean_pending_list('blob_groups_gram_ids'), gin_clean_pending_list('chunks_words'),
                        gin_clean_pending_list('chunks_names');",
            );
        }
        sql.push_str(if analyze {
            "ANALYZE blobs, blob_groups, chunks, commit_files, commits, repos"
        } else {
            "ANALYZE commits, repos"
        });
        let started = std::time::Instant::now();
        match self.client.batch_execute(&sql) {
            Ok(()) => tracing::info!(blobs, analyze, ms = started.elapsed().as_millis() as u64, "team index settled"),
            Err(e) => tracing::debug!(error = %said(&e), "team index: left to autovacuum"),
        }
    }

    /// True if any repository has `sha` published: a commit id names the same files
    /// whatever the clone or fork calls itself.
    pub(crate) fn has_commit(&mut self, sha: &str) -> Result<bool> {
        Ok(self.client.query_opt("SELECT 1 FROM commits WHERE sha = $1 LIMIT 1", &[&sha])?.is_some())
    }

    /// The stored blobs among `ids`, with their chunks in order.
    pub(crate) fn blobs(&mut self, ids: &[String]) -> Result<Vec<StoredBlob>> {
        let mut out: Vec<StoredBlob> = self
            .client
            .query(
                "SELECT blob_id, content_hash, language, problem, generated_header FROM blobs WHERE blob_id = ANY($1)",
                &[&ids],
            )?
            .iter()
            .map(|r| {
                Ok(StoredBlob {
                    id: r.try_get(0)?,
                    content_hash: r.try_get(1)?,
                    language: r.try_get(2)?,
                    problem: r.try_get(3)?,
                    generated_header: r.try_get(4)?,
                    chunks: Vec::new(),
                })
            })
            .collect::<Result<_>>()?;
        let index: HashMap<String, usize> = out.iter().enumerate().map(|(i, b)| (b.id.clone(), i)).collect();
        let rows = self.client.query(
            "SELECT blob_id, doc, kind, name, signature, parent, start_line, end_line, start_byte, end_byte, content
             FROM chunks WHERE blob_id = ANY($1) ORDER BY blob_id, ord",
            &[&ids],
        )?;
        for r in rows {
            let id: String = r.try_get(0)?;
            let Some(&i) = index.get(&id) else { continue };
            out[i].chunks.push(chunk_at(&r, 2, r.try_get(1)?)?);
        }
        Ok(out)
    }

    /// True if `repo` has `sha` published.
    pub(crate) fn is_published(&mut self, repo: &str, sha: &str) -> Result<bool> {
        Ok(self
            .client
            .query_opt(
                "SELECT 1 FROM commits c JOIN repos r ON r.id = c.repo_id WHERE r.name = $1 AND c.sha = $2",
                &[&repo, &sha],
            )?
            .is_some())
    }
}

/// The chunks of the `stored` blobs (those this publish stored), in one statement of arrays.
fn insert_chunks(tx: &mut postgres::Transaction<'_>, blobs: &[Blob<'_>], stored: &HashSet<String>) -> Result<()> {
    let mut rows = ChunkRows::default();
    for b in blobs.iter().filter(|b| stored.contains(b.id)) {
        for (ord, c) in b.chunks.iter().enumerate() {
            let (words, names) = (b.words.get(ord), b.names.get(ord));
            rows.push(b.id, ord, c, words.unwrap_or(&NO_WORDS), names.unwrap_or(&NO_WORDS));
        }
    }
    tx.execute(
        "INSERT INTO chunks (blob_id, ord, kind, name, signature, parent, doc, start_line, end_line,
                             start_byte, end_byte, content, words, names)
         SELECT b, o, k, n, s, p, d, sl, el, sb, eb, c, w, nw
         FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
                     $8::int[], $9::int[], $10::bigint[], $11::bigint[], $12::text[], $13::tsvector[],
                     $14::tsvector[])
              AS r(b, o, k, n, s, p, d, sl, el, sb, eb, c, w, nw)",
        &[
            &rows.blob,
            &rows.ord,
            &rows.kind,
            &rows.name,
            &rows.signature,
            &rows.parent,
            &rows.doc,
            &rows.start_line,
            &rows.end_line,
            &rows.start_byte,
            &rows.end_byte,
            &rows.content,
            &rows.words,
            &rows.names,
        ],
    )?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{GROUP, Groups};

    /// Each group's trigrams are the sorted union of its blobs', sliced as PostgreSQL
    /// slices (1-based, inclusive); the last group takes what is left.
    #[test]
    fn a_group_holds_the_union_of_its_blobs_trigrams() {
        let blobs: Vec<Vec<i32>> = (0..GROUP + 2).map(|i| vec![1, 10 + i as i32 % 3, 100]).collect();
        let (mut grams, mut firsts, mut lasts) = (Vec::new(), Vec::new(), Vec::new());
        for b in &blobs {
            firsts.push(grams.len() as i32 + 1);
            grams.extend(b);
            lasts.push(grams.len() as i32);
        }
        let groups = Groups::of(&grams, &firsts, &lasts);
        assert_eq!(groups.count(), 2);
        let slice = |g: usize| &groups.grams[groups.firsts[g] as usize - 1..groups.lasts[g] as usize];
        assert_eq!(slice(0), [1, 10, 11, 12, 100]);
        let mut rest: Vec<i32> = blobs[GROUP..].concat();
        rest.sort_unstable();
        rest.dedup();
        assert_eq!(slice(1), rest);
    }
}
