//! How the CLI ends: what it prints and its exit code.

use std::io::Write;

use serde_json::Value;

/// `println!` that never panics: a reader that went away (`booger search x | head -1`, a
/// closed stdout) is not an error worth a panic; the rest is simply not wanted.
macro_rules! say {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout().lock(), $($arg)*);
    }};
}

/// `eprintln!` that never panics (`booger search x 2>&1 | true` closes stderr too).
macro_rules! complain {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr().lock(), $($arg)*);
    }};
}

pub(crate) use {complain, say};

/// Exit codes: 0 success, 1 the tool reported an error, 2 bad command line, 3 no daemon.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    Ok = 0,
    ToolError = 1,
    Usage = 2,
    NotRunning = 3,
}

/// One line of compact JSON, for scripts.
pub fn print_json(v: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, v);
    let _ = out.write_all(b"\n");
}

/// Text and a newline on stdout. A reader that went away (`booger search x | head -1`) is
/// not an error worth a panic: the rest is simply not wanted.
pub fn print_text(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.write_all(b"\n"));
}
