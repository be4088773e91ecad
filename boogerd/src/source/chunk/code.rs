//! Structural chunks from a tree-sitter parse.
//!
//! What each language's node kinds mean is one table per language (`grammars.rs`); the walk
//! is shared. Rules:
//! - functions and methods are one chunk each (methods record their container as `parent`);
//! - containers (impl, trait, class, interface-like namespaces, mod) give a header chunk (up
//!   to their first member) and their members as separate chunks;
//! - every import is its own chunk;
//! - comments and attributes directly above an item belong to it (`doc` keeps the comment
//!   text; Python docstrings are taken from the body);
//! - top-level code that no item covers becomes `block` chunks, so nothing is unsearchable;
//! - ERROR regions are searched for items inside them and otherwise become blocks.

use std::borrow::Cow;

use booger_proto::tools::ChunkKind;
use tree_sitter::Node;

use super::grammars::{self, Grammar};
use super::refine::{self, find_descendant};
use super::role::Role;
use super::{Chunk, Lines, js, one_line, split_oversized, text};
use crate::source::lang::Lang;

const SIGNATURE_MAX: usize = 240;
pub(crate) const DOC_MAX: usize = 1_000;
/// Gap blocks are cut at blank lines and kept under these sizes.
const BLOCK_MAX_LINES: u32 = 60;

/// Parses and chunks. `Err` only when there is no usable tree (timeout); a tree with syntax
/// errors still gives its items, plus a note for the index report.
pub(crate) fn chunk(lang: Lang, src: &[u8]) -> Result<(Vec<Chunk>, Option<String>), String> {
    let grammar = grammars::of(lang).ok_or_else(|| format!("no grammar for {}", lang.name()))?;
    // The walk reads what the parser read (the same offsets; see `parse::parser_input`), so
    // every node is inside what it reads; the chunks are then made the file's own.
    let input = super::parse::parser_input(lang, src);
    let tree = super::parse::parse(lang, grammar, &input)?;
    let root = tree.root_node();
    let note = root.has_error().then(|| {
        let errors = count_errors(root);
        format!("{errors} syntax error region(s); the code around them is indexed as blocks")
    });
    let lines = Lines::new(src);
    let mut walker = Walker {
        lang,
        grammar,
        src: &input,
        lines: &lines,
        chunks: Vec::new(),
        covered: Vec::new(),
        reach: 0,
        in_type: false,
    };
    walker.items(tree.root_node(), None);
    let Walker { mut chunks, mut covered, .. } = walker;
    if let Cow::Owned(_) = input {
        // A node may reach into the newline added after the end, and a NUL was read as a
        // space: each chunk ends within the file, its text the file's own.
        for c in &mut chunks {
            c.end_byte = c.end_byte.min(src.len());
            c.start_byte = c.start_byte.min(c.end_byte);
            c.end_line = lines.line_of(c.end_byte.saturating_sub(1).max(c.start_byte));
            c.content = text(src, c.start_byte, c.end_byte);
        }
    }
    chunks.extend(gap_blocks(src, &lines, &mut covered));
    chunks.sort_by_key(|c| (c.start_byte, c.end_byte));
    Ok((chunks.into_iter().flat_map(|c| split_oversized(c, src, &lines)).collect(), note))
}

fn count_errors(node: Node) -> usize {
    if node.is_error() || node.is_missing() {
        return 1;
    }
    if !node.has_error() {
        return 0;
    }
    let mut cursor = node.walk();
    node.children(&mut cursor).map(count_errors).sum()
}

struct Walker<'a> {
    lang: Lang,
    grammar: &'static Grammar,
    src: &'a [u8],
    lines: &'a Lines,
    chunks: Vec<Chunk>,
    /// Byte ranges that belong to some chunk (containers cover their whole body).
    covered: Vec<(usize, usize)>,
    /// The furthest end of those ranges.
    reach: usize,
    /// Inside a type-like container (impl, trait, class), where functions are methods.
    in_type: bool,
}

