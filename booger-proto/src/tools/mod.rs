//! The tool catalogue: every tool is declared here once.
//!
//! From a [`ToolSpec`] the daemon derives the MCP `tools/list` entry ([`ToolSpec::input_schema`])
//! and validates every call ([`ToolSpec::validate`]); the client derives the command line
//! `booger <tool> ...` ([`ToolSpec::parse_cli`], [`ToolSpec::usage`]). The handlers live in the
//! daemon, keyed by the same names; a daemon test checks that each spec has exactly one.

use serde_json::{Map, Value, json};

pub mod args;
mod catalogue;
pub(crate) mod params;
mod profile;
mod sets;
mod team;

pub use catalogue::*;
pub use profile::Profile;
pub use sets::*;

/// The longest string argument a tool takes (a pattern, a note, a path), in characters:
/// enough for any real one. A query ([`Kind::Text`]) has no such limit: agents paste whole
/// issue reports and tracebacks, and search reads them for what carries weight.
pub const MAX_STRING_CHARS: usize = 4_096;

/// The type of one argument.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Kind {
    String,
    /// Free text of any length up to the message limit: a query, which may be a pasted issue
    /// report, traceback or log.
    Text,
    Integer {
        min: i64,
        max: i64,
    },
    Boolean,
    /// A number (fractions allowed) within a range.
    Number {
        min: f64,
        max: f64,
    },
    /// A string from a fixed set.
    Enum(&'static [&'static str]),
    /// A list of strings; on the command line, the rest of the positionals or a repeated flag.
    Strings,
    /// A list of tool calls `{"tool": name, "arguments": {...}}` (batch); on the command line,
    /// one JSON array.
    Calls,
}

#[derive(Debug, Clone, Copy)]
pub struct Param {
    pub name: &'static str,
    pub kind: Kind,
    pub required: bool,
    /// Given without a flag on the command line, in declaration order.
    pub positional: bool,
    pub description: &'static str,
}

#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    pub name: &'static str,
    /// A few words for people (MCP `title`, shown by clients beside the name).
    pub title: &'static str,
    /// One line, for `booger help`.
    pub summary: &'static str,
    /// What an agent reads in `tools/list`: when to use the tool and what it returns, short.
    pub description: &'static str,
    /// The rest, for `booger help TOOL` and the agent skill.
    pub details: &'static str,
    pub params: &'static [Param],
    pub effect: Effect,
    /// Over MCP the answer is its JSON data (also as `structuredContent`), unless the call
    /// asks for another `output_mode`; the CLI prints the readable text.
    pub mcp_json: bool,
}

/// What a call changes, published as MCP's tool annotations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads only: no index, note, focus set or registry changes (`readOnlyHint`).
    ReadOnly,
    /// Adds to booger's own state (notes, the focus set, the index); the same call twice is
    /// the same as once (`idempotentHint`), and nothing is deleted.
    Idempotent,
    /// Adds something each time (a note), or runs other calls (batch).
    Writes,
    /// May delete what other calls made (notes, a project's index) (`destructiveHint`); the
    /// same call twice is the same as once.
    Destructive,
}

impl Effect {
    /// The MCP `annotations` object. None of booger's tools reaches beyond the machine. The
    /// destructive and idempotent hints mean something only for a tool that writes (MCP's
    /// defaults for them assume the worst), so a read-only tool carries neither.
    pub fn annotations(self) -> Value {
        if self == Self::ReadOnly {
            return json!({ "readOnlyHint": true, "openWorldHint": false });
        }
        json!({
            "readOnlyHint": false,
            "destructiveHint": self == Self::Destructive,
            "idempotentHint": self != Self::Writes,
            "openWorldHint": false,
        })
    }
}

pub fn find(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

pub fn names() -> Vec<&'static str> {
    TOOLS.iter().map(|t| t.name).collect()
}

impl Kind {
    fn schema(&self) -> Value {
        match *self {
            Kind::String => json!({ "type": "string" }),
            Kind::Text => json!({ "type": "string", "minLength": 1, "pattern": "\\S" }),
            Kind::Integer { min, max } => json!({ "type": "integer", "minimum": min, "maximum": max }),
            Kind::Boolean => json!({ "type": "boolean" }),
            Kind::Number { min, max } => json!({ "type": "number", "minimum": min, "maximum": max }),
            Kind::Enum(values) => json!({ "type": "string", "enum": values }),
            Kind::Strings => json!({ "type": "array", "items": { "type": "string" } }),
            Kind::Calls => json!({
                "type": "array",
                "maxItems": 20,
                "items": {
                    "type": "object",
                    "properties": { "tool": { "type": "string" }, "arguments": { "type": "object" } },
                    "required": ["tool"],
                },
            }),
        }
    }

