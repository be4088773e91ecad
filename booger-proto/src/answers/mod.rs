//! What each tool answers: one type per answer, from which its JSON Schema is derived and
//! published as the tool's MCP `outputSchema`, beside the data itself as `structuredContent`.
//!
//! A type names the fields a client can rely on. Fields that only some output modes carry
//! (`results` is empty in count mode, `by_class` appears only there) are optional, so one
//! schema holds for every mode. Every tool in the catalogue has one (a test checks that), and
//! the end-to-end MCP test validates real answers against them. The schema a client reads is
//! kept small: it states fields and types, not the descriptions written here for people.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

mod embed;
mod eval;
mod git;
mod navigation;
mod schema;
mod search;
mod session;
mod status;
mod team;

pub use embed::*;
pub use eval::*;
pub use git::*;
pub use navigation::*;
pub(crate) use schema::of;
pub use search::*;
pub use session::*;
pub use status::*;
pub use team::*;

/// An object whose fields no client relies on one by one (how fresh the index was, a
/// report): published as an object only, since every session reads `tools/list`.
#[derive(Debug, Clone, Default, Serialize)]
#[serde(transparent)]
pub struct Facts(pub Value);

impl Facts {
    /// `value` as facts (null if it does not serialize).
    pub fn of<T: Serialize>(value: &T) -> Facts {
        Facts(serde_json::to_value(value).unwrap_or_default())
    }
}

impl JsonSchema for Facts {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Facts".into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({ "type": "object" })
    }
}

/// Names counted: languages, kinds, classes of mention.
pub type Counts = BTreeMap<String, u64>;

/// The output schema of the tool `name`, or None for a name the catalogue does not know.
pub fn schema(name: &str) -> Option<Value> {
    Some(match name {
        "search" | "semantic-search" | "hybrid-search" | "workspace-search" => of::<Search>(),
        "symbols" | "changed-since" => of::<Symbols>(),
        "references" => of::<References>(),
        "grep" => of::<Grep>(),
        "directory-summary" => of::<DirectorySummary>(),
        "tests-for" => of::<TestsFor>(),
        "search-expand" => of::<SearchExpand>(),
        "batch" => of::<Batch>(),
        "annotate" => of::<Annotated>(),
        "annotations" => of::<Annotations>(),
        "focus" | "visit" => of::<PathsAdded>(),
        "forget" => of::<Forgotten>(),
        "status" => of::<Status>(),
        "index" => of::<Index>(),
        "projects" => of::<Projects>(),
        "branch-diff" => of::<BranchDiff>(),
        "draft-commit" => of::<DraftCommit>(),
        "changelog" => of::<Changelog>(),
        "embed" => of::<Embed>(),
        "eval" => of::<Eval>(),
        "publish" => of::<Published>(),
        "team-status" => of::<TeamStatus>(),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::TOOLS;

    #[test]
    fn every_tool_has_an_output_schema_of_an_object() {
        for t in TOOLS {
            let s = schema(t.name).unwrap_or_else(|| panic!("no output schema for {}", t.name));
            assert_eq!(s["type"], "object", "{}: MCP structured content is an object", t.name);
            for r in s["required"].as_array().into_iter().flatten() {
                assert!(s["properties"].get(r.as_str().unwrap()).is_some(), "{}: required {r} is described", t.name);
            }
        }
    }
}
