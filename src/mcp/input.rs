//! A tool's input: the fields the command line defines for that command
//! (handed over by `cli`, which owns clap), the JSON Schema made from them,
//! and the argv a call's arguments become.
//!
//! One source of truth: a flag added to a command appears in the tool's
//! schema and argv with no change here; the only list kept by hand is the
//! flags a tool leaves out (`tools::ToolDef::cli_only`), each with its reason.

use std::ffi::OsString;

use serde_json::{Map, Value, json};

/// What kind of value a field takes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A flag without a value (`--raw`): JSON `true` sets it.
    Switch,
    /// One value (`--model M`, or a positional like the task).
    Text,
    /// One whole number (`--quorum N`).
    Integer,
    /// One amount (`--max-usd 0.50`): a JSON number.
    Number,
    /// A repeatable flag (`--allow GLOB`), or one that takes a list.
    List,
}

/// One input of a tool, described from the command line's own definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field {
    /// The JSON property: the argument's id (`idle_timeout`).
    pub name: String,
    /// `--idle-timeout`; `None` for a positional.
    pub flag: Option<String>,
    pub kind: Kind,
    /// The flag's `--help` line.
    pub help: String,
    pub required: bool,
    /// The values the command line accepts, when it names them.
    pub choices: Vec<String>,
    /// The command line's default, for the schema (the CLI applies it).
    pub default: Option<String>,
    /// The value is a path the command opens (`--cwd DIR`, `--file PATH`):
    /// held to the server's roots (`roots`).
    pub path: bool,
}

/// A flag's help as a property's description, without what only a person
/// at a shell needs: `[default: …]` (a fixed default is the schema's
/// `default`; the others come from the user's configuration, which a call
/// cannot change) and `(repeatable)` (the type says it is a list).
pub fn described(help: &str) -> String {
    let mut s = help.to_string();
    while let Some(i) = s.find("[default") {
        let end = s[i..].find(']').map_or(s.len(), |j| i + j + 1);
        s.replace_range(i..end, "");
    }
    let s = s.replace(" (repeatable)", "").replace("; repeatable)", ")");
    let s: Vec<&str> = s.split_whitespace().collect();
    s.join(" ").trim_end_matches('.').trim_end().to_string()
}

/// The JSON Schema of a tool's input (`type: object`, no other properties).
pub fn schema(fields: &[Field], also_required: &[&str]) -> Map<String, Value> {
    let mut props = Map::new();
    let mut required = Vec::new();
    for f in fields {
        let mut p = match f.kind {
            Kind::Switch => json!({"type": "boolean"}),
            Kind::Text => json!({"type": "string"}),
            Kind::Integer => json!({"type": "integer", "minimum": 0}),
            Kind::Number => json!({"type": "number", "exclusiveMinimum": 0}),
            Kind::List => json!({"type": "array", "items": {"type": "string"}}),
        };
        let o = p.as_object_mut().expect("an object");
        if !f.help.is_empty() {
            o.insert("description".into(), f.help.clone().into());
        }
        if !f.choices.is_empty() && f.kind == Kind::Text {
            o.insert("enum".into(), json!(f.choices));
        }
        if let Some(d) = &f.default {
            let v = match f.kind {
                Kind::Integer => d.parse::<u64>().map_or_else(|_| json!(d), |n| json!(n)),
                Kind::Number => d.parse::<f64>().map_or_else(|_| json!(d), |n| json!(n)),
                _ => json!(d),
            };
            o.insert("default".into(), v);
        }
        if f.required || also_required.contains(&f.name.as_str()) {
            required.push(f.name.clone());
        }
        props.insert(f.name.clone(), p);
    }
    let mut s = Map::new();
    s.insert("type".into(), "object".into());
    s.insert("properties".into(), Value::Object(props));
    if !required.is_empty() {
        s.insert("required".into(), json!(required));
    }
    s.insert("additionalProperties".into(), false.into());
    s
}

/// The argv (after `baton <command…>`) that `args` asks for: `--flag=value`
/// for each value (so a value starting with `-` stays a value), `--flag` for
/// a switch set to true, then `--` and the positionals in their order. The
/// command line then validates it exactly as if a person had typed it.
///
/// Refused here, before anything runs: an unknown property, a value of the
/// wrong JSON type, a missing required field, a NUL byte (no argv can carry it).
pub fn argv(
    fields: &[Field],
    also_required: &[&str],
    args: &Map<String, Value>,
) -> Result<Vec<OsString>, String> {
    if let Some(k) = args.keys().find(|k| !fields.iter().any(|f| &f.name == *k)) {
        let known: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
        return Err(format!(
            "unknown argument `{k}` (this tool takes: {})",
            known.join(", ")
        ));
    }
    let mut flags: Vec<OsString> = Vec::new();
    let mut positionals: Vec<OsString> = Vec::new();
    for f in fields {
        let Some(v) = args.get(&f.name).filter(|v| !v.is_null()) else {
            if f.required || also_required.contains(&f.name.as_str()) {
                return Err(format!("`{}` is required", f.name));
            }
            continue;
        };
        let values: Vec<String> = match (f.kind, v) {
            (Kind::Switch, Value::Bool(true)) => {
                flags.push(flag(f).into());
                continue;
            }
            (Kind::Switch, Value::Bool(false)) => continue,
            (Kind::Text, Value::String(s)) => vec![s.clone()],
            (Kind::Integer, Value::Number(n)) if n.is_u64() => vec![n.to_string()],
            // The command line checks the amount (positive, finite).
            (Kind::Number, Value::Number(n)) => vec![n.to_string()],
            (Kind::List, Value::Array(items)) => items
                .iter()
                .map(|i| match i {
                    Value::String(s) => Ok(s.clone()),
                    _ => Err(format!("`{}` takes a list of strings", f.name)),
                })
                .collect::<Result<_, _>>()?,
            // A single string where a list is expected is one item.
            (Kind::List, Value::String(s)) => vec![s.clone()],
            _ => return Err(format!("`{}` must be {}", f.name, expected(f.kind))),
        };
        for value in values {
            if value.contains('\0') {
                return Err(format!("`{}` contains a NUL byte", f.name));
            }
            match &f.flag {
                Some(_) => flags.push(format!("{}={value}", flag(f)).into()),
                None => positionals.push(value.into()),
            }
        }
    }
    if !positionals.is_empty() {
        flags.push("--".into());
        flags.extend(positionals);
    }
    Ok(flags)
}

