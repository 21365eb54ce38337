//! Schemas for outputs that take one of several published shapes: a tool or
//! command whose JSON is a run's result *or* a fan-out's (`run --agents`),
//! a job id's result that may be a council's, `status` of a job, a council
//! or a fan-out. Each shape is published whole under its own name in
//! `$defs` and the root is `anyOf` them, so a reader that checks the output
//! against the schema accepts every shape the command really prints.

use serde_json::{Map, Value, json};

use crate::result::SCHEMA_VERSION;

/// One shape: its name in `$defs`, the prefix its definitions get when
/// another shape already uses the name for something else, and its schema.
pub struct Branch {
    pub name: &'static str,
    pub prefix: &'static str,
    pub schema: Value,
}

/// `anyOf` the branches, each under `$defs/<name>`, published as `id`.
pub fn either(id: &str, title: &str, description: &str, branches: Vec<Branch>) -> Value {
    let split = |v: Value| -> (Map<String, Value>, Map<String, Value>) {
        let Value::Object(mut root) = v else {
            return Default::default();
        };
        let defs = match root.remove("$defs") {
            Some(Value::Object(d)) => d,
            _ => Map::new(),
        };
        for k in ["$schema", "$id"] {
            root.remove(k);
        }
        (root, defs)
    };
    let mut defs = Map::new();
    let mut roots: Vec<(&str, Value)> = Vec::new();
    for b in branches {
        let (root, mine) = split(b.schema);
        // A name taken by another shape's root or definition, with other
        // content: this shape's is renamed, with every reference to it.
        let taken = |k: &String, v: &Value| {
            roots.iter().any(|(n, _)| n == k) || defs.get(k).is_some_and(|d| d != v)
        };
        let clashes: Vec<String> = mine
            .iter()
            .filter(|(k, v)| taken(k, v))
            .map(|(k, _)| k.clone())
            .collect();
        let rename = |v: Value| -> Value {
            if clashes.is_empty() {
                return v;
            }
            let mut text = v.to_string();
            for k in &clashes {
                text = text.replace(
                    &format!("\"#/$defs/{k}\""),
                    &format!("\"#/$defs/{}{k}\"", b.prefix),
                );
            }
            serde_json::from_str(&text).unwrap_or(v)
        };
        for (k, v) in mine {
            let name = if clashes.contains(&k) {
                format!("{}{k}", b.prefix)
            } else {
                k
            };
            let v = rename(v);
            defs.entry(name).or_insert(v);
        }
        roots.push((b.name, rename(Value::Object(root))));
    }
    let any: Vec<Value> = roots
        .iter()
        .map(|(n, _)| json!({"$ref": format!("#/$defs/{n}")}))
        .collect();
    for (n, v) in roots {
        defs.insert(n.into(), v);
    }
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": format!("https://baton.dev/schema/{id}-v{SCHEMA_VERSION}.json"),
        "title": title,
        "description": description,
        "type": "object",
        "anyOf": any,
        "$defs": defs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clashing_definitions_are_renamed_with_their_references() {
        let a = json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D"}},
                       "$defs": {"D": {"type": "string"}, "Same": {"type": "null"}}});
        let b = json!({"type": "object", "properties": {"d": {"$ref": "#/$defs/D"}},
                       "$defs": {"D": {"type": "integer"}, "Same": {"type": "null"}}});
        let s = either(
            "x",
            "X",
            "x",
            vec![
                Branch {
                    name: "A",
                    prefix: "A",
                    schema: a,
                },
                Branch {
                    name: "B",
                    prefix: "B",
                    schema: b,
                },
            ],
        );
        assert_eq!(s["$defs"]["D"]["type"], "string");
        assert_eq!(s["$defs"]["BD"]["type"], "integer");
        assert_eq!(s["$defs"]["B"]["properties"]["d"]["$ref"], "#/$defs/BD");
        assert_eq!(s["$defs"]["A"]["properties"]["d"]["$ref"], "#/$defs/D");
        assert!(s["$defs"].get("BSame").is_none(), "equal ones are shared");
        assert_eq!(s["anyOf"][1]["$ref"], "#/$defs/B");
    }
}
