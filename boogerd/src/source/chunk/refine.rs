//! The roles a node kind's table entry leaves to the node (`Role::Ask`): a C declaration is
//! an item only when it declares a function, a Kotlin `class_declaration` may be an
//! interface, a Ruby or Elixir call may define a module, a method or a test. One function per
//! language, each a few lines of reading the node; names that such calls give are here too.

use booger_proto::tools::ChunkKind;
use tree_sitter::Node;

use super::role::Role::{self, *};

pub(super) fn rust(node: Node, _: &[u8]) -> Option<Role> {
    // `mod_item`: an inline module holds items; `mod x;` is a one-line declaration.
    Some(if node.child_by_field_name("body").is_some() { Container(ChunkKind::Mod) } else { Type(ChunkKind::Mod) })
}

pub(super) fn go(node: Node, _: &[u8]) -> Option<Role> {
    let mut cursor = node.walk();
    let spec = node.named_children(&mut cursor).find(|n| n.kind() == "type_spec");
    Some(Type(match spec.and_then(|s| s.child_by_field_name("type")).map(|t| t.kind()) {
        Some("struct_type") => ChunkKind::Struct,
        Some("interface_type") => ChunkKind::Interface,
        _ => ChunkKind::Type,
    }))
}

/// A struct, union or enum with a body, or a declaration that defines one or declares a
/// function.
pub(super) fn c(node: Node, _: &[u8]) -> Option<Role> {
    match node.kind() {
        "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier" => {
            node.child_by_field_name("body")?;
            Some(Type(specifier_kind(node.kind())))
        }
        _ => c_declaration(node),
    }
}

/// As C, but a class or struct holds members (methods, nested types) that are chunks.
pub(super) fn cpp(node: Node, src: &[u8]) -> Option<Role> {
    match node.kind() {
        // A macro the parser does not know (`CLI11_NODISCARD`) after a class's members can
        // make the class the return type of a "function": the class is the item.
        "function_definition" if test_macro(node, src).is_some() => Some(Type(ChunkKind::Test)),
        "function_definition" => {
            Some(if node.child_by_field_name("type").is_some_and(|t| t.child_by_field_name("body").is_some()) {
                Wrapper
            } else {
                Function
            })
        }
        // `TEST_CASE("name") { … }` reads as a call statement and a block beside it.
        "expression_statement" => test_macro(node, src).map(|_| Type(ChunkKind::Test)),
        "class_specifier" | "struct_specifier" => {
            node.child_by_field_name("body")?;
            Some(Container(specifier_kind(node.kind())))
        }
        _ => c(node, src),
    }
}

/// GoogleTest's, Catch2's, doctest's and Boost.Test's test-defining macros.
const CPP_TEST_MACROS: &[&str] = &[
    "TEST",
    "TEST_F",
    "TEST_P",
    "TYPED_TEST",
    "TYPED_TEST_P",
    "TEST_CASE",
    "TEST_CASE_METHOD",
    "TEMPLATE_TEST_CASE",
    "SCENARIO",
    "TEST_SUITE",
    "BOOST_AUTO_TEST_CASE",
    "BOOST_FIXTURE_TEST_CASE",
];

/// The argument list of a test macro's use: `TEST(Suite, Name) {` (read as a function
/// definition) or `TEST_CASE("name") {` (read as a call statement).
fn test_macro<'t>(node: Node<'t>, src: &[u8]) -> Option<Node<'t>> {
    let (callee, args) = match node.kind() {
        "function_definition" => {
            let d = node.child_by_field_name("declarator").filter(|d| d.kind() == "function_declarator")?;
            (d.child_by_field_name("declarator")?, d.child_by_field_name("parameters")?)
        }
        _ => {
            let call = node.named_child(0).filter(|c| c.kind() == "call_expression")?;
            (call.child_by_field_name("function")?, call.child_by_field_name("arguments")?)
        }
    };
    CPP_TEST_MACROS.contains(&callee.utf8_text(src).ok()?).then_some(args)
}

