//! `booger setup claude-code --hooks`: Claude Code's hooks that route the agent's own Grep
//! through booger's index and tell a new session that booger is there (see `crate::hook` for
//! what they answer).
//!
//! They live in Claude Code's settings (`~/.claude/settings.json`, or the project's
//! `.claude/settings.json`), under `hooks`: one group for `PreToolUse` matching `Grep`, one
//! for `SessionStart`. Setup appends its groups to whatever the user has there and knows them
//! again by their command (`… hook claude-code`); `--remove` gives the file back byte for
//! byte through the ledger, or takes only booger's groups out of a file changed since.

use std::path::{Path, PathBuf};

use jsonc_parser::cst::CstInputValue;
use serde_json::{Value, json};

use super::edit::{Unparsable, json_parse as parse};
use crate::output::{complain, say};

/// The clients whose hooks setup writes.
pub const CLIENTS: &[&str] = &["claude-code"];

/// The hook command's last words: how setup knows its own groups again.
const SUBCOMMAND: &str = "hook claude-code";

/// Where Claude Code keeps the hooks: the user's settings or the project's.
pub fn settings_path(home: &Path, project: Option<&Path>) -> PathBuf {
    match project {
        Some(root) => root.join(".claude/settings.json"),
        None => home.join(".claude/settings.json"),
    }
}

/// The command a hook runs: `booger hook claude-code`, with the variables that pick this
/// user's daemon when this shell sets them (hooks run through a shell).
pub fn command(booger: &Path, env: &[(String, String)]) -> String {
    let mut words: Vec<String> = env.iter().map(|(k, v)| format!("{k}={}", shell_quote(v))).collect();
    words.push(shell_quote(&booger.to_string_lossy()));
    words.push(SUBCOMMAND.to_owned());
    words.join(" ")
}

