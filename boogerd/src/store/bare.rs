//! Which chunks get no vector: a bare chunk, one line with no doc that names a value, a
//! type or a function declared elsewhere. The rule is written twice, in Rust for the writer's counts and in SQL for the
//! vectors' queries, and a test holds them equal (`vectors.rs`).

use booger_proto::tools::ChunkKind;

/// [`is_bare`] of the row of `chunks` named `c`, as an SQL expression.
macro_rules! bare_sql {
    () => {
        "(c.start_line = c.end_line AND coalesce(c.doc, '') = '' \
          AND c.kind IN ('const', 'macro', 'block', 'impl', 'mod', 'namespace', 'typedef', 'type', 'declaration'))"
    };
}
pub(super) use bare_sql;

/// Kinds whose one-line chunks name a value, a type or a function declared elsewhere: a
/// constant, a `#define`, a type alias or typedef, an empty impl, a module line, one
/// statement between items, a C prototype.
const BARE_KINDS: [ChunkKind; 9] = [
    ChunkKind::Const,
    ChunkKind::Macro,
    ChunkKind::Block,
    ChunkKind::Impl,
    ChunkKind::Mod,
    ChunkKind::Namespace,
    ChunkKind::Typedef,
    ChunkKind::Type,
    ChunkKind::Declaration,
];

/// A bare chunk gets no vector: one line with no doc that names a value, a type or a
/// function declared elsewhere ([`BARE_KINDS`]). Its vector would be made of its path and
/// its one line, which lexical search matches as well, and such chunks are most of a header
/// tree's or a generated crate's (/usr/include: 350,000 of 775,000 vectors, and 118,000 of
/// the 402,000 left were one-line prototypes without a doc; the cargo registry: 421,000
/// one-line constants). Semantic search does not answer with them; a question's re-ranking
/// gives them no cosine.
pub(crate) fn is_bare(kind: ChunkKind, start_line: u32, end_line: u32, doc: Option<&str>) -> bool {
    start_line == end_line && doc.is_none_or(str::is_empty) && BARE_KINDS.contains(&kind)
}
