//! What each tool's answer looks like: the JSON Schema of its data, published as the tool's
//! MCP `outputSchema` beside the data itself as `structuredContent`.
//!
//! A schema names the fields a client can rely on and their types. Fields that only some
//! output modes carry (`results` is empty in count mode, `by_class` appears only there) are
//! described but not required, so one schema holds for every mode. Every tool in the catalogue
//! has one; a test in this module checks that, and the end-to-end MCP test validates real
//! answers against them.

use serde_json::{Value, json};

fn number() -> Value {
    json!({ "type": "number" })
}

fn string() -> Value {
    json!({ "type": "string" })
}

fn string_or_null() -> Value {
    json!({ "type": ["string", "null"] })
}

fn integer() -> Value {
    json!({ "type": "integer" })
}

fn array_of(items: Value) -> Value {
    json!({ "type": "array", "items": items })
}

/// An object with these properties, of which `required` must be present.
fn object(properties: Value, required: &[&str]) -> Value {
    let mut o = json!({ "type": "object", "properties": properties });
    if !required.is_empty() {
        o["required"] = json!(required);
    }
    o
}

/// A map from names to counts (languages, kinds).
fn counts() -> Value {
    json!({ "type": "object", "additionalProperties": { "type": "integer" } })
}

/// How fresh the index was when it answered (read-your-writes): project, state, generation,
/// pending paths, indexing progress. Only its type is published: tools/list is read by every
/// session, and no client needs these fields' shapes.
fn freshness() -> Value {
    json!({ "type": "object" })
}

/// One symbol: a chunk of code without its text.
fn symbol() -> Value {
    object(
        json!({
            "path": string(),
            "start_line": integer(),
            "end_line": integer(),
            "kind": string(),
            "name": string(),
            "signature": string(),
            "parent": string_or_null(),
        }),
        &["path", "start_line", "end_line", "kind", "name"],
    )
}

/// One ranked result: a symbol with its score, its code (content mode) and the notes on it.
fn hit() -> Value {
    let mut hit = symbol();
    let props = hit["properties"].as_object_mut().expect("symbol has properties");
    props.insert("score".into(), json!({ "type": "number" }));
    props.insert("content".into(), string());
    props.insert("notes".into(), array_of(string()));
    hit
}

/// The answer of the ranked searches (search, semantic-search, hybrid-search, workspace-search).
fn ranked() -> Value {
    object(
        json!({
            "project": string(),
            "projects": integer(),
            "results": array_of(hit()),
            "total": integer(),
            "cursor": string_or_null(),
            "reason": string(),
            "index": freshness(),
            "confidence": { "enum": ["high", "low"] },
            "confidence_score": number(),
            "confidence_threshold": number(),
            "calibrated": { "type": "boolean" },
            "no_good_match": { "type": "boolean" },
            "suggestions": { "type": "array" },
        }),
        &["results"],
    )
}

fn symbol_list() -> Value {
    object(
        json!({
            "project": string(),
            "results": array_of(symbol()),
            "total": integer(),
            "cursor": string_or_null(),
            "index": freshness(),
        }),
        &[],
    )
}

fn diff_totals() -> Value {
    object(
        json!({ "files": integer(), "added": integer(), "modified": integer(), "removed": integer() }),
        &["files", "added", "modified", "removed"],
    )
}

fn paths_added() -> Value {
    object(json!({ "added": integer(), "paths": array_of(string()) }), &["added", "paths"])
}

fn annotation() -> Value {
    object(
        json!({
            "id": integer(),
            "target": string(),
            "note": string(),
            "session": string(),
            "created_at": string(),
            "expires_at": string_or_null(),
        }),
        &["id", "target", "note"],
    )
}

fn project() -> Value {
    object(json!({ "name": string(), "root": string(), "added_at": string() }), &["name", "root"])
}

