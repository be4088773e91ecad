//! Reading the team index: ranked search and grep over every repository at its latest
//! published commit on its default branch (its head), narrowed by the same words and
//! trigrams the local index narrows by, under GIN indexes. Every value is a parameter.

use std::time::Instant;

use booger_proto::tools::{CHUNK_KINDS, ChunkKind, LANGUAGES, Language};
use postgres::types::ToSql;

use super::access::Reader;
use super::{Result, TeamStore};
use crate::source::chunk::Chunk;

/// Each repository's head: its latest published commit on its default branch, else its
/// latest published commit, among the repositories the reader may read (`$3`, a token id,
/// checked live: see [`super::access`]). Repositories named in `$1` are left out (answered
/// locally); with `$4`, only that repository; with a commit in `$2` (a commit id, or a prefix
/// of one, or a branch published from), only that commit. With them, `hidden`: what
/// [`file_of`] needs of the heads kept as what they changed.
pub(super) const HEADS: &str = "WITH heads AS (
        SELECT DISTINCT ON (c.repo_id) c.repo_id, c.sha, c.base, r.name
        FROM commits c JOIN repos r ON r.id = c.repo_id
        WHERE NOT (r.name = ANY($1::text[]))
          AND ($2::text IS NULL OR starts_with(c.sha, $2::text) OR c.branch = $2::text)
          AND ($3::bigint IS NULL OR EXISTS (
                  SELECT 1 FROM tokens t
                  WHERE t.id = $3::bigint AND t.revoked_at IS NULL AND r.name LIKE ANY (t.likes)))
          AND ($4::text IS NULL OR r.name = $4::text)
        ORDER BY c.repo_id, (c.branch IS NOT DISTINCT FROM r.default_branch) DESC, c.published_at DESC
    ), hidden AS MATERIALIZED (
        SELECT h.repo_id, h.base, o.path FROM heads h
        JOIN commit_files o ON o.repo_id = h.repo_id AND o.sha = h.sha
        WHERE h.base IS NOT NULL
    )";

/// The condition that `f` (a `commit_files` row) is a file of the commit `sha` of `repo`
/// whose list is kept against `base` (schema version 6): its own row, unless that says the
/// path is gone, or its base's for a path its own rows do not name. `hidden` is a table of
/// (repo_id, base, path) naming, for each such commit read, the paths of its own rows: small,
/// hashed once, where probing the index for every base row cost a search over a commit kept
/// this way a third more.
pub(super) fn file_of(f: &str, repo: &str, sha: &str, base: &str, hidden: &str) -> String {
    format!(
        "{f}.repo_id = {repo} AND {f}.sha = ANY (ARRAY[{sha}, {base}]) AND {f}.blob_id IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM {hidden} x WHERE x.repo_id = {f}.repo_id AND x.base = {f}.sha AND x.path = {f}.path)"
    )
}

/// [`file_of`] for `f` at the head `h` of [`HEADS`].
pub(super) fn head_file() -> String {
    file_of("f", "h.repo_id", "h.sha", "h.base", "hidden")
}

/// The columns a hit or a grep row reads, after the repository, commit and path.
const CHUNK_COLUMNS: &str = "b.language, ch.kind, ch.name, ch.signature, ch.parent, ch.start_line, ch.end_line, \
                             ch.start_byte, ch.end_byte, ch.content";

/// What narrows a team search or grep, besides its words: as the local filters.
#[derive(Debug, Default, Clone)]
pub(crate) struct TeamFilters<'a> {
    pub language: Option<Language>,
    pub kind: Option<ChunkKind>,
    pub path_prefix: Option<&'a str>,
    /// A path glob, as a regular expression ([`glob_regex`]): set with [`TeamFilters::path`].
    pub path_glob: Option<String>,
    /// Repositories not to read (those this machine answers for from its own index).
    pub skip_repos: &'a [String],
    /// Only this commit, wherever it is published (a clone's HEAD while its index is filled),
    /// or a prefix of its id, or the latest commit published from this branch.
    pub commit: Option<&'a str>,
    /// Only this repository.
    pub repo: Option<&'a str>,
    /// Whose query it is: what it may read.
    pub reader: Reader,
}

