//! Which chunks get no vector: a bare chunk, with no doc, one line that names a value or a
//! type, or a function declared elsewhere. The rule is written twice, in Rust for the
//! writer's counts and in SQL for the vectors' queries, and a test holds them equal
//! (`vectors.rs`).

use booger_proto::tools::ChunkKind;

/// [`is_bare`] of the row of `chunks` named `c`, as an SQL expression.
macro_rules! bare_sql {
    () => {
        "(coalesce(c.doc, '') = '' AND (c.kind = 'declaration' OR (c.start_line = c.end_line \
          AND c.kind IN ('const', 'macro', 'block', 'impl', 'mod', 'namespace', 'typedef', 'type'))))"
    };
}
pub(super) use bare_sql;

/// Kinds whose one-line chunks name a value or a type: a constant, a `#define`, a type
/// alias or typedef, an empty impl, a module line, one statement between items.
const BARE_KINDS: [ChunkKind; 8] = [
    ChunkKind::Const,
    ChunkKind::Macro,
    ChunkKind::Block,
    ChunkKind::Impl,
    ChunkKind::Mod,
    ChunkKind::Namespace,
    ChunkKind::Typedef,
    ChunkKind::Type,
];

/// A bare chunk gets no vector: no doc, and one line that names a value or a type
/// ([`BARE_KINDS`]), or a declaration (a C prototype: a function's name and parameters, its
/// body elsewhere). Its vector would be made of its path, its name and its signature, which
/// lexical search matches as well, and such chunks are most of a header tree's or a
/// generated crate's (/usr/include: 350,000 of 775,000 vectors, and 175,000 of the 402,000
/// left were prototypes without a doc; the cargo registry: 421,000 one-line constants).
/// Semantic search does not answer with them; a question's re-ranking gives them no cosine.
pub(crate) fn is_bare(kind: ChunkKind, start_line: u32, end_line: u32, doc: Option<&str>) -> bool {
    doc.is_none_or(str::is_empty)
        && (kind == ChunkKind::Declaration || (start_line == end_line && BARE_KINDS.contains(&kind)))
}
