//! The team index's tools, declared like every other tool (see the catalogue).

use super::params::PROJECT;
use super::{Effect, Kind, Param, ToolSpec};

pub const PUBLISH: ToolSpec = ToolSpec {
    name: "publish",
    title: "Publish to the team index",
    summary: "Publish a commit of a project to the team index (PostgreSQL)",
    description: "Publish one commit of a project to the team index: its files by git blob id, and the chunks of \
                  the blobs the server does not hold yet.",
    details: "Writes one commit (default HEAD) of a project to the team index, a PostgreSQL database \
              (the daemon's own: `boogerd --team-url` or `BOOGER_TEAM_URL`, kept for its next start). Content-addressed by git blob id: a file that is \
              the same in two commits, branches or forks is stored and chunked once, and only what the server \
              lacks is sent. A repository is named by its `origin` remote (`acme/api`), else its folder; the \
              first publish under a name records its history's root commit, and a repository with other \
              history is refused that name unless `--force`. The commit appears whole or not at all; publishing it again changes nothing. Made \
              for CI: the exit code says whether it worked, `--json` gives the figures.",
    params: &[
        Param {
            name: "path",
            kind: Kind::String,
            required: false,
            positional: true,
            description: "Directory. Default: this session's project.",
        },
        PROJECT,
        Param { name: "rev", kind: Kind::String, required: false, positional: false, description: "Default: HEAD." },
        Param {
            name: "repository",
            kind: Kind::String,
            required: false,
            positional: false,
            description: "Name in the team index. Default: owner/name of the origin remote, else the folder's name.",
        },
        Param {
            name: "force",
            kind: Kind::Boolean,
            required: false,
            positional: false,
            description: "Take over a name that holds another repository's history.",
        },
    ],
    effect: Effect::Idempotent,
    mcp_json: false,
};

pub const TEAM_STATUS: ToolSpec = ToolSpec {
    name: "team-status",
    title: "Team index status",
    summary: "The team index: its repositories, their heads, sizes and last publish",
    description: "The team index's repositories (each at its latest published commit on its default branch, \
                  with its file count, commits and last publish), its schema version and size.",
    details: "What the team index (PostgreSQL; the daemon's `--team-url` or `BOOGER_TEAM_URL`) holds: every \
              repository with its head (the latest published commit on its default branch, what team search \
              reads), how many commits of it are published and when the last was; the stored blobs and chunks, \
              the database's size and its schema version. The server is named without user or password.",
    params: &[],
    effect: Effect::ReadOnly,
    mcp_json: false,
};
