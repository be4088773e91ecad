//! Adding booger to a client's configuration text, and taking it out, without touching
//! anything else: the user's other entries, their order, comments and formatting stay as they
//! were. JSON (with comments) is edited through a concrete syntax tree, TOML through
//! toml_edit's document model; both print back every byte they did not change.

use jsonc_parser::ParseOptions;
use jsonc_parser::cst::{CstInputValue, CstRootNode};
use serde_json::Value;

use super::clients::Format;

/// The name booger's entry has in every client's server list.
pub const SERVER_NAME: &str = "booger";
/// The name of a team server's entry (`booger setup --remote`), beside the local one.
pub const REMOTE_NAME: &str = "booger-team";

/// Why a configuration cannot be edited; the file is then left as it is.
#[derive(Debug)]
pub struct Unparsable(pub String);

/// `text` with booger's entry set to `entry` under `key`, or None when it already is.
pub fn add(format: Format, key: &str, name: &str, text: &str, entry: &Value) -> Result<Option<String>, Unparsable> {
    match format {
        Format::Json => json_add(key, name, text, entry),
        Format::Toml => toml_add(key, name, text, entry),
    }
}

/// `text` without booger's entry, or None when it has none.
pub fn remove(format: Format, key: &str, name: &str, text: &str) -> Result<Option<String>, Unparsable> {
    match format {
        Format::Json => json_remove(key, name, text),
        Format::Toml => toml_remove(key, name, text),
    }
}

/// booger's entry in `text`, if any (to report what is configured).
pub fn current(format: Format, key: &str, name: &str, text: &str) -> Result<Option<Value>, Unparsable> {
    match format {
        Format::Json => {
            let root = json_parse(text)?;
            Ok(root
                .object_value()
                .and_then(|o| o.object_value(key))
                .and_then(|s| s.get(name))
                .and_then(|p| p.value())
                .and_then(|v| v.to_serde_value()))
        }
        Format::Toml => {
            let doc = toml_parse(text)?;
            Ok(doc.get(key).and_then(|s| s.get(name)).map(toml_entry))
        }
    }
}

pub(super) fn json_parse(text: &str) -> Result<CstRootNode, Unparsable> {
    let root =
        CstRootNode::parse(text, &ParseOptions::default()).map_err(|e| Unparsable(format!("not valid JSON: {e}")))?;
    if root.value().is_some_and(|v| v.as_object().is_none()) {
        return Err(Unparsable("its top level is not a JSON object".into()));
    }
    Ok(root)
}

fn json_add(key: &str, name: &str, text: &str, entry: &Value) -> Result<Option<String>, Unparsable> {
    let root = json_parse(text)?;
    let top = root.object_value_or_set();
    let servers = top.object_value_or_create(key).ok_or_else(|| Unparsable(format!("its `{key}` is not an object")))?;
    match servers.get(name) {
        Some(prop) if prop.value().and_then(|v| v.to_serde_value()).as_ref() == Some(entry) => return Ok(None),
        Some(prop) => prop.set_value(cst_value(entry)),
        None => {
            servers.append(name, cst_value(entry));
        }
    }
    Ok(Some(root.to_string()))
}

fn json_remove(key: &str, name: &str, text: &str) -> Result<Option<String>, Unparsable> {
    let root = json_parse(text)?;
    let Some(prop) = root.object_value().and_then(|o| o.object_value(key)).and_then(|s| s.get(name)) else {
        return Ok(None);
    };
    prop.remove();
    Ok(Some(root.to_string()))
}

pub(super) fn cst_value(v: &Value) -> CstInputValue {
    match v {
        Value::Null => CstInputValue::Null,
        Value::Bool(b) => CstInputValue::Bool(*b),
        Value::Number(n) => CstInputValue::Number(n.to_string()),
        Value::String(s) => CstInputValue::String(s.clone()),
        Value::Array(items) => CstInputValue::Array(items.iter().map(cst_value).collect()),
        Value::Object(_) => CstInputValue::Object(ordered(v).map(|(k, v)| (k.to_owned(), cst_value(v))).collect()),
    }
}