/// A C++ test's name: its first string (`TEST_CASE("parses flags", "[app]")` → `parses
/// flags`), or its names joined (`TEST(ParserTest, ReadsEmpty)` → `ParserTest.ReadsEmpty`).
pub(super) fn cpp_test_name(node: Node, src: &[u8]) -> Option<String> {
    let args = test_macro(node, src)?;
    let mut cursor = args.walk();
    let parts: Vec<&str> = args.named_children(&mut cursor).filter_map(|a| a.utf8_text(src).ok()).collect();
    match parts.iter().find(|p| p.starts_with('"')) {
        Some(text) => Some(unquoted(text).to_owned()),
        None => Some(parts.join(".")),
    }
}

fn specifier_kind(kind: &str) -> ChunkKind {
    match kind {
        "struct_specifier" => ChunkKind::Struct,
        "union_specifier" => ChunkKind::Union,
        "class_specifier" => ChunkKind::Class,
        _ => ChunkKind::Enum,
    }
}

fn c_declaration(node: Node) -> Option<Role> {
    if let Some(t) = node.child_by_field_name("type")
        && matches!(t.kind(), "struct_specifier" | "union_specifier" | "enum_specifier" | "class_specifier")
        && t.child_by_field_name("body").is_some()
    {
        return Some(Type(specifier_kind(t.kind())));
    }
    let d = node.child_by_field_name("declarator")?;
    find_descendant(d, "function_declarator").map(|_| Type(ChunkKind::Declaration))
}

pub(super) fn find_descendant<'t>(node: Node<'t>, kind: &str) -> Option<Node<'t>> {
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

/// The keyword tokens among a node's children (`class`, `interface`, `struct`, `enum`).
fn has_keyword(node: Node, word: &str) -> bool {
    let mut cursor = node.walk();
    node.children(&mut cursor).any(|c| !c.is_named() && c.kind() == word)
}

fn modifiers_say(node: Node, src: &[u8], word: &str) -> bool {
    let mut cursor = node.walk();
    node.named_children(&mut cursor)
        .filter(|c| c.kind() == "modifiers")
        .any(|m| m.utf8_text(src).is_ok_and(|t| t.split_whitespace().any(|w| w == word)))
}

pub(super) fn kotlin(node: Node, src: &[u8]) -> Option<Role> {
    match node.kind() {
        "class_declaration" if has_keyword(node, "interface") => Some(Container(ChunkKind::Interface)),
        "class_declaration" if modifiers_say(node, src, "enum") => Some(Container(ChunkKind::Enum)),
        "class_declaration" => Some(Container(ChunkKind::Class)),
        // A property carries code when it has a getter or setter.
        _ => has_child(node, &["getter", "setter"]).then_some(Type(ChunkKind::Property)),
    }
}

fn has_child(node: Node, kinds: &[&str]) -> bool {
    let mut cursor = node.walk();
    node.named_children(&mut cursor).any(|c| kinds.contains(&c.kind()))
}

/// A property or indexer with a body (`=> …`, `get { … }`); `{ get; set; }` carries no code.
pub(super) fn csharp(node: Node, _: &[u8]) -> Option<Role> {
    let arrow = node.child_by_field_name("value").is_some_and(|v| v.kind() == "arrow_expression_clause");
    let accessor_body = node.child_by_field_name("accessors").is_some_and(|list| {
        let mut cursor = list.walk();
        list.named_children(&mut cursor).any(|a| has_child(a, &["block", "arrow_expression_clause"]))
    });
    (arrow || accessor_body).then_some(Type(ChunkKind::Property))
}

pub(super) fn swift(node: Node, _: &[u8]) -> Option<Role> {
    if node.kind() == "property_declaration" {
        return node.child_by_field_name("computed_value").map(|_| Type(ChunkKind::Property));
    }
    // `class_declaration` is also a struct, an enum, an actor or an extension.
    let kind = ["struct", "enum", "extension", "actor", "class"].into_iter().find(|w| has_keyword(node, w));
    Some(Container(match kind {
        Some("struct") => ChunkKind::Struct,
        Some("enum") => ChunkKind::Enum,
        Some("extension") => ChunkKind::Impl,
        _ => ChunkKind::Class,
    }))
}

/// `namespace X { … }` holds items; `namespace X;` names the file's namespace and is no item.
pub(super) fn php(node: Node, _: &[u8]) -> Option<Role> {
    node.child_by_field_name("body").map(|_| Container(ChunkKind::Namespace))
}

/// RSpec and minitest's spec calls (`describe`, `it`), and `require`.
const RUBY_SUITES: &[&str] = &["describe", "context", "feature", "shared_examples", "shared_context"];
const RUBY_CASES: &[&str] = &["it", "specify", "scenario", "test", "example"];

