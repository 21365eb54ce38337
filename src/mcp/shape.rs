//! A tool's `outputSchema`: the top level of what `baton schema NAME`
//! publishes for its command — each field with its JSON types (and the
//! values of a field that has a fixed few), nested objects as objects.
//!
//! Why not the whole schema: a host lists every tool's output schema in
//! `tools/list`, and MCP gives a tool no way to point at a schema another
//! tool (or a shared `$defs`) holds, so each whole schema was there once
//! per tool that returns it — 338 KB of a 344 KB list, the run result's
//! 34–44 KB six times. The whole contract stays `baton schema NAME`
//! (tests/json.rs checks the commands' output against it, and tests/mcp.rs
//! checks every tool's `structuredContent` against both); the shape is
//! what a client needs to validate and read the result, 1–3 KB a tool.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

/// A field's values are listed when there are at most this many.
const MAX_VALUES: usize = 16;

/// A top-level field of the shape, merged over every variant.
struct Top {
    name: String,
    /// Its JSON types; `None`: any.
    types: Option<BTreeSet<String>>,
    /// Its values; `None`: not a fixed few.
    values: Option<Vec<Value>>,
}

/// The shape of `full` (a published schema) as an object schema.
pub fn of(name: &str, full: &Value) -> Map<String, Value> {
    let defs = full.get("$defs").cloned().unwrap_or(Value::Null);
    let variants: Vec<&Value> = match full.get("anyOf").or_else(|| full.get("oneOf")) {
        Some(Value::Array(a)) => a.iter().map(|v| resolve(v, &defs)).collect(),
        _ => vec![full],
    };
    let mut fields: Vec<Top> = Vec::new();
    let mut required: Option<BTreeSet<String>> = None;
    for v in &variants {
        let props = v.get("properties").and_then(Value::as_object);
        for (k, p) in props.into_iter().flatten() {
            let t = types(p, &defs, 0);
            let e = values(p, &defs);
            match fields.iter_mut().find(|f| f.name == *k) {
                Some(Top {
                    types: ts,
                    values: es,
                    ..
                }) => {
                    *ts = match (ts.take(), t) {
                        (Some(mut a), Some(b)) => {
                            a.extend(b);
                            Some(a)
                        }
                        _ => None,
                    };
                    *es = match (es.take(), e) {
                        (Some(mut a), Some(b)) => {
                            a.extend(b.into_iter().filter(|x| !a.contains(x)).collect::<Vec<_>>());
                            Some(a)
                        }
                        _ => None,
                    };
                }
                None => fields.push(Top {
                    name: k.clone(),
                    types: t,
                    values: e,
                }),
            }
        }
        let req: BTreeSet<String> = v
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|r| r.as_str().map(str::to_string))
            .collect();
        required = Some(match required {
            Some(r) => r.intersection(&req).cloned().collect(),
            None => req,
        });
    }
    let mut props = Map::new();
    for Top {
        name: k,
        types: t,
        values: e,
    } in fields
    {
        let mut p = Map::new();
        if let Some(mut t) = t {
            // A whole number is a number too; one name is enough.
            if t.contains("number") {
                t.remove("integer");
            }
            let t: Vec<String> = t.into_iter().collect();
            p.insert(
                "type".into(),
                if t.len() == 1 { json!(t[0]) } else { json!(t) },
            );
        }
        // A long list is a reference's business, not a shape's.
        if let Some(e) = e.filter(|e| e.len() <= MAX_VALUES) {
            p.insert("enum".into(), Value::Array(e));
        }
        props.insert(k, Value::Object(p));
    }
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    s.insert(
        "description".into(),
        format!("The top level of `baton schema {name}`, which has the whole schema.").into(),
    );
    s.insert("properties".into(), Value::Object(props));
    let required: Vec<String> = required.unwrap_or_default().into_iter().collect();
    if !required.is_empty() {
        s.insert("required".into(), json!(required));
    }
    s
}

/// `v` itself, or the definition its `$ref` names.
fn resolve<'a>(v: &'a Value, defs: &'a Value) -> &'a Value {
    match v.get("$ref").and_then(Value::as_str) {
        Some(r) => r
            .strip_prefix("#/$defs/")
            .and_then(|n| defs.get(n))
            .unwrap_or(v),
        None => v,
    }
}

/// The JSON types a value of schema `p` can have; `None` when any.
fn types(p: &Value, defs: &Value, depth: u8) -> Option<BTreeSet<String>> {
    if depth > 8 {
        return None;
    }
    let p = resolve(p, defs);
    let mut out = BTreeSet::new();
    match p.get("type") {
        Some(Value::String(t)) => {
            out.insert(t.clone());
        }
        Some(Value::Array(ts)) => out.extend(ts.iter().filter_map(|t| t.as_str().map(Into::into))),
        _ => {
            let members = ["anyOf", "oneOf", "allOf"]
                .iter()
                .find_map(|k| p.get(*k).and_then(Value::as_array));
            if let Some(ms) = members {
                for m in ms {
                    out.extend(types(m, defs, depth + 1)?);
                }
            } else if let Some(c) = p.get("const") {
                out.insert(json_type(c).into());
            } else if let Some(Value::Array(e)) = p.get("enum") {
                out.extend(e.iter().map(|x| json_type(x).to_string()));
            } else {
                return None;
            }
        }
    }
    Some(out)
}

/// The values of a field that takes a fixed few (`status`), null included.
fn values(p: &Value, defs: &Value) -> Option<Vec<Value>> {
    let p = resolve(p, defs);
    if let Some(Value::Array(e)) = p.get("enum") {
        return Some(e.clone());
    }
    if let Some(c) = p.get("const") {
        return Some(vec![c.clone()]);
    }
    let ms = p.get("anyOf").or_else(|| p.get("oneOf"))?.as_array()?;
    let mut out = Vec::new();
    for m in ms {
        let m = resolve(m, defs);
        if m.get("type").and_then(Value::as_str) == Some("null") {
            out.push(Value::Null);
        } else {
            out.extend(values(m, defs)?);
        }
    }
    Some(out)
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shape_is_the_top_level_of_every_variant() {
        let full = json!({
            "anyOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
            "$defs": {
                "A": {"type": "object", "required": ["status", "a"], "properties": {
                    "status": {"type": "string", "enum": ["success", "failed"]},
                    "a": {"type": ["integer", "null"], "format": "uint32"},
                    "nested": {"$ref": "#/$defs/N"},
                    "any": {}
                }},
                "B": {"type": "object", "required": ["status"], "properties": {
                    "status": {"type": "string", "const": "running"},
                    "a": {"type": "number"},
                    "nested": {"anyOf": [{"$ref": "#/$defs/N"}, {"type": "null"}]}
                }},
                "N": {"type": "object", "properties": {"deep": {"type": "string"}}}
            }
        });
        let s = Value::Object(of("x", &full));
        assert_eq!(s["type"], "object");
        assert_eq!(s["required"], json!(["status"]));
        let p = &s["properties"];
        assert_eq!(p["status"]["type"], "string");
        assert_eq!(p["status"]["enum"], json!(["success", "failed", "running"]));
        assert_eq!(p["a"]["type"], json!(["null", "number"]));
        assert!(p["a"].get("format").is_none());
        assert_eq!(p["nested"]["type"], json!(["null", "object"]));
        assert!(p["nested"].get("properties").is_none());
        assert_eq!(p["any"], json!({}));
        assert!(
            s["description"]
                .as_str()
                .unwrap()
                .contains("baton schema x")
        );
    }
}
