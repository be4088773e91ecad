//! Names a query writes with their owner: `Value::Null`, `Command.SetOutput`,
//! `utils.super_len`, `Router#route`. The member alone names every chunk called so (a
//! `NULL` constant of another type); written with an owner that has no chunk of that name
//! (`Null` is a variant inside the enum `Value`), another owner's chunk of the name is not
//! the one asked for, and loses the bonus of a named chunk (`names_another_owner`), so that
//! the owner's own (the enum `Value`, named by the query too) comes first.

use booger_proto::tools::ChunkKind;

use crate::source::lang::SPECS;
use crate::store::search::Candidate;

/// Owner and member of each name among the query's `written` ones that has an owner (`a::b`,
/// `a.b`, `a#b`; `a::b::c` gives `b`, `c`), lowercase. A file's name (`config.toml`,
/// `util.py`: a language booger parses, or a data or document format) is not one.
pub(crate) fn qualified_names<'a>(
    written: impl Iterator<Item = &'a str>,
    is_file_name: fn(&str) -> bool,
) -> Vec<(String, String)> {
    let ident = |p: &str| {
        p.starts_with(|c: char| c.is_alphabetic() || c == '_') && p.chars().all(|c| c.is_alphanumeric() || c == '_')
    };
    let mut out = Vec::new();
    for token in written {
        let extension = token.rsplit('.').next().unwrap_or_default().to_lowercase();
        let known = SPECS.iter().any(|s| s.extensions.contains(&extension.as_str()))
            || DATA_EXTENSIONS.contains(&extension.as_str());
        if known && is_file_name(&token.to_lowercase()) {
            continue;
        }
        let parts: Vec<&str> = token.split("::").flat_map(|p| p.split(['.', '#'])).collect();
        if parts.len() >= 2 && parts.iter().all(|p| ident(p)) {
            let pair = (parts[parts.len() - 2].to_lowercase(), parts[parts.len() - 1].to_lowercase());
            if !out.contains(&pair) {
                out.push(pair);
            }
        }
    }
    out
}

/// Extensions of data and documents, which no grammar claims, that make `a.b` a file.
const DATA_EXTENSIONS: &[&str] =
    &["rst", "txt", "toml", "json", "yml", "yaml", "lock", "cfg", "ini", "html", "css", "xml"];

/// The names of `qualified` whose owner is a type among `candidates` with no chunk of that
/// name (`Value::Null`: `Null` is a variant inside the enum `Value`, not a chunk of its
/// own). Only for those is another owner's chunk of the name set apart: where the owner's
/// own is there (`Router::nest`), it ranks first by its own match, and another owner's of
/// the same name is as often the one it hands the work to (`PathRouter::nest`); where the
/// owner is not a type of the project (`context.Context`, a library's), nothing says which
/// chunk of the name is meant.
pub(crate) fn unowned<'a>(
    qualified: &[(String, String)],
    candidates: impl Iterator<Item = &'a Candidate> + Clone,
) -> Vec<(String, String)> {
    qualified
        .iter()
        .filter(|(owner, member)| {
            let mut all = candidates.clone();
            all.clone().any(|c| is_type(c.kind) && c.name.eq_ignore_ascii_case(owner))
                && !all.any(|c| c.name.eq_ignore_ascii_case(member) && owns(owner, c.parent.as_deref(), &c.path))
        })
        .cloned()
        .collect()
}

/// A kind that can own members.
fn is_type(kind: ChunkKind) -> bool {
    use ChunkKind::*;
    matches!(kind, Struct | Class | Interface | Type | Enum | Typedef | Trait | Impl | Mod | Namespace)
}

/// The chunk named `name` belongs to another owner than the one `unowned` writes it with:
/// its parent is a different type, and its path does not name the owner either
/// (`utils.super_len` is a function of `utils.py`). A chunk without a parent may be the
/// owner module's own: it is not judged.
pub(crate) fn names_another_owner(unowned: &[(String, String)], name: &str, parent: Option<&str>, path: &str) -> bool {
    parent.is_some_and(|p| !p.is_empty())
        && unowned.iter().any(|(_, m)| m.eq_ignore_ascii_case(name))
        && !unowned.iter().any(|(o, m)| m.eq_ignore_ascii_case(name) && owns(o, parent, path))
}

