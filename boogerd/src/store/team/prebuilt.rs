//! Prebuilt local indexes in the team index: a publisher's index of a commit, compressed and
//! stored in parts, and its vectors apart (a clone reads them after its first run), whole or
//! not at all (one transaction); the latest per repository and branch kept. A clone reads one
//! part at a time, all from one consistent view of the server.

use super::{Result, TeamError, TeamStore};

/// A stored prebuilt index.
#[derive(Debug, Clone)]
pub(crate) struct PrebuiltInfo {
    pub sha: String,
    /// The local index's schema version it was made with.
    pub format: i32,
    /// The index: its size unpacked, and the BLAKE3 of its parts in order.
    pub index: Stored,
    /// Its vectors, when stored apart (an index offered by an older booger holds them).
    pub vectors: Option<Stored>,
}

/// One piece of a prebuilt index as stored: its size unpacked, and the BLAKE3 of its
/// compressed parts in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Stored {
    pub bytes: u64,
    pub hash: String,
}

/// The two pieces of a prebuilt index, each stored in parts of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Piece {
    /// The index file, without its vectors.
    Index,
    /// Its vectors, as a stream of records (see `engine::prebuilt::vectors`).
    Vectors,
}

impl Piece {
    fn table(self) -> &'static str {
        match self {
            Piece::Index => "snapshot_parts",
            Piece::Vectors => "snapshot_vectors",
        }
    }
}

const INFO: &str = "SELECT sha, format, bytes, hash, vector_bytes, vector_hash FROM snapshots";

fn info_of(r: &postgres::Row) -> Result<PrebuiltInfo> {
    let stored = |bytes: i64, hash: String| Stored { bytes: bytes.max(0) as u64, hash };
    let vector_bytes: i64 = r.try_get(4)?;
    Ok(PrebuiltInfo {
        sha: r.try_get(0)?,
        format: r.try_get(1)?,
        index: stored(r.try_get(2)?, r.try_get(3)?),
        vectors: if vector_bytes > 0 { Some(stored(vector_bytes, r.try_get(5)?)) } else { None },
    })
}

/// A prebuilt index being stored: invisible until [`Upload::finish`] commits it.
pub(crate) struct Upload<'a> {
    tx: postgres::Transaction<'a>,
    repo_id: i64,
    branch: Option<String>,
    sha: String,
    /// Parts stored so far, per piece.
    parts: [i32; 2],
}

