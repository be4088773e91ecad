//! Symbol-level comparison of two versions of one file, from their chunks: a pure function.
//!
//! Symbols are matched by (kind, parent, name, occurrence): the n-th `fn new` in `impl
//! Config` on one side is the n-th on the other, so two `fn new` in one file stay distinct,
//! and a symbol that only moved is not a change. The pieces of one symbol that the chunker
//! split (an oversized function, a long Markdown section) count as one symbol; the code
//! between items (`block` chunks) counts as one pseudo-symbol per file, "top-level code", and
//! the windows of an unparsed file as one, "text".

use std::collections::HashMap;

use booger_proto::tools::ChunkKind;
use serde::Serialize;

use crate::source::chunk::Chunk;

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Symbol {
    pub kind: ChunkKind,
    pub name: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    #[serde(skip_serializing_if = "String::is_empty")]
    pub signature: String,
    /// 1-based, inclusive: on the side the symbol exists (head, or base for removed ones).
    pub lines: [u32; 2],
}

impl Symbol {
    /// `Parent::name` (or the pseudo-symbol's label), for lists and messages.
    pub(crate) fn qualified(&self) -> String {
        match (self.kind, &self.parent) {
            (ChunkKind::Block, _) => "top-level code".to_owned(),
            (ChunkKind::Raw, _) => "text".to_owned(),
            (ChunkKind::Section, _) => self.name.clone(),
            (_, Some(p)) if !p.is_empty() && !self.name.is_empty() => format!("{p}::{}", self.name),
            _ if self.name.is_empty() => format!("({})", self.kind),
            _ => self.name.clone(),
        }
    }
}

/// A symbol on both sides with different text. Its `signature` is given only when it
/// changed (with `old_signature`), to keep answers short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Modified {
    #[serde(flatten)]
    pub symbol: Symbol,
    /// The base side's signature, when it differs (the symbol's interface changed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub old_signature: Option<String>,
    /// Lines only in the head version / only in the base version.
    #[serde(rename = "diff", serialize_with = "plus_minus")]
    pub lines: (u32, u32),
    /// Only whitespace changed (formatting).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub whitespace_only: bool,
}

