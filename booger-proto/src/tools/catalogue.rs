//! Every tool and its arguments, declared once.
//!
//! `description` and the arguments' descriptions are what every agent session pays for in
//! `tools/list`, before its first question: they say when to use the tool and what it returns,
//! in a sentence or two. The rest (ranking rules, defaults of rarely used options, examples) is
//! `details`, shown by `booger help TOOL` and the agent skill.

use super::params::{KIND, LANGUAGE, PROJECT, param, positional, required};
use super::{Effect, Kind, Param, ToolSpec};

// Arguments shared by the search-side tools, spelled as the seeds spell them.
const OUTPUT_MODE: Param = param(
    "output_mode",
    Kind::Enum(&["content", "signatures", "files_with_matches", "count"]),
    "content (default): signature and matching lines; signatures; files_with_matches; count.",
);
const HEAD_LIMIT: Param = param("head_limit", Kind::Integer { min: 1, max: 500 }, "Results. Default: 10.");
const OFFSET: Param = param("offset", Kind::Integer { min: 0, max: 100_000 }, "Results to skip.");
const MAX_LINES: Param = param("max_lines", Kind::Integer { min: 1, max: 10_000 }, "content: lines per result.");
const PATH_PREFIX: Param = param("path_prefix", Kind::String, "Path prefix or glob.");
const MAX_TOKENS: Param = param("max_tokens", Kind::Integer { min: 50, max: 20_000 }, "Token budget (default 6000).");
const TEAM: Param = param("team", Kind::Boolean, "Also the team index.");
const CURSOR: Param = param("cursor", Kind::String, "Continue a cut answer.");
const SESSION: Param = param(
    "session",
    Kind::String,
    "Whose context. Default: this connection's session; \"shared\": the one every session sees.",
);
/// The arguments of the ranked searches (search, semantic-search, hybrid-search): their own
/// first, then the filters, output modes, paging and budget they share, so "same options as
/// search" holds by construction.
macro_rules! ranked {
    ($($own:expr),+ $(,)?) => {
        &[$($own,)+ OUTPUT_MODE, HEAD_LIMIT, OFFSET, MAX_LINES, KIND, LANGUAGE, PATH_PREFIX, PROJECT, MAX_TOKENS, CURSOR]
    };
}

/// The parameters of a tool that lists symbols: its own, then output mode, paging, project,
/// budget and cursor.
macro_rules! listed {
    ($($own:expr),+ $(,)?) => {
        &[$($own,)+ LISTED_MODE, HEAD_LIMIT, OFFSET, PROJECT, MAX_TOKENS, CURSOR]
    };
}

const LISTED_MODE: Param =
    param("output_mode", Kind::Enum(&["signatures", "files_with_matches", "count"]), "Default: signatures.");
const QUERY: Param = required("query", Kind::Text, "Words, identifiers or \"exact phrases\".");
const SYMBOL: Param = required("symbol", Kind::String, "A name, e.g. parse_config or Server.start.");
const PATHS: Param =
    Param { required: true, ..positional("paths", Kind::Strings, "Files or folders, relative to the project.") };

