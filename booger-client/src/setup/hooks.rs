//! `booger setup CLIENT --hooks`: the hooks that route an agent's own grep through booger's
//! index and tell a new session that booger is there (the daemon's `fronts/hook.rs` answers
//! them), for the clients whose hooks allow it: Claude Code and Gemini CLI.
//!
//! They live in the client's settings (`~/.claude/settings.json`, `~/.gemini/settings.json`,
//! or the project's), under `hooks`: one group for the client's grep tool, one for the start
//! of a session. Setup appends its groups to whatever the user has there and knows them again
//! by their command (`… hook CLIENT`); `--remove` gives the file back byte for byte through
//! the ledger, or takes only booger's groups out of a file changed since (or that holds
//! booger's MCP entry too, as Gemini CLI's one settings file does).

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use super::edit::{Unparsable, cst_value, json_parse as parse};
use crate::output::{complain, say};

/// A client whose hooks setup writes.
pub struct HookClient {
    pub id: &'static str,
    /// Its settings file, under the home directory or the project.
    settings: &'static str,
    /// The event before a tool runs, and what matches the client's grep tool.
    before_tool: (&'static str, &'static str),
    /// The event a session starts with, and what it matches (none: every start).
    session: (&'static str, Option<&'static str>),
    /// How long the client lets a hook run, in its own unit (seconds or milliseconds).
    timeout: u64,
}

pub const CLIENTS: &[HookClient] = &[
    HookClient {
        id: "claude-code",
        settings: ".claude/settings.json",
        before_tool: ("PreToolUse", "Grep"),
        session: ("SessionStart", Some("startup|resume|clear|compact")),
        timeout: 10,
    },
    HookClient {
        id: "gemini",
        settings: ".gemini/settings.json",
        before_tool: ("BeforeTool", "grep_search|search_file_content"),
        session: ("SessionStart", None),
        timeout: 10_000,
    },
];

pub fn find(id: &str) -> Option<&'static HookClient> {
    CLIENTS.iter().find(|c| c.id == id)
}

impl HookClient {
    /// Where the client keeps its hooks: the user's settings or the project's.
    pub fn settings_path(&self, home: &Path, project: Option<&Path>) -> PathBuf {
        project.unwrap_or(home).join(self.settings)
    }

