//! How an answer tells its reader what to pass next, in the reader's own terms: an agent
//! passes arguments (`offset=20`, `cursor "…"`), a person at a shell types flags
//! (`--offset 20`, `--cursor …`). The tool call sets who asks for its thread; the answer's
//! formatting, however deep, asks here.

use std::cell::Cell;

thread_local! {
    static SHELL: Cell<bool> = const { Cell::new(false) };
}

/// Runs `f` with hints for a person at a shell (`shell`) or for an agent.
pub(crate) fn for_reader<R>(shell: bool, f: impl FnOnce() -> R) -> R {
    let before = SHELL.with(|s| s.replace(shell));
    let r = f();
    SHELL.with(|s| s.set(before));
    r
}

fn shell() -> bool {
    SHELL.with(Cell::get)
}

/// An argument with its value: `offset=20` or `--offset 20`.
pub(crate) fn arg(name: &str, value: impl std::fmt::Display) -> String {
    if shell() { format!("{} {value}", flag(name)) } else { format!("{name}={value}") }
}

/// An argument's name: `path_prefix` or `--path-prefix`.
pub(crate) fn name(name: &str) -> String {
    if shell() { flag(name) } else { name.to_owned() }
}

/// Calling another tool with one argument: `booger grep PATTERN` or `grep with pattern`.
pub(crate) fn tool(tool: &str, arg: &str) -> String {
    if shell() { format!("booger {tool} {}", arg.to_uppercase()) } else { format!("{tool} with {arg}") }
}

/// How to continue a cut answer.
pub(crate) fn continue_with(cursor: &str) -> String {
    if shell() {
        format!("run it again with --cursor {cursor}")
    } else {
        format!("call again with cursor \"{cursor}\" to continue")
    }
}

fn flag(name: &str) -> String {
    format!("--{}", name.replace('_', "-"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hints_speak_to_their_reader() {
        assert_eq!(arg("offset", 20), "offset=20");
        assert_eq!(for_reader(true, || arg("offset", 20)), "--offset 20");
        assert_eq!(for_reader(true, || name("path_prefix")), "--path-prefix");
        assert_eq!(for_reader(true, || tool("grep", "pattern")), "booger grep PATTERN");
        assert_eq!(tool("grep", "pattern"), "grep with pattern");
        assert!(for_reader(true, || continue_with("x1")).contains("--cursor x1"));
        assert_eq!(name("path_prefix"), "path_prefix", "the reader is reset after");
    }
}