/// One ranked chunk of a published repository.
#[derive(Debug, Clone)]
pub(crate) struct TeamHit {
    pub repo: String,
    pub commit: String,
    pub path: String,
    pub language: String,
    pub chunk: Chunk,
    /// PostgreSQL's `ts_rank` of the chunk's weighted words: higher is better.
    pub score: f64,
}

/// One chunk grep reads, in repository, path and line order.
pub(crate) type TeamLine = TeamHit;

impl<'a> TeamFilters<'a> {
    /// Only paths under `p`, a path prefix or (holding `*`, `?` or `[`) a glob, as the local
    /// filters take it.
    pub(crate) fn path(self, p: Option<&'a str>) -> Self {
        let p = p.map(|p| p.trim_start_matches("./")).filter(|p| !p.is_empty());
        match p {
            Some(glob) if glob.contains(['*', '?', '[']) => {
                Self { path_glob: Some(glob_regex(glob)), path_prefix: None, ..self }
            }
            prefix => Self { path_prefix: prefix, path_glob: None, ..self },
        }
    }

    /// The values [`HEADS`] binds, `$1` to `$4`, for `reader` (owned by the caller).
    pub(super) fn heads_params<'p>(&'p self, reader: &'p Option<i64>) -> Vec<&'p (dyn ToSql + Sync)> {
        vec![&self.skip_repos, &self.commit, reader, &self.repo]
    }

    /// SQL conditions over `b` (blobs), `ch` (chunks) and `f` (commit files), their values
    /// appended to `params`.
    pub(super) fn sql<'p>(&'p self, params: &mut Vec<&'p (dyn ToSql + Sync)>) -> String {
        let mut sql = String::new();
        // The names as statics, which outlive the parameters that borrow them.
        if let Some(l) = self.language {
            params.push(&LANGUAGES[l as usize]);
            sql.push_str(&format!(" AND b.language = ${}", params.len()));
        }
        if let Some(k) = self.kind {
            params.push(&CHUNK_KINDS[k as usize]);
            sql.push_str(&format!(" AND ch.kind = ${}", params.len()));
        }
        if let Some(p) = &self.path_prefix {
            params.push(p);
            let n = params.len();
            sql.push_str(&format!(
                " AND (f.path = trim(trailing '/' from ${n}) OR starts_with(f.path, rtrim(${n}, '/') || '/'))"
            ));
        }
        if let Some(g) = &self.path_glob {
            params.push(g);
            sql.push_str(&format!(" AND f.path ~ ${}", params.len()));
        }
        sql
    }
}

/// A path glob as an anchored PostgreSQL regular expression that matches what SQLite's `GLOB`
/// matches (the local filters' glob): `*` any run of characters, `/` included; `?` one; `[...]`
/// a class (`[^...]` its complement); every other character itself.
pub(crate) fn glob_regex(glob: &str) -> String {
    let mut out = String::from("^");
    let mut class = false;
    for c in glob.chars() {
        match c {
            ']' if class => {
                class = false;
                out.push(c);
            }
            c if class => {
                if c == '\\' {
                    out.push('\\');
                }
                out.push(c);
            }
            '*' => out.push_str(".*"),
            '?' => out.push('.'),
            '[' => {
                class = true;
                out.push(c);
            }
            c if c.is_alphanumeric() || c == '/' || c == '_' || c == '-' => out.push(c),
            c => {
                out.push('\\');
                out.push(c);
            }
        }
    }
    // An unclosed class is the character `[` and what follows it, as GLOB reads it.
    if class {
        let open = out.rfind('[').unwrap_or(0);
        out.insert(open, '\\');
    }
    out.push('$');
    out
}

