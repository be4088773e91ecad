//! Which repository a name in the team index is: the first publish records its history's
//! root commit; a later publish under that name whose history does not hold it (an unrelated
//! repository in a folder of the same name) is refused unless it takes the name over.

use postgres::Transaction;

use super::{Result, TeamError, TeamStore};

/// What a publish says of its repository's history.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lineage {
    /// The root commits of the published commit's history, sorted; none from a shallow
    /// clone (cut history proves nothing, so it is not checked).
    pub roots: Vec<String>,
    /// Take the name over even if it holds another history.
    pub force: bool,
}

impl Lineage {
    /// Whether the root recorded for the name refuses this publish.
    fn refuses(&self, recorded: Option<&str>) -> bool {
        !self.force && !self.roots.is_empty() && recorded.is_some_and(|r| !self.holds(r))
    }

    fn holds(&self, root: &str) -> bool {
        self.roots.iter().any(|r| r == root)
    }
}

impl TeamStore {
    /// Refuses, before anything is sent, a publish of `name` whose history is not the one
    /// published under that name.
    pub(crate) fn check_lineage(&mut self, name: &str, lineage: &Lineage) -> Result<()> {
        let row = self.client.query_opt("SELECT root_commit FROM repos WHERE name = $1", &[&name])?;
        let recorded: Option<String> = row.map(|r| r.try_get(0)).transpose()?.flatten();
        if lineage.refuses(recorded.as_deref()) {
            return Err(TeamError::Unrelated { name: name.to_owned() });
        }
        Ok(())
    }
}

/// Within a publish's transaction: checks the root recorded for repository `id` (`recorded`),
/// records one when there is none, and replaces it when the publish takes the name over.
pub(super) fn claim(
    tx: &mut Transaction<'_>,
    id: i64,
    name: &str,
    recorded: Option<&str>,
    lineage: &Lineage,
) -> Result<()> {
    if lineage.refuses(recorded) {
        return Err(TeamError::Unrelated { name: name.to_owned() });
    }
    let Some(root) = lineage.roots.first() else { return Ok(()) };
    if recorded.is_none_or(|r| !lineage.holds(r)) {
        tx.execute("UPDATE repos SET root_commit = $2 WHERE id = $1", &[&id, root])?;
    }
    Ok(())
}
