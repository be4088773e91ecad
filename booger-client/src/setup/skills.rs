//! The agent skill (Agent Skills format: `booger/SKILL.md` with a name, a description that
//! says when to use it, and a body) that tells Claude Code and Codex when to reach for
//! booger's tools instead of grep and whole-file reads.
//!
//! The text is generated from the tool catalogue: the advice names tools by their catalogue
//! entries and shows example calls that the catalogue validates, and the closing list is the
//! catalogue itself, so the skill cannot disagree with `tools/list`.

use std::path::{Path, PathBuf};

use booger_proto::tools::{self, TOOLS};
use serde_json::{Value, json};

/// The skill's name (its folder and the `name` in its front matter).
pub const NAME: &str = "booger";

/// The line that marks a skill file as booger's own, so `--remove` deletes only what it wrote.
const MARK: &str = "<!-- Written by `booger setup --skills`; `booger setup --remove --skills` deletes it. -->";

/// One piece of advice: the situation, the tool, and an example call.
struct Advice {
    when: &'static str,
    tool: &'static str,
    example: fn() -> Value,
    instead_of: &'static str,
}

const ADVICE: &[Advice] = &[
    Advice {
        when: "Find code by what it does or by the words and identifiers in it",
        tool: "search",
        example: || json!({ "query": "retry failed uploads", "output_mode": "signatures" }),
        instead_of: "grep -r, then reading each hit",
    },
    Advice {
        when: "Find code by meaning when you do not know its words",
        tool: "hybrid-search",
        example: || json!({ "query": "where do we give up after too many attempts" }),
        instead_of: "guessing grep patterns",
    },
    Advice {
        when: "See where a symbol is defined and every place that calls, imports or mentions it",
        tool: "references",
        example: || json!({ "symbol": "parse_config", "scope": "call" }),
        instead_of: "grep for the name and sorting the noise",
    },
    Advice {
        when: "Outline a file or a folder before reading it: its functions, types and signatures",
        tool: "symbols",
        example: || json!({ "path": "src/server" }),
        instead_of: "reading whole files",
    },
    Advice {
        when: "Get one overview of an unfamiliar directory",
        tool: "directory-summary",
        example: || json!({ "path": "src" }),
        instead_of: "ls -R and opening files",
    },
    Advice {
        when: "Search exactly: a regular expression or a literal string, with line numbers",
        tool: "grep",
        example: || json!({ "pattern": "TODO|FIXME", "path_prefix": "src/" }),
        instead_of: "grep -rn over the tree (this one skips ignored and generated files)",
    },
    Advice {
        when: "Find the tests that exercise a function",
        tool: "tests-for",
        example: || json!({ "symbol": "parse_config" }),
        instead_of: "searching test folders by hand",
    },
    Advice {
        when: "Review what this branch changed, symbol by symbol",
        tool: "branch-diff",
        example: || json!({ "base": "main", "output_mode": "list" }),
        instead_of: "git diff main (thousands of lines)",
    },
    Advice {
        when: "See what changed in the files since a time (after a pull, or since you last looked)",
        tool: "changed-since",
        example: || json!({ "since": "2026-11-22T09:30:00Z" }),
        instead_of: "git log -p",
    },
    Advice {
        when: "Tell search which paths you are working on, so their results come first",
        tool: "focus",
        example: || json!({ "paths": ["src/upload/"] }),
        instead_of: "repeating path filters in every search",
    },
    Advice {
        when: "Leave a note on a file, symbol or line for later in this session (or for other sessions)",
        tool: "annotate",
        example: || json!({ "target": "src/upload/retry.rs:42", "note": "backoff ignores the server's Retry-After" }),
        instead_of: "keeping it in your context window",
    },
    Advice { when: "Read the notes left so far", tool: "annotations", example: || json!({}), instead_of: "" },
    Advice {
        when: "Ask several questions in one round trip",
        tool: "batch",
        example: || {
            json!({ "calls": [
                { "tool": "references", "arguments": { "symbol": "Uploader" } },
                { "tool": "symbols", "arguments": { "path": "src/upload" } },
            ]})
        },
        instead_of: "one call per question",
    },
];

fn call_text(tool: &str, args: &Value) -> String {
    let args = args.as_object().into_iter().flatten().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(", ");
    format!("`{tool}({args})`")
}