impl Walker<'_> {
    /// Visits the items among `node`'s children. Siblings are collected once: tree-sitter's
    /// `prev_sibling` walks from the first child, so calling it per item would be quadratic.
    fn items(&mut self, node: Node, parent: Option<&str>) {
        let mut cursor = node.walk();
        let kids: Vec<Node> = node.named_children(&mut cursor).collect();
        for i in 0..kids.len() {
            self.item(&kids, i, kids[i], parent);
        }
    }

    /// `kids[i]` is the node whose text the chunk spans (a decorated or exported wrapper);
    /// `node` is the declaration inside it.
    fn item(&mut self, kids: &[Node], i: usize, node: Node, parent: Option<&str>) {
        let Some(this) = self.grammar.role(node, self.src) else { return };
        match this {
            Role::Transparent => self.items(node, parent),
            Role::Wrapper => {
                let inner = node
                    .child_by_field_name("definition")
                    .or_else(|| node.child_by_field_name("declaration"))
                    .or_else(|| {
                        let mut c = node.walk();
                        node.named_children(&mut c).find(|n| self.grammar.role(*n, self.src).is_some())
                    });
                if let Some(inner) = inner {
                    self.item(kids, i, inner, parent);
                }
            }
            Role::Import => self.push(kids, i, node, ChunkKind::Import, parent, None),
            Role::Type(kind) => self.push(kids, i, node, kind, parent, None),
            Role::Function => {
                let kind = if self.is_test(kids, i, node) {
                    ChunkKind::Test
                } else if self.in_type || node.kind() == "method_declaration" {
                    ChunkKind::Method
                } else {
                    ChunkKind::Function
                };
                self.push(kids, i, node, kind, parent, None);
            }
            // `Grammar::role` answers `Ask` rows with the grammar's own answer.
            Role::Ask => {}
            Role::Container(kind) => {
                let body = self.body(node);
                let name = self.name(node, kind);
                let outer = kids[i];
                // The header chunk runs to the first member (fields, docstring and all).
                let header_end = body.and_then(|b| {
                    let mut c = b.walk();
                    let members: Vec<Node> = b.named_children(&mut c).collect();
                    let first = members.iter().position(|m| {
                        self.grammar.role(*m, self.src).is_some_and(|r| !matches!(r, Role::Import | Role::Transparent))
                    })?;
                    let end = self.lines.start_of(self.lines.line_of(self.doc_start(&members, first)));
                    (end > outer.start_byte()).then_some(end)
                });
                self.push(kids, i, node, kind, parent, header_end);
                if let Some(body) = body {
                    // A suite's description is its whole name (it may hold `(` or `<`).
                    let parent_name = if kind == ChunkKind::Test { name.clone() } else { container_parent_name(&name) };
                    let was = std::mem::replace(
                        &mut self.in_type,
                        !matches!(kind, ChunkKind::Mod | ChunkKind::Namespace | ChunkKind::Test),
                    );
                    self.items(body, Some(&parent_name));
                    self.in_type = was;
                }
            }
        }
    }

    fn push(&mut self, kids: &[Node], i: usize, node: Node, kind: ChunkKind, parent: Option<&str>, end: Option<usize>) {
        let outer = kids[i];
        let first = self.doc_first(kids, i);
        let start = self.start_of_line(kids[first].start_byte());
        // A container's header covers only up to its first member: what lies between and after
        // its members (comments, attributes) is covered by them or becomes a block, so grep
        // finds every line.
        // A test macro's block, which the parser leaves beside its call, is the test's body.
        let block_beside =
            node.kind() == "expression_statement" && kids.get(i + 1).is_some_and(|n| n.kind() == "compound_statement");
        let end = end.unwrap_or_else(|| self.through_line_end(kids, if block_beside { i + 1 } else { i }));
        let mut name = self.name(node, kind);
        let mut kind = kind;
        let doc = self.doc(&kids[first..i], node);
        let signature = if kind == ChunkKind::Import {
            one_line(&text(self.src, outer.start_byte(), outer.end_byte()), SIGNATURE_MAX)
        } else {
            self.signature(node, outer)
        };
        let mut receiver = (node.kind() == "method_declaration").then(|| self.go_receiver(node)).flatten();
        // `App::parse`, `M.foo`, `M:bar` defined outside their scope are its methods.
        if self.grammar.qualified_names
            && matches!(kind, ChunkKind::Function | ChunkKind::Method)
            && let Some((scope, last)) = name.rsplit_once("::").or_else(|| name.rsplit_once(['.', ':']))
            && !scope.is_empty()
        {
            receiver = Some(container_parent_name(scope.rsplit("::").next().unwrap_or(scope)));
            name = last.to_owned();
            kind = ChunkKind::Method;
        }
        let parent = receiver.as_deref().or(parent);
        self.covered.push((start, end));
        self.reach = self.reach.max(end);
        self.chunks.push(Chunk {
            kind,
            name,
            signature,
            parent: parent.map(str::to_owned),
            doc,
            content: text(self.src, start, end),
            start_line: self.lines.line_of(start),
            end_line: self.lines.line_of(end.saturating_sub(1).max(start)),
            start_byte: start,
            end_byte: end,
        });
    }

    /// A chunk starts at the beginning of its first line unless an earlier chunk reaches into
    /// that line, so its lines are whole lines (for display and for grep): indentation, or
    /// what a partial parse left before it (`static inline` before a C++ template), is in it.
    fn start_of_line(&self, byte: usize) -> usize {
        let line_start = self.lines.start_of(self.lines.line_of(byte));
        if self.reach <= line_start || self.src[line_start..byte].iter().all(|b| *b == b' ' || *b == b'\t') {
            line_start
        } else {
            byte
        }
    }

    /// Where `kids[i]`'s chunk ends: at the end of its last line unless another item starts
    /// there, so what follows it on that line (`;`, `}`, `# why`) is in it, whole for grep
    /// and for display.
    fn through_line_end(&self, kids: &[Node], i: usize) -> usize {
        let end = kids[i].end_byte();
        if end == 0 || self.src[end - 1] == b'\n' {
            return end; // the node took its newline (preprocessor lines)
        }
        let line_end = self.src[end..].iter().position(|&b| b == b'\n').map_or(self.src.len(), |k| end + k);
        let item_follows = kids[i + 1..]
            .iter()
            .take_while(|n| n.start_byte() < line_end)
            .any(|n| self.grammar.role(*n, self.src).is_some());
        if item_follows { end } else { line_end }
    }

    /// Where a container's members are: its body, a test suite's function's body, or the
    /// nearest node below it of a kind the grammar names as a body.
    fn body<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        if node.kind() == "call_expression" {
            return js::test_body(node);
        }
        if let Some(body) = node.child_by_field_name("body") {
            return Some(body);
        }
        let mut level = vec![node];
        for _ in 0..3 {
            let mut below = Vec::new();
            for n in level {
                let mut c = n.walk();
                below.extend(n.named_children(&mut c));
            }
            if let Some(body) = below.iter().find(|n| self.grammar.bodies.contains(&n.kind())) {
                return Some(*body);
            }
            level = below;
        }
        None
    }

    /// A function written as a test: marked by an annotation or attribute the language's test
    /// frameworks use (`@Test`, `[Fact]`), or, inside a type, named with their prefix
    /// (`testParse`, `test_parse`).
    fn is_test(&self, kids: &[Node], i: usize, node: Node) -> bool {
        let forms = &self.grammar.tests;
        let name = node.child_by_field_name("name");
        let start = kids[self.doc_first(kids, i)].start_byte();
        let before = &self.src[start..name.map_or(node.start_byte(), |n| n.start_byte()).max(start)];
        let marked = forms.marks.iter().any(|m| memchr::memmem::find(before, m.as_bytes()).is_some());
        let named = forms.method_prefix.is_some_and(|prefix| {
            let name = name.and_then(|n| n.utf8_text(self.src).ok()).unwrap_or_default();
            self.in_type
                && name
                    .strip_prefix(prefix)
                    .and_then(|rest| rest.chars().next())
                    .is_some_and(|c| prefix.ends_with('_') || c.is_ascii_uppercase() || c == '_')
        });
        marked || named
    }

    /// `func (s *Server) Start()` → `Server`.
    fn go_receiver(&self, node: Node) -> Option<String> {
        let recv = node.child_by_field_name("receiver")?;
        let ty = find_descendant(recv, "type_identifier")?;
        ty.utf8_text(self.src).ok().map(str::to_owned)
    }

    /// Byte where `kids[i]`'s leading comments and attributes start.
    fn doc_start(&self, kids: &[Node], i: usize) -> usize {
        kids[self.doc_first(kids, i)].start_byte()
    }

    /// Index of the first of the comments and attributes directly above `kids[i]` (no blank
    /// line in between), or `i`.
    fn doc_first(&self, kids: &[Node], i: usize) -> usize {
        let mut first = i;
        while first > 0 {
            let (prev, cur) = (kids[first - 1], kids[first]);
            let text = prev.utf8_text(self.src).unwrap_or_default();
            let attached = (matches!(
                prev.kind(),
                "comment" | "line_comment" | "block_comment" | "multiline_comment" | "attribute_item"
            ) || (prev.kind() == "unary_operator" && text.starts_with('@') && !text.starts_with("@moduledoc")))
                // Inner docs (`//!`, `/*!`) describe the enclosing module, not the next item.
                && !text.starts_with("//!") && !text.starts_with("/*!")
                && end_row(prev) + 1 >= cur.start_position().row
                // A trailing comment on the previous item's last line is not ours.
                && (first < 2 || end_row(kids[first - 2]) < prev.start_position().row);
            if !attached {
                break;
            }
            first -= 1;
        }
        first
    }

    /// The item's documentation: the comments above it, or a Python docstring.
    fn doc(&self, above: &[Node], node: Node) -> Option<String> {
        if self.lang == Lang::Python {
            let body = node.child_by_field_name("body")?;
            let first = body.named_child(0)?;
            let string = (first.kind() == "expression_statement").then(|| first.named_child(0)).flatten()?;
            if string.kind() != "string" {
                return None;
            }
            let s = string.utf8_text(self.src).ok()?;
            let s = s.trim_start_matches(['r', 'b', 'u', 'R', 'B', 'U']).trim_matches(['"', '\'']).trim();
            return (!s.is_empty()).then(|| crate::base::text::clip(s, DOC_MAX));
        }
        let comments: Vec<String> = above
            .iter()
            .filter(|n| n.kind() != "attribute_item")
            .map(|n| strip_comment(n.utf8_text(self.src).unwrap_or_default()))
            .collect();
        let doc = comments.join("\n").trim().to_owned();
        (!doc.is_empty()).then(|| crate::base::text::clip(&doc, DOC_MAX))
    }

    /// The declaration up to its body.
    fn signature(&self, node: Node, outer: Node) -> String {
        let start = outer.start_byte();
        let end = self.body(node).map(|b| b.start_byte()).unwrap_or_else(|| {
            // No body: up to the first `{` or the end of the first line.
            let s = &self.src[start..outer.end_byte()];
            let cut = s.iter().position(|&b| b == b'{' || b == b'\n').unwrap_or(s.len());
            start + cut
        });
        // A comment between the declaration and its body (Ruby's after `module X`) is not
        // part of the signature.
        let mut c = node.walk();
        let comment = node.children(&mut c).find(|n| n.start_byte() > start && n.kind().contains("comment"));
        let end = comment.map_or(end, |n| n.start_byte().min(end));
        let sig = one_line(&text(self.src, start, end.max(start)), SIGNATURE_MAX);
        let sig = sig.trim_end_matches([':', '{', '=', ' ']);
        sig.strip_suffix(" do").unwrap_or(sig).to_owned()
    }

    fn name(&self, node: Node, kind: ChunkKind) -> String {
        let src = self.src;
        let field = |n: Node, f: &str| n.child_by_field_name(f).and_then(|x| x.utf8_text(src).ok()).map(str::to_owned);
        let found = match (self.lang, node.kind()) {
            (_, "impl_item") => {
                let ty = field(node, "type").unwrap_or_default();
                match field(node, "trait") {
                    Some(t) => Some(format!("{ty} ({t})")),
                    None => Some(ty),
                }
            }
            (Lang::Go, "type_declaration") => {
                let mut c = node.walk();
                node.named_children(&mut c).find(|n| n.kind() == "type_spec").and_then(|s| field(s, "name"))
            }
            // Imports are named by what they import, except those that bind a name.
            (_, _)
                if kind == ChunkKind::Import
                    && !matches!(node.kind(), "use_declaration" | "lexical_declaration" | "variable_declaration") =>
            {
                None
            }
            (Lang::Elixir, "call") => refine::elixir_name(node, src),
            (Lang::Ruby | Lang::Lua, "call" | "function_call" | "variable_declaration" | "assignment_statement") => {
                refine::call_name(node, src)
            }
            (Lang::Cpp, "function_definition" | "expression_statement") if kind == ChunkKind::Test => {
                refine::cpp_test_name(node, src)
            }
            (Lang::Kotlin, "secondary_constructor") => Some("constructor".to_owned()),
            (Lang::Kotlin, "property_declaration") => {
                let mut c = node.walk();
                let variable = node.named_children(&mut c).find(|n| n.kind() == "variable_declaration");
                variable
                    .and_then(|v| find_descendant(v, "identifier"))
                    .and_then(|n| n.utf8_text(src).ok())
                    .map(str::to_owned)
            }
            (Lang::Swift, "subscript_declaration") => Some("subscript".to_owned()),
            (Lang::C | Lang::Cpp, "function_definition" | "declaration" | "type_definition" | "field_declaration") => {
                if let Some(t) = node.child_by_field_name("type").filter(|t| t.child_by_field_name("body").is_some()) {
                    field(t, "name").or_else(|| node.child_by_field_name("declarator").and_then(|d| c_name(d, src)))
                } else {
                    node.child_by_field_name("declarator").and_then(|d| c_name(d, src))
                }
            }
            (_, "lexical_declaration" | "variable_declaration") => {
                let mut c = node.walk();
                node.named_children(&mut c).find(|n| n.kind() == "variable_declarator").and_then(|d| field(d, "name"))
            }
            (_, "use_declaration") => field(node, "argument"),
            (_, "call_expression") => js::test_name(node, src),
            _ => field(node, "name"),
        };
        match found {
            Some(n) => one_line(&n, 120),
            // Imports are named by what they import.
            None if kind == ChunkKind::Import => {
                let t = one_line(node.utf8_text(src).unwrap_or_default(), 120);
                let t = t.trim_end_matches(';');
                IMPORT_WORDS.iter().find_map(|k| t.strip_prefix(k)).unwrap_or(t).trim().to_owned()
            }
            None => String::new(),
        }
    }
}

