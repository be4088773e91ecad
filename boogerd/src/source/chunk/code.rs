//! Structural chunks from a tree-sitter parse.
//!
//! What each language's node kinds mean is one table, [`role`]; the walk is shared. Rules:
//! - functions and methods are one chunk each (methods record their container as `parent`);
//! - containers (impl, trait, class, interface-like namespaces, mod) give a header chunk (up
//!   to their first member) and their members as separate chunks;
//! - every import is its own chunk;
//! - comments and attributes directly above an item belong to it (`doc` keeps the comment
//!   text; Python docstrings are taken from the body);
//! - top-level code that no item covers becomes `block` chunks, so nothing is unsearchable;
//! - ERROR regions are searched for items inside them and otherwise become blocks.

use std::cell::RefCell;
use std::ops::ControlFlow;
use std::time::{Duration, Instant};

use tree_sitter::{Node, ParseOptions, Parser};

use super::js::{self, Declared, TestCall};
use super::{Chunk, Lines, one_line, split_oversized, text};
use crate::source::lang::Lang;

/// A parse that takes longer than this is abandoned (the file becomes raw chunks).
const PARSE_TIMEOUT: Duration = Duration::from_secs(10);
const SIGNATURE_MAX: usize = 240;
const DOC_MAX: usize = 1_000;
/// Gap blocks are cut at blank lines and kept under these sizes.
const BLOCK_MAX_LINES: u32 = 60;

thread_local! {
    static PARSER: RefCell<Parser> = RefCell::new(Parser::new());
}

/// What a node is to the chunker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    Function,
    Type(&'static str),
    Container(&'static str),
    Import,
    /// A wrapper whose inner declaration is the item; the wrapper's extra text (decorators,
    /// `export`) belongs to the chunk.
    Wrapper,
    /// Not an item, but items may be inside (preprocessor conditionals, ERROR nodes).
    Transparent,
}

fn role(lang: Lang, node: Node, src: &[u8]) -> Option<Role> {
    use Role::*;
    let kind = node.kind();
    if kind == "ERROR" {
        return Some(Transparent);
    }
    Some(match lang {
        Lang::Rust => match kind {
            "function_item" | "function_signature_item" => Function,
            "struct_item" => Type("struct"),
            "enum_item" => Type("enum"),
            "union_item" => Type("union"),
            "type_item" => Type("type"),
            "const_item" | "static_item" => Type("const"),
            "macro_definition" => Type("macro"),
            "impl_item" => Container("impl"),
            "trait_item" => Container("trait"),
            "mod_item" if node.child_by_field_name("body").is_some() => Container("mod"),
            "mod_item" => Type("mod"),
            "use_declaration" | "extern_crate_declaration" => Import,
            _ => return None,
        },
        Lang::Python => match kind {
            "function_definition" => Function,
            "class_definition" => Container("class"),
            "decorated_definition" => Wrapper,
            "import_statement" | "import_from_statement" | "future_import_statement" => Import,
            _ => return None,
        },
        Lang::JavaScript | Lang::TypeScript | Lang::Tsx => match kind {
            "function_declaration"
            | "generator_function_declaration"
            | "function_signature"
            | "method_definition"
            | "abstract_method_signature" => Function,
            "class_declaration" | "abstract_class_declaration" => Container("class"),
            "internal_module" | "module" => Container("namespace"),
            "interface_declaration" => Type("interface"),
            "type_alias_declaration" => Type("type"),
            "enum_declaration" => Type("enum"),
            "import_statement" => Import,
            "export_statement" => Wrapper,
            "expression_statement" if js::is_test_statement(node, src) => Wrapper,
            "call_expression" => {
                return js::test_call(node, src).map(|call| match call {
                    TestCall::Suite => Container("test"),
                    TestCall::Case => Type("test"),
                });
            }
            "lexical_declaration" | "variable_declaration" => {
                return js::declaration(node, src).map(|d| match d {
                    Declared::Function => Function,
                    Declared::Import => Import,
                });
            }
            _ => return None,
        },
        Lang::Go => match kind {
            "function_declaration" | "method_declaration" => Function,
            "type_declaration" => Type(go_type_kind(node)),
            "import_declaration" => Import,
            _ => return None,
        },
        Lang::C => match kind {
            "function_definition" => Function,
            "type_definition" => Type("typedef"),
            "struct_specifier" if node.child_by_field_name("body").is_some() => Type("struct"),
            "union_specifier" if node.child_by_field_name("body").is_some() => Type("union"),
            "enum_specifier" if node.child_by_field_name("body").is_some() => Type("enum"),
            "declaration" => return c_declaration(node),
            "preproc_include" => Import,
            "preproc_def" | "preproc_function_def" => Type("macro"),
            "preproc_if"
            | "preproc_ifdef"
            | "preproc_else"
            | "preproc_elif"
            | "preproc_elifdef"
            | "linkage_specification"
            | "declaration_list" => Transparent,
            _ => return None,
        },
        Lang::Markdown | Lang::Text => return None,
    })
}

/// A C declaration is an item when it declares a function or defines a struct/union/enum.
fn c_declaration(node: Node) -> Option<Role> {
    if let Some(t) = node.child_by_field_name("type")
        && matches!(t.kind(), "struct_specifier" | "union_specifier" | "enum_specifier")
        && t.child_by_field_name("body").is_some()
    {
        return Some(Role::Type(match t.kind() {
            "struct_specifier" => "struct",
            "union_specifier" => "union",
            _ => "enum",
        }));
    }
    let d = node.child_by_field_name("declarator")?;
    find_descendant(d, "function_declarator").map(|_| Role::Type("declaration"))
}

fn go_type_kind(node: Node) -> &'static str {
    let mut cursor = node.walk();
    let spec = node.named_children(&mut cursor).find(|n| n.kind() == "type_spec");
    match spec.and_then(|s| s.child_by_field_name("type")).map(|t| t.kind()) {
        Some("struct_type") => "struct",
        Some("interface_type") => "interface",
        _ => "type",
    }
}