pub(super) fn hit(r: &postgres::Row, score: f64) -> Result<TeamHit> {
    Ok(TeamHit {
        repo: r.try_get(0)?,
        commit: r.try_get(1)?,
        path: r.try_get(2)?,
        language: r.try_get(3)?,
        chunk: super::chunk_at(r, 4, None)?,
        score,
    })
}

/// A ranked team search: the chunks it ranks (a condition on `chunks` and its `LIMIT`, after
/// [`HEADS`] and any `ctes` of its own), how it scores one (`ch`), and its `LIMIT`
/// parameter.
struct Ranking<'a> {
    ctes: &'a str,
    matching: &'a str,
    score: &'a str,
    limit: &'a str,
}

/// How many matching chunks a search ranks at most.
const RANKED: i64 = 3_000;

/// Which words of a chunk a team search matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Matched {
    /// All of them (name, compound parts, text).
    Words,
    /// Its name's alone.
    Names,
}

impl TeamStore {
    /// The `limit` best chunks for `tsquery` (a literal of booger's stems) at each
    /// repository's head, best first, matched against `matched`, by PostgreSQL's `ts_rank`.
    /// Ranked among the first [`RANKED`] chunks that match: a common word matches a hundred
    /// thousand, and ranking them all took seconds.
    pub(crate) fn search(
        &mut self,
        tsquery: &str,
        matched: Matched,
        f: &TeamFilters<'_>,
        limit: i64,
    ) -> Result<Vec<TeamHit>> {
        let column = if matched == Matched::Names { "names" } else { "words" };
        let ranked = RANKED;
        let reader = f.reader.token();
        let mut params = f.heads_params(&reader);
        params.extend([&tsquery as &(dyn ToSql + Sync), &limit, &ranked]);
        let sql = Ranking {
            ctes: "",
            matching: &format!("{column} @@ CAST($5::text AS tsquery) LIMIT $7"),
            score: "ts_rank(ch.words, CAST($5::text AS tsquery), 1)",
            limit: "$6",
        };
        self.ranked(&sql, f, params)
    }

    /// How many chunks match each of `stems` (`tsquery` literals, one a stem), counted up to
    /// `cap` (enough to tell a rare stem from a common one), and how many chunks there are
    /// (the planner's estimate, or the largest count before any).
    pub(crate) fn stem_counts(&mut self, stems: &[String], cap: i64) -> Result<(Vec<i64>, i64)> {
        let rows = self.client.query(
            "SELECT (SELECT count(*) FROM (SELECT 1 FROM chunks WHERE words @@ CAST(s AS tsquery) LIMIT $2) x),
                    (SELECT greatest(reltuples, 0)::bigint FROM pg_class WHERE oid = 'chunks'::regclass)
             FROM unnest($1::text[]) WITH ORDINALITY AS u(s, i) ORDER BY i",
            &[&stems, &cap],
        )?;
        let counts: Vec<i64> = rows.iter().map(|r| r.try_get(0)).collect::<std::result::Result<_, _>>()?;
        let total = rows.first().map_or(Ok(0), |r| r.try_get::<_, i64>(1))?;
        let most = counts.iter().copied().max().unwrap_or(0);
        Ok((counts, total.max(most)))
    }