/// The words an import starts with, left out of its name (`import java.util.List` → `java.util.List`).
const IMPORT_WORDS: &[&str] =
    &["#include ", "import ", "from ", "using ", "use ", "require_relative ", "require ", "alias ", "load "];

/// The last row a node occupies (tree-sitter ends line comments at column 0 of the next row).
fn end_row(node: Node) -> usize {
    let end = node.end_position();
    if end.column == 0 && end.row > node.start_position().row { end.row - 1 } else { end.row }
}

/// The innermost identifier of a C declarator (`*(*f)(int)` → `f`).
fn c_name(declarator: Node, src: &[u8]) -> Option<String> {
    let mut d = declarator;
    loop {
        match d.kind() {
            "identifier"
            | "type_identifier"
            | "field_identifier"
            | "qualified_identifier"
            | "operator_name"
            | "destructor_name" => return d.utf8_text(src).ok().map(str::to_owned),
            _ => d = d.child_by_field_name("declarator").or_else(|| d.named_child(0))?,
        }
    }
}

/// `Foo<T> (Display)` → `Foo`: the name methods record as their parent.
pub(crate) fn container_parent_name(name: &str) -> String {
    let base = name.split(" (").next().unwrap_or(name);
    let base = base.split('<').next().unwrap_or(base);
    base.trim().to_owned()
}

