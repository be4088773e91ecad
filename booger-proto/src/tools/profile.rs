//! Which tools an MCP session lists.
//!
//! Every agent session reads `tools/list` before its first question, so by default it lists a
//! core set, the tools an agent reaches for while working on code; `booger mcp --tools all`
//! lists every tool, and `--tools core,git,grep` any union of groups and tool names. A tool
//! left out of the list can still be called (by name, or in a `batch`): the profile only
//! decides what a session pays for up front.

use super::{TOOLS, ToolSpec};

/// Named groups of tools, in the order `booger help` shows them.
pub const GROUPS: &[(&str, &[&str])] = &[
    ("core", &["search", "symbols", "references", "grep", "branch-diff", "status", "batch"]),
    (
        "search",
        &[
            "search",
            "semantic-search",
            "hybrid-search",
            "symbols",
            "references",
            "grep",
            "directory-summary",
            "tests-for",
            "search-expand",
            "workspace-search",
        ],
    ),
    ("git", &["branch-diff", "draft-commit", "changelog", "changed-since"]),
    ("memory", &["annotate", "annotations", "focus", "visit", "forget"]),
    ("admin", &["status", "index", "projects", "embed", "eval"]),
    ("team", &["publish", "team-status"]),
];

/// A set of tools of the catalogue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Profile {
    /// Bit i: `TOOLS[i]` is in.
    bits: u64,
}

impl Profile {
    /// What `booger mcp` lists when not told otherwise.
    pub const DEFAULT: &'static str = "core";

    pub fn all() -> Self {
        Self { bits: (1u64 << TOOLS.len()) - 1 }
    }

    /// Parses a comma-separated list of group names (`core`, `search`, `git`, `memory`,
    /// `admin`, `all`) and tool names.
    pub fn parse(spec: &str) -> Result<Self, String> {
        let mut bits = 0u64;
        for word in spec.split(',').map(str::trim).filter(|w| !w.is_empty()) {
            if word == "all" {
                bits |= Self::all().bits;
            } else if let Some((_, names)) = GROUPS.iter().find(|(g, _)| *g == word) {
                for name in *names {
                    bits |= bit(name).expect("groups name catalogue tools");
                }
            } else if let Some(b) = bit(word) {
                bits |= b;
            } else {
                let groups: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
                return Err(format!(
                    "unknown tool or group `{word}` in --tools: use groups ({}, all) or tool names ({}), \
                     separated by commas",
                    groups.join(", "),
                    super::names().join(", ")
                ));
            }
        }
        if bits == 0 {
            return Err("--tools names no tool: use e.g. --tools core or --tools all".to_owned());
        }
        Ok(Self { bits })
    }

    pub fn contains(&self, name: &str) -> bool {
        bit(name).is_some_and(|b| self.bits & b != 0)
    }

    /// Its tools, in catalogue order.
    pub fn tools(self) -> impl Iterator<Item = &'static ToolSpec> {
        TOOLS.iter().enumerate().filter(move |(i, _)| self.bits & (1 << i) != 0).map(|(_, t)| t)
    }
}

impl Default for Profile {
    fn default() -> Self {
        Self::parse(Self::DEFAULT).expect("the default profile parses")
    }
}

fn bit(name: &str) -> Option<u64> {
    TOOLS.iter().position(|t| t.name == name).map(|i| 1u64 << i)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn groups_and_names_combine() {
        assert!(TOOLS.len() < 64, "a profile is a 64-bit set");
        let core = Profile::default();
        assert!(core.contains("search") && !core.contains("changelog"));
        let p = Profile::parse("core, changelog").unwrap();
        assert!(p.contains("changelog") && p.contains("grep"));
        assert_eq!(Profile::parse("all").unwrap().tools().count(), TOOLS.len());
        let every_group: Vec<&str> = GROUPS.iter().map(|(g, _)| *g).collect();
        assert_eq!(Profile::parse(&every_group.join(",")).unwrap(), Profile::all(), "every tool is in a group");
        let e = Profile::parse("core,serch").unwrap_err();
        assert!(e.contains("unknown tool or group `serch`") && e.contains("core"), "{e}");
        assert!(Profile::parse(" , ").is_err());
    }
}