    /// The `limit` best chunks at each repository's head among the first `ranked` matching
    /// `candidates` (a `tsquery` literal), scored by the `weights` of the `stems` (`tsquery`
    /// literals) each holds, a stem in its name counting twice, over a slowly growing
    /// function of its length (a long chunk holds more words by chance).
    pub(crate) fn search_weighted(
        &mut self,
        stems: &[String],
        weights: &[f64],
        candidates: &str,
        f: &TeamFilters<'_>,
        limit: i64,
        ranked: i64,
    ) -> Result<Vec<TeamHit>> {
        let ranked = ranked.min(RANKED);
        let reader = f.reader.token();
        let mut params = f.heads_params(&reader);
        params.extend([&stems as &(dyn ToSql + Sync), &weights, &candidates, &limit, &ranked]);
        let sql = Ranking {
            ctes: ", q AS (SELECT CAST(s AS tsquery) AS s, w FROM unnest($5::text[], $6::float8[]) AS u(s, w))",
            matching: "words @@ CAST($7::text AS tsquery) LIMIT $9",
            score: "(SELECT coalesce(sum(q.w * CASE WHEN ch.names @@ q.s THEN 2.0 ELSE 1.0 END), 0)
                     FROM q WHERE ch.words @@ q.s) / (1.0 + 0.05 * ln(1.0 + length(ch.words)))",
            limit: "$8",
        };
        self.ranked(&sql, f, params)
    }

    /// The chunks a [`Ranking`] picks, best first, at the heads `f` reads.
    fn ranked<'p>(
        &mut self,
        r: &Ranking<'_>,
        f: &'p TeamFilters<'_>,
        mut params: Vec<&'p (dyn ToSql + Sync)>,
    ) -> Result<Vec<TeamHit>> {
        let filters = f.sql(&mut params);
        let Ranking { ctes, matching, score, limit } = r;
        let head_file = head_file();
        let sql = format!(
            "{HEADS}{ctes}, matching AS MATERIALIZED (SELECT blob_id, ord FROM chunks WHERE {matching})
             SELECT h.name, h.sha, f.path, {CHUNK_COLUMNS}, ({score})::float8 AS score
             FROM matching m
             JOIN chunks ch ON ch.blob_id = m.blob_id AND ch.ord = m.ord
             JOIN commit_files f ON f.blob_id = ch.blob_id
             JOIN heads h ON {head_file}
             JOIN blobs b ON b.blob_id = f.blob_id
             WHERE true {filters}
             ORDER BY score DESC, h.name, f.path, ch.ord
             LIMIT {limit}"
        );
        let rows = self.client.query(&sql, &params)?;
        rows.iter().map(|r| hit(r, r.try_get(13)?)).collect()
    }

    /// Every chunk at each repository's head that may hold a match: the chunks of the blobs
    /// whose trigrams satisfy `grams`, or of every blob when `None`. In repository, path and
    /// line order, handed to `each` until it returns false or `deadline` passes; true if all
    /// were read.
    pub(crate) fn grep_chunks(
        &mut self,
        grams: Option<&TeamGrams>,
        f: &TeamFilters<'_>,
        deadline: Instant,
        mut each: impl FnMut(TeamLine) -> bool,
    ) -> Result<bool> {
        let reader = f.reader.token();
        let mut tx = self.client.transaction()?;
        let mut arrays: Vec<Vec<i32>> = Vec::new();
        let groups: Vec<i64>;
        let mut params = f.heads_params(&reader);
        // (Blobs stored before trigrams were kept are not read: a condition that let them in
        // would keep PostgreSQL from the index.)
        let narrow = match grams {
            Some(g) => {
                groups = candidate_groups(&mut tx, g)?;
                if groups.is_empty() {
                    return Ok(true);
                }
                params.push(&groups);
                let condition = g.condition(params.len(), &mut arrays);
                params.extend(arrays.iter().map(|a| a as &(dyn ToSql + Sync)));
                // Each blob of the groups found has its own trigrams rechecked.
                format!(
                    " AND b.group_id = ANY(${}::bigint[]) AND {}",
                    params.len() - arrays.len(),
                    condition.replace(GRAMS, "b.gram_ids")
                )
            }
            None => String::new(),
        };
        let filters = f.sql(&mut params);
        let head_file = head_file();
        let sql = format!(
            "{HEADS}
             SELECT h.name, h.sha, f.path, {CHUNK_COLUMNS}
             FROM heads h
             JOIN commit_files f ON {head_file}
             JOIN chunks ch ON ch.blob_id = f.blob_id
             JOIN blobs b ON b.blob_id = f.blob_id
             WHERE true {narrow} {filters}
             ORDER BY h.name, f.path, ch.ord"
        );
        let statement = tx.prepare(&sql)?;
        // A portal read a page at a time: a common pattern's rows are not all held at once.
        let portal = tx.bind(&statement, &params)?;
        loop {
            let rows = tx.query_portal(&portal, 500)?;
            if rows.is_empty() {
                return Ok(true);
            }
            for r in &rows {
                if !each(hit(r, 0.0)?) || Instant::now() > deadline {
                    return Ok(false);
                }
            }
        }
    }

    /// Every repository `reader` may read that has a published commit: its head, its head's
    /// files, how many commits are published, and when the latest was.
    pub(crate) fn repositories(&mut self, reader: Reader) -> Result<Vec<TeamRepo>> {
        let f = TeamFilters { reader, ..TeamFilters::default() };
        let token = reader.token();
        let rows = self.client.query(
            &format!(
                "{HEADS} SELECT h.name, h.sha, c.files::bigint, n.commits,
                         to_char(n.latest AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
                         (SELECT s.sha FROM snapshots s WHERE s.repo_id = h.repo_id ORDER BY s.made_at DESC LIMIT 1)
                 FROM heads h
                 JOIN commits c ON c.repo_id = h.repo_id AND c.sha = h.sha
                 JOIN (SELECT repo_id, count(*) AS commits, max(published_at) AS latest FROM commits GROUP BY repo_id) n
                      ON n.repo_id = h.repo_id
                 ORDER BY h.name"
            ),
            &f.heads_params(&token),
        )?;
        rows.iter()
            .map(|r| {
                Ok(TeamRepo {
                    name: r.try_get(0)?,
                    head: r.try_get(1)?,
                    files: r.try_get::<_, i64>(2)? as u64,
                    commits: r.try_get::<_, i64>(3)? as u64,
                    last_publish: r.try_get(4)?,
                    prebuilt: r.try_get(5)?,
                })
            })
            .collect()
    }

    /// The stored blobs and chunks (the planner's estimates: counting a large table would
    /// read it), the database's size in bytes, and the schema version.
    pub(crate) fn totals(&mut self) -> Result<(u64, u64, u64, u64)> {
        let r = self.client.query_one(
            // The planner's estimate where counting would cost (it is 0 or -1 until the
            // table's first ANALYZE: a publish just made said "~0 chunks"), else a count.
            "SELECT (SELECT CASE WHEN reltuples >= 100000 THEN reltuples::bigint ELSE (SELECT count(*) FROM blobs) END
                     FROM pg_class WHERE oid = 'blobs'::regclass),
                    (SELECT CASE WHEN reltuples >= 100000 THEN reltuples::bigint ELSE (SELECT count(*) FROM chunks) END
                     FROM pg_class WHERE oid = 'chunks'::regclass),
                    pg_database_size(current_database()),
                    (SELECT version::bigint FROM booger_schema)",
            &[],
        )?;
        let n = |i: usize| r.try_get::<_, i64>(i).map(|v| v.max(0) as u64);
        Ok((n(0)?, n(1)?, n(2)?, n(3)?))
    }
}

