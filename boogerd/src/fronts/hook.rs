//! The clients' hooks (`booger setup CLIENT --hooks` writes them; `booger hook CLIENT`
//! forwards each event here as `booger/hook` and prints the answer): Claude Code and Gemini
//! CLI.
//!
//! - Before the client's grep tool runs (Claude Code's `PreToolUse` of `Grep`, Gemini CLI's
//!   `BeforeTool` of `grep_search`) in a project booger indexes and keeps fresh: grep answers
//!   it from the index, with the lines rg would print, and the client's own tool does not run
//!   (the answer travels as the reason of a `deny`, which the agent reads as the tool's
//!   result).
//! - `SessionStart`: a few lines telling the agent that booger indexes this project.
//!
//! Anything else — a project booger does not index or has not caught up with, options grep
//! does not have (multiline, file types, globs), an answer too large to be whole, any
//! failure — answers nothing: the client goes on as without the hook.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use booger_proto::wire::ToolReply;
use serde_json::{Value, json};

use crate::base::sync::Recover;
use crate::engine::Daemon;
use crate::tools::{self, Session};

/// Matches fetched at most: an answer that needs more is left to the client's own Grep.
const MAX_LINES: usize = 1000;

/// What the hook prints for `event` from `client`, if anything.
pub(crate) async fn answer(daemon: Arc<Daemon>, client: &str, event: &Value) -> Option<String> {
    let client = match client {
        "claude-code" => Client::ClaudeCode,
        "gemini" => Client::Gemini,
        _ => return None,
    };
    let cwd = PathBuf::from(event["cwd"].as_str()?);
    // A session of its own per event: one agent's grep does not queue behind another's (a
    // session runs one heavy call at a time).
    static EVENTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = EVENTS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let session = Session {
        id: format!("hook-{n}"),
        project: Some(cwd.clone()),
        register: false,
        shell: false,
        measuring: false,
        read_only: true,
    };
    // A registered project holds the directory (the registry finds it by any path inside).
    let root = daemon.registry.read().recover().find(&cwd.to_string_lossy())?.root.clone();
    let tool = event["tool_name"].as_str().unwrap_or_default();
    let ask = match (client, event["hook_event_name"].as_str()?) {
        (Client::ClaudeCode, "PreToolUse") if tool == "Grep" => Ask::from(&event["tool_input"])?,
        (Client::Gemini, "BeforeTool") if matches!(tool, "grep_search" | "search_file_content") => {
            Ask::from_gemini(&event["tool_input"])?
        }
        (_, "SessionStart") => return session_start(daemon, session).await,
        _ => return None,
    };
    let reason = grep(daemon, session, &cwd, &root, ask).await?;
    Some(
        match client {
            Client::ClaudeCode => json!({ "hookSpecificOutput": {
                "hookEventName": "PreToolUse",
                "permissionDecision": "deny",
                "permissionDecisionReason": reason,
            }}),
            Client::Gemini => json!({ "decision": "deny", "reason": reason }),
        }
        .to_string(),
    )
}

/// The clients whose hooks booger answers.
#[derive(Clone, Copy)]
enum Client {
    ClaudeCode,
    Gemini,
}

/// A client's grep, answered from the index when the answer can be rg's: the text the agent
/// reads.
async fn grep(daemon: Arc<Daemon>, session: Session, cwd: &Path, root: &Path, ask: Ask) -> Option<String> {
    let mut arguments = json!({
        "pattern": ask.pattern,
        "case_insensitive": ask.case_insensitive,
        "context": ask.context,
        "head_limit": MAX_LINES,
        "max_tokens": 20_000,
    });
    if let Some(path) = &ask.path {
        // As the agent gave it: rebased onto the project (one outside it is refused).
        arguments["path_prefix"] = json!(cwd.join(path).to_string_lossy());
    }
    let reply = tools::call(daemon, session, "grep", arguments, None).await.ok()?;
    let data = &reply.data;
    let fresh = data["index"]["state"] == "watching" && data["index"]["pending_count"] == 0;
    if reply.is_error || !fresh || data["complete"] != true {
        return None;
    }
    let body = ask.render(&reply, root)?;
    let name = data["project"].as_str().unwrap_or_default();
    Some(format!(
        "Grep answered by booger from its up-to-date index of {name} (the lines rg finds, except in files booger \
         does not index, such as generated or very large ones: `booger status` lists them):\n{body}"
    ))
}

/// What a Grep call asks, as far as booger's grep can answer it exactly.
struct Ask {
    pattern: String,
    path: Option<PathBuf>,
    mode: Mode,
    case_insensitive: bool,
    context: u64,
    head_limit: Option<usize>,
    offset: usize,
}

#[derive(PartialEq)]
enum Mode {
    Files,
    Content,
    Count,
}