fn flag(f: &Field) -> &str {
    f.flag.as_deref().unwrap_or_default()
}

fn expected(kind: Kind) -> &'static str {
    match kind {
        Kind::Switch => "true or false",
        Kind::Text => "a string",
        Kind::Integer => "a whole number",
        Kind::Number => "a number",
        Kind::List => "a list of strings",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(name: &str, flag: Option<&str>, kind: Kind) -> Field {
        Field {
            name: name.into(),
            flag: flag.map(Into::into),
            kind,
            help: format!("the {name}"),
            required: false,
            choices: Vec::new(),
            default: None,
            path: false,
        }
    }

    fn fields() -> Vec<Field> {
        vec![
            field("agent", Some("--agent"), Kind::Text),
            field("raw", Some("--raw"), Kind::Switch),
            field("allow", Some("--allow"), Kind::List),
            field("quorum", Some("--quorum"), Kind::Integer),
            field("max_usd", Some("--max-usd"), Kind::Number),
            Field {
                required: true,
                ..field("task", None, Kind::Text)
            },
        ]
    }

    fn os(v: &[&str]) -> Vec<OsString> {
        v.iter().map(OsString::from).collect()
    }

    fn obj(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn arguments_become_flags_then_positionals_after_a_double_dash() {
        let a = obj(json!({
            "task": "--not-a-flag; rm -rf /",
            "agent": "-m --dangerously-bypass",
            "raw": true,
            "allow": ["src/**", "tests/*"],
            "quorum": 2,
            "max_usd": 0.5,
        }));
        assert_eq!(
            argv(&fields(), &[], &a).unwrap(),
            os(&[
                "--agent=-m --dangerously-bypass",
                "--raw",
                "--allow=src/**",
                "--allow=tests/*",
                "--quorum=2",
                "--max-usd=0.5",
                "--",
                "--not-a-flag; rm -rf /",
            ])
        );
        // false and null leave a flag out.
        let a = obj(json!({"task": "t", "raw": false, "agent": null}));
        assert_eq!(argv(&fields(), &[], &a).unwrap(), os(&["--", "t"]));
    }

    #[test]
    fn bad_arguments_are_refused_before_anything_runs() {
        let f = fields();
        let cases = [
            (
                json!({"task": "t", "frobnicate": 1}),
                "unknown argument `frobnicate`",
            ),
            (json!({}), "`task` is required"),
            (json!({"task": 5}), "`task` must be a string"),
            (
                json!({"task": "t", "raw": "yes"}),
                "`raw` must be true or false",
            ),
            (
                json!({"task": "t", "quorum": -1}),
                "`quorum` must be a whole number",
            ),
            (
                json!({"task": "t", "quorum": 1.5}),
                "`quorum` must be a whole number",
            ),
            (
                json!({"task": "t", "max_usd": "0.5"}),
                "`max_usd` must be a number",
            ),
            (
                json!({"task": "t", "allow": [1]}),
                "`allow` takes a list of strings",
            ),
            (json!({"task": "a\u{0}b"}), "`task` contains a NUL byte"),
        ];
        for (args, want) in cases {
            let err = argv(&f, &[], &obj(args.clone())).unwrap_err();
            assert!(err.contains(want), "{args}: {err}");
        }
        let err = argv(&f, &["agent"], &obj(json!({"task": "t"}))).unwrap_err();
        assert!(err.contains("`agent` is required"), "{err}");
    }

    #[test]
    fn a_description_leaves_out_what_is_for_a_shell() {
        assert_eq!(
            described("Stop the peer after this long (e.g. 90s) [default: 60m, or run.timeout]"),
            "Stop the peer after this long (e.g. 90s)"
        );
        assert_eq!(described("A snippet (repeatable)"), "A snippet");
        assert_eq!(
            described("Files the writer may change (overrides the plan's; repeatable)"),
            "Files the writer may change (overrides the plan's)"
        );
        assert_eq!(described("[default: x] Y [default: z]."), "Y");
    }

    #[test]
    fn the_schema_types_each_field_and_closes_the_object() {
        let mut f = fields();
        f[0].choices = vec!["codex".into(), "claude".into()];
        f[3].default = Some("2".into());
        let s = Value::Object(schema(&f, &["agent"]));
        assert_eq!(s["type"], "object");
        assert_eq!(s["additionalProperties"], false);
        assert_eq!(s["required"], json!(["agent", "task"]));
        assert_eq!(s["properties"]["raw"]["type"], "boolean");
        assert_eq!(s["properties"]["allow"]["items"]["type"], "string");
        assert_eq!(s["properties"]["quorum"]["default"], 2);
        assert_eq!(s["properties"]["max_usd"]["type"], "number");
        assert_eq!(s["properties"]["agent"]["enum"], json!(["codex", "claude"]));
        assert_eq!(s["properties"]["task"]["description"], "the task");
    }
}