    fn describe(&self) -> String {
        match *self {
            Kind::String => "a string".to_owned(),
            Kind::Text => "a string that is not blank (words, a name or a question)".to_owned(),
            Kind::Integer { min, max } => format!("an integer from {min} to {max}"),
            Kind::Boolean => "true or false".to_owned(),
            Kind::Number { min, max } => format!("a number from {min} to {max}"),
            Kind::Enum(values) => format!("one of {}", values.join(", ")),
            Kind::Strings => "an array of strings".to_owned(),
            Kind::Calls => "an array of up to 20 {\"tool\": ..., \"arguments\": {...}} objects".to_owned(),
        }
    }

    fn accepts(&self, v: &Value) -> bool {
        match *self {
            Kind::String => v.is_string(),
            // A blank query asks for nothing: an error that says so, not an empty answer.
            Kind::Text => v.as_str().is_some_and(|s| !s.trim().is_empty()),
            Kind::Integer { min, max } => v.as_i64().is_some_and(|n| (min..=max).contains(&n)),
            Kind::Boolean => v.is_boolean(),
            Kind::Number { min, max } => v.as_f64().is_some_and(|n| n >= min && n <= max),
            Kind::Enum(values) => v.as_str().is_some_and(|s| values.contains(&s)),
            Kind::Strings => v.as_array().is_some_and(|a| a.iter().all(Value::is_string)),
            Kind::Calls => v.as_array().is_some_and(|a| {
                a.len() <= 20
                    && a.iter().all(|c| {
                        c.get("tool").is_some_and(Value::is_string)
                            && c.get("arguments").is_none_or(|x| x.is_object() || x.is_null())
                    })
            }),
        }
    }

    /// Converts one command-line word to a JSON value of this kind.
    fn parse_word(&self, word: &str) -> Result<Value, String> {
        match *self {
            Kind::String | Kind::Text | Kind::Enum(_) => Ok(Value::String(word.to_owned())),
            Kind::Integer { .. } => {
                word.parse::<i64>().map(Value::from).map_err(|_| format!("expected an integer, got {word:?}"))
            }
            Kind::Number { .. } => {
                word.parse::<f64>().map(Value::from).map_err(|_| format!("expected a number, got {word:?}"))
            }
            Kind::Boolean => match word {
                "true" | "yes" | "1" => Ok(Value::Bool(true)),
                "false" | "no" | "0" => Ok(Value::Bool(false)),
                _ => Err(format!("expected true or false, got {word:?}")),
            },
            Kind::Strings => Ok(Value::Array(vec![Value::String(word.to_owned())])),
            Kind::Calls => serde_json::from_str(word).map_err(|e| format!("expected a JSON array of calls: {e}")),
        }
    }
}

impl ToolSpec {
    /// The JSON Schema of the tool's arguments, as `tools/list` publishes it.
    /// The JSON Schema of the tool's answer data (MCP `outputSchema`).
    pub fn output_schema(&self) -> Value {
        crate::answers::schema(self.name).unwrap_or_else(|| serde_json::json!({ "type": "object" }))
    }

    pub fn input_schema(&self) -> Value {
        let mut props = Map::new();
        for p in self.params {
            let mut s = p.kind.schema();
            s["description"] = Value::String(p.description.to_owned());
            props.insert(p.name.to_owned(), s);
        }
        let required: Vec<&str> = self.params.iter().filter(|p| p.required).map(|p| p.name).collect();
        let mut schema = json!({ "type": "object", "properties": props, "additionalProperties": false });
        if !required.is_empty() {
            schema["required"] = json!(required);
        }
        schema
    }

    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Checks `args` against the schema. The error says what is wrong and how to fix it.
    pub fn validate(&self, args: &Value) -> Result<(), String> {
        let empty = Map::new();
        let obj = match args {
            Value::Null => &empty,
            Value::Object(o) => o,
            other => {
                return Err(format!(
                    "{}: arguments must be a JSON object, got {}. Example: {}",
                    self.name,
                    type_name(other),
                    self.example()
                ));
            }
        };
        for key in obj.keys() {
            if self.param(key).is_none() {
                return Err(format!(
                    "{}: unknown argument `{key}`. Valid arguments: {}.",
                    self.name,
                    self.param_names()
                ));
            }
        }
        for p in self.params {
            match obj.get(p.name) {
                None | Some(Value::Null) if p.required => {
                    return Err(format!(
                        "{}: missing required argument `{}` ({}). Example: {}",
                        self.name,
                        p.name,
                        p.kind.describe(),
                        self.example()
                    ));
                }
                None | Some(Value::Null) => {}
                Some(Value::String(text)) if p.kind != Kind::Text && text.chars().count() > MAX_STRING_CHARS => {
                    return Err(format!(
                        "{}: argument `{}` is {} characters long; at most {MAX_STRING_CHARS} are accepted: shorten it.",
                        self.name,
                        p.name,
                        text.chars().count()
                    ));
                }
                Some(Value::Array(items))
                    if items.iter().any(|i| i.as_str().is_some_and(|t| t.chars().count() > MAX_STRING_CHARS)) =>
                {
                    return Err(format!(
                        "{}: an item of `{}` is longer than {MAX_STRING_CHARS} characters: shorten it.",
                        self.name, p.name
                    ));
                }
                Some(v) if !p.kind.accepts(v) => {
                    return Err(format!(
                        "{}: argument `{}` must be {}, got {}.",
                        self.name,
                        p.name,
                        p.kind.describe(),
                        short(v)
                    ));
                }
                Some(_) => {}
            }
        }
        Ok(())
    }

