//! `booger hook claude-code|gemini`: what the clients' hooks run (`booger setup --hooks` writes
//! them). The client sends the hook's event as JSON on stdin; this forwards it to the daemon
//! (`booger/hook`, which decides whether and how to answer) and prints the answer, in the
//! client's hook protocol, on stdout.
//!
//! With no daemon running, or on any failure, it prints nothing and exits 0: the client then
//! goes on as without the hook. A hook never starts the daemon and never blocks the agent.

use std::io::Read;
use std::path::Path;

use booger_proto::wire;
use serde_json::{Value, json};

use crate::connect::{Daemon, Hello};
use crate::output::{Exit, complain, say};

pub const USAGE: &str = "usage: booger hook claude-code|gemini  (reads the hook's event on stdin)

What the hooks of Claude Code and Gemini CLI run; `booger setup CLIENT --hooks` writes them.
Their grep in a project booger indexes is answered from the index; a new session is told
booger is there. Prints nothing (and the client's own tool runs) when booger cannot answer
exactly.";

pub fn run(socket: &Path, args: &[String]) -> Exit {
    let Some(client @ ("claude-code" | "gemini")) = args.first().map(String::as_str) else {
        complain!("{USAGE}");
        return Exit::Usage;
    };
    let mut input = String::new();
    if std::io::stdin().take(1 << 20).read_to_string(&mut input).is_err() {
        return Exit::Ok;
    }
    let Ok(event) = serde_json::from_str::<Value>(&input) else { return Exit::Ok };
    let Ok(mut daemon) = Daemon::connect(socket) else { return Exit::Ok };
    let hello = Hello { client: "booger-hook", project: None, session: "hook", register: false, tools: None };
    let answer = daemon.hello_and_call(&hello, wire::HOOK, json!({ "client": client, "event": event }));
    if let Some(output) = answer.ok().as_ref().and_then(|a| a["output"].as_str()) {
        say!("{output}");
    }
    Exit::Ok
}