/// The output schema of the tool `name`, or None for a name the catalogue does not know.
pub fn schema(name: &str) -> Option<Value> {
    Some(match name {
        "search" | "semantic-search" | "hybrid-search" | "workspace-search" => ranked(),
        "symbols" | "changed-since" => {
            let mut s = symbol_list();
            s["properties"]["since"] = string();
            s
        }
        "references" => object(
            json!({
                "results": array_of(object(
                    json!({
                        "path": string(),
                        "line": integer(),
                        "class": { "enum": ["definition", "call", "type", "import", "reference"] },
                        "within": string(),
                        "text": string(),
                    }),
                    &["path", "line", "class"],
                )),
                "by_class": counts(),
                "total": integer(),
                "cursor": string_or_null(),
                "index": freshness(),
            }),
            &["total"],
        ),
        "grep" => object(
            json!({
                "results": array_of(object(
                    json!({ "path": string(), "line": integer(), "text": string() }),
                    &["path", "line"],
                )),
                "total": integer(),
                "project": string(),
                "cursor": string_or_null(),
                "reason": string(),
                "index": freshness(),
            }),
            &["total"],
        ),
        "directory-summary" => object(
            json!({
                "path": string_or_null(),
                "files": integer(),
                "chunks": integer(),
                "languages": counts(),
                "kinds": counts(),
                "entry_points": { "type": "array" },
                "files_here": array_of(string()),
                "subdirectories": counts(),
                "index": freshness(),
            }),
            &["files", "chunks"],
        ),
        "tests-for" => object(
            json!({
                "results": array_of(symbol()),
                "why": array_of(object(
                    json!({ "path": string(), "line": integer(), "name": string(), "why": string() }),
                    &["path", "name", "why"],
                )),
                "total": integer(),
                "index": freshness(),
            }),
            &[],
        ),
        "search-expand" => object(
            json!({
                "results": array_of(hit()),
                "outlines": array_of(object(
                    json!({ "path": string(), "symbols": array_of(symbol()) }),
                    &["path", "symbols"],
                )),
                "index": freshness(),
            }),
            &["results"],
        ),
        "batch" => object(
            json!({
                "results": array_of(object(
                    json!({ "tool": string(), "isError": { "type": "boolean" }, "text": string(), "data": {} }),
                    &["tool", "isError"],
                )),
                "failed": integer(),
                "index": freshness(),
            }),
            &["results", "failed"],
        ),
        "annotate" => {
            object(json!({ "id": integer(), "target": string(), "expires_at": string_or_null() }), &["id", "target"])
        }
        "annotations" => object(json!({ "annotations": array_of(annotation()) }), &["annotations"]),
        "focus" | "visit" => paths_added(),
        "forget" => object(json!({ "annotations": integer(), "workset": integer() }), &[]),
        "status" => object(
            json!({
                "version": string(),
                "protocol": integer(),
                "pid": integer(),
                "socket": string(),
                "data_dir": string(),
                "uptime_s": integer(),
                "session": string(),
                "memory": { "type": "object" },
                "projects": { "type": "array" },
                "project": { "type": ["object", "null"] },
            }),
            &["version", "pid"],
        ),
        "index" => {
            object(json!({ "project": string(), "root": string(), "report": { "type": "object" } }), &["project"])
        }
        "projects" => object(
            json!({
                "projects": array_of(project()),
                "project": project(),
                // add: whether it was new; add-all: the projects it added.
                "added": { "type": ["boolean", "array"] },
                "removed": { "type": "boolean" },
                "existing": array_of(project()),
                "errors": array_of(string()),
                "index_dir": string(),
            }),
            &[],
        ),
        "branch-diff" => object(
            json!({
                "base": string_or_null(),
                "base_commit": string_or_null(),
                "head": string_or_null(),
                "head_commit": string_or_null(),
                "include": string(),
                "files": array_of(object(json!({ "path": string(), "status": string() }), &["path", "status"])),
                "totals": diff_totals(),
            }),
            &["files", "totals"],
        ),
        "draft-commit" => {
            object(json!({ "message": string_or_null(), "files": integer(), "include": string() }), &["message"])
        }
        "changelog" => object(
            json!({
                "from": string_or_null(),
                "to": string_or_null(),
                "markdown": string(),
                "totals": diff_totals(),
                "warnings": array_of(string()),
            }),
            &["markdown"],
        ),
        "embed" => object(
            json!({
                "model": string_or_null(),
                "answering": string_or_null(),
                "embeddable": integer(),
                "embedded": integer(),
                "stale": integer(),
                "running": { "type": "boolean" },
                "tiers": { "type": "array" },
            }),
            &[],
        ),
        "eval" => object(
            json!({
                "project": string(),
                "running": { "type": "boolean" },
                "queries": integer(),
                "methods": { "type": "object" },
                "languages": { "type": "object" },
                "calibration": { "type": "object" },
            }),
            &["project"],
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools::TOOLS;

    #[test]
    fn every_tool_has_an_output_schema_of_an_object() {
        for t in TOOLS {
            let s = schema(t.name).unwrap_or_else(|| panic!("no output schema for {}", t.name));
            assert_eq!(s["type"], "object", "{}: MCP structured content is an object", t.name);
            for r in s["required"].as_array().into_iter().flatten() {
                assert!(s["properties"].get(r.as_str().unwrap()).is_some(), "{}: required {r} is described", t.name);
            }
        }
    }
}
