//! An answer type's JSON Schema as `tools/list` publishes it: inline, small, and only what
//! validates.

use schemars::JsonSchema;
use serde_json::Value;

/// `T`'s schema as `tools/list` publishes it: inline, and only what validates (no
/// descriptions, titles or number formats; every session pays for each byte).
pub(crate) fn of<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| {
            s.inline_subschemas = true;
            s.meta_schema = None;
        })
        .into_generator();
    let mut v = generator.into_root_schema_for::<T>().to_value();
    compact(&mut v);
    // What an answer always carries is said once, at its top; a row is its fields and their
    // types (each `required` list of a row costs every session its bytes again).
    for nested in v.as_object_mut().into_iter().flat_map(|o| o.values_mut()) {
        drop_required(nested);
    }
    v
}

fn drop_required(v: &mut Value) {
    match v {
        Value::Object(o) => {
            // A list of names, not a field called `required` (whose schema is an object).
            if o.get("required").is_some_and(Value::is_array) {
                o.remove("required");
            }
            o.values_mut().for_each(drop_required);
        }
        Value::Array(a) => a.iter_mut().for_each(drop_required),
        _ => {}
    }
}

fn compact(v: &mut Value) {
    match v {
        Value::Object(o) => {
            for key in ["description", "title", "format", "$schema"] {
                o.remove(key);
            }
            // Counts and line numbers: that they are integers is what a client checks.
            if o.get("minimum").and_then(Value::as_f64) == Some(0.0) {
                o.remove("minimum");
            }
            // Any item at all: the same as saying nothing.
            if o.get("items") == Some(&Value::Bool(true)) {
                o.remove("items");
            }
            // An optional field is left out when it has no value, never null, unless the
            // answer says null (`x-nullable`).
            let required: Vec<Value> = o.get("required").and_then(Value::as_array).cloned().unwrap_or_default();
            if let Some(Value::Object(props)) = o.get_mut("properties") {
                for (name, p) in props.iter_mut() {
                    let nullable = p.as_object_mut().and_then(|p| p.remove("x-nullable")).is_some();
                    if !nullable && !required.contains(&Value::String(name.clone())) {
                        drop_null(p);
                    }
                }
            }
            o.values_mut().for_each(compact);
        }
        Value::Array(a) => a.iter_mut().for_each(compact),
        _ => {}
    }
}

/// `p` without `null` among its types or values.
fn drop_null(p: &mut Value) {
    let Some(o) = p.as_object_mut() else { return };
    if let Some(Value::Array(types)) = o.get_mut("type") {
        types.retain(|t| t != "null");
        if types.len() == 1 {
            let only = types.remove(0);
            o.insert("type".to_owned(), only);
        }
    }
    if let Some(Value::Array(values)) = o.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
    // `Option<Struct>` is `anyOf [struct, null]`.
    if let Some(Value::Array(any)) = o.get("anyOf").cloned() {
        let kept: Vec<Value> = any.into_iter().filter(|s| s.get("type") != Some(&Value::from("null"))).collect();
        if let [one] = kept.as_slice() {
            o.remove("anyOf");
            for (k, v) in one.as_object().into_iter().flatten() {
                o.insert(k.clone(), v.clone());
            }
        }
    }
}