/// The whole SKILL.md.
pub fn skill_text() -> String {
    let mut s = String::new();
    s.push_str("---\n");
    s.push_str(&format!("name: {NAME}\n"));
    s.push_str(
        "description: Search and navigate this codebase with booger's live code index instead of grep, find and \
         whole-file reads. Use when asked where something is defined or used (\"where is parse_config defined?\", \
         \"who calls retry_upload?\"), to find code by what it does (\"the code that retries failed uploads\"), to \
         outline a file or folder before reading it, to find the tests of a function, to review what a branch \
         changed, or to keep notes and focus while working through a task.\n",
    );
    s.push_str("---\n\n");
    s.push_str(MARK);
    s.push_str("\n\n# booger: find code without reading it all\n\n");
    s.push_str(
        "booger keeps a live index of the repository: every function, method, class, type, import and doc \
         section, re-indexed as files change. Its MCP server, `booger`, answers in a few hundred tokens what \
         grep and whole-file reads answer in thousands. In Claude Code its tools are named `mcp__booger__<tool>`.\n\n\
         Reach for booger first; open a file only at the lines an answer points to.\n\n",
    );
    s.push_str("## Which tool, when\n\n");
    for a in ADVICE {
        let spec = tools::find(a.tool).unwrap_or_else(|| panic!("the skill names `{}`, which is not a tool", a.tool));
        s.push_str(&format!("- `{}`: {}. Example: {}", spec.name, a.when, call_text(spec.name, &(a.example)())));
        if !a.instead_of.is_empty() {
            s.push_str(&format!(". Instead of {}", a.instead_of));
        }
        s.push_str(".\n");
    }
    s.push_str(
        "\n## Habits that save tokens\n\n\
         - Start with `output_mode=\"signatures\"` or `\"files_with_matches\"`; ask for content only for the results \
         you will read.\n\
         - Every tool defaults to the session's project (the repository the agent runs in); pass `project` to ask \
         about another registered one.\n\
         - A cut answer ends with a cursor: pass it back as `cursor` to get the rest.\n\
         - Answers say when the index is still catching up (\"indexing now\"); results are then partial.\n\n",
    );
    s.push_str("## Every tool\n\n");
    let listed = tools::Profile::default();
    let core: Vec<String> = listed.tools().map(|t| format!("`{}`", t.name)).collect();
    s.push_str(&format!(
        "The MCP server lists a core set by default ({}), so every session starts cheap. The others \
         answer all the same: call them through `batch`, e.g. \
         `batch(calls=[{{\"tool\": \"tests-for\", \"arguments\": {{\"symbol\": \"parse_config\"}}}}])`, or have \
         them listed with `booger mcp --tools all` (or groups: `--tools core,git,memory`) in the MCP configuration.\n\n",
        core.join(", ")
    ));
    for t in TOOLS {
        s.push_str(&format!("- `{}`: {}\n", t.name, t.summary));
    }
    s.push_str(
        "\nFrom a shell, the same tools run as `booger <tool> ...` (`booger help <tool>` lists the arguments).\n",
    );
    s
}

/// The tools an example in the skill calls, with their arguments (checked against the catalogue).
#[cfg(test)]
fn examples() -> impl Iterator<Item = (&'static tools::ToolSpec, Value)> {
    ADVICE.iter().filter_map(|a| tools::find(a.tool).map(|t| (t, (a.example)())))
}

/// Where the skill goes: Claude Code's and Codex's skill folders, for the user or a project.
pub fn skill_paths(home: &Path, codex_home: &Path, project: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
    match project {
        Some(root) => vec![
            ("claude-code", root.join(".claude/skills").join(NAME).join("SKILL.md")),
            ("codex", root.join(".codex/skills").join(NAME).join("SKILL.md")),
        ],
        None => vec![
            ("claude-code", home.join(".claude/skills").join(NAME).join("SKILL.md")),
            ("codex", codex_home.join("skills").join(NAME).join("SKILL.md")),
        ],
    }
}

/// Whether `text` is a skill file booger wrote (and may delete).
pub fn is_ours(text: &str) -> bool {
    text.contains(MARK)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_example_is_a_valid_call() {
        for (spec, args) in examples() {
            spec.validate(&args).unwrap_or_else(|e| panic!("the skill's example of {} is invalid: {e}", spec.name));
        }
        assert_eq!(examples().count(), ADVICE.len(), "every tool the advice names exists");
    }

    #[test]
    fn front_matter_follows_the_agent_skills_format() {
        let text = skill_text();
        let front = text.strip_prefix("---\n").and_then(|t| t.split_once("\n---\n")).unwrap().0;
        assert!(front.lines().any(|l| l == "name: booger"));
        let description = front.lines().find_map(|l| l.strip_prefix("description: ")).unwrap();
        assert!(!description.is_empty() && description.len() <= 1024, "{}", description.len());
        // A plain YAML scalar: no ": " or " #" that would end or split it.
        assert!(!description.contains(": ") && !description.contains(" #"), "{description}");
    }
}
