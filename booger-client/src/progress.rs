//! Progress of a long call on a terminal, for any tool.
//!
//! A call blocks its connection, so after a moment a second connection asks the daemon how
//! far the call got (`booger/progress`, by the token the call was made with) and draws one
//! line on stderr until the call returns. A quick call never opens the second connection.

use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{Receiver, RecvTimeoutError, Sender, channel};
use std::thread::JoinHandle;
use std::time::Duration;

use booger_proto::wire::{self, Progress};
use serde_json::json;

use crate::connect::{Daemon, Hello};

/// A call answered within this draws nothing.
const QUIET_FOR: Duration = Duration::from_millis(300);
/// How often the line is redrawn.
const EVERY: Duration = Duration::from_millis(150);

pub struct Bar {
    stop: Option<Sender<()>>,
    thread: Option<JoinHandle<bool>>,
}

/// Follows the call made with `token` if stderr is a terminal.
pub fn start(socket: &Path, cwd: &Path, token: String) -> Option<Bar> {
    if !std::io::IsTerminal::is_terminal(&std::io::stderr()) {
        return None;
    }
    let (stop, stopped) = channel();
    let (socket, cwd) = (socket.to_owned(), cwd.to_owned());
    let thread = std::thread::spawn(move || follow(&socket, &cwd, &token, &stopped));
    Some(Bar { stop: Some(stop), thread: Some(thread) })
}

impl Drop for Bar {
    fn drop(&mut self) {
        drop(self.stop.take());
        let drew = self.thread.take().is_some_and(|t| t.join().unwrap_or(false));
        if drew {
            let _ = write!(std::io::stderr(), "\r\x1b[2K");
        }
    }
}

/// Draws until `stopped` hears from the caller (or it hangs up); true if it drew anything.
fn follow(socket: &Path, cwd: &Path, token: &str, stopped: &Receiver<()>) -> bool {
    if stopped.recv_timeout(QUIET_FOR) != Err(RecvTimeoutError::Timeout) {
        return false;
    }
    let Ok(mut d) = Daemon::connect(socket) else { return false };
    let hello = Hello { client: "booger-progress", project: Some(cwd), session: "cli", register: false, tools: None };
    if d.hello(&hello).is_err() {
        return false;
    }
    let mut drew = false;
    loop {
        let Ok(reply) = d.call(wire::PROGRESS, json!({ "token": token })) else { return drew };
        if let Ok(p) = serde_json::from_value::<Progress>(reply) {
            draw(&p);
            drew = true;
        }
        if stopped.recv_timeout(EVERY) != Err(RecvTimeoutError::Timeout) {
            return drew;
        }
    }
}

fn draw(p: &Progress) {
    let width = 30;
    let filled = (p.done.min(p.total) * width).checked_div(p.total).unwrap_or(0) as usize;
    let bar: String = "#".repeat(filled) + &".".repeat(width as usize - filled);
    let mut line = format!("\r\x1b[2K[{bar}] {}/{} {}", p.done, p.total, p.unit);
    if let Some(r) = p.per_s {
        line.push_str(&format!("  {r:.0} {}/s", p.unit));
    }
    if let Some(eta) = p.eta_s {
        line.push_str(&format!("  ETA {eta}s"));
    }
    let _ = write!(std::io::stderr(), "{line}");
}