/// The trigram groups (see `GROUP` in the store) whose trigrams satisfy `grams`, found
/// through their GIN index alone: a group's trigrams are tens of KB, stored apart, and the
/// planner, seeing a small table, read every group's instead (220 ms of a 330 ms grep on a
/// 27,000-blob tree); an index scan in the key's order was no better.
fn candidate_groups(tx: &mut postgres::Transaction<'_>, grams: &TeamGrams) -> Result<Vec<i64>> {
    let mut arrays = Vec::new();
    let condition = grams.condition(0, &mut arrays).replace(GRAMS, "gram_ids");
    let params: Vec<&(dyn ToSql + Sync)> = arrays.iter().map(|a| a as &(dyn ToSql + Sync)).collect();
    tx.batch_execute("SET LOCAL enable_seqscan = off; SET LOCAL enable_indexscan = off")?;
    let rows = tx.query(&format!("SELECT id FROM blob_groups WHERE {condition}"), &params)?;
    tx.batch_execute("RESET enable_seqscan; RESET enable_indexscan")?;
    Ok(rows.iter().map(|r| r.try_get(0)).collect::<std::result::Result<_, _>>()?)
}

/// Where [`TeamGrams::condition`] names the column of trigrams it asks about.
const GRAMS: &str = "@grams";

