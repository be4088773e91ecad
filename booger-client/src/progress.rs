//! A progress bar for `booger index` on a terminal.
//!
//! The index call blocks its connection, so a second connection polls the project's `status`
//! (which reports live progress) and draws one line on stderr until the call returns.

use std::io::Write;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use booger_proto::wire;
use serde_json::{Value, json};

use crate::connect::{Daemon, Hello};

pub struct Bar {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

/// Starts drawing if stderr is a terminal; `project` is what `status` should look at.
pub fn start(socket: &Path, cwd: &Path, project: String) -> Option<Bar> {
    // SAFETY: isatty only inspects the descriptor.
    if unsafe { libc::isatty(2) } != 1 {
        return None;
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (socket, cwd, flag) = (socket.to_owned(), cwd.to_owned(), Arc::clone(&stop));
    let thread = std::thread::spawn(move || poll(&socket, &cwd, &project, &flag));
    Some(Bar { stop, thread: Some(thread) })
}

impl Drop for Bar {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = write!(std::io::stderr(), "\r\x1b[2K");
    }
}

fn poll(socket: &Path, cwd: &Path, project: &str, stop: &AtomicBool) {
    let Ok(mut d) = Daemon::connect(socket) else { return };
    let hello = Hello { client: "booger-progress", project: Some(cwd), session: "cli", register: false, tools: None };
    if d.hello(&hello).is_err() {
        return;
    }
    while !stop.load(Ordering::SeqCst) {
        std::thread::sleep(Duration::from_millis(150));
        let args = json!({ "tool": "status", "arguments": { "project": project } });
        let Ok(reply) = d.call(wire::CALL, args) else { return };
        let p = &reply["data"]["project"]["index"]["progress"];
        if p.is_object() && !stop.load(Ordering::SeqCst) {
            draw(p);
        }
    }
}

fn draw(p: &Value) {
    let done = p["done"].as_u64().unwrap_or(0);
    let total = p["total"].as_u64().unwrap_or(0).max(1);
    let width = 30;
    let filled = (done * width / total) as usize;
    let bar: String = "#".repeat(filled) + &".".repeat(width as usize - filled);
    let _ = write!(
        std::io::stderr(),
        "\r\x1b[2K[{bar}] {done}/{total} files  {:.0} files/s  ETA {}s",
        p["files_per_s"].as_f64().unwrap_or(0.0),
        p["eta_s"].as_u64().unwrap_or(0)
    );
}