    /// The command its hooks run: `booger hook CLIENT`, with the variables that pick this
    /// user's daemon when this shell sets them (hooks run through a shell).
    pub fn command(&self, booger: &Path, env: &[(String, String)]) -> String {
        let mut words: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))).collect();
        words.push(shell_quote(&booger.to_string_lossy()));
        words.push(format!("hook {}", self.id));
        words.join(" ")
    }

    /// The groups setup writes, by event.
    fn groups(&self, command: &str) -> [(&'static str, Value); 2] {
        let hook = json!([{ "type": "command", "command": command, "timeout": self.timeout }]);
        let (tool_event, tool) = self.before_tool;
        let (start, matcher) = self.session;
        let session = match matcher {
            Some(m) => json!({ "matcher": m, "hooks": hook }),
            None => json!({ "hooks": hook }),
        };
        [(tool_event, json!({ "matcher": tool, "hooks": hook })), (start, session)]
    }

    /// Whether a group is setup's: one of its hooks runs `… hook CLIENT`.
    fn is_ours(&self, group: &Value) -> bool {
        let ends = format!("hook {}", self.id);
        group["hooks"]
            .as_array()
            .is_some_and(|hs| hs.iter().any(|h| h["command"].as_str().is_some_and(|c| c.trim_end().ends_with(&ends))))
    }

    /// `text` with booger's hook groups in it (an older group of booger's replaced), or None
    /// when it already has them as they would be written.
    pub fn add(&self, text: &str, command: &str) -> Result<Option<String>, Unparsable> {
        let root = parse(text)?;
        let hooks = root
            .object_value_or_set()
            .object_value_or_create("hooks")
            .ok_or_else(|| Unparsable("its `hooks` is not an object".into()))?;
        let mut changed = false;
        for (event, group) in self.groups(command) {
            let list = hooks
                .array_value_or_create(event)
                .ok_or_else(|| Unparsable(format!("its `hooks.{event}` is not a list")))?;
            let ours: Vec<_> =
                list.elements().into_iter().filter(|e| e.to_serde_value().is_some_and(|v| self.is_ours(&v))).collect();
            if ours.len() == 1 && ours[0].to_serde_value().as_ref() == Some(&group) {
                continue;
            }
            for old in ours {
                old.remove();
            }
            list.append(cst_value(&group));
            changed = true;
        }
        Ok(changed.then(|| root.to_string()))
    }

    /// `text` without booger's hook groups (and without a list or `hooks` they leave empty), or
    /// None when it has none.
    pub fn remove(&self, text: &str) -> Result<Option<String>, Unparsable> {
        let root = parse(text)?;
        let Some(hooks) = root.object_value().and_then(|o| o.object_value("hooks")) else { return Ok(None) };
        let mut changed = false;
        for prop in hooks.properties() {
            let Some(list) = prop.value().and_then(|v| v.as_array()) else { continue };
            for e in list.elements() {
                if e.to_serde_value().is_some_and(|v| self.is_ours(&v)) {
                    e.remove();
                    changed = true;
                }
            }
            if list.elements().is_empty() {
                prop.remove();
            }
        }
        if hooks.properties().is_empty()
            && let Some(p) = root.object_value().and_then(|o| o.get("hooks"))
        {
            p.remove();
        }
        Ok(changed.then(|| root.to_string()))
    }

    /// Whether `text` holds booger's hooks as `command` would write them.
    pub fn present(&self, text: &str, command: &str) -> bool {
        matches!(self.add(text, command), Ok(None))
    }
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

impl super::Setup {
    /// Writes (or with `remove`, takes out) booger's hooks in the settings of the clients
    /// in `targets` that take them.
    pub(super) fn hooks(&mut self, project: Option<&Path>, targets: &[&str], remove: bool, print: bool) {
        let chosen: Vec<&HookClient> = targets.iter().filter_map(|t| find(t)).collect();
        if chosen.is_empty() && !remove {
            let ids: Vec<&str> = CLIENTS.iter().map(|c| c.id).collect();
            say!(
                "--hooks: no hooks written: {} take them (name one: booger setup claude-code --hooks)",
                ids.join(" and ")
            );
        }
        for c in chosen {
            self.client_hooks(c, project, remove, print);
        }
    }

    fn client_hooks(&mut self, c: &HookClient, project: Option<&Path>, remove: bool, print: bool) {
        let path = c.settings_path(&self.dirs.home, project);
        let within = project.map_or_else(|| self.dirs.home.clone(), Path::to_path_buf);
        let shown = self.dirs.show(&path);
        let real = match super::target::editable(&path, &within) {
            Ok(real) => real,
            Err(why) => return self.refuse_hooks(c, &shown, &why),
        };
        let old = match super::target::read(&real) {
            Ok(old) => old,
            Err(e) => return self.refuse_hooks(c, &shown, &format!("cannot read it: {e}")),
        };
        let Ok(text) = String::from_utf8(old.clone().unwrap_or_default()) else {
            return self.refuse_hooks(c, &shown, "it is not UTF-8 text");
        };
        let command = c.command(&super::booger_path(), &super::carried_env());
        let edited = if remove { c.remove(&text) } else { c.add(&text, &command) };
        let new = match edited {
            // A file setup never wrote and cannot read holds no hooks of setup's.
            Err(_) if remove && !self.ledger.knows(&real) => return,
            Err(e) => return self.refuse_hooks(c, &shown, &e.0),
            Ok(None) if remove => return,
            Ok(None) => return say!("{}: {shown} already has booger's hooks; unchanged", c.id),
            Ok(Some(new)) => new,
        };
        if print {
            say!("{}: would change {shown}:", c.id);
            return super::print_diff(&text, &new);
        }
        // booger's MCP entry in the same file (Gemini CLI's) stays when only the hooks go.
        let keeps_entry = [super::edit::SERVER_NAME, super::edit::REMOTE_NAME].iter().any(|name| {
            matches!(super::edit::current(super::clients::Format::Json, "mcpServers", name, &new), Ok(Some(_)))
        });
        let done = if remove && !keeps_entry {
            match self.ledger.undo(&real) {
                Ok(super::Undo::Restored) => Ok("restored as it was before setup:"),
                Ok(super::Undo::EditOut) => super::ledger::replace_file(&real, new.as_bytes())
                    .and_then(|()| self.ledger.forget(&real))
                    .map(|()| "took booger's hooks out of"),
                Err(e) => Err(e),
            }
        } else {
            let what =
                if remove { "took booger's hooks out of" } else { "added booger's grep and session-start hooks to" };
            self.ledger.write(&format!("{}-hooks", c.id), &real, old.as_deref(), &new).map(|()| what)
        };
        match done {
            Ok(what) => {
                self.changed += 1;
                say!("{}: {what} {shown}", c.id);
            }
            Err(e) => {
                self.failed = true;
                complain!("{}: could not write {shown}: {e}", c.id);
            }
        }
    }

    fn refuse_hooks(&mut self, c: &HookClient, shown: &str, why: &str) {
        self.failed = true;
        complain!("{}: left {shown} untouched: {why}. Fix the file (or move it away), then run setup again.", c.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/opt/bin/booger hook claude-code";

    fn claude() -> &'static HookClient {
        find("claude-code").unwrap()
    }

    fn value(text: &str) -> Value {
        parse(text).unwrap().value().and_then(|v| v.to_serde_value()).unwrap_or(Value::Null)
    }

    #[test]
    fn adds_beside_the_users_hooks_and_takes_only_its_own_out() {
        let text = "{\n  // mine\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      { \"matcher\": \"Bash\", \"hooks\": [{ \"type\": \"command\", \"command\": \"check.sh\" }] }\n    ]\n  }\n}\n";
        let added = claude().add(text, CMD).unwrap().unwrap();
        let v: Value = value(&added);
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash", "{added}");
        assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "Grep", "{added}");
        assert_eq!(v["hooks"]["SessionStart"][0]["hooks"][0]["command"], CMD, "{added}");
        assert!(added.contains("// mine"), "{added}");
        assert_eq!(claude().add(&added, CMD).unwrap(), None, "a second add changes nothing");
        assert!(claude().present(&added, CMD));
        // Another booger path replaces the group instead of adding a second.
        let moved = claude().add(&added, "/usr/bin/booger hook claude-code").unwrap().unwrap();
        let v: Value = value(&moved);
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2, "{moved}");
        let removed = claude().remove(&added).unwrap().unwrap();
        let v: Value = value(&removed);
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 1, "{removed}");
        assert!(v["hooks"].get("SessionStart").is_none(), "{removed}");
        assert_eq!(claude().remove(&removed).unwrap(), None);
    }

    #[test]
    fn from_nothing_and_back_and_refusals() {
        let added = claude().add("", CMD).unwrap().unwrap();
        let removed = claude().remove(&added).unwrap().unwrap();
        let v: Value = value(&removed);
        assert!(v.get("hooks").is_none(), "{removed}");
        assert!(claude().add("{\"hooks\": []}", CMD).is_err());
        assert!(claude().add("{\"hooks\": {\"PreToolUse\": {}}}", CMD).is_err());
        assert!(claude().add("{ \"hooks\": ", CMD).is_err());
    }

    #[test]
    fn commands_quote_what_a_shell_would_split() {
        let env = [("BOOGER_HOME".to_owned(), "/home/a b/.booger".to_owned())];
        assert_eq!(
            claude().command(Path::new("/opt/it's/booger"), &env),
            r"BOOGER_HOME='/home/a b/.booger' '/opt/it'\''s/booger' hook claude-code"
        );
    }
}
