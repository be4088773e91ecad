//! Who may read what of the team index. A daemon on a developer's machine reads every
//! repository ([`Reader::Everyone`]); a remote agent of the team server reads through its
//! token, and every query checks the token in SQL (live, and granted the repository by one of
//! its patterns) rather than filtering rows afterwards: a revoked token reads nothing from its
//! next statement on, and no query can forget the check, since the one place that picks the
//! commits a query reads (its `heads`) holds it.

use super::{Result, TeamStore};

/// Whose query it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Reader {
    /// This machine's daemon: its user reads what they publish. (The team server never
    /// builds this one: its queries name their token.)
    #[default]
    Everyone,
    /// A team server token, by id.
    Token(i64),
}

impl Reader {
    /// The token id a query binds (`NULL` reads every repository).
    pub(super) fn token(&self) -> Option<i64> {
        match self {
            Reader::Everyone => None,
            Reader::Token(id) => Some(*id),
        }
    }
}

/// A live token, as the team server needs it per request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Token {
    pub id: i64,
    pub name: String,
    /// Calls a minute it may make.
    pub per_minute: u32,
}

/// A token as `booger team token list` shows it (never its secret).
#[derive(Debug, Clone, serde::Serialize)]
pub struct TokenInfo {
    pub name: String,
    pub repos: Vec<String>,
    pub per_minute: u32,
    pub created: String,
    pub revoked: Option<String>,
}

/// One call, as the audit keeps it.
#[derive(Debug, Clone)]
pub(crate) struct Audited {
    pub token: i64,
    pub tool: String,
    pub repo: Option<String>,
    pub millis: u32,
    pub results: u32,
    pub ok: bool,
}

/// A repository glob (`acme/*`, `tools?`, `*`) as a `LIKE` pattern: `*` any run, `?` one
/// character, and `%`, `_` and `\` meaning themselves.
pub(crate) fn like_pattern(glob: &str) -> String {
    let mut out = String::with_capacity(glob.len() + 2);
    for c in glob.chars() {
        match c {
            '*' => out.push('%'),
            '?' => out.push('_'),
            '%' | '_' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            c => out.push(c),
        }
    }
    out
}

impl TeamStore {
    /// A new token for `name` reading the repositories matching `globs`: its id, and the
    /// secret, which only its hash is kept of. Refused (a unique violation) if `name` has a
    /// live token.
    pub fn add_token(&mut self, name: &str, globs: &[String], per_minute: u32, secret: &str) -> Result<i64> {
        let likes: Vec<String> = globs.iter().map(|g| like_pattern(g)).collect();
        let hash = crate::base::secret::fingerprint(secret).to_vec();
        let row = self.client.query_one(
            "INSERT INTO tokens (name, hash, globs, likes, per_minute) VALUES ($1, $2, $3, $4, $5) RETURNING id",
            &[&name, &hash, &globs, &likes, &(per_minute.min(i32::MAX as u32) as i32)],
        )?;
        Ok(row.try_get(0)?)
    }

    /// Revokes `name`'s live token; false if it has none.
    pub fn revoke_token(&mut self, name: &str) -> Result<bool> {
        let n = self
            .client
            .execute("UPDATE tokens SET revoked_at = now() WHERE name = $1 AND revoked_at IS NULL", &[&name])?;
        Ok(n > 0)
    }

    pub fn tokens(&mut self) -> Result<Vec<TokenInfo>> {
        let rows = self.client.query(
            "SELECT name, globs, per_minute,
                    to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"'),
                    to_char(revoked_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS\"Z\"')
             FROM tokens ORDER BY name, created_at",
            &[],
        )?;
        rows.iter()
            .map(|r| {
                Ok(TokenInfo {
                    name: r.try_get(0)?,
                    repos: r.try_get(1)?,
                    per_minute: r.try_get::<_, i32>(2)?.max(0) as u32,
                    created: r.try_get(3)?,
                    revoked: r.try_get(4)?,
                })
            })
            .collect()
    }

    /// The live token whose secret is `secret`, if any.
    pub(crate) fn token(&mut self, secret: &str) -> Result<Option<Token>> {
        let hash = crate::base::secret::fingerprint(secret).to_vec();
        let row = self
            .client
            .query_opt("SELECT id, name, per_minute FROM tokens WHERE hash = $1 AND revoked_at IS NULL", &[&hash])?;
        let token = |r: postgres::Row| -> Result<Token> {
            Ok(Token { id: r.try_get(0)?, name: r.try_get(1)?, per_minute: r.try_get::<_, i32>(2)?.max(0) as u32 })
        };
        row.map(token).transpose()
    }

    /// Appends `calls` to the audit, in one statement.
    pub(crate) fn audit(&mut self, calls: &[Audited]) -> Result<()> {
        if calls.is_empty() {
            return Ok(());
        }
        let token: Vec<i64> = calls.iter().map(|c| c.token).collect();
        let tool: Vec<&str> = calls.iter().map(|c| c.tool.as_str()).collect();
        let repo: Vec<Option<&str>> = calls.iter().map(|c| c.repo.as_deref()).collect();
        let millis: Vec<i32> = calls.iter().map(|c| c.millis.min(i32::MAX as u32) as i32).collect();
        let results: Vec<i32> = calls.iter().map(|c| c.results.min(i32::MAX as u32) as i32).collect();
        let ok: Vec<bool> = calls.iter().map(|c| c.ok).collect();
        self.client.execute(
            "INSERT INTO audit (token_id, tool, repo, millis, results, ok)
             SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::int[], $6::bool[])",
            &[&token, &tool, &repo, &millis, &results, &ok],
        )?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::like_pattern;

    #[test]
    fn globs_become_like_patterns_that_match_nothing_more() {
        assert_eq!(like_pattern("acme/*"), "acme/%");
        assert_eq!(like_pattern("tool?"), "tool_");
        assert_eq!(like_pattern("100%_sure\\"), "100\\%\\_sure\\\\");
        assert_eq!(like_pattern("*"), "%");
    }
}