pub(crate) fn strip_comment(c: &str) -> String {
    let c = c.trim();
    if let Some(body) = c.strip_prefix("/*") {
        let body = body.strip_suffix("*/").unwrap_or(body);
        return body
            .lines()
            .map(|l| l.trim().trim_start_matches('*').trim())
            .collect::<Vec<_>>()
            .join("\n")
            .trim()
            .to_owned();
    }
    c.lines()
        .map(|l| l.trim().trim_start_matches('/').trim_start_matches('!').trim_start_matches('#').trim())
        .collect::<Vec<_>>()
        .join("\n")
}

/// `block` chunks for the lines no item covers, cut at blank lines, skipping punctuation-only runs.
/// The text up to the end of its last non-blank line (whose trailing spaces a pattern may match).
fn without_trailing_blank_lines(s: &str) -> &str {
    let last = s.trim_end().len();
    &s[..s[last..].find('\n').map_or(s.len(), |k| last + k)]
}

fn gap_blocks(src: &[u8], lines: &Lines, covered: &mut [(usize, usize)]) -> Vec<Chunk> {
    covered.sort_unstable();
    let mut is_covered = vec![false; lines.count() as usize + 1];
    for &(s, e) in covered.iter() {
        let (a, b) = (lines.line_of(s), lines.line_of(e.saturating_sub(1).max(s)));
        for l in a..=b {
            is_covered[l as usize] = true;
        }
    }
    let mut out = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    let flush = |run: &mut Option<(u32, u32)>, out: &mut Vec<Chunk>| {
        if let Some((a, b)) = run.take() {
            let start = lines.start_of(a);
            let end = if b >= lines.count() { src.len() } else { lines.start_of(b + 1) };
            let content = text(src, start, end);
            let content = without_trailing_blank_lines(&content);
            // Runs without a word (closing braces, `#####` rulers) are kept too, as `gap`s, so
            // grep sees every line.
            if !content.trim().is_empty() {
                out.push(Chunk {
                    kind: if content.chars().any(char::is_alphanumeric) { ChunkKind::Block } else { ChunkKind::Gap },
                    name: String::new(),
                    signature: String::new(),
                    parent: None,
                    doc: None,
                    content: content.to_owned(),
                    start_line: a,
                    end_line: a + content.matches('\n').count() as u32,
                    start_byte: start,
                    end_byte: end,
                });
            }
        }
    };
    for line in 1..=lines.count() {
        let start = lines.start_of(line);
        let end = if line >= lines.count() { src.len() } else { lines.start_of(line + 1) };
        let blank = src[start..end].iter().all(u8::is_ascii_whitespace);
        if is_covered[line as usize] || (blank && run.is_some_and(|(a, b)| b - a + 1 >= BLOCK_MAX_LINES / 3)) {
            flush(&mut run, &mut out);
            continue;
        }
        if blank && run.is_none() {
            continue;
        }
        run = Some(match run {
            Some((a, _)) if line - a >= BLOCK_MAX_LINES => {
                flush(&mut run, &mut out);
                (line, line)
            }
            Some((a, _)) => (a, line),
            None => (line, line),
        });
    }
    flush(&mut run, &mut out);
    out
}
