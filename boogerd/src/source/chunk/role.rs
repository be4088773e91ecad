//! What a syntax node is to the chunker: the one vocabulary of the language tables
//! (`grammars.rs`), the answers that depend on the node (`refine.rs`, `js.rs`) and the walk
//! (`code.rs`).

use booger_proto::tools::ChunkKind;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// A function, or a method inside a type.
    Function,
    /// A definition without members of its own, of this chunk kind.
    Type(ChunkKind),
    /// A definition whose members are chunks of their own: a header chunk up to the first.
    Container(ChunkKind),
    Import,
    /// A wrapper whose inner declaration is the item; the wrapper's extra text (decorators,
    /// `export`, `template <…>`) belongs to the chunk.
    Wrapper,
    /// Not an item, but items may be inside (preprocessor conditionals, ERROR nodes).
    Transparent,
    /// Depends on the node: the grammar's `ask` answers.
    Ask,
}