/// `(3, 1)` as `"+3 -1"`.
fn plus_minus<S: serde::Serializer>(v: &(u32, u32), s: S) -> Result<S::Ok, S::Error> {
    s.serialize_str(&format!("+{} -{}", v.0, v.1))
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Changes {
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub added: Vec<Symbol>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub modified: Vec<Modified>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub removed: Vec<Symbol>,
}

impl Changes {
    pub(crate) fn is_empty(&self) -> bool {
        self.added.is_empty() && self.modified.is_empty() && self.removed.is_empty()
    }

    /// A file that exists only on the head side: all its symbols are added.
    pub(crate) fn all_added(head: &[Chunk]) -> Changes {
        Changes { added: symbols(head).into_iter().map(|i| i.symbol).collect(), ..Default::default() }
    }

    /// A file that exists only on the base side: all its symbols are removed.
    pub(crate) fn all_removed(base: &[Chunk]) -> Changes {
        Changes { removed: symbols(base).into_iter().map(|i| gone(i.symbol)).collect(), ..Default::default() }
    }
}

/// One symbol of one version: its identity and its text.
struct Item {
    key: (ChunkKind, Option<String>, String, usize),
    symbol: Symbol,
    text: String,
}

/// The symbols of one version, in file order, split pieces joined.
fn symbols(chunks: &[Chunk]) -> Vec<Item> {
    let mut items: Vec<Item> = Vec::new();
    let mut last_end = 0usize;
    let mut pseudo: HashMap<ChunkKind, usize> = HashMap::new();
    for c in chunks {
        // Closing braces and rulers are no symbol's, and no change worth naming.
        if c.kind == ChunkKind::Gap {
            continue;
        }
        if matches!(c.kind, ChunkKind::Block | ChunkKind::Raw) {
            match pseudo.get(&c.kind) {
                Some(&i) => {
                    let it = &mut items[i];
                    it.text.push('\n');
                    it.text.push_str(&c.content);
                    it.symbol.lines[1] = it.symbol.lines[1].max(c.end_line);
                }
                None => {
                    pseudo.insert(c.kind, items.len());
                    items.push(item(c));
                }
            }
            continue;
        }
        if let Some(prev) = items.last_mut()
            && prev.key.0 == c.kind
            && prev.key.1 == c.parent
            && prev.key.2 == c.name
            && prev.symbol.signature == c.signature
            && c.start_byte <= last_end
        {
            // A piece of the previous symbol (split at the size limit, or a section's next
            // paragraph).
            prev.text.push_str(&c.content);
            prev.symbol.lines[1] = prev.symbol.lines[1].max(c.end_line);
            last_end = last_end.max(c.end_byte);
            continue;
        }
        last_end = c.end_byte;
        items.push(item(c));
    }
    // Occurrence indexes, in file order.
    let mut seen: HashMap<(ChunkKind, Option<String>, String), usize> = HashMap::new();
    for it in &mut items {
        let n = seen.entry((it.key.0, it.key.1.clone(), it.key.2.clone())).or_default();
        it.key.3 = *n;
        *n += 1;
    }
    items
}

fn item(c: &Chunk) -> Item {
    let mut text = c.content.clone();
    if let Some(doc) = &c.doc {
        // A doc comment the chunker keeps outside the content still belongs to the symbol.
        text.push('\u{1}');
        text.push_str(doc);
    }
    Item {
        key: (c.kind, c.parent.clone(), c.name.clone(), 0),
        symbol: Symbol {
            kind: c.kind,
            name: c.name.clone(),
            parent: c.parent.clone(),
            signature: c.signature.clone(),
            lines: [c.start_line, c.end_line],
        },
        text,
    }
}

/// What changed between the base and head chunks of one file.
pub fn compare(base: &[Chunk], head: &[Chunk]) -> Changes {
    let old = symbols(base);
    let new = symbols(head);
    let mut by_key: HashMap<_, &Item> = old.iter().map(|i| (&i.key, i)).collect();
    let mut changes = Changes::default();
    for n in &new {
        match by_key.remove(&n.key) {
            None => changes.added.push(n.symbol.clone()),
            Some(o) if o.text == n.text => {}
            Some(o) => {
                let signature_changed = o.symbol.signature != n.symbol.signature;
                let mut symbol = n.symbol.clone();
                if !signature_changed {
                    symbol.signature.clear();
                }
                changes.modified.push(Modified {
                    symbol,
                    old_signature: signature_changed.then(|| o.symbol.signature.clone()),
                    lines: line_delta(&o.text, &n.text),
                    whitespace_only: squeeze(&o.text) == squeeze(&n.text),
                });
            }
        }
    }
    changes.removed = old.iter().filter(|o| by_key.contains_key(&o.key)).map(|o| gone(o.symbol.clone())).collect();
    changes
}

/// A removed symbol is named with where it was; its signature is history.
fn gone(mut s: Symbol) -> Symbol {
    s.signature.clear();
    s
}

fn squeeze(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

/// Lines only in `new` and lines only in `old`, counted as multisets: the size of an edit
/// without a full diff (a moved line inside the symbol is not counted).
fn line_delta(old: &str, new: &str) -> (u32, u32) {
    let mut counts: HashMap<&str, i64> = HashMap::new();
    for l in old.lines() {
        *counts.entry(l.trim_end()).or_default() -= 1;
    }
    for l in new.lines() {
        *counts.entry(l.trim_end()).or_default() += 1;
    }
    let added = counts.values().filter(|&&n| n > 0).sum::<i64>();
    let removed = -counts.values().filter(|&&n| n < 0).sum::<i64>();
    (added as u32, removed as u32)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::source::chunk::chunk_file;
    use std::path::Path;

    fn chunks(path: &str, src: &str) -> Vec<Chunk> {
        chunk_file(Path::new(path), src.as_bytes(), false).chunks
    }

    fn names(v: &[Symbol]) -> Vec<String> {
        v.iter().map(Symbol::qualified).collect()
    }

    #[test]
    fn added_modified_removed_in_rust() {
        let base = "fn keep() {}\n\nfn change() { 1; }\n\nfn gone() {}\n";
        let head = "fn change() { 2; }\n\nfn keep() {}\n\nfn fresh() {}\n";
        let c = compare(&chunks("a.rs", base), &chunks("a.rs", head));
        assert_eq!(names(&c.added), ["fresh"]);
        assert_eq!(c.modified.iter().map(|m| m.symbol.qualified()).collect::<Vec<_>>(), ["change"]);
        assert_eq!(names(&c.removed), ["gone"]);
        let m = &c.modified[0];
        assert_eq!(m.lines, (1, 1));
        assert_eq!(m.symbol.lines, [1, 1]);
    }

    #[test]
    fn duplicate_names_are_matched_by_parent_and_occurrence() {
        let base = "struct A;\nimpl A {\n    fn new() -> A { A }\n}\nstruct B;\nimpl B {\n    fn new() -> B { B }\n}\n";
        let head = "struct A;\nimpl A {\n    fn new() -> A { A }\n}\nstruct B;\nimpl B {\n    fn new() -> B { let b = B; b }\n}\n";
        let c = compare(&chunks("a.rs", base), &chunks("a.rs", head));
        assert!(c.added.is_empty() && c.removed.is_empty(), "{c:?}");
        assert_eq!(c.modified.iter().map(|m| m.symbol.qualified()).collect::<Vec<_>>(), ["B::new"]);

        // Two same-named functions at the top level (C prototypes aside): the second changes.
        let base = "def f():\n    return 1\n\ndef f():\n    return 2\n";
        let head = "def f():\n    return 1\n\ndef f():\n    return 3\n";
        let c = compare(&chunks("a.py", base), &chunks("a.py", head));
        assert_eq!(c.modified.len(), 1);
        assert_eq!(c.modified[0].symbol.lines, [4, 5]);
    }

    #[test]
    fn signature_and_whitespace_changes_are_told_apart() {
        let base = "def f(a):\n    return a\n\ndef g():\n    return 1\n";
        let head = "def f(a, b=0):\n    return a\n\ndef g():\n    return  1\n";
        let c = compare(&chunks("m.py", base), &chunks("m.py", head));
        let f = c.modified.iter().find(|m| m.symbol.name == "f").unwrap();
        assert_eq!(f.old_signature.as_deref(), Some("def f(a)"));
        assert!(!f.whitespace_only);
        let g = c.modified.iter().find(|m| m.symbol.name == "g").unwrap();
        assert!(g.whitespace_only && g.old_signature.is_none());
    }

    #[test]
    fn an_oversized_function_is_one_symbol() {
        let body: String = (0..900).map(|i| format!("    let x{i} = {i};\n")).collect();
        let base = format!("fn big() {{\n{body}}}\n");
        let head = format!("fn big() {{\n{body}    let y = 1;\n}}\n");
        let (b, h) = (chunks("a.rs", &base), chunks("a.rs", &head));
        assert!(b.len() > 1, "the fixture must be split by the chunker");
        let c = compare(&b, &h);
        assert_eq!(c.modified.len(), 1, "{c:?}");
        assert_eq!(c.modified[0].lines, (1, 0));
    }

    #[test]
    fn moving_a_symbol_is_not_a_change_and_top_level_code_is_one_symbol() {
        let base = "import os\n\nX = 1\n\ndef a():\n    pass\n\ndef b():\n    pass\n\nprint(X)\n";
        let head = "import os\n\nX = 2\n\ndef b():\n    pass\n\ndef a():\n    pass\n\nprint(X)\n";
        let c = compare(&chunks("m.py", base), &chunks("m.py", head));
        assert!(c.added.is_empty() && c.removed.is_empty(), "{c:?}");
        assert_eq!(c.modified.iter().map(|m| m.symbol.qualified()).collect::<Vec<_>>(), ["top-level code"]);
    }

    #[test]
    fn whole_files() {
        let src = "package p\n\nfunc A() {}\n\nfunc B() {}\n";
        assert_eq!(names(&Changes::all_added(&chunks("p.go", src)).added), ["top-level code", "A", "B"]);
        assert_eq!(names(&Changes::all_removed(&chunks("p.go", src)).removed), ["top-level code", "A", "B"]);
    }
}
