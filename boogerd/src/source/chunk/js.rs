//! What JavaScript and TypeScript say without a declaration keyword: `const f = () => …`,
//! `const x = require("y")`, and test-runner calls (`describe("…", () => {…})`,
//! `it("…", …)`, `test.each(…)("…", …)`).
//!
//! A test file is mostly calls. Without them it would be anonymous blocks cut at blank lines;
//! as `test` chunks each case is one chunk, named by its description, and a suite's cases
//! record the suite as their parent, so an outline reads like the test report and a search
//! in the words of a task meets the description written in them.

use booger_proto::tools::ChunkKind;
use tree_sitter::Node;

use super::role::Role;

/// Callee names of the test runners (Jest, Vitest, Mocha, Jasmine, node:test).
const SUITES: &[&str] = &["describe", "suite", "context", "fdescribe", "xdescribe"];
const CASES: &[&str] = &["it", "test", "specify", "fit", "xit", "bench"];

/// The role of the JavaScript and TypeScript node kinds the table leaves to the node: a test
/// statement wraps its call, a suite holds cases, a case is a leaf, a variable may hold a
/// function or an import.
pub(super) fn role(node: Node, src: &[u8]) -> Option<Role> {
    match node.kind() {
        "expression_statement" => is_test_statement(node, src).then_some(Role::Wrapper),
        "call_expression" => test_call(node, src).map(|call| match call {
            TestCall::Suite => Role::Container(ChunkKind::Test),
            TestCall::Case => Role::Type(ChunkKind::Test),
        }),
        _ => declaration(node, src).map(|d| match d {
            Declared::Function => Role::Function,
            Declared::Import => Role::Import,
        }),
    }
}

/// What a variable declaration is: a function, an import, or neither.
pub(crate) enum Declared {
    Function,
    Import,
}

/// `const f = (…) => …`, `const x = require("y")`, or neither.
pub(crate) fn declaration(node: Node, src: &[u8]) -> Option<Declared> {
    let mut cursor = node.walk();
    let declarators: Vec<Node> =
        node.named_children(&mut cursor).filter(|n| n.kind() == "variable_declarator").collect();
    let [decl] = declarators.as_slice() else { return None };
    let value = unwrapped(decl.child_by_field_name("value")?);
    match value.kind() {
        "arrow_function" | "function_expression" | "function" | "generator_function" => Some(Declared::Function),
        "call_expression" => {
            let f = value.child_by_field_name("function")?;
            (f.utf8_text(src).ok()? == "require").then_some(Declared::Import)
        }
        _ => None,
    }
}

/// The expression a value is, past what only types or groups it: parentheses, TypeScript's
/// `as T`, `satisfies T` and `!` (`const f = ((…) => …) as F` is a function).
fn unwrapped(mut node: Node) -> Node {
    while matches!(
        node.kind(),
        "parenthesized_expression" | "as_expression" | "satisfies_expression" | "non_null_expression"
    ) && let Some(inner) = node.named_child(0)
    {
        node = inner;
    }
    node
}

/// A test-runner call: a suite holds cases (and suites), a case is a leaf.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TestCall {
    Suite,
    Case,
}

/// The expression statement is a test-runner call.
pub(crate) fn is_test_statement(statement: Node, src: &[u8]) -> bool {
    statement.named_child(0).is_some_and(|call| test_call(call, src).is_some())
}

/// `describe("name", fn)`, `it.only("name", fn)`, `test.each(table)("name", fn)`: a callee
/// named like a runner's, a string first and a function among the arguments.
pub(crate) fn test_call(call: Node, src: &[u8]) -> Option<TestCall> {
    if call.kind() != "call_expression" {
        return None;
    }
    let runner = runner_name(call.child_by_field_name("function")?, src)?;
    let args = call.child_by_field_name("arguments")?;
    let mut cursor = args.walk();
    let mut named = args.named_children(&mut cursor);
    if !matches!(named.next()?.kind(), "string" | "template_string") {
        return None;
    }
    if !named.any(is_function) {
        return None;
    }
    if SUITES.contains(&runner) { Some(TestCall::Suite) } else { CASES.contains(&runner).then_some(TestCall::Case) }
}

/// `describe` in `describe`, `describe.skip`, `describe.each([...])`.
fn runner_name<'s>(callee: Node, src: &'s [u8]) -> Option<&'s str> {
    let mut node = callee;
    loop {
        match node.kind() {
            "identifier" => return std::str::from_utf8(&src[node.byte_range()]).ok(),
            "member_expression" => node = node.child_by_field_name("object")?,
            "call_expression" => node = node.child_by_field_name("function")?,
            _ => return None,
        }
    }
}

fn is_function(node: Node) -> bool {
    matches!(node.kind(), "arrow_function" | "function_expression" | "function")
}

/// A test call's description: its first argument without its quotes (only those: a
/// description may end in a quoted word).
pub(crate) fn test_name(call: Node, src: &[u8]) -> Option<String> {
    let first = call.child_by_field_name("arguments")?.named_child(0)?;
    let text = std::str::from_utf8(&src[first.byte_range()]).ok()?;
    let inner = text.get(1..text.len().saturating_sub(1)).filter(|_| text.len() >= 2).unwrap_or(text);
    Some(inner.to_owned())
}

/// The body of a test call's function argument, where a suite's members are.
pub(crate) fn test_body(call: Node) -> Option<Node> {
    let args = call.child_by_field_name("arguments")?;
    let mut cursor = args.walk();
    let function = args.named_children(&mut cursor).find(|n| is_function(*n))?;
    function.child_by_field_name("body").filter(|b| b.kind() == "statement_block")
}