/// An object's fields in the order people write a server entry (kind, command, arguments,
/// environment) or a hook (what it matches, then what it runs), not alphabetically.
fn ordered(v: &Value) -> impl Iterator<Item = (&str, &Value)> {
    const ORDER: [&str; 9] = ["matcher", "type", "source", "command", "url", "args", "env", "timeout", "hooks"];
    let mut fields: Vec<(&str, &Value)> = v.as_object().into_iter().flatten().map(|(k, v)| (k.as_str(), v)).collect();
    fields.sort_by_key(|(k, _)| ORDER.iter().position(|o| o == k).unwrap_or(ORDER.len()));
    fields.into_iter()
}

fn toml_parse(text: &str) -> Result<toml_edit::DocumentMut, Unparsable> {
    text.parse::<toml_edit::DocumentMut>().map_err(|e| Unparsable(format!("not valid TOML: {}", e.to_string().trim())))
}

fn toml_add(key: &str, name: &str, text: &str, entry: &Value) -> Result<Option<String>, Unparsable> {
    let mut doc = toml_parse(text)?;
    if doc.get(key).and_then(|s| s.get(name)).map(toml_entry).as_ref() == Some(entry) {
        return Ok(None);
    }
    let servers = doc
        .entry(key)
        .or_insert_with(|| {
            // `[mcp_servers.booger]` alone, without an empty `[mcp_servers]` header above it.
            let mut t = toml_edit::Table::new();
            t.set_implicit(true);
            toml_edit::Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or_else(|| Unparsable(format!("its `{key}` is not a table")))?;
    servers.insert(name, toml_edit::Item::Table(toml_table(entry)));
    Ok(Some(doc.to_string()))
}

fn toml_remove(key: &str, name: &str, text: &str) -> Result<Option<String>, Unparsable> {
    let mut doc = toml_parse(text)?;
    let Some(servers) = doc.get_mut(key).and_then(|s| s.as_table_like_mut()) else {
        return Ok(None);
    };
    if servers.remove(name).is_none() {
        return Ok(None);
    }
    if servers.is_empty() {
        doc.remove(key);
    }
    Ok(Some(doc.to_string()))
}

/// booger's entry as a TOML table: `command`, `args`, and `env` inline.
fn toml_table(entry: &Value) -> toml_edit::Table {
    let mut t = toml_edit::Table::new();
    for (k, v) in ordered(entry) {
        if let Some(v) = toml_value(v) {
            t.insert(k, toml_edit::Item::Value(v));
        }
    }
    t
}

fn toml_value(v: &Value) -> Option<toml_edit::Value> {
    Some(match v {
        Value::String(s) => s.as_str().into(),
        Value::Bool(b) => (*b).into(),
        Value::Number(n) => n.as_i64()?.into(),
        Value::Array(items) => toml_edit::Value::Array(items.iter().filter_map(toml_value).collect()),
        Value::Object(map) => {
            let mut t = toml_edit::InlineTable::new();
            for (k, v) in map {
                if let Some(v) = toml_value(v) {
                    t.insert(k, v);
                }
            }
            toml_edit::Value::InlineTable(t)
        }
        Value::Null => return None,
    })
}

/// A TOML entry read back as JSON, to compare with the entry booger would write.
fn toml_entry(item: &toml_edit::Item) -> Value {
    fn value(v: &toml_edit::Value) -> Value {
        match v {
            toml_edit::Value::String(s) => Value::from(s.value().as_str()),
            toml_edit::Value::Integer(i) => Value::from(*i.value()),
            toml_edit::Value::Float(f) => Value::from(*f.value()),
            toml_edit::Value::Boolean(b) => Value::from(*b.value()),
            toml_edit::Value::Datetime(d) => Value::from(d.value().to_string()),
            toml_edit::Value::Array(a) => Value::Array(a.iter().map(value).collect()),
            toml_edit::Value::InlineTable(t) => {
                Value::Object(t.iter().map(|(k, v)| (k.to_owned(), value(v))).collect())
            }
        }
    }
    match item.as_table_like() {
        Some(t) => {
            Value::Object(t.iter().filter_map(|(k, i)| i.as_value().map(|v| (k.to_owned(), value(v)))).collect())
        }
        None => Value::Null,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn entry() -> Value {
        json!({ "command": "/opt/bin/booger", "args": ["mcp"] })
    }

    #[test]
    fn json_keeps_comments_order_and_other_servers() {
        let text = "{\n  // mine\n  \"mcpServers\": {\n    \"other\": { \"command\": \"x\" } // keep\n  },\n  \"theme\": \"dark\",\n}\n";
        let added = add(Format::Json, "mcpServers", SERVER_NAME, text, &entry()).unwrap().unwrap();
        assert!(added.contains("// mine") && added.contains("// keep"), "{added}");
        assert!(added.find("\"other\"").unwrap() < added.find("\"booger\"").unwrap(), "{added}");
        assert!(added.find("\"booger\"").unwrap() < added.find("\"theme\"").unwrap(), "{added}");
        assert_eq!(
            add(Format::Json, "mcpServers", SERVER_NAME, &added, &entry()).unwrap(),
            None,
            "a second add changes nothing"
        );
        assert_eq!(current(Format::Json, "mcpServers", SERVER_NAME, &added).unwrap(), Some(entry()));
        let removed = remove(Format::Json, "mcpServers", SERVER_NAME, &added).unwrap().unwrap();
        assert_eq!(removed, text, "taking booger out gives the text back");
    }

    #[test]
    fn json_from_nothing_and_refusals() {
        let added = add(Format::Json, "servers", SERVER_NAME, "", &entry()).unwrap().unwrap();
        let v: Value = serde_json::from_str(&added).unwrap();
        assert_eq!(v["servers"]["booger"], entry());
        assert!(add(Format::Json, "servers", SERVER_NAME, "{ \"servers\": ", &entry()).is_err());
        assert!(add(Format::Json, "servers", SERVER_NAME, "[1, 2]", &entry()).is_err());
        assert!(add(Format::Json, "servers", SERVER_NAME, "{\"servers\": 3}", &entry()).is_err());
    }

    #[test]
    fn toml_keeps_the_rest_and_round_trips() {
        let text =
            "model = \"o3\" # mine\n\n[mcp_servers.other]\ncommand = \"x\"\n\n[profiles.fast]\nmodel = \"mini\"\n";
        let added = add(Format::Toml, "mcp_servers", SERVER_NAME, text, &entry()).unwrap().unwrap();
        // booger's table joins the other servers; the rest is as it was.
        assert!(added.starts_with("model = \"o3\" # mine\n\n[mcp_servers.other]\ncommand = \"x\"\n"), "{added}");
        assert!(added.ends_with("[profiles.fast]\nmodel = \"mini\"\n"), "{added}");
        assert!(added.contains("[mcp_servers.booger]\ncommand = \"/opt/bin/booger\"\nargs = [\"mcp\"]\n"), "{added}");
        assert!(!added.contains("[mcp_servers]\n"), "{added}");
        assert_eq!(add(Format::Toml, "mcp_servers", SERVER_NAME, &added, &entry()).unwrap(), None);
        assert_eq!(
            remove(Format::Toml, "mcp_servers", SERVER_NAME, &added).unwrap().unwrap().trim_end(),
            text.trim_end()
        );
        let fresh = add(Format::Toml, "mcp_servers", SERVER_NAME, "", &entry()).unwrap().unwrap();
        assert_eq!(remove(Format::Toml, "mcp_servers", SERVER_NAME, &fresh).unwrap().unwrap().trim(), "");
        assert!(add(Format::Toml, "mcp_servers", SERVER_NAME, "model = ", &entry()).is_err());
    }
}