pub const SEARCH: ToolSpec = ToolSpec {
    name: "search",
    title: "Search code",
    summary: "Full-text search over code chunks (functions, classes, types, docs)",
    description: "Find code by words and identifiers: whole functions, classes, types and doc sections, best first. \
                  Use instead of grep and reading files.",
    details: "Search the project's index (FTS5/BM25 over names, code, split identifiers and paths) and get the \
              best chunks: whole functions, methods, classes, types, imports, doc sections. Ranking prefers \
              definitions named by the query, code over prose, your focused paths, and annotated targets; notes \
              attached with `annotate` appear as [note] lines. All terms must match, with a fallback to any \
              term. Use --output-mode signatures or files_with_matches to spend few tokens. path_prefix takes a \
              prefix (src/net) or a glob (src/**/*.rs). Each answer carries its confidence: how much of the query \
              its best results hold; below the project's threshold (calibrated by `eval`) it says \"no good \
              match\" first, lists a few candidates and what to try instead.",
    params: ranked!(QUERY),
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const SYMBOLS: ToolSpec = ToolSpec {
    name: "symbols",
    title: "Outline",
    summary: "Outline of a file or directory: its symbols with smart signatures",
    description: "Outline a file or directory: functions, classes, types and imports with one-line signatures. \
                  Cheaper than reading the files.",
    details: "List the functions, methods, classes, types and imports of a file or of everything under a \
              directory, in file order, with one-line signatures (declaration up to the body), grouped by file.",
    params: listed!(positional("path", Kind::String, "File or directory."), KIND, LANGUAGE,),
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const REFERENCES: ToolSpec = ToolSpec {
    name: "references",
    title: "References",
    summary: "Every mention of a symbol, classified definition/call/type/import/reference",
    description: "Where a symbol is defined and used, each mention classified: definition, call, type, import, \
                  reference.",
    details: "Find where a symbol is defined and used. Each line that mentions it is classified as definition, \
              call, type, import or reference, with the function it is in; definitions come first. `scope` keeps \
              one class, e.g. --scope call for call sites only.",
    params: &[
        SYMBOL,
        param("scope", Kind::Enum(&["definition", "call", "type", "import", "reference"]), "Only these mentions."),
        param("output_mode", Kind::Enum(&["content", "files_with_matches", "count"]), "Default: content."),
        HEAD_LIMIT,
        OFFSET,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
        CURSOR,
    ],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const GREP: ToolSpec = ToolSpec {
    name: "grep",
    title: "Grep the index",
    summary: "Regex or literal search over indexed code, matching lines with context",
    description: "Regex or literal search over the project's files, from the index: matching lines as path:line:text.",
    details: "Search the indexed text of the project with a regular expression (Rust regex syntax) or a literal \
              string, and get matching lines as path:line:text, with optional context lines; the same lines as \
              rg finds, narrowed by a trigram index. Output is capped (head_limit matches, max_tokens). With team, \
              also every other repository published to the team index, at its latest published commit on its \
              default branch, as repository@commit:path:line:text.",
    params: &[
        required("pattern", Kind::String, "Regex, or plain text with literal."),
        param("literal", Kind::Boolean, "Match the pattern as plain text."),
        param("case_insensitive", Kind::Boolean, "Ignore case."),
        param("context", Kind::Integer { min: 0, max: 20 }, "Context lines per match."),
        TEAM,
        param("head_limit", Kind::Integer { min: 1, max: 1_000 }, "Matches. Default: 50."),
        OFFSET,
        CURSOR,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
    ],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const DIRECTORY_SUMMARY: ToolSpec = ToolSpec {
    name: "directory-summary",
    title: "Directory summary",
    summary: "One-call overview of a directory: files, languages, kinds, entry points, subdirectories",
    description: "Overview of a directory: file and chunk counts, languages, symbol kinds, entry points and \
                  subdirectories.",
    details: "Summarise a directory (default: the project root): file and chunk counts, languages, symbol kinds, \
              entry points (main, run, new, handle_*, cmd_*, serve, start) and subdirectories with their sizes.",
    params: &[positional("path", Kind::String, "Directory. Default: the project root."), PROJECT, MAX_TOKENS],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const TESTS_FOR: ToolSpec = ToolSpec {
    name: "tests-for",
    title: "Tests for a symbol",
    summary: "Tests that exercise a symbol (naming conventions and call sites)",
    description: "Test functions for a symbol: named after it, or in test files and modules that call it.",
    details: "Find test functions for a symbol: by naming convention (test_<name>, <name>_test, Test<Name>), and \
              test functions in test files or modules that call or mention it.",
    params: listed!(SYMBOL),
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const CHANGED_SINCE: ToolSpec = ToolSpec {
    name: "changed-since",
    title: "Changed since",
    summary: "Symbols of the files re-indexed after a time",
    description: "What changed since you last looked: the symbols of every file re-indexed after a time.",
    details: "The symbols of every file (re-)indexed after `since`, an RFC 3339 / ISO 8601 timestamp such as \
              2026-11-22T09:30:00Z.",
    params: listed!(required("since", Kind::String, "RFC 3339 time, e.g. 2026-11-22T09:30:00Z."), PATH_PREFIX),
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const SEARCH_EXPAND: ToolSpec = ToolSpec {
    name: "search-expand",
    title: "Search and outline",
    summary: "Search, then outline the top files of the results",
    description: "`search`, then the outlines of the files holding the top results, in one call.",
    details: "Run `search`, then list the symbols (signatures) of the files holding the top results: where the \
              answer is and what surrounds it. A third of max_tokens (default 1000) goes to the results, the \
              rest to the outlines.",
    params: &[
        required("query", Kind::Text, "As for search."),
        param("top_files", Kind::Integer { min: 1, max: 10 }, "Files to outline. Default: 3."),
        HEAD_LIMIT,
        KIND,
        LANGUAGE,
        PATH_PREFIX,
        PROJECT,
        param(
            "max_tokens",
            Kind::Integer { min: 50, max: 20_000 },
            "Answer budget, ~4 characters each. Default: 1000.",
        ),
    ],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const WORKSPACE_SEARCH: ToolSpec = ToolSpec {
    name: "workspace-search",
    title: "Search all projects",
    summary: "Search every registered project at once",
    description: "`search` in every registered project at once, ranked together, tagged with their project.",
    details: "Run `search` in all registered projects in one call; results are ranked together and tagged with \
              their project. With team, also every repository published to the team index (`booger publish`), \
              read at its latest published commit on its default branch and tagged repository@commit:path; \
              projects registered here answer from their own, fresher, index.",
    params: &[
        required("query", Kind::Text, "As for search."),
        TEAM,
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
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const BATCH: ToolSpec = ToolSpec {
    name: "batch",
    title: "Batch of calls",
    summary: "Up to 20 tool calls in one round trip",
    description: "Up to 20 booger tool calls in one round trip; every result or error, in order.",
    details: "Run several tool calls (no nested batch) and get every result or error, in order. Saves the \
              search → symbols → references round trips. Any booger tool can be called, also one this session's \
              tools/list does not show.",
    params: &[required("calls", Kind::Calls, "Each {tool, arguments}.")],
    effect: Effect::Writes,
    mcp_json: false,
};

pub const ANNOTATE: ToolSpec = ToolSpec {
    name: "annotate",
    title: "Annotate",
    summary: "Attach a note to a path, a symbol or path:line",
    description: "A note on a path, symbol or path:line: search shows it with its target and ranks the target \
                  higher.",
    details: "Remember something about the code for this session (or all sessions): the note shows up as a \
              [note] line in search results for its target and ranks the target higher. Targets: a path (file \
              or folder), a symbol name, or path:line. Optional ttl in seconds.",
    params: &[
        required("target", Kind::String, "A path, a symbol name, or path:line."),
        required("note", Kind::String, "The note."),
        param("ttl", Kind::Integer { min: 1, max: 31_536_000 }, "Seconds until it expires. Default: never."),
        SESSION,
        PROJECT,
    ],
    effect: Effect::Writes,
    mcp_json: false,
};

pub const ANNOTATIONS: ToolSpec = ToolSpec {
    name: "annotations",
    title: "Notes",
    summary: "List live notes (this session's and the shared ones)",
    description: "The notes this session sees (its own and the shared ones), optionally on one target.",
    details: "List the notes visible to this session (its own and the shared ones), optionally only those on one \
              target.",
    params: &[positional("target", Kind::String, "Only notes on this target."), SESSION, PROJECT, OFFSET, MAX_TOKENS],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const FOCUS: ToolSpec = ToolSpec {
    name: "focus",
    title: "Focus",
    summary: "Mark paths you are working on (search ranks them higher)",
    description: "Mark paths you are working on: search ranks results under them higher.",
    details: "Add paths (files or folders) to this session's focus set: search results under them rank higher \
              (+5).",
    params: &[PATHS, SESSION, PROJECT],
    effect: Effect::Idempotent,
    mcp_json: false,
};

pub const VISIT: ToolSpec = ToolSpec {
    name: "visit",
    title: "Mark as read",
    summary: "Mark paths you have already read (search ranks them lower)",
    description: "Mark paths you have read: search ranks results under them lower, so unseen code surfaces.",
    details: "Add paths to this session's visited set: search results under them rank lower (-3), so unseen \
              code surfaces.",
    params: &[PATHS, SESSION, PROJECT],
    effect: Effect::Idempotent,
    mcp_json: false,
};

pub const FORGET: ToolSpec = ToolSpec {
    name: "forget",
    title: "Forget context",
    summary: "Clear volatile context: this session's, one session's, or all",
    description: "Clear notes, focus and visited paths: this session's, or session=\"all\" for every session's.",
    details: "Clear notes, focus and visited paths. Default: this session's. session=\"all\" clears every \
              session's and the shared context.",
    params: &[SESSION, PROJECT],
    effect: Effect::Destructive,
    mcp_json: false,
};

pub const STATUS: ToolSpec = ToolSpec {
    name: "status",
    title: "Index status",
    summary: "Show the daemon and the project's index state",
    description: "The project's index (files, freshness, progress, problems) and the registered projects.",
    details: "Daemon and project status: daemon version and uptime; for the project: files, chunks, per-language \
              and per-kind counts, Merkle root hash, last index time, size on disk, indexing progress, skipped \
              files and files indexed with problems (with reasons: the first 20 of each and their counts, \
              all of them with all=true); and every registered project.",
    params: &[
        Param { positional: true, ..PROJECT },
        param("all", Kind::Boolean, "Every skipped file and problem, not the first 20."),
    ],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const INDEX: ToolSpec = ToolSpec {
    name: "index",
    title: "Index now",
    summary: "Index a project now (incremental; --full rebuilds)",
    description: "Bring a project's index up to date now and report what changed. The daemon does this by itself \
                  after every edit.",
    details: "Bring a project's index up to date with the files on disk and report what changed: files parsed, \
              unchanged, deleted, chunks, skipped files and files indexed with problems, with reasons. \
              Incremental: unchanged files are not read. Indexing a directory that is not registered registers \
              it. The daemon keeps registered projects indexed on its own; call this to force a run or a \
              rebuild.",
    params: &[
        positional("path", Kind::String, "Directory. Default: this session's project."),
        PROJECT,
        param("full", Kind::Boolean, "Re-parse every file."),
        param(
            "with_generated",
            Kind::Boolean,
            "Also index generated, vendored and fuzz-corpus files (set aside by default; remembered for the \
             project; false sets them aside again).",
        ),
    ],
    effect: Effect::Idempotent,
    mcp_json: false,
};

pub const PROJECTS: ToolSpec = ToolSpec {
    name: "projects",
    title: "Projects",
    summary: "List, add or remove registered projects",
    description: "List, add, add-all (every repository under a directory) or remove (deletes its index) the \
                  projects booger indexes.",
    details: "Manage the projects this daemon indexes and watches. list (default) lists them; add registers the \
              directory PATH and indexes it in the background; add-all registers every git repository or project \
              with a manifest (Cargo.toml, package.json, go.mod, pyproject.toml) under PATH; remove unregisters \
              the project named by PATH (a name or its root) and deletes its index. Indexes live in the daemon's \
              data directory; --in-repo keeps one in the project's .booger/ instead. The registry survives \
              daemon restarts.",
    params: &[
        positional("action", Kind::Enum(&["list", "add", "add-all", "remove"]), "Default: list."),
        positional("path", Kind::String, "Directory to add or search, or project name/root to remove."),
        param("in_repo", Kind::Boolean, "add: keep the index in <project>/.booger/."),
        param("force", Kind::Boolean, "add: register a directory refused by default (/, home, system trees)."),
    ],
    effect: Effect::Destructive,
    mcp_json: false,
};

const BASE: Param = positional("base", Kind::String, "Branch, tag or commit. Default: main/master.");
const INCLUDE: Param = param(
    "include",
    Kind::Enum(&["committed", "staged", "unstaged"]),
    "committed (default), or with staged or unstaged edits.",
);

pub const BRANCH_DIFF: ToolSpec = ToolSpec {
    name: "branch-diff",
    title: "Branch diff",
    summary: "What changed on this branch, by symbol: added / modified / removed per file",
    description: "What this branch changed, by symbol: added, modified, removed, per file. Far fewer tokens than \
                  git diff.",
    details: "Structural diff of the current branch against its base (default main, then master, origin/main, \
              origin/master, then the upstream), from the merge base: for each changed file, the functions, \
              methods, types, imports and doc sections added, modified (with line counts and signature changes) \
              and removed. Renames are paired; deleted, added and binary files are named. include=staged or \
              unstaged adds work not committed yet. Over MCP the answer is JSON; --output-mode list is one line \
              per symbol (the command line's default), files one line per file. `focus` the changed files so \
              search ranks them first.",
    params: &[
        BASE,
        INCLUDE,
        param("output_mode", Kind::Enum(&["json", "list", "files"]), "json (default), a line per symbol, or per file."),
        PATH_PREFIX,
        PROJECT,
        MAX_TOKENS,
    ],
    effect: Effect::ReadOnly,
    mcp_json: true,
};

pub const DRAFT_COMMIT: ToolSpec = ToolSpec {
    name: "draft-commit",
    title: "Draft commit message",
    summary: "Draft a conventional commit message from the structural diff",
    description: "A conventional commit message for the work about to be committed, from the symbols it changes.",
    details: "A conventional commit message (type(scope): subject under 72 characters, then the added, modified \
              and removed symbols per file) for the work about to be committed: what is staged, or when nothing \
              is staged, every uncommitted change. With `base`, one message for everything since that branch.",
    params: &[
        positional("base", Kind::String, "Describe everything since this ref. Default: the uncommitted work."),
        param(
            "include",
            Kind::Enum(&["committed", "staged", "unstaged"]),
            "Default: staged if anything is, else unstaged; committed with base.",
        ),
        PATH_PREFIX,
        PROJECT,
    ],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const CHANGELOG: ToolSpec = ToolSpec {
    name: "changelog",
    title: "Changelog",
    summary: "Markdown changelog (Added / Modified / Removed) between two refs",
    description: "A Markdown changelog of the symbols added, modified and removed between two refs.",
    details: "A Markdown changelog of the symbols added, modified and removed between two refs, grouped under \
              Added / Modified / Removed with one line per file. Default range: from the latest tag reachable \
              from `to` (else the branch's base) to HEAD.",
    params: &[
        positional("from", Kind::String, "Start ref. Default: the latest tag, else the base branch."),
        positional("to", Kind::String, "End ref. Default: HEAD."),
        PATH_PREFIX,
        PROJECT,
    ],
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const SEMANTIC_SEARCH: ToolSpec = ToolSpec {
    name: "semantic-search",
    title: "Semantic search",
    summary: "Search by meaning: chunks whose embedding is nearest the question",
    description: "Find code by what it does, in other words than its own: the chunks whose embedding is nearest \
                  the question. Same options as search.",
    details: "Find code by what it does (\"where do we retry failed uploads\"): the chunks whose embedding is \
              closest to the query's (exact cosine over the project's vectors, computed in the background by the \
              daemon). Same filters, output modes and budget as `search`. While vectors are missing or being \
              computed, the answer says so and gives lexical results.",
    params: ranked!(required("query", Kind::Text, "A question or description in plain words.")),
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const HYBRID_SEARCH: ToolSpec = ToolSpec {
    name: "hybrid-search",
    title: "Hybrid search",
    summary: "Lexical and semantic search fused into one ranking",
    description: "search and semantic-search fused into one ranking: for questions that mix names and behaviour. \
                  Same options as search.",
    details: "Run `search` (words and identifiers) and `semantic-search` (meaning) and fuse the two rankings: \
              Reciprocal Rank Fusion by default (k = 60; the semantic list weighs semantic_weight against the \
              lexical one's 1: by default 0, lexical order with semantic hits after it, unless `eval` calibrated \
              a weight on the project's history for change requests (\"fix ...\"); files are fused as files), or fusion=alpha to blend scores normalised to [0, 1] (alpha is the lexical \
              share, default 0.7). Same filters, output modes and budget as `search`; without vectors it answers \
              lexically and says so.",
    params: ranked!(
        required("query", Kind::Text, "Words, identifiers or a question."),
        param("fusion", Kind::Enum(&["rrf", "alpha"]), "Default: rrf."),
        param("k", Kind::Integer { min: 1, max: 1_000 }, "RRF constant. Default: 60."),
        param(
            "semantic_weight",
            Kind::Number { min: 0.0, max: 10.0 },
            "RRF weight of meaning. Default: by the query's kind."
        ),
        param("alpha", Kind::Number { min: 0.0, max: 1.0 }, "fusion=alpha: lexical share. Default: 0.7."),
    ),
    effect: Effect::ReadOnly,
    mcp_json: false,
};

pub const EMBED: ToolSpec = ToolSpec {
    name: "embed",
    title: "Embeddings",
    summary: "Embedding coverage of a project; start or redo its embedding",
    description: "Embedding coverage of a project; start embedding what is missing, or redo it all.",
    details: "Report how many of the project's chunks have vectors for the current model, whether embedding is \
              running, and vectors left from other models. start embeds what is missing now (the daemon also \
              does it by itself after every change); force drops this model's vectors and embeds everything \
              again.",
    params: &[positional("action", Kind::Enum(&["status", "start", "force"]), "Default: status."), PROJECT],
    effect: Effect::Idempotent,
    mcp_json: false,
};

pub const EVAL: ToolSpec = ToolSpec {
    name: "eval",
    title: "Search quality from history",
    summary: "Measure search quality on the project's own git history",
    description: "How well search finds what the project's own commits changed: R@1, R@10, MRR@10, Fn@10 per \
                  method, beside a grep ranking; calibrates search's confidence and hybrid's weight. Runs in the \
                  background; call again for the result.",
    details: "Mines the project's history: non-merge commits that change 1-3 source files and have a \
              descriptive subject; their files that still exist are the gold, and the functions they changed, \
              found again at HEAD, are the gold functions. Each subject is searched with search, semantic-search \
              and hybrid-search against the current index; the answer gives R@1, R@10, MRR@10 (files) and Fn@10 \
              (a result overlaps a changed function) per method, overall and by language, with latency, beside \
              a grep ranking (files by how many of the query's words they contain). The older half of the \
              queries calibrates the project's \"no good match\" threshold and hybrid search's semantic weight, \
              and the newer half validates them. It runs on a background thread at low priority and is kept per \
              index generation; a call while it runs says how far it got.",
    params: &[
        param("commits", Kind::Integer { min: 10, max: 20_000 }, "Most recent commits to read. Default: 2000."),
        param("queries", Kind::Integer { min: 10, max: 5_000 }, "Stop once this many queries are found. Default: 150."),
        param("details", Kind::Boolean, "List every mined query with its gold. Default: false."),
        PROJECT,
    ],
    effect: Effect::Idempotent,
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
    EVAL,
    STATUS,
    INDEX,
    PROJECTS,
    super::team::PUBLISH,
    super::team::TEAM_STATUS,
];