    fn param_names(&self) -> String {
        if self.params.is_empty() {
            return "none".to_owned();
        }
        self.params.iter().map(|p| p.name).collect::<Vec<_>>().join(", ")
    }

    fn example(&self) -> String {
        let mut ex = Map::new();
        for p in self.params.iter().filter(|p| p.required) {
            let v = match p.kind {
                Kind::String | Kind::Text => json!("..."),
                Kind::Integer { min, .. } => json!(min.max(1)),
                Kind::Boolean => json!(true),
                Kind::Number { min, .. } => json!(min),
                Kind::Enum(values) => json!(values[0]),
                Kind::Strings => json!(["..."]),
                Kind::Calls => json!([{ "tool": "search", "arguments": { "query": "..." } }]),
            };
            ex.insert(p.name.to_owned(), v);
        }
        Value::Object(ex).to_string()
    }

    /// Parses `booger <tool> [positionals] [--flag value]...` into tool arguments.
    ///
    /// Flags may be spelled with `-` or `_` (`--head-limit` = `--head_limit`), as `--flag=value`,
    /// and booleans as a bare `--flag`. A `Strings` positional takes every remaining word; so
    /// does a tool's only positional, a `String`, joined with spaces (`booger search retry
    /// upload`).
    pub fn parse_cli(&self, words: &[String]) -> Result<Value, String> {
        let mut args = Map::new();
        let mut positionals = self.params.iter().filter(|p| p.positional);
        let mut rest: Option<&Param> = None;
        let mut last: Option<&Param> = None;
        let mut i = 0;
        while i < words.len() {
            let word = &words[i];
            i += 1;
            if let Some(flag) = word.strip_prefix("--").filter(|f| !f.is_empty()) {
                let (name, inline) = match flag.split_once('=') {
                    Some((n, v)) => (n.replace('-', "_"), Some(v.to_owned())),
                    None => (flag.replace('-', "_"), None),
                };
                let p = self
                    .param(&name)
                    .ok_or_else(|| format!("unknown option --{name} for `{}`.\n{}", self.name, self.usage()))?;
                let value = match (inline, p.kind) {
                    (Some(v), _) => v,
                    // `--literal` alone, or `--literal true`: a following true or false is
                    // the flag's value, not a word of the query.
                    (None, Kind::Boolean) => match words.get(i).map(String::as_str) {
                        Some(w @ ("true" | "false")) => {
                            i += 1;
                            w.to_owned()
                        }
                        _ => "true".to_owned(),
                    },
                    (None, _) => {
                        let v = words.get(i).ok_or_else(|| format!("--{name} needs a value"))?;
                        i += 1;
                        v.clone()
                    }
                };
                let v = p.kind.parse_word(&value).map_err(|e| format!("--{name}: {e}"))?;
                push_arg(&mut args, p, v);
                continue;
            }
            if let Some(p) = rest {
                push_arg(&mut args, p, Value::String(word.clone()));
                continue;
            }
            let Some(p) = positionals.next() else {
                let only = self.params.iter().filter(|p| p.positional).count() == 1;
                match last
                    .filter(|p| only && matches!(p.kind, Kind::String | Kind::Text))
                    .and_then(|p| args.get_mut(p.name))
                {
                    Some(Value::String(s)) => {
                        s.push(' ');
                        s.push_str(word);
                        continue;
                    }
                    _ => return Err(format!("unexpected argument {word:?} for `{}`.\n{}", self.name, self.usage())),
                }
            };
            last = Some(p);
            if p.kind == Kind::Strings {
                rest = Some(p);
            }
            let v = p.kind.parse_word(word).map_err(|e| format!("{}: {e}", p.name))?;
            push_arg(&mut args, p, v);
        }
        // Said in the shell's words here: the daemon's message shows JSON, for agents.
        if let Some(p) = self.params.iter().find(|p| p.required && !args.contains_key(p.name)) {
            let what =
                if p.positional { p.name.to_uppercase() } else { format!("--{} VALUE", p.name.replace('_', "-")) };
            let usage = self.usage();
            let first = usage.lines().next().unwrap_or_default();
            return Err(format!("{}: missing {what}: {}\n{first}", self.name, p.description));
        }
        Ok(Value::Object(args))
    }