fn find_descendant<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
    if node.kind() == kind {
        return Some(node);
    }
    let mut cursor = node.walk();
    for child in node.named_children(&mut cursor) {
        if let Some(found) = find_descendant(child, kind) {
            return Some(found);
        }
    }
    None
}

/// Parses and chunks. `Err` only when there is no usable tree (timeout); a tree with syntax
/// errors still gives its items, plus a note for the index report.
pub fn chunk(lang: Lang, src: &[u8]) -> Result<(Vec<Chunk>, Option<String>), String> {
    let grammar = lang.grammar().ok_or_else(|| format!("no grammar for {}", lang.name()))?;
    let tree = PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        parser.set_language(&grammar).map_err(|e| format!("grammar {}: {e}", lang.name()))?;
        let deadline = Instant::now() + PARSE_TIMEOUT;
        let mut give_up = |_: &tree_sitter::ParseState| {
            if Instant::now() > deadline { ControlFlow::Break(()) } else { ControlFlow::Continue(()) }
        };
        let options = ParseOptions::new().progress_callback(&mut give_up);
        let len = src.len();
        let tree =
            parser.parse_with_options(&mut |i, _| if i < len { &src[i..] } else { &[] as &[u8] }, None, Some(options));
        parser.reset();
        tree.ok_or_else(|| format!("tree-sitter gave up after {}s", PARSE_TIMEOUT.as_secs()))
    })?;
    let root = tree.root_node();
    let note = root.has_error().then(|| {
        let errors = count_errors(root);
        format!("{errors} syntax error region(s); the code around them is indexed as blocks")
    });
    let lines = Lines::new(src);
    let mut walker =
        Walker { lang, src, lines: &lines, chunks: Vec::new(), covered: Vec::new(), reach: 0, in_type: false };
    walker.items(tree.root_node(), None);
    let Walker { mut chunks, mut covered, .. } = walker;
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
        let Some(this) = role(self.lang, node, self.src) else { return };
        match this {
            Role::Transparent => self.items(node, parent),
            Role::Wrapper => {
                let inner = node
                    .child_by_field_name("definition")
                    .or_else(|| node.child_by_field_name("declaration"))
                    .or_else(|| {
                        let mut c = node.walk();
                        node.named_children(&mut c).find(|n| role(self.lang, *n, self.src).is_some())
                    });
                if let Some(inner) = inner {
                    self.item(kids, i, inner, parent);
                }
            }
            Role::Import => self.push(kids, i, node, "import", parent, None),
            Role::Type(kind) => self.push(kids, i, node, kind, parent, None),
            Role::Function => {
                let kind = if self.in_type || node.kind() == "method_declaration" { "method" } else { "function" };
                self.push(kids, i, node, kind, parent, None);
            }
            Role::Container(kind) => {
                let body = self.body(node);
                let name = self.name(node, kind);
                let outer = kids[i];
                // The header chunk runs to the first member (fields, docstring and all).
                let header_end = body.and_then(|b| {
                    let mut c = b.walk();
                    let members: Vec<Node> = b.named_children(&mut c).collect();
                    let first = members.iter().position(|m| {
                        role(self.lang, *m, self.src).is_some_and(|r| !matches!(r, Role::Import | Role::Transparent))
                    })?;
                    let end = self.lines.start_of(self.lines.line_of(self.doc_start(&members, first)));
                    (end > outer.start_byte()).then_some(end)
                });
                self.push(kids, i, node, kind, parent, header_end);
                if let Some(body) = body {
                    // A suite's description is its whole name (it may hold `(` or `<`).
                    let parent_name = if kind == "test" { name.clone() } else { container_parent_name(&name) };
                    let was = std::mem::replace(&mut self.in_type, !matches!(kind, "mod" | "namespace" | "test"));
                    self.items(body, Some(&parent_name));
                    self.in_type = was;
                }
            }
        }
    }

    fn push(
        &mut self,
        kids: &[Node],
        i: usize,
        node: Node,
        kind: &'static str,
        parent: Option<&str>,
        end: Option<usize>,
    ) {
        let outer = kids[i];
        let first = self.doc_first(kids, i);
        let start = self.start_of_line(kids[first].start_byte());
        // A container's header covers only up to its first member: what lies between and after
        // its members (comments, attributes) is covered by them or becomes a block, so grep
        // finds every line.
        let end = end.unwrap_or_else(|| self.through_line_end(kids, i));
        let name = self.name(node, kind);
        let doc = self.doc(&kids[first..i], node);
        let signature = if kind == "import" {
            one_line(&text(self.src, outer.start_byte(), outer.end_byte()), SIGNATURE_MAX)
        } else {
            self.signature(node, outer)
        };
        let receiver = (node.kind() == "method_declaration").then(|| self.go_receiver(node)).flatten();
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
            .any(|n| role(self.lang, *n, self.src).is_some());
        if item_follows { end } else { line_end }
    }

    /// Where a container's members are: its body, or a test suite's function's body.
    fn body<'t>(&self, node: Node<'t>) -> Option<Node<'t>> {
        if node.kind() == "call_expression" { js::test_body(node) } else { node.child_by_field_name("body") }
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
            let attached = matches!(prev.kind(), "comment" | "line_comment" | "block_comment" | "attribute_item")
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
        let sig = one_line(&text(self.src, start, end.max(start)), SIGNATURE_MAX);
        sig.trim_end_matches([':', '{', ' ']).to_owned()
    }

    fn name(&self, node: Node, kind: &str) -> String {
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
            (Lang::C, "function_definition" | "declaration" | "type_definition") => {
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
            (_, "import_statement" | "import_from_statement" | "future_import_statement" | "import_declaration")
            | (Lang::C, "preproc_include") => None,
            _ => field(node, "name"),
        };
        match found {
            Some(n) => one_line(&n, 120),
            // Imports are named by what they import.
            None if kind == "import" => {
                let t = one_line(node.utf8_text(src).unwrap_or_default(), 120);
                let t = t.trim_end_matches(';');
                ["#include ", "import ", "from "].iter().find_map(|k| t.strip_prefix(k)).unwrap_or(t).trim().to_owned()
            }
            None => String::new(),
        }
    }
}

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
            "identifier" | "type_identifier" | "field_identifier" => return d.utf8_text(src).ok().map(str::to_owned),
            _ => d = d.child_by_field_name("declarator").or_else(|| d.named_child(0))?,
        }
    }
}

/// `Foo<T> (Display)` → `Foo`: the name methods record as their parent.
pub fn container_parent_name(name: &str) -> String {
    let base = name.split(" (").next().unwrap_or(name);
    let base = base.split('<').next().unwrap_or(base);
    base.trim().to_owned()
}

fn strip_comment(c: &str) -> String {
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
                    kind: if content.chars().any(char::is_alphanumeric) { "block" } else { "gap" },
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

/// Parses without chunking: the floor the indexing benchmark compares against.
pub fn parse_only(lang: Lang, src: &[u8]) -> bool {
    let Some(grammar) = lang.grammar() else { return false };
    PARSER.with(|p| {
        let mut parser = p.borrow_mut();
        parser.set_language(&grammar).is_ok() && parser.parse(src, None).is_some()
    })
}