/// What a blob's trigrams must include for a chunk of it to hold a grep's match, as numbers
/// ([`crate::store::grams::team_gram`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TeamGrams {
    Gram(i32),
    All(Vec<TeamGrams>),
    OneOf(Vec<TeamGrams>),
}

impl TeamGrams {
    /// This condition on [`GRAMS`] (a stand-in for a column of trigrams): the trigrams of a
    /// group in one array (`@>` for all of them, `&&` for any), pushed to `arrays` and
    /// numbered as parameters after the first `before`.
    fn condition(&self, before: usize, arrays: &mut Vec<Vec<i32>>) -> String {
        let (parts, all) = match self {
            TeamGrams::Gram(_) => (std::slice::from_ref(self), true),
            TeamGrams::All(parts) => (parts.as_slice(), true),
            TeamGrams::OneOf(arms) => (arms.as_slice(), false),
        };
        let grams: Vec<i32> =
            parts.iter().filter_map(|p| if let TeamGrams::Gram(g) = p { Some(*g) } else { None }).collect();
        let mut terms = Vec::new();
        if !grams.is_empty() {
            arrays.push(grams);
            terms.push(format!("{GRAMS} {} ${}::int4[]", if all { "@>" } else { "&&" }, before + arrays.len()));
        }
        for group in parts.iter().filter(|p| !matches!(p, TeamGrams::Gram(_))) {
            terms.push(group.condition(before, arrays));
        }
        match terms.len() {
            0 if all => "true".to_owned(),
            0 => "false".to_owned(),
            _ => format!("({})", terms.join(if all { " AND " } else { " OR " })),
        }
    }
}

/// One repository of the team index at its head.
#[derive(Debug, Clone)]
pub(crate) struct TeamRepo {
    pub name: String,
    pub head: String,
    pub files: u64,
    pub commits: u64,
    pub last_publish: String,
    /// The commit of its latest prebuilt index, if it has one.
    pub prebuilt: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::TeamGrams::{self, All, Gram, OneOf};

    /// A group's trigrams are one array parameter (`@>` for all, `&&` for any), numbered after
    /// the parameters before; groups nest as the pattern's alternations do.
    #[test]
    fn a_trigram_condition_asks_each_group_as_one_array() {
        let need = All(vec![Gram(1), Gram(2), OneOf(vec![Gram(3), All(vec![Gram(4), Gram(5)])])]);
        let mut arrays = Vec::new();
        let sql = need.condition(3, &mut arrays);
        assert_eq!(sql, "(@grams @> $4::int4[] AND (@grams && $5::int4[] OR (@grams @> $6::int4[])))");
        assert_eq!(arrays, vec![vec![1, 2], vec![3], vec![4, 5]]);
        let mut arrays = Vec::new();
        assert_eq!(TeamGrams::Gram(7).condition(0, &mut arrays), "(@grams @> $1::int4[])");
        assert_eq!(arrays, vec![vec![7]]);
    }

    /// A glob reads as SQLite's GLOB reads it (the local filters'), the rest of a path
    /// meaning itself: `.` is not "any character".
    #[test]
    fn a_path_glob_becomes_an_anchored_regular_expression() {
        use super::glob_regex;
        assert_eq!(glob_regex("src/**/*.rs"), r"^src/.*.*/.*\.rs$");
        assert_eq!(glob_regex("test_?.c"), r"^test_.\.c$");
        assert_eq!(glob_regex("[ab]*.py"), r"^[ab].*\.py$");
        assert_eq!(glob_regex("a+b[x"), r"^a\+b\[x$");
    }
}
