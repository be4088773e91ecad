//! A commit's list of files as the team index records it: whole, or kept against a base
//! commit of the same repository when it differs from one by little (`search.rs`'s
//! `file_of` resolves both for every read).

use std::borrow::Cow;
use std::collections::HashMap;

use super::Result;

/// A commit's list is kept against a base when it names at most one file in this many: a
/// longer list of differences costs every read of the commit more than it saves.
const DELTA_SHARE: usize = 8;

/// A path of a commit's list, and its blob (none: a path its base has and it does not).
pub(super) type FileRow<'a> = (Cow<'a, str>, Option<&'a str>);

/// The rows that record `files` as the commit `sha`'s list, and the base they are kept
/// against: of the latest whole lists of the repository (published from `branches`, its own
/// and the default, or from anywhere), the one it differs from least, when that is at most
/// one file in [`DELTA_SHARE`]; else every file, with no base.
pub(super) fn file_rows<'a>(
    tx: &mut postgres::Transaction<'_>,
    repo_id: i64,
    sha: &str,
    branches: [Option<&str>; 2],
    files: &'a [(String, String)],
) -> Result<(Option<String>, Vec<FileRow<'a>>)> {
    let most = files.len() / DELTA_SHARE;
    let candidates: Vec<String> = if most == 0 {
        Vec::new()
    } else {
        tx.query(
            "(SELECT sha FROM commits WHERE repo_id = $1 AND base IS NULL AND sha <> $2 AND branch = $3
              ORDER BY published_at DESC LIMIT 1)
             UNION (SELECT sha FROM commits WHERE repo_id = $1 AND base IS NULL AND sha <> $2 AND branch = $4
              ORDER BY published_at DESC LIMIT 1)
             UNION (SELECT sha FROM commits WHERE repo_id = $1 AND base IS NULL AND sha <> $2
              ORDER BY published_at DESC LIMIT 1)",
            &[&repo_id, &sha, &branches[0], &branches[1]],
        )?
        .iter()
        .map(|r| r.try_get(0))
        .collect::<std::result::Result<_, _>>()?
    };
    let mine: HashMap<&str, &str> = files.iter().map(|(p, b)| (p.as_str(), b.as_str())).collect();
    let mut best: Option<(String, Vec<FileRow<'a>>)> = None;
    for candidate in candidates {
        let rows = tx
            .query("SELECT path, blob_id FROM commit_files WHERE repo_id = $1 AND sha = $2", &[&repo_id, &candidate])?;
        let theirs: HashMap<&str, &str> =
            rows.iter().map(|r| Ok((r.try_get(0)?, r.try_get(1)?))).collect::<Result<_>>()?;
        let changed = files.iter().filter(|(p, b)| theirs.get(p.as_str()) != Some(&b.as_str()));
        let gone = theirs.keys().filter(|p| !mine.contains_key(*p));
        let delta: Vec<FileRow<'a>> = changed
            .map(|(p, b)| (Cow::Borrowed(p.as_str()), Some(b.as_str())))
            .chain(gone.map(|p| (Cow::Owned((*p).to_owned()), None)))
            .take(most + 1)
            .collect();
        if delta.len() <= most && best.as_ref().is_none_or(|(_, d)| delta.len() < d.len()) {
            best = Some((candidate, delta));
        }
    }
    Ok(match best {
        Some((base, delta)) => (Some(base), delta),
        None => (None, files.iter().map(|(p, b)| (Cow::Borrowed(p.as_str()), Some(b.as_str()))).collect()),
    })
}