fn shell_quote(s: &str) -> String {
    if s.chars().all(|c| c.is_ascii_alphanumeric() || "/._-+=:,@".contains(c)) {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

/// The groups setup writes, by event.
fn groups(command: &str) -> [(&'static str, Value); 2] {
    let hook = json!([{ "type": "command", "command": command, "timeout": 10 }]);
    [
        ("PreToolUse", json!({ "matcher": "Grep", "hooks": hook })),
        ("SessionStart", json!({ "matcher": "startup|resume|clear|compact", "hooks": hook })),
    ]
}

/// Whether a group is setup's: one of its hooks runs `… hook claude-code`.
fn is_ours(group: &Value) -> bool {
    group["hooks"]
        .as_array()
        .is_some_and(|hs| hs.iter().any(|h| h["command"].as_str().is_some_and(|c| c.trim_end().ends_with(SUBCOMMAND))))
}

/// `text` with booger's hook groups in it (an older group of booger's replaced), or None
/// when it already has them as they would be written.
pub fn add(text: &str, command: &str) -> Result<Option<String>, Unparsable> {
    let root = parse(text)?;
    let hooks = root
        .object_value_or_set()
        .object_value_or_create("hooks")
        .ok_or_else(|| Unparsable("its `hooks` is not an object".into()))?;
    let mut changed = false;
    for (event, group) in groups(command) {
        let list = hooks
            .array_value_or_create(event)
            .ok_or_else(|| Unparsable(format!("its `hooks.{event}` is not a list")))?;
        let ours: Vec<_> =
            list.elements().into_iter().filter(|e| e.to_serde_value().is_some_and(|v| is_ours(&v))).collect();
        if ours.len() == 1 && ours[0].to_serde_value().as_ref() == Some(&group) {
            continue;
        }
        for old in ours {
            old.remove();
        }
        list.append(input(&group));
        changed = true;
    }
    Ok(changed.then(|| root.to_string()))
}

/// `text` without booger's hook groups (and without a list or `hooks` they leave empty), or
/// None when it has none.
pub fn remove(text: &str) -> Result<Option<String>, Unparsable> {
    let root = parse(text)?;
    let Some(hooks) = root.object_value().and_then(|o| o.object_value("hooks")) else { return Ok(None) };
    let mut changed = false;
    for prop in hooks.properties() {
        let Some(list) = prop.value().and_then(|v| v.as_array()) else { continue };
        for e in list.elements() {
            if e.to_serde_value().is_some_and(|v| is_ours(&v)) {
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
pub fn present(text: &str, command: &str) -> bool {
    matches!(add(text, command), Ok(None))
}

fn input(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(input).collect()),
        // The order a person writes a hook in: what it matches, then what it runs.
        Value::Object(map) => {
            const ORDER: [&str; 5] = ["matcher", "type", "command", "timeout", "hooks"];
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
            CstInputValue::Object(fields.into_iter().map(|(k, v)| (k.clone(), input(v))).collect())
        }
    }
}

impl super::Setup {
    /// Writes (or with `remove`, takes out) booger's hooks in the settings of the clients
    /// in `targets` that take them.
    pub(super) fn hooks(&mut self, project: Option<&Path>, targets: &[&str], remove: bool, print: bool) {
        if !targets.iter().any(|t| CLIENTS.contains(t)) {
            if !remove {
                say!(
                    "--hooks: only {} takes booger's hooks so far; nothing written for the others",
                    CLIENTS.join(", ")
                );
            }
            return;
        }
        let path = settings_path(&self.dirs.home, project);
        let within = project.map_or_else(|| self.dirs.home.clone(), Path::to_path_buf);
        let shown = self.dirs.show(&path);
        let real = match super::target::editable(&path, &within) {
            Ok(real) => real,
            Err(why) => return self.refuse_hooks(&shown, &why),
        };
        let old = match super::target::read(&real) {
            Ok(old) => old,
            Err(e) => return self.refuse_hooks(&shown, &format!("cannot read it: {e}")),
        };
        let Ok(text) = String::from_utf8(old.clone().unwrap_or_default()) else {
            return self.refuse_hooks(&shown, "it is not UTF-8 text");
        };
        let command = command(&super::booger_path(), &super::carried_env());
        let edited = if remove { self::remove(&text) } else { add(&text, &command) };
        let new = match edited {
            // A file setup never wrote and cannot read holds no hooks of setup's.
            Err(_) if remove && !self.ledger.knows(&real) => return,
            Err(e) => return self.refuse_hooks(&shown, &e.0),
            Ok(None) if remove => return,
            Ok(None) => return say!("claude-code: {shown} already has booger's hooks; unchanged"),
            Ok(Some(new)) => new,
        };
        if print {
            say!("claude-code: would change {shown}:");
            return super::print_diff(&text, &new);
        }
        let done = if remove {
            match self.ledger.undo(&real) {
                Ok(super::Undo::Restored) => Ok("restored as it was before setup:"),
                Ok(super::Undo::EditOut) => super::ledger::replace_file(&real, new.as_bytes())
                    .and_then(|()| self.ledger.forget(&real))
                    .map(|()| "took booger's hooks out of"),
                Err(e) => Err(e),
            }
        } else {
            self.ledger
                .write("claude-code-hooks", &real, old.as_deref(), &new)
                .map(|()| "added booger's Grep and session-start hooks to")
        };
        match done {
            Ok(what) => {
                self.changed += 1;
                say!("claude-code: {what} {shown}");
            }
            Err(e) => {
                self.failed = true;
                complain!("claude-code: could not write {shown}: {e}");
            }
        }
    }

    fn refuse_hooks(&mut self, shown: &str, why: &str) {
        self.failed = true;
        complain!("claude-code: left {shown} untouched: {why}. Fix the file (or move it away), then run setup again.");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const CMD: &str = "/opt/bin/booger hook claude-code";

    fn value(text: &str) -> Value {
        parse(text).unwrap().value().and_then(|v| v.to_serde_value()).unwrap_or(Value::Null)
    }

    #[test]
    fn adds_beside_the_users_hooks_and_takes_only_its_own_out() {
        let text = "{\n  // mine\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"PreToolUse\": [\n      { \"matcher\": \"Bash\", \"hooks\": [{ \"type\": \"command\", \"command\": \"check.sh\" }] }\n    ]\n  }\n}\n";
        let added = add(text, CMD).unwrap().unwrap();
        let v: Value = value(&added);
        assert_eq!(v["hooks"]["PreToolUse"][0]["matcher"], "Bash", "{added}");
        assert_eq!(v["hooks"]["PreToolUse"][1]["matcher"], "Grep", "{added}");
        assert_eq!(v["hooks"]["SessionStart"][0]["hooks"][0]["command"], CMD, "{added}");
        assert!(added.contains("// mine"), "{added}");
        assert_eq!(add(&added, CMD).unwrap(), None, "a second add changes nothing");
        assert!(present(&added, CMD));
        // Another booger path replaces the group instead of adding a second.
        let moved = add(&added, "/usr/bin/booger hook claude-code").unwrap().unwrap();
        let v: Value = value(&moved);
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 2, "{moved}");
        let removed = remove(&added).unwrap().unwrap();
        let v: Value = value(&removed);
        assert_eq!(v["hooks"]["PreToolUse"].as_array().unwrap().len(), 1, "{removed}");
        assert!(v["hooks"].get("SessionStart").is_none(), "{removed}");
        assert_eq!(remove(&removed).unwrap(), None);
    }

    #[test]
    fn from_nothing_and_back_and_refusals() {
        let added = add("", CMD).unwrap().unwrap();
        let removed = remove(&added).unwrap().unwrap();
        let v: Value = value(&removed);
        assert!(v.get("hooks").is_none(), "{removed}");
        assert!(add("{\"hooks\": []}", CMD).is_err());
        assert!(add("{\"hooks\": {\"PreToolUse\": {}}}", CMD).is_err());
        assert!(add("{ \"hooks\": ", CMD).is_err());
    }

    #[test]
    fn commands_quote_what_a_shell_would_split() {
        let env = [("BOOGER_HOME".to_owned(), "/home/a b/.booger".to_owned())];
        assert_eq!(
            command(Path::new("/opt/it's/booger"), &env),
            r"BOOGER_HOME='/home/a b/.booger' '/opt/it'\''s/booger' hook claude-code"
        );
    }
}
