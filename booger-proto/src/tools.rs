//! The tool catalogue: every tool is declared here once.
//!
//! From a [`ToolSpec`] the daemon derives the MCP `tools/list` entry ([`ToolSpec::input_schema`])
//! and validates every call ([`ToolSpec::validate`]); the client derives the command line
//! `booger <tool> ...` ([`ToolSpec::parse_cli`], [`ToolSpec::usage`]). The handlers live in the
//! daemon, keyed by the same names; a daemon test checks that each spec has exactly one.

use serde_json::{Map, Value, json};

/// The longest string argument a tool takes (a query, a pattern, a note, a path), in
/// characters: enough for any real one, and it keeps a pasted file from becoming a query
/// whose every word is searched for.
pub const MAX_STRING_CHARS: usize = 4_096;

/// The type of one argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    String,
    Integer {
        min: i64,
        max: i64,
    },
    Boolean,
    /// A number (fractions allowed) within a range.
    Number {
        min: f64,
        max: f64,
    },
    /// A string from a fixed set.
    Enum(&'static [&'static str]),
    /// A list of strings; on the command line, the rest of the positionals or a repeated flag.
    Strings,
    /// A list of tool calls `{"tool": name, "arguments": {...}}` (batch); on the command line,
    /// one JSON array.
    Calls,
}

#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    /// Given without a flag on the command line, in declaration order.
    pub positional: bool,
    pub description: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    pub name: &'static str,
    /// One line, for `booger help`.
    pub summary: &'static str,
    /// What an agent reads in `tools/list`: when to use the tool and what it returns.
    pub description: &'static str,
    pub params: &'static [Param],
    /// The tool only reads (MCP `readOnlyHint`).
    pub read_only: bool,
    /// Over MCP the answer is its JSON data (also as `structuredContent`), unless the call
    /// asks for another `output_mode`; the CLI prints the readable text.
    pub mcp_json: bool,
}

const fn param(name: &'static str, kind: Kind, description: &'static str) -> Param {
    Param { name, kind, required: false, positional: false, description }
}

const fn positional(name: &'static str, kind: Kind, description: &'static str) -> Param {
    Param { name, kind, required: false, positional: true, description }
}

const PROJECT: Param = param(
    "project",
    Kind::String,
    "Project name or path. Default: the session's project (the directory `booger mcp` was started in).",
);

const fn required(name: &'static str, kind: Kind, description: &'static str) -> Param {
    Param { name, kind, required: true, positional: true, description }
}

// Arguments shared by the search-side tools, spelled as the seeds spell them.
const OUTPUT_MODE: Param = param(
    "output_mode",
    Kind::Enum(&["content", "signatures", "files_with_matches", "count"]),
    "content: each result's declaration and the lines that match, with line numbers; signatures: one line per \
     result; files_with_matches: files (as rg -l), best first, each with its best chunks' lines and names \
     (head_limit counts files); count: just the number. Default: content.",
);
const HEAD_LIMIT: Param = param("head_limit", Kind::Integer { min: 1, max: 500 }, "Results to return. Default: 10.");
const OFFSET: Param = param("offset", Kind::Integer { min: 0, max: 100_000 }, "Results to skip (paging). Default: 0.");
const MAX_LINES: Param = param(
    "max_lines",
    Kind::Integer { min: 1, max: 10_000 },
    "Content mode: show each result's first max_lines lines instead of its matching lines.",
);
/// What a chunk can be: the daemon's chunker makes exactly these, and stores a kind as its
/// position here (ranking segments on disk), so new kinds are only ever appended. `block`
/// is top-level code between items, `gap` lines between items with no word on them,
/// `section` a Markdown piece, `raw` other text.
pub const CHUNK_KINDS: &[&str] = &[
    "function",
    "method",
    "struct",
    "enum",
    "union",
    "type",
    "typedef",
    "interface",
    "class",
    "impl",
    "trait",
    "mod",
    "namespace",
    "const",
    "macro",
    "declaration",
    "import",
    "block",
    "section",
    "raw",
    "gap",
];
/// The languages files are indexed as (a test in the daemon checks them against its own).
pub const LANGUAGES: &[&str] = &["rust", "python", "javascript", "typescript", "tsx", "go", "c", "markdown", "text"];
const KIND: Param = param("kind", Kind::Enum(CHUNK_KINDS), "Only chunks of this kind.");
const LANGUAGE: Param = param("language", Kind::Enum(LANGUAGES), "Only files in this language.");
const PATH_PREFIX: Param = param(
    "path_prefix",
    Kind::String,
    "Only files under this path (relative to the project root), or matching this glob (`src/**/*.rs`).",
);
const MAX_TOKENS: Param = param(
    "max_tokens",
    Kind::Integer { min: 50, max: 20_000 },
    "Token budget of the answer (about 4 characters each). When the answer is cut it says so and returns a \
     cursor. Default: 6000.",
);
const CURSOR: Param =
    param("cursor", Kind::String, "Continue a cut answer: the cursor it returned (same other arguments).");