    /// Command-line help for this tool.
    pub fn usage(&self) -> String {
        self.usage_as(&format!("booger {}", self.name))
    }

    /// [`usage`](Self::usage) for the tool called as `command` (`booger team status`).
    pub fn usage_as(&self, command: &str) -> String {
        let mut line = format!("usage: {command}");
        for p in self.params.iter().filter(|p| p.positional) {
            let n = p.name.to_uppercase();
            line.push_str(&match (p.required, p.kind == Kind::Strings) {
                (true, false) => format!(" {n}"),
                (true, true) => format!(" {n}..."),
                (false, false) => format!(" [{n}]"),
                (false, true) => format!(" [{n}...]"),
            });
        }
        line.push_str(" [options] [--json]\n\n");
        line.push_str(self.summary);
        line.push_str("\n\n");
        line.push_str(&wrap(self.details, 92));
        line.push_str("\n\n");
        for p in self.params {
            let flag = p.name.replace('_', "-");
            let flag = if p.positional { p.name.to_uppercase() } else { format!("--{flag}") };
            // A boolean is a flag: given, it is on.
            let line_for = match p.kind {
                Kind::Boolean => format!("  {flag:<20} {}\n", p.description),
                _ => format!("  {flag:<20} {} ({})\n", p.description, p.kind.describe()),
            };
            line.push_str(&line_for);
        }
        line.push_str(&format!("  {:<20} print the answer as JSON\n", "--json"));
        line
    }
}

/// `text` broken into lines of at most `width` characters, at spaces.
fn wrap(text: &str, width: usize) -> String {
    let mut out = String::new();
    let mut line_len = 0;
    for word in text.split_whitespace() {
        if line_len > 0 && line_len + 1 + word.chars().count() > width {
            out.push('\n');
            line_len = 0;
        } else if line_len > 0 {
            out.push(' ');
            line_len += 1;
        }
        out.push_str(word);
        line_len += word.chars().count();
    }
    out
}

fn push_arg(args: &mut Map<String, Value>, p: &Param, v: Value) {
    match (p.kind, args.get_mut(p.name)) {
        (Kind::Strings, Some(Value::Array(existing))) => {
            if let Value::Array(more) = v {
                existing.extend(more);
            }
        }
        _ => {
            args.insert(p.name.to_owned(), v);
        }
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 60 { format!("{}... ({})", &s[..s.floor_char_boundary(57)], type_name(v)) } else { s }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn every_schema_is_an_object_schema_with_described_properties() {
        for t in TOOLS {
            let s = t.input_schema();
            assert_eq!(s["type"], "object", "{}", t.name);
            for (name, prop) in s["properties"].as_object().unwrap() {
                assert!(prop["description"].as_str().is_some_and(|d| !d.is_empty()), "{}.{name}", t.name);
            }
        }
    }

    #[test]
    fn cli_positionals_and_flags_become_arguments() {
        let args = PROJECTS.parse_cli(&words("add /tmp/x")).unwrap();
        assert_eq!(args, json!({ "action": "add", "path": "/tmp/x" }));
        let args = PROJECTS.parse_cli(&words("--path=/y --action remove")).unwrap();
        assert_eq!(args, json!({ "action": "remove", "path": "/y" }));
        assert!(PROJECTS.parse_cli(&words("add /x extra")).unwrap_err().contains("unexpected argument"));
        // A tool's only positional takes the rest of the words, joined (an unquoted query).
        let args = SEARCH.parse_cli(&words("retry failed --head-limit 3 upload")).unwrap();
        assert_eq!(args["query"], "retry failed upload");
        assert_eq!(args["head_limit"], 3);
        assert!(PROJECTS.parse_cli(&words("--nope 1")).unwrap_err().contains("unknown option --nope"));
    }

    #[test]
    fn validation_names_the_argument_and_the_fix() {
        assert!(PROJECTS.validate(&json!({ "action": "add", "path": "/x" })).is_ok());
        assert!(PROJECTS.validate(&Value::Null).is_ok());
        let e = PROJECTS.validate(&json!({ "action": "explode" })).unwrap_err();
        assert!(e.contains("`action` must be one of list, add, add-all, remove"), "{e}");
        let e = PROJECTS.validate(&json!({ "paht": "/x" })).unwrap_err();
        assert!(e.contains("unknown argument `paht`") && e.contains("action, path"), "{e}");
        let e = STATUS.validate(&json!([1])).unwrap_err();
        assert!(e.contains("must be a JSON object"), "{e}");
        let e = STATUS.validate(&json!({ "project": 3 })).unwrap_err();
        assert!(e.contains("`project` must be a string, got 3"), "{e}");
    }
}