/// The chunk of `parent` (a type) at `path` is `owner`'s: the parent is the owner, or a
/// folder or file of the path is named after it.
fn owns(owner: &str, parent: Option<&str>, path: &str) -> bool {
    parent.is_some_and(|p| p.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w.eq_ignore_ascii_case(owner)))
        || path.split('/').any(|seg| seg.split('.').next().is_some_and(|stem| stem.eq_ignore_ascii_case(owner)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::search::Query;

    fn pairs(text: &str) -> Vec<(String, String)> {
        Query::parse(text).qualified
    }

    #[test]
    fn owners_are_read_in_every_notation_and_files_are_not_owners() {
        let p = |a: &str, b: &str| (a.to_owned(), b.to_owned());
        assert_eq!(pairs("Value::Null"), [p("value", "null")]);
        assert_eq!(pairs("Fix deprecation comment for Command.SetOutput"), [p("command", "setoutput")]);
        assert_eq!(pairs("Remove unnecessary Arc around tokio::watch::Sender"), [p("watch", "sender")]);
        assert_eq!(pairs("`Router#route` and utils.super_len()"), [p("router", "route"), p("utils", "super_len")]);
        assert!(pairs("read config.toml and test_requests.py").is_empty());
        assert!(pairs("match *.example.com against 1.2.3 and a . b").is_empty());
        assert!(pairs("how does the router fall back?").is_empty());
    }

    #[test]
    fn only_a_chunk_of_another_owner_is_set_apart() {
        let q = pairs("Value::Null");
        // Another type's `NULL`: set apart.
        assert!(names_another_owner(&q, "NULL", Some("RawValue"), "src/raw.rs"));
        // The owner's own, by parent or by its file; a free function is not judged.
        assert!(!names_another_owner(&q, "Null", Some("Value"), "src/raw.rs"));
        assert!(!names_another_owner(&q, "null", Some("Helper"), "src/value/mod.rs"));
        assert!(!names_another_owner(&q, "null", None, "src/raw.rs"));
        // A name the query does not qualify is never set apart.
        assert!(!names_another_owner(&q, "Value", Some("Other"), "src/raw.rs"));
        assert!(!names_another_owner(&[], "NULL", Some("RawValue"), "src/raw.rs"));
    }

    fn chunk(name: &str, parent: &str, path: &str) -> Candidate {
        Candidate {
            id: 1,
            path: path.into(),
            language: "rust".into(),
            kind: booger_proto::tools::ChunkKind::Method,
            name: name.into(),
            signature: String::new(),
            parent: Some(parent.into()).filter(|p: &String| !p.is_empty()),
            start_line: 1,
            end_line: 2,
            bytes: 10,
            bm25: 0.0,
        }
    }

    #[test]
    fn an_owner_with_its_own_chunk_of_the_name_sets_nothing_apart() {
        let q = pairs("Router::nest");
        let mut router = chunk("Router", "", "src/routing/mod.rs");
        router.kind = ChunkKind::Struct;
        let own =
            [router.clone(), chunk("nest", "Router", "src/routing/mod.rs"), chunk("nest", "PathRouter", "src/p.rs")];
        assert!(unowned(&q, own.iter()).is_empty(), "the delegate `PathRouter::nest` keeps its bonus");
        let other = [router, chunk("nest", "PathRouter", "src/p.rs")];
        assert_eq!(unowned(&q, other.iter()), q);
        // An owner that is no type of the project (a library's `context.Context`): nothing
        // is set apart, not even the method `Context` of `Command`.
        let library = pairs("Add support for context.Context");
        assert!(unowned(&library, [chunk("Context", "Command", "command.go")].iter()).is_empty());
    }
}