const SESSION: Param = param(
    "session",
    Kind::String,
    "Session whose volatile context to use. Default: this connection's session; \"shared\" for the context every \
     session sees.",
);

pub const SEARCH: ToolSpec = ToolSpec {
    name: "search",
    summary: "Full-text search over code chunks (functions, classes, types, docs)",
    description: "Search the project's index (FTS5/BM25 over names, code, split identifiers and paths) and get the \
                  best chunks: whole functions, methods, classes, types, imports, doc sections. Ranking prefers \
                  definitions named by the query, code over prose, your focused paths, and annotated targets; \
                  notes attached with `annotate` appear as [note] lines. All terms must match, with a fallback \
                  to any term. Use output_mode=signatures or files_with_matches to spend few tokens.",
    params: &[
        required("query", Kind::String, "Words, identifiers or \"exact phrases\"; punctuation is safe."),
        OUTPUT_MODE,
        HEAD_LIMIT,
        OFFSET,
        MAX_LINES,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

const SYMBOL: Param = required("symbol", Kind::String, "The symbol's name, e.g. parse_config or Server.start.");

pub const SYMBOLS: ToolSpec = ToolSpec {
    name: "symbols",
    summary: "Outline of a file or directory: its symbols with smart signatures",
    description: "List the functions, methods, classes, types and imports of a file or of everything under a \
                  directory, in file order, with one-line signatures (declaration up to the body), grouped by file. \
                  Far cheaper than reading the files.",
    params: &[
        positional(
            "path",
            Kind::String,
            "File or directory, relative to the project root. Default: the whole project.",
        ),
        KIND,
        LANGUAGE,
        param("output_mode", Kind::Enum(&["signatures", "files_with_matches", "count"]), "Default: signatures."),
        HEAD_LIMIT,
        OFFSET,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

pub const REFERENCES: ToolSpec = ToolSpec {
    name: "references",
    summary: "Every mention of a symbol, classified definition/call/type/import/reference",
    description: "Find where a symbol is defined and used. Each line that mentions it is classified as definition, \
                  call, type, import or reference, with the function it is in; definitions come first. `scope` keeps \
                  one class, e.g. scope=call for call sites only.",
    params: &[
        SYMBOL,
        param(
            "scope",
            Kind::Enum(&["definition", "call", "type", "import", "reference"]),
            "Only this kind of mention.",
        ),
        param(
            "output_mode",
            Kind::Enum(&["content", "files_with_matches", "count"]),
            "content: one line per mention (default).",
        ),
        HEAD_LIMIT,
        OFFSET,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

pub const GREP: ToolSpec = ToolSpec {
    name: "grep",
    summary: "Regex or literal search over indexed code, matching lines with context",
    description: "Search the indexed text of the project with a regular expression (Rust regex syntax) or a literal \
                  string, and get matching lines as path:line:text, with optional context lines. Output is capped \
                  (head_limit matches, max_tokens).",
    params: &[
        required("pattern", Kind::String, "A regular expression, or a literal string with literal=true."),
        param("literal", Kind::Boolean, "Match the pattern as plain text. Default: false."),
        param("case_insensitive", Kind::Boolean, "Ignore case. Default: false."),
        param("context", Kind::Integer { min: 0, max: 20 }, "Lines of context around each match. Default: 0."),
        param("head_limit", Kind::Integer { min: 1, max: 1_000 }, "Matches to return. Default: 50."),
        OFFSET,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
    ],
    read_only: true,
    mcp_json: false,
};

pub const DIRECTORY_SUMMARY: ToolSpec = ToolSpec {
    name: "directory-summary",
    summary: "One-call overview of a directory: files, languages, kinds, entry points, subdirectories",
    description: "Summarise a directory (default: the project root): file and chunk counts, languages, symbol kinds, \
                  entry points (main, run, new, handle_*, cmd_*, serve, start) and subdirectories with their sizes.",
    params: &[
        positional("path", Kind::String, "Directory relative to the project root. Default: the root."),
        PROJECT,
        MAX_TOKENS,
    ],
    read_only: true,
    mcp_json: false,
};

pub const TESTS_FOR: ToolSpec = ToolSpec {
    name: "tests-for",
    summary: "Tests that exercise a symbol (naming conventions and call sites)",
    description: "Find test functions for a symbol: by naming convention (test_<name>, <name>_test, Test<Name>), \
                  and test functions in test files or modules that call or mention it.",
    params: &[
        SYMBOL,
        param("output_mode", Kind::Enum(&["signatures", "files_with_matches", "count"]), "Default: signatures."),
        HEAD_LIMIT,
        OFFSET,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

pub const CHANGED_SINCE: ToolSpec = ToolSpec {
    name: "changed-since",
    summary: "Symbols of the files re-indexed after a time",
    description: "What changed since you last looked: the symbols of every file (re-)indexed after `since`, an \
                  RFC 3339 / ISO 8601 timestamp such as 2026-11-22T09:30:00Z.",
    params: &[
        required("since", Kind::String, "RFC 3339 timestamp, e.g. 2026-11-22T09:30:00Z or 2026-11-22T10:30:00+01:00."),
        param("output_mode", Kind::Enum(&["signatures", "files_with_matches", "count"]), "Default: signatures."),
        HEAD_LIMIT,
        OFFSET,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

pub const SEARCH_EXPAND: ToolSpec = ToolSpec {
    name: "search-expand",
    summary: "Search, then outline the top files of the results",
    description: "Run `search`, then list the symbols (signatures) of the files holding the top results: where the \
                  answer is and what surrounds it, in one call.",
    params: &[
        required("query", Kind::String, "As for search."),
        param("top_files", Kind::Integer { min: 1, max: 10 }, "Files to outline. Default: 3."),
        HEAD_LIMIT,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        param(
            "max_tokens",
            Kind::Integer { min: 50, max: 20_000 },
            "Token budget of the answer (about 4 characters each): a third for the results, the rest shared by \
             the outlines. Default: 1000.",
        ),
    ],
    read_only: true,
    mcp_json: false,
};

pub const WORKSPACE_SEARCH: ToolSpec = ToolSpec {
    name: "workspace-search",
    summary: "Search every registered project at once",
    description: "Run `search` in all registered projects in one call; results are ranked together and tagged with \
                  their project.",
    params: &[
        required("query", Kind::String, "As for search."),
        OUTPUT_MODE,
        HEAD_LIMIT,
        OFFSET,
        MAX_LINES,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

pub const BATCH: ToolSpec = ToolSpec {
    name: "batch",
    summary: "Up to 20 tool calls in one round trip",
    description: "Run several tool calls (no nested batch) and get every result or error, in order. Saves the \
                  search → symbols → references round trips.",
    params: &[required(
        "calls",
        Kind::Calls,
        "The calls: [{\"tool\": \"search\", \"arguments\": {\"query\": \"...\"}}, ...]",
    )],
    read_only: false,
    mcp_json: false,
};

pub const ANNOTATE: ToolSpec = ToolSpec {
    name: "annotate",
    summary: "Attach a note to a path, a symbol or path:line",
    description: "Remember something about the code for this session (or all sessions): the note shows up as a \
                  [note] line in search results for its target and ranks the target higher. Targets: a path \
                  (file or folder), a symbol name, or path:line. Optional ttl in seconds.",
    params: &[
        required("target", Kind::String, "A path, a symbol name, or path:line."),
        required("note", Kind::String, "The note."),
        param("ttl", Kind::Integer { min: 1, max: 31_536_000 }, "Seconds until the note expires. Default: never."),
        SESSION,
        PROJECT,
    ],
    read_only: false,
    mcp_json: false,
};

pub const ANNOTATIONS: ToolSpec = ToolSpec {
    name: "annotations",
    summary: "List live notes (this session's and the shared ones)",
    description: "List the notes visible to this session (its own and the shared ones), optionally only those on one target.",
    params: &[positional("target", Kind::String, "Only notes on this target."), SESSION, PROJECT],
    read_only: true,
    mcp_json: false,
};

pub const FOCUS: ToolSpec = ToolSpec {
    name: "focus",
    summary: "Mark paths you are working on (search ranks them higher)",
    description: "Add paths (files or folders) to this session's focus set: search results under them rank higher (+5).",
    params: &[
        Param { required: true, ..positional("paths", Kind::Strings, "Paths relative to the project root.") },
        SESSION,
        PROJECT,
    ],
    read_only: false,
    mcp_json: false,
};

pub const VISIT: ToolSpec = ToolSpec {
    name: "visit",
    summary: "Mark paths you have already read (search ranks them lower)",
    description: "Add paths to this session's visited set: search results under them rank lower (-3), so unseen code surfaces.",
    params: &[
        Param { required: true, ..positional("paths", Kind::Strings, "Paths relative to the project root.") },
        SESSION,
        PROJECT,
    ],
    read_only: false,
    mcp_json: false,
};

pub const FORGET: ToolSpec = ToolSpec {
    name: "forget",
    summary: "Clear volatile context: this session's, one session's, or all",
    description: "Clear notes, focus and visited paths. Default: this session's. session=\"all\" clears every session's \
                  and the shared context.",
    params: &[SESSION, PROJECT],
    read_only: false,
    mcp_json: false,
};

pub const STATUS: ToolSpec = ToolSpec {
    name: "status",
    summary: "Show the daemon and the project's index state",
    description: "Daemon and project status: daemon version and uptime; for the project: files, \
                  chunks, per-language and per-kind counts, Merkle root hash, last index time, \
                  size on disk, indexing progress, skipped files and files indexed with problems \
                  (with reasons); and every registered project.",
    params: &[Param { positional: true, ..PROJECT }],
    read_only: true,
    mcp_json: false,
};

pub const INDEX: ToolSpec = ToolSpec {
    name: "index",
    summary: "Index a project now (incremental; --full rebuilds)",
    description: "Bring a project's index up to date with the files on disk and report what \
                  changed: files parsed, unchanged, deleted, chunks, skipped files and files \
                  indexed with problems, with reasons. Incremental: unchanged files are not read. \
                  Indexing a directory that is not registered registers it. The daemon keeps \
                  registered projects indexed on its own; call this to force a run or a rebuild.",
    params: &[
        positional("path", Kind::String, "Directory to index. Default: the session's project directory."),
        PROJECT,
        param("full", Kind::Boolean, "Forget the index and re-parse every file. Default: false."),
    ],
    read_only: false,
    mcp_json: false,
};

pub const PROJECTS: ToolSpec = ToolSpec {
    name: "projects",
    summary: "List, add or remove registered projects",
    description: "Manage the projects this daemon indexes and watches. action=list (default) \
                  lists them; add registers the directory `path` and indexes it in the \
                  background; add-all registers every git repository or project with a manifest \
                  (Cargo.toml, package.json, go.mod, pyproject.toml) under `path`; remove \
                  unregisters the project named by `path` (a name or its root) and deletes its index. \
                  Indexes live in the daemon's data directory; in_repo=true keeps one in the project's \
                  .booger/ instead. The registry survives daemon restarts.",
    params: &[
        positional("action", Kind::Enum(&["list", "add", "add-all", "remove"]), "What to do. Default: list."),
        positional("path", Kind::String, "Directory to add or search, or project name/root to remove."),
        param("in_repo", Kind::Boolean, "add: keep the index in <project>/.booger/ instead of the data directory."),
        param(
            "force",
            Kind::Boolean,
            "add: register a directory booger refuses by default (/, your home directory, system trees).",
        ),
    ],
    read_only: false,
    mcp_json: false,
};

const BASE: Param = positional(
    "base",
    Kind::String,
    "Branch, tag or commit to compare with. Default: main, then master (or origin/main, origin/master), then \
     the current branch's upstream.",
);
const INCLUDE: Param = param(
    "include",
    Kind::Enum(&["committed", "staged", "unstaged"]),
    "committed: commits on HEAD since the merge base with `base` (default); staged: also what is staged; \
     unstaged: also unstaged edits and untracked files (the files on disk).",
);

pub const BRANCH_DIFF: ToolSpec = ToolSpec {
    name: "branch-diff",
    summary: "What changed on this branch, by symbol: added / modified / removed per file",
    description: "Structural diff of the current branch against its base (default main/master/upstream), from the \
                  merge base: for each changed file, the functions, methods, types, imports and doc sections added, \
                  modified (with line counts and signature changes) and removed. Renames are paired; deleted, added \
                  and binary files are named. Far fewer tokens than `git diff`. include=staged/unstaged adds work \
                  not committed yet; focus=true also focuses the changed files so search ranks them first. The \
                  answer is JSON; output_mode=list is a shorter readable list, files one line per file.",
    params: &[
        BASE,
        INCLUDE,
        param(
            "output_mode",
            Kind::Enum(&["json", "list", "files"]),
            "json: the full structured diff (default over MCP); list: one line per symbol (default on the command \
             line); files: one line per file with counts.",
        ),
        param("focus", Kind::Boolean, "Add the changed files to this session's focus set. Default: false."),
        PATH_PREFIX,
        SESSION,
        PROJECT,
        MAX_TOKENS,
    ],
    read_only: false,
    mcp_json: true,
};

pub const DRAFT_COMMIT: ToolSpec = ToolSpec {
    name: "draft-commit",
    summary: "Draft a conventional commit message from the structural diff",
    description: "A conventional commit message (type(scope): subject under 72 characters, then the added, modified \
                  and removed symbols per file) for the work about to be committed: what is staged, or when nothing \
                  is staged, every uncommitted change. With `base`, one message for everything since that branch.",
    params: &[
        positional(
            "base",
            Kind::String,
            "Describe everything since this branch, tag or commit (with include=committed unless given). Default: \
             HEAD, i.e. the uncommitted work.",
        ),
        param(
            "include",
            Kind::Enum(&["committed", "staged", "unstaged"]),
            "As for branch-diff. Default: staged when something is staged, else unstaged; committed when `base` is \
             given.",
        ),
        PATH_PREFIX,
        PROJECT,
    ],
    read_only: true,
    mcp_json: false,
};

pub const CHANGELOG: ToolSpec = ToolSpec {
    name: "changelog",
    summary: "Markdown changelog (Added / Modified / Removed) between two refs",
    description: "A Markdown changelog of the symbols added, modified and removed between two refs, grouped under \
                  Added / Modified / Removed with one line per file. Default range: from the latest tag reachable \
                  from `to` (else the branch's base) to HEAD.",
    params: &[
        positional(
            "from",
            Kind::String,
            "Start ref (a tag such as v1.2.0, a branch, a commit). Default: the latest tag, else the base branch.",
        ),
        positional("to", Kind::String, "End ref. Default: HEAD."),
        PATH_PREFIX,
        PROJECT,
    ],
    read_only: true,
    mcp_json: false,
};

pub const SEMANTIC_SEARCH: ToolSpec = ToolSpec {
    name: "semantic-search",
    summary: "Search by meaning: chunks whose embedding is nearest the question",
    description: "Find code by what it does, in other words than its own (\"where do we retry failed uploads\"): \
                  the chunks whose embedding is closest to the query's (exact cosine over the project's vectors, \
                  computed in the background by the daemon). Same filters, output modes and budget as `search`. \
                  While vectors are missing or being computed, the answer says so and gives lexical results.",
    params: &[
        required("query", Kind::String, "A question or description in plain words."),
        OUTPUT_MODE,
        HEAD_LIMIT,
        OFFSET,
        MAX_LINES,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

pub const HYBRID_SEARCH: ToolSpec = ToolSpec {
    name: "hybrid-search",
    summary: "Lexical and semantic search fused into one ranking",
    description: "Run `search` (words and identifiers) and `semantic-search` (meaning) and fuse the two rankings: \
                  Reciprocal Rank Fusion by default (k = 60; the semantic list weighs semantic_weight = 0.3 \
                  against the lexical one's 1), or fusion=alpha to blend scores normalised to [0, 1] (alpha is the \
                  lexical share, default 0.7). Best for questions that mix names and behaviour. Same \
                  filters, output modes and budget as `search`; without vectors it answers lexically and says so.",
    params: &[
        required("query", Kind::String, "Words, identifiers or a question."),
        param("fusion", Kind::Enum(&["rrf", "alpha"]), "rrf (default) or alpha."),
        param("k", Kind::Integer { min: 1, max: 1_000 }, "RRF constant. Default: 60."),
        param(
            "semantic_weight",
            Kind::Number { min: 0.0, max: 10.0 },
            "RRF weight of the semantic list (the lexical list weighs 1). Default: 0.3.",
        ),
        param("alpha", Kind::Number { min: 0.0, max: 1.0 }, "Lexical share with fusion=alpha. Default: 0.7."),
        OUTPUT_MODE,
        HEAD_LIMIT,
        OFFSET,
        MAX_LINES,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    read_only: true,
    mcp_json: false,
};

pub const EMBED: ToolSpec = ToolSpec {
    name: "embed",
    summary: "Embedding coverage of a project; start or redo its embedding",
    description: "Report how many of the project's chunks have vectors for the current model, whether embedding is \
                  running, and vectors left from other models. action=start embeds what is missing now (the daemon \
                  also does it by itself after every change); action=force drops this model's vectors and embeds \
                  everything again.",
    params: &[positional("action", Kind::Enum(&["status", "start", "force"]), "Default: status."), PROJECT],
    read_only: false,
    mcp_json: false,
};

/// Every tool, in the order `tools/list` shows them.
pub const TOOLS: &[ToolSpec] = &[
    SEARCH,
    SEMANTIC_SEARCH,
    HYBRID_SEARCH,
    SYMBOLS,
    REFERENCES,
    GREP,
    DIRECTORY_SUMMARY,
    TESTS_FOR,
    CHANGED_SINCE,
    SEARCH_EXPAND,
    WORKSPACE_SEARCH,
    BATCH,
    ANNOTATE,
    ANNOTATIONS,
    FOCUS,
    VISIT,
    FORGET,
    BRANCH_DIFF,
    DRAFT_COMMIT,
    CHANGELOG,
    EMBED,
    STATUS,
    INDEX,
    PROJECTS,
];

pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

pub fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

impl Kind {
    fn schema(&self) -> Value {
        match *self {
            Kind::String => json!({ "type": "string" }),
            Kind::Integer { min, max } => json!({ "type": "integer", "minimum": min, "maximum": max }),
            Kind::Boolean => json!({ "type": "boolean" }),
            Kind::Number { min, max } => json!({ "type": "number", "minimum": min, "maximum": max }),
            Kind::Enum(values) => json!({ "type": "string", "enum": values }),
            Kind::Strings => json!({ "type": "array", "items": { "type": "string" } }),
            Kind::Calls => json!({
                "type": "array",
                "maxItems": 20,
                "items": {
                    "type": "object",
                    "properties": { "tool": { "type": "string" }, "arguments": { "type": "object" } },
                    "required": ["tool"],
                },
            }),
        }
    }

    fn describe(&self) -> String {
        match *self {
            Kind::String => "a string".to_owned(),
            Kind::Integer { min, max } => format!("an integer from {min} to {max}"),
            Kind::Boolean => "true or false".to_owned(),
            Kind::Number { min, max } => format!("a number from {min} to {max}"),
            Kind::Enum(values) => format!("one of {}", values.join(", ")),
            Kind::Strings => "an array of strings".to_owned(),
            Kind::Calls => "an array of up to 20 {\"tool\": ..., \"arguments\": {...}} objects".to_owned(),
        }
    }

    fn accepts(&self, v: &Value) -> bool {
        match *self {
            Kind::String => v.is_string(),
            Kind::Integer { min, max } => v.as_i64().is_some_and(|n| (min..=max).contains(&n)),
            Kind::Boolean => v.is_boolean(),
            Kind::Number { min, max } => v.as_f64().is_some_and(|n| n >= min && n <= max),
            Kind::Enum(values) => v.as_str().is_some_and(|s| values.contains(&s)),
            Kind::Strings => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Kind::Calls => v.as_array().is_some_and(|a| {
                a.len() <= 20
                    && a.iter().all(|c| {
                        c.get("tool").is_some_and(Value::is_string)
                            && c.get("arguments").is_none_or(|x| x.is_object() || x.is_null())
                    })
            }),
        }
    }

    /// Converts one command-line word to a JSON value of this kind.
    fn parse_word(&self, word: &str) -> Result<Value, String> {
        match *self {
            Kind::String | Kind::Enum(_) => Ok(Value::String(word.to_owned())),
            Kind::Integer { .. } => {
                word.parse::<i64>().map(Value::from).map_err(|_| format!("expected an integer, got {word:?}"))
            }
            Kind::Number { .. } => {
                word.parse::<f64>().map(Value::from).map_err(|_| format!("expected a number, got {word:?}"))
            }
            Kind::Boolean => match word {
                "true" | "yes" | "1" => Ok(Value::Bool(true)),
                "false" | "no" | "0" => Ok(Value::Bool(false)),
                _ => Err(format!("expected true or false, got {word:?}")),
            },
            Kind::Strings => Ok(Value::Array(vec![Value::String(word.to_owned())])),
            Kind::Calls => serde_json::from_str(word).map_err(|e| format!("expected a JSON array of calls: {e}")),
        }
    }
}

impl ToolSpec {
    /// The JSON Schema of the tool's arguments, as `tools/list` publishes it.
    /// The JSON Schema of the tool's answer data (MCP `outputSchema`).
    pub fn output_schema(&self) -> Value {
        crate::outputs::schema(self.name).unwrap_or_else(|| serde_json::json!({ "type": "object" }))
    }

    pub fn input_schema(&self) -> Value {
        let mut props = Map::new();
        for p in self.params {
            let mut s = p.kind.schema();
            s["description"] = Value::String(p.description.to_owned());
            props.insert(p.name.to_owned(), s);
        }
        let required: Vec<&str> = self.params.iter().filter(|p| p.required).map(|p| p.name).collect();
        json!({
            "type": "object",
            "properties": props,
            "required": required,
            "additionalProperties": false,
        })
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Checks `args` against the schema. The error says what is wrong and how to fix it.
    pub fn validate(&self, args: &Value) -> Result<(), String> {
        let empty = Map::new();
        let obj = match args {
            Value::Null => &empty,
            Value::Object(o) => o,
            other => {
                return Err(format!(
                    "{}: arguments must be a JSON object, got {}. Example: {}",
                    self.name,
                    type_name(other),
                    self.example()
                ));
            }
        };
        for key in obj.keys() {
            if self.param(key).is_none() {
                return Err(format!(
                    "{}: unknown argument `{key}`. Valid arguments: {}.",
                    self.name,
                    self.param_names()
                ));
            }
        }
        for p in self.params {
            match obj.get(p.name) {
                None | Some(Value::Null) if p.required => {
                    return Err(format!(
                        "{}: missing required argument `{}` ({}). Example: {}",
                        self.name,
                        p.name,
                        p.kind.describe(),
                        self.example()
                    ));
                }
                None | Some(Value::Null) => {}
                Some(Value::String(text)) if text.chars().count() > MAX_STRING_CHARS => {
                    return Err(format!(
                        "{}: argument `{}` is {} characters long; at most {MAX_STRING_CHARS} are accepted: shorten it.",
                        self.name,
                        p.name,
                        text.chars().count()
                    ));
                }
                Some(Value::Array(items))
                    if items.iter().any(|i| i.as_str().is_some_and(|t| t.chars().count() > MAX_STRING_CHARS)) =>
                {
                    return Err(format!(
                        "{}: an item of `{}` is longer than {MAX_STRING_CHARS} characters: shorten it.",
                        self.name, p.name
                    ));
                }
                Some(v) if !p.kind.accepts(v) => {
                    return Err(format!(
                        "{}: argument `{}` must be {}, got {}.",
                        self.name,
                        p.name,
                        p.kind.describe(),
                        short(v)
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn param_names(&self) -> String {
        if self.params.is_empty() {
            return "none".to_owned();
        }
        self.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
    }

    fn example(&self) -> String {
        let mut ex = Map::new();
        for p in self.params.iter().filter(|p| p.required) {
            let v = match p.kind {
                Kind::String => json!("..."),
                Kind::Integer { min, .. } => json!(min.max(1)),
                Kind::Boolean => json!(true),
                Kind::Number { min, .. } => json!(min),
                Kind::Enum(values) => json!(values[0]),
                Kind::Strings => json!(["..."]),
                Kind::Calls => json!([{ "tool": "search", "arguments": { "query": "..." } }]),
            };
            ex.insert(p.name.to_owned(), v);
        }
        Value::Object(ex).to_string()
    }

    /// Parses `booger <tool> [positionals] [--flag value]...` into tool arguments.
    ///
    /// Flags may be spelled with `-` or `_` (`--head-limit` = `--head_limit`), as `--flag=value`,
    /// and booleans as a bare `--flag`. A `Strings` positional takes every remaining word; so
    /// does a tool's only positional, a `String`, joined with spaces (`booger search retry
    /// upload`).
    pub fn parse_cli(&self, words: &[String]) -> Result<Value, String> {
        let mut args = Map::new();
        let mut positionals = self.params.iter().filter(|p| p.positional);
        let mut rest: Option<&Param> = None;
        let mut last: Option<&Param> = None;
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            i += 1;
            if let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) {
                let (name, inline) = match flag.split_once('=') {
                    Some((n, v)) => (n.replace('-', "_"), Some(v.to_owned())),
                    None => (flag.replace('-', "_"), None),
                };
                let p = self
                    .param(&name)
                    .ok_or_else(|| format!("unknown option --{name} for `{}`.\n{}", self.name, self.usage()))?;
                let value = match (inline, p.kind) {
                    (Some(v), _) => v,
                    (None, Kind::Boolean) => "true".to_owned(),
                    (None, _) => {
                        let v = words.get(i).ok_or_else(|| format!("--{name} needs a value"))?;
                        i += 1;
                        v.clone()
                    }
                };
                let v = p.kind.parse_word(&value).map_err(|e| format!("--{name}: {e}"))?;
                push_arg(&mut args, p, v);
                continue;
            }
            if let Some(p) = rest {
                push_arg(&mut args, p, Value::String(word.clone()));
                continue;
            }
            let Some(p) = positionals.next() else {
                let only = self.params.iter().filter(|p| p.positional).count() == 1;
                match last.filter(|p| only && p.kind == Kind::String).and_then(|p| args.get_mut(p.name)) {
                    Some(Value::String(s)) => {
                        s.push(' ');
                        s.push_str(word);
                        continue;
                    }
                    _ => return Err(format!("unexpected argument {word:?} for `{}`.\n{}", self.name, self.usage())),
                }
            };
            last = Some(p);
            if p.kind == Kind::Strings {
                rest = Some(p);
            }
            let v = p.kind.parse_word(word).map_err(|e| format!("{}: {e}", p.name))?;
            push_arg(&mut args, p, v);
        }
        Ok(Value::Object(args))
    }

    /// Command-line help for this tool.
    pub fn usage(&self) -> String {
        let mut line = format!("usage: booger {}", self.name);
        for p in self.params.iter().filter(|p| p.positional) {
            let n = p.name.to_uppercase();
            line.push_str(&match (p.required, p.kind == Kind::Strings) {
                (true, false) => format!(" {n}"),
                (true, true) => format!(" {n}..."),
                (false, false) => format!(" [{n}]"),
                (false, true) => format!(" [{n}...]"),
            });
        }
        line.push_str(" [options] [--json]\n\n");
        line.push_str(self.summary);
        line.push_str("\n\n");
        for p in self.params {
            let flag = p.name.replace('_', "-");
            let flag = if p.positional { p.name.to_uppercase() } else { format!("--{flag}") };
            line.push_str(&format!("  {flag:<20} {} ({})\n", p.description, p.kind.describe()));
        }
        line.push_str(&format!("  {:<20} print the answer as JSON\n", "--json"));
        line
    }
}

fn push_arg(args: &mut Map<String, Value>, p: &Param, v: Value) {
    match (p.kind, args.get_mut(p.name)) {
        (Kind::Strings, Some(Value::Array(existing))) => {
            if let Value::Array(more) = v {
                existing.extend(more);
            }
        }
        _ => {
            args.insert(p.name.to_owned(), v);
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 { format!("{}... ({})", &s[..s.floor_char_boundary(57)], type_name(v)) } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn every_schema_is_an_object_schema_with_described_properties() {
        for t in TOOLS {
            let s = t.input_schema();
            assert_eq!(s["type"], "object", "{}", t.name);
            for (name, prop) in s["properties"].as_object().unwrap() {
                assert!(prop["description"].as_str().is_some_and(|d| !d.is_empty()), "{}.{name}", t.name);
            }
        }
    }

    #[test]
    fn cli_positionals_and_flags_become_arguments() {
        let args = PROJECTS.parse_cli(&words("add /tmp/x")).unwrap();
        assert_eq!(args, json!({ "action": "add", "path": "/tmp/x" }));
        let args = PROJECTS.parse_cli(&words("--path=/y --action remove")).unwrap();
        assert_eq!(args, json!({ "action": "remove", "path": "/y" }));
        assert!(PROJECTS.parse_cli(&words("add /x extra")).unwrap_err().contains("unexpected argument"));
        // A tool's only positional takes the rest of the words, joined (an unquoted query).
        let args = SEARCH.parse_cli(&words("retry failed --head-limit 3 upload")).unwrap();
        assert_eq!(args["query"], "retry failed upload");
        assert_eq!(args["head_limit"], 3);
        assert!(PROJECTS.parse_cli(&words("--nope 1")).unwrap_err().contains("unknown option --nope"));
    }

    #[test]
    fn validation_names_the_argument_and_the_fix() {
        assert!(PROJECTS.validate(&json!({ "action": "add", "path": "/x" })).is_ok());
        assert!(PROJECTS.validate(&Value::Null).is_ok());
        let e = PROJECTS.validate(&json!({ "action": "explode" })).unwrap_err();
        assert!(e.contains("`action` must be one of list, add, add-all, remove"), "{e}");
        let e = PROJECTS.validate(&json!({ "paht": "/x" })).unwrap_err();
        assert!(e.contains("unknown argument `paht`") && e.contains("action, path"), "{e}");
        let e = STATUS.validate(&json!([1])).unwrap_err();
        assert!(e.contains("must be a JSON object"), "{e}");
        let e = STATUS.validate(&json!({ "project": 3 })).unwrap_err();
        assert!(e.contains("`project` must be a string, got 3"), "{e}");
    }
}
