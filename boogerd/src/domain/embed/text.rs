//! The text a chunk's vector is made from.
//!
//! Measured on the standard library (BENCHMARKS.md, embed): for the static tier, the words
//! of the path, the parent, the name, the signature and the doc retrieve better than the
//! whole content (R@10 0.767 vs 0.692) and embed three times faster. Top-level code between
//! items (`block`) is described by its path alone: its content made such chunks crowd out
//! the functions (nl R@10 0.850 with it, 0.867 without). Prose and text (`section`, `raw`)
//! have nothing but their content, so they are described by it.

use booger_proto::tools::ChunkKind;

use crate::store::vectors::EmbedInput;

/// Characters of content used when a chunk has no signature or doc.
const CONTENT_CHARS: usize = 1500;

pub(crate) fn for_chunk(c: &EmbedInput) -> String {
    let path = c.path.rsplit_once('.').map_or(c.path.as_str(), |(stem, _)| stem).replace('/', " ");
    let doc = c.doc.as_deref().unwrap_or_default();
    let mut text = format!("{path} {} {}", c.parent.as_deref().unwrap_or_default(), c.name);
    if c.signature.is_empty() && doc.is_empty() && c.kind != ChunkKind::Block {
        text.push(' ');
        text.push_str(&c.content[..c.content.floor_char_boundary(CONTENT_CHARS)]);
    } else {
        text.push(' ');
        text.push_str(&c.signature);
        text.push(' ');
        text.push_str(doc);
    }
    text
}
