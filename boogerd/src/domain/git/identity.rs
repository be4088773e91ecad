//! Which repository a working tree is, as the team index names it: `owner/name` from its
//! `origin` remote, and the root commits of its history (what another repository of the same
//! name cannot have).

use super::GitError;
use super::repo::Repo;

/// A repository name in the team index at most this long.
const NAME_MAX: usize = 200;

impl Repo {
    /// `owner/name` of the `origin` remote's URL (`git@github.com:acme/api.git`,
    /// `https://gitlab.example/group/acme/api`), if it has one that names a host.
    pub(crate) fn remote_name(&self) -> Option<String> {
        let out = self.git.output(&["config", "--get", "remote.origin.url"], None).ok()?;
        owner_and_name(String::from_utf8_lossy(&out.stdout).trim())
    }

    /// The root commits of `rev`'s history, sorted; none in a shallow clone (its history is
    /// cut, so its roots say nothing of which repository it is).
    pub(crate) fn roots(&self, rev: &str) -> Result<Vec<String>, GitError> {
        let shallow = self.git.run(&["rev-parse", "--is-shallow-repository"])?;
        if String::from_utf8_lossy(&shallow).trim() == "true" {
            return Ok(Vec::new());
        }
        let commit = self.commit_of(rev)?;
        let out = self.git.run(&["rev-list", "--max-parents=0", &commit])?;
        let mut roots: Vec<String> = String::from_utf8_lossy(&out).lines().map(str::to_owned).collect();
        roots.sort();
        Ok(roots)
    }
}

/// `owner/name` (the path's last two parts, without `.git`) of a remote URL that names a host:
/// `scheme://[user@]host[:port]/…/owner/name[.git]` or `[user@]host:…/owner/name[.git]`. A
/// local path, a `file://` URL or a name that is no valid repository name gives `None`.
pub(crate) fn owner_and_name(url: &str) -> Option<String> {
    let path = match url.split_once("://") {
        Some((scheme, _)) if scheme.eq_ignore_ascii_case("file") => return None,
        Some((_, rest)) => rest.split_once('/')?.1,
        None => {
            let (host, path) = url.split_once(':')?;
            if host.is_empty() || host.contains(['/', '\\']) || host.len() == 1 {
                return None; // a local path (`./a:b`, `C:\…`)
            }
            path
        }
    };
    let path = path.trim_end_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let name = parts.get(parts.len().checked_sub(2)?..)?.join("/");
    is_valid_name(&name).then_some(name)
}

/// A repository name the team index takes: parts of letters, digits, `.`, `_` and `-`,
/// joined by `/`, none of them `.` or `..`, at most [`NAME_MAX`] bytes.
pub(crate) fn is_valid_name(name: &str) -> bool {
    name.len() <= NAME_MAX
        && name.split('/').all(|part| {
            !part.is_empty()
                && part != "."
                && part != ".."
                && part.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
        })
}

#[cfg(test)]
mod tests {
    use super::owner_and_name;

    #[test]
    fn owner_and_name_of_the_usual_remote_urls() {
        let named = |url| owner_and_name(url);
        assert_eq!(named("git@github.com:acme/api.git").as_deref(), Some("acme/api"));
        assert_eq!(named("https://github.com/acme/api").as_deref(), Some("acme/api"));
        assert_eq!(named("https://user@gitlab.example:8443/group/acme/api.git/").as_deref(), Some("acme/api"));
        assert_eq!(named("ssh://git@host.example/acme/api.git").as_deref(), Some("acme/api"));
        for local in ["/srv/git/acme/api.git", "file:///srv/acme/api", "../acme/api", "C:\\git\\acme\\api", ""] {
            assert_eq!(named(local), None, "{local}");
        }
        assert_eq!(named("https://host.example/api"), None, "no owner");
        assert_eq!(named("https://host.example/acme/a%0Ab"), None, "not a name");
    }
}