impl Ask {
    /// Gemini CLI's `grep_search` (`pattern`, `dir_path`, `include`): matching lines; a glob
    /// filter is left to the client.
    fn from_gemini(input: &Value) -> Option<Ask> {
        if input.get("include").is_some_and(|g| !g.is_null()) {
            return None;
        }
        let path = input.get("dir_path").or_else(|| input.get("path")).and_then(Value::as_str);
        Some(Ask {
            pattern: input["pattern"].as_str().filter(|p| !p.is_empty())?.to_owned(),
            path: path.filter(|p| !p.is_empty()).map(PathBuf::from),
            mode: Mode::Content,
            case_insensitive: false,
            context: 0,
            head_limit: None,
            offset: 0,
        })
    }

    /// Claude Code's Grep; None for what booger's grep does not do the same way.
    fn from(input: &Value) -> Option<Ask> {
        let flag = |k: &str| input.get(k).and_then(Value::as_bool).unwrap_or(false);
        let number = |k: &str| input.get(k).and_then(Value::as_u64);
        if flag("multiline")
            || input.get("glob").is_some_and(|g| !g.is_null())
            || input.get("type").is_some_and(|t| !t.is_null())
        {
            return None;
        }
        let mode = match input["output_mode"].as_str().unwrap_or("files_with_matches") {
            "files_with_matches" => Mode::Files,
            "content" => Mode::Content,
            "count" => Mode::Count,
            _ => return None,
        };
        // One context on both sides, as booger's grep shows it (rg's -A and -B apart are not).
        let (after, before, around) = (number("-A"), number("-B"), number("-C").or(number("context")));
        let context = match (after, before, around) {
            (None, None, c) => c.unwrap_or(0),
            (a, b, None) if a == b => a.unwrap_or(0),
            _ => return None,
        };
        if context > 20 || (context > 0 && mode != Mode::Content) {
            return None;
        }
        Some(Ask {
            pattern: input["pattern"].as_str().filter(|p| !p.is_empty())?.to_owned(),
            path: input["path"].as_str().filter(|p| !p.is_empty()).map(PathBuf::from),
            mode,
            case_insensitive: flag("-i"),
            context,
            head_limit: number("head_limit").filter(|&n| n > 0).map(|n| n as usize),
            offset: number("offset").unwrap_or(0) as usize,
        })
    }

    /// The answer as the client's Grep shows it, paths absolute; None if it cannot be whole.
    fn render(&self, reply: &ToolReply, root: &Path) -> Option<String> {
        let results = reply.data["results"].as_array()?;
        let at = |path: &str| root.join(path).to_string_lossy().into_owned();
        let entries: Vec<String> = match self.mode {
            Mode::Files | Mode::Count => {
                // Per file, in the order first met (a file's lines need not come together).
                let mut counts: Vec<(&str, u64)> = Vec::new();
                let mut at_index: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
                for path in results.iter().filter_map(|r| r["path"].as_str()) {
                    match at_index.get(path) {
                        Some(&i) => counts[i].1 += 1,
                        None => {
                            at_index.insert(path, counts.len());
                            counts.push((path, 1));
                        }
                    }
                }
                let files = counts.into_iter();
                if self.mode == Mode::Files {
                    files.map(|(p, _)| at(p)).collect()
                } else {
                    files.map(|(p, n)| format!("{}:{n}", at(p))).collect()
                }
            }
            // With context, booger's text holds the context lines (`path-N-text`) and `--`.
            Mode::Content if self.context > 0 => {
                reply.text.lines().skip(1).map(|l| if l == "--" { l.to_owned() } else { at(l) }).collect()
            }
            Mode::Content => results
                .iter()
                .map(|r| {
                    format!(
                        "{}:{}:{}",
                        at(r["path"].as_str().unwrap_or_default()),
                        r["line"],
                        r["text"].as_str().unwrap_or_default()
                    )
                })
                .collect(),
        };
        let total = entries.len();
        let shown: Vec<String> =
            entries.into_iter().skip(self.offset).take(self.head_limit.unwrap_or(usize::MAX)).collect();
        Some(match self.mode {
            Mode::Files if total == 0 => "No files found".to_owned(),
            Mode::Files => format!("Found {total} file{}\n{}", if total == 1 { "" } else { "s" }, shown.join("\n")),
            _ if total == 0 => "No matches found".to_owned(),
            _ => shown.join("\n"),
        })
    }
}

/// A new session hears that booger indexes its project, and how fresh the index is.
async fn session_start(daemon: Arc<Daemon>, session: Session) -> Option<String> {
    let reply = tools::call(daemon, session, "status", json!({}), None).await.ok()?;
    let project = &reply.data["project"];
    let (name, files) = (project["name"].as_str()?, project["index"]["files"].as_u64()?);
    let fresh = if project["index"]["watch"]["state"] == "watching" {
        "kept up to date as files change"
    } else {
        "updated when `booger index` runs"
    };
    let context = format!(
        "booger indexes this project ({name}: {files} files, {fresh}). Its MCP tools answer from that index in \
         fewer tokens than reading files: search (code by words or a question), symbols (outline a file or \
         folder), references (where a name is defined and used), grep (exact lines). This session's Grep is \
         answered from the same index when it can be."
    );
    Some(json!({ "hookSpecificOutput": { "hookEventName": "SessionStart", "additionalContext": context } }).to_string())
}