pub(super) fn ruby(node: Node, src: &[u8]) -> Option<Role> {
    let method = node.child_by_field_name("method")?.utf8_text(src).ok()?;
    if node.child_by_field_name("receiver").is_some_and(|r| r.utf8_text(src).is_ok_and(|t| t != "RSpec")) {
        return None;
    }
    if matches!(method, "require" | "require_relative" | "load") {
        return Some(Import);
    }
    node.child_by_field_name("block")?;
    test_call(method, RUBY_SUITES, RUBY_CASES)
}

fn test_call(callee: &str, suites: &[&str], cases: &[&str]) -> Option<Role> {
    if suites.contains(&callee) {
        Some(Container(ChunkKind::Test))
    } else {
        cases.contains(&callee).then_some(Type(ChunkKind::Test))
    }
}

/// busted's `describe`/`it` calls, `local x = require("x")`, and functions held in variables
/// (`local f = function() … end`, `M.f = function() … end`).
pub(super) fn lua(node: Node, src: &[u8]) -> Option<Role> {
    if node.kind() == "function_call" {
        let callee = node.child_by_field_name("name")?.utf8_text(src).ok()?;
        return test_call(callee, &["describe", "context", "insulate", "expose"], &["it", "test", "pending"]);
    }
    let assignment = if node.kind() == "assignment_statement" { node } else { node.named_child(0)? };
    let value = assignment.named_child(1)?.child_by_field_name("value")?;
    match value.kind() {
        "function_definition" => Some(Function),
        "function_call" => {
            let callee = value.child_by_field_name("name")?.utf8_text(src).ok()?;
            (callee == "require").then_some(Import)
        }
        _ => None,
    }
}

/// Elixir writes every definition as a call: `defmodule`, `def`, `defprotocol`, ExUnit's
/// `describe` and `test`, and `alias`/`import`/`require`/`use`.
pub(super) fn elixir(node: Node, src: &[u8]) -> Option<Role> {
    let target = node.child_by_field_name("target")?;
    if target.kind() != "identifier" {
        return None;
    }
    Some(match target.utf8_text(src).ok()? {
        "defmodule" => Container(ChunkKind::Mod),
        "defprotocol" => Container(ChunkKind::Interface),
        "defimpl" => Container(ChunkKind::Impl),
        "def" | "defp" | "defmacro" | "defmacrop" | "defguard" | "defguardp" | "defdelegate" => Function,
        "defstruct" | "defexception" => Type(ChunkKind::Struct),
        "alias" | "import" | "require" | "use" => Import,
        "describe" => Container(ChunkKind::Test),
        "test" | "property" => Type(ChunkKind::Test),
        _ => return None,
    })
}

/// The name a definition call gives: `defmodule Foo.Bar` → `Foo.Bar`, `def go(a) when …` →
/// `go`, `test "works"` → `works`.
pub(super) fn elixir_name(node: Node, src: &[u8]) -> Option<String> {
    let mut cursor = node.walk();
    let args = node.named_children(&mut cursor).find(|n| n.kind() == "arguments")?;
    let mut first = args.named_child(0)?;
    loop {
        match first.kind() {
            "binary_operator" => first = first.child_by_field_name("left")?,
            "call" => first = first.child_by_field_name("target")?,
            _ => break,
        }
    }
    Some(unquoted(first.utf8_text(src).ok()?).to_owned())
}

/// A Ruby or Lua test call's description, or a Lua variable's name.
pub(super) fn call_name(node: Node, src: &[u8]) -> Option<String> {
    match node.kind() {
        "variable_declaration" | "assignment_statement" => {
            let assignment = if node.kind() == "assignment_statement" { node } else { node.named_child(0)? };
            let names = assignment.named_child(0)?;
            Some(names.named_child(0)?.utf8_text(src).ok()?.to_owned())
        }
        _ => {
            let args = node.child_by_field_name("arguments")?;
            Some(unquoted(args.named_child(0)?.utf8_text(src).ok()?).to_owned())
        }
    }
}

fn unquoted(text: &str) -> &str {
    let quoted = text.len() >= 2 && (text.starts_with(['"', '\'']) && text.ends_with(['"', '\'']));
    if quoted { &text[1..text.len() - 1] } else { text }
}