impl TeamStore {
    /// The prebuilt indexes stored for the repositories that published any of `shas` (the
    /// commits themselves need not be published); `repo`'s alone when given by name.
    pub(crate) fn prebuilts_near(&mut self, shas: &[String], repo: Option<&str>) -> Result<Vec<PrebuiltInfo>> {
        let rows = self.client.query(
            &format!(
                "{INFO} WHERE repo_id IN (SELECT repo_id FROM commits WHERE sha = ANY($1)
                                          UNION SELECT id FROM repos WHERE name = $2)
                 ORDER BY made_at DESC"
            ),
            &[&shas, &repo],
        )?;
        rows.iter().map(info_of).collect()
    }

    /// The prebuilt index stored for `sha`, if any.
    pub(crate) fn snapshot(&mut self, sha: &str) -> Result<Option<PrebuiltInfo>> {
        self.client.query_opt(&format!("{INFO} WHERE sha = $1"), &[&sha])?.as_ref().map(info_of).transpose()
    }

    /// The local index's hash (BLAKE3 of the bytes) of each stored blob among `ids` (asked
    /// [`super::ASKED`] at a time).
    pub(crate) fn content_hashes(&mut self, ids: &[String]) -> Result<std::collections::HashMap<String, String>> {
        let mut hashes = std::collections::HashMap::new();
        for group in ids.chunks(super::ASKED) {
            let rows =
                self.client.query("SELECT blob_id, content_hash FROM blobs WHERE blob_id = ANY($1)", &[&group])?;
            for r in &rows {
                hashes.insert(r.try_get(0)?, r.try_get(1)?);
            }
        }
        Ok(hashes)
    }

    /// Starts storing the prebuilt index of `sha`, published in `repo` (on `branch`); `None`
    /// when one is stored already (a racing publisher's waits here until that one is done or
    /// abandoned).
    pub(crate) fn begin_prebuilt(
        &mut self,
        repo: &str,
        sha: &str,
        branch: Option<&str>,
        format: i32,
    ) -> Result<Option<Upload<'_>>> {
        let mut tx = self.client.transaction()?;
        let row = tx.query_opt("SELECT id FROM repos WHERE name = $1", &[&repo])?;
        let Some(repo_id) = row.map(|r| r.try_get::<_, i64>(0)).transpose()? else {
            return Ok(None); // the commit is published first
        };
        let fresh = tx.execute(
            "INSERT INTO snapshots (sha, repo_id, branch, format, bytes, hash) VALUES ($1, $2, $3, $4, 0, '')
             ON CONFLICT (sha) DO NOTHING",
            &[&sha, &repo_id, &branch, &format],
        )?;
        if fresh == 0 {
            return Ok(None);
        }
        Ok(Some(Upload { tx, repo_id, branch: branch.map(str::to_owned), sha: sha.to_owned(), parts: [0, 0] }))
    }

    /// Reads `piece` of the prebuilt index of `sha` part by part into `each`, streamed (the
    /// server sends the next parts while `each` works; the connection reads a part ahead at
    /// most), all parts from one view of the server (a newer one replacing it meanwhile does
    /// not cut this read short).
    pub(crate) fn read_prebuilt<E: From<TeamError>>(
        &mut self,
        sha: &str,
        piece: Piece,
        mut each: impl FnMut(&[u8]) -> std::result::Result<(), E>,
    ) -> std::result::Result<(), E> {
        use postgres::fallible_iterator::FallibleIterator;
        let mut tx = self
            .client
            .build_transaction()
            .isolation_level(postgres::IsolationLevel::RepeatableRead)
            .read_only(true)
            .start()
            .map_err(TeamError::from)?;
        let mut rows = tx
            .query_raw(&format!("SELECT data FROM {} WHERE sha = $1 ORDER BY part", piece.table()), [sha])
            .map_err(TeamError::from)?;
        while let Some(row) = rows.next().map_err(TeamError::from)? {
            each(row.try_get::<_, &[u8]>(0).map_err(TeamError::from)?)?;
        }
        drop(rows);
        tx.commit().map_err(TeamError::from)?;
        Ok(())
    }
}

impl Upload<'_> {
    /// Stores the next part of `piece`.
    pub(crate) fn part(&mut self, piece: Piece, data: &[u8]) -> Result<()> {
        let n = &mut self.parts[piece as usize];
        self.tx.execute(
            &format!("INSERT INTO {} (sha, part, data) VALUES ($1, $2, $3)", piece.table()),
            &[&self.sha, &*n, &data],
        )?;
        *n += 1;
        Ok(())
    }

    /// Makes the prebuilt index visible, its `index` and its `vectors` as stored, and drops
    /// the one it replaces (the same repository and branch).
    pub(crate) fn finish(mut self, index: &Stored, vectors: &Stored) -> Result<()> {
        let bytes = |s: &Stored| i64::try_from(s.bytes).unwrap_or(i64::MAX);
        self.tx.execute(
            "UPDATE snapshots SET bytes = $2, hash = $3, vector_bytes = $4, vector_hash = $5 WHERE sha = $1",
            &[&self.sha, &bytes(index), &index.hash, &bytes(vectors), &vectors.hash],
        )?;
        let older = "SELECT sha FROM snapshots WHERE repo_id = $1 AND branch IS NOT DISTINCT FROM $2 AND sha <> $3";
        for piece in [Piece::Index, Piece::Vectors] {
            self.tx.execute(
                &format!("DELETE FROM {} WHERE sha IN ({older})", piece.table()),
                &[&self.repo_id, &self.branch, &self.sha],
            )?;
        }
        self.tx.execute(
            &format!("DELETE FROM snapshots WHERE sha IN ({older})"),
            &[&self.repo_id, &self.branch, &self.sha],
        )?;
        self.tx.commit()?;
        Ok(())
    }
}
