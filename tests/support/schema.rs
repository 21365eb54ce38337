//! A small JSON Schema validator for the keywords baton's published schemas
//! use (schemars' output and the hand-written council schemas), stricter
//! than the standard in two ways that make it a contract check:
//!
//! - an object schema that lists `properties` admits no other key unless
//!   it says `additionalProperties` itself (a field a result carries must be
//!   described, even though the published schema stays open for readers);
//! - a keyword it does not know is an error, not ignored: a schema that
//!   starts using one cannot pass unchecked.
//!
//! It also records which described properties real output reached, so a
//! test can ask whether every field the schema promises was seen.
//!
//! Why not the `jsonschema` crate: 0.61 adds 81 crates to baton's tree with
//! its default features (reqwest, rustls and aws-lc-sys's C build among
//! them) and 27 without (fancy-regex, num-*, fraction, e-mail and URI
//! parsers; `cargo tree`), minutes of build on a 2-core machine for a dev
//! dependency, and it cannot be told to forbid the fields a schema leaves
//! open. The subset here is about 250 lines; each keyword has a unit test
//! below.

use std::collections::BTreeSet;

use serde_json::Value;

/// Keywords that describe and never constrain.
const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "$defs",
    "definitions",
    "$comment",
    "title",
    "description",
    "default",
    "examples",
    "format",
    "deprecated",
    "readOnly",
    "writeOnly",
];

pub struct Validator {
    root: Value,
    /// Schema locations (`#/$defs/Usage/properties/input_tokens`) of every
    /// property some valid value had.
    pub seen: BTreeSet<String>,
}

impl Validator {
    pub fn new(root: Value) -> Validator {
        Validator {
            root,
            seen: BTreeSet::new(),
        }
    }

    /// Every error in `v`, each with the JSON pointer of the value and of the
    /// schema. The properties reached count as seen only when `v` is valid.
    pub fn validate(&mut self, v: &Value) -> Result<(), Vec<String>> {
        let mut errors = Vec::new();
        let mut seen = BTreeSet::new();
        let root = self.root.clone();
        self.check(&root, "#", v, "", &mut errors, &mut seen);
        if errors.is_empty() {
            self.seen.extend(seen);
            Ok(())
        } else {
            Err(errors)
        }
    }

    /// The schema locations of every property the schema describes (those
    /// in `$defs` that no path reaches included).
    pub fn described(&self) -> BTreeSet<String> {
        let mut out = BTreeSet::new();
        collect_properties(&self.root, "#", &mut out);
        out
    }

    fn resolve(&self, reference: &str) -> (Value, String) {
        let pointer = reference
            .strip_prefix('#')
            .unwrap_or_else(|| panic!("only local references are supported: {reference}"));
        let target = self
            .root
            .pointer(pointer)
            .unwrap_or_else(|| panic!("unresolved $ref {reference}"));
        (target.clone(), reference.to_string())
    }

    fn check(
        &self,
        schema: &Value,
        at_schema: &str,
        v: &Value,
        at: &str,
        errors: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) {
        let s = match schema {
            Value::Bool(true) => return,
            Value::Bool(false) => {
                errors.push(format!("{at}: nothing is allowed here ({at_schema})"));
                return;
            }
            Value::Object(s) => s,
            _ => panic!("{at_schema}: a schema must be an object or a boolean"),
        };
        if let Some(r) = s.get("$ref") {
            let (target, loc) = self.resolve(r.as_str().expect("$ref is a string"));
            self.check(&target, &loc, v, at, errors, seen);
        }
        self.check_rest(s, at_schema, v, at, errors, seen);
    }

    /// Every keyword of `s` but the annotations (and `$ref`, done by the caller).
    fn check_rest(
        &self,
        s: &serde_json::Map<String, Value>,
        at_schema: &str,
        v: &Value,
        at: &str,
        errors: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) {
        let fail = |errors: &mut Vec<String>, m: String| {
            errors.push(format!("{at}: {m} ({at_schema})"));
        };
        for (k, want) in s {
            let k = k.as_str();
            if ANNOTATIONS.contains(&k) || k == "$ref" {
                continue;
            }
            match k {
                "type" => {
                    let types: Vec<&str> = match want {
                        Value::String(t) => vec![t.as_str()],
                        Value::Array(ts) => ts.iter().filter_map(Value::as_str).collect(),
                        _ => panic!("{at_schema}: bad `type`"),
                    };
                    if !types.iter().any(|t| is_type(v, t)) {
                        fail(errors, format!("{} is not of type {types:?}", short(v)));
                    }
                }
                "enum" => {
                    let options = want.as_array().expect("enum is an array");
                    if !options.contains(v) {
                        fail(errors, format!("{} is not one of {want}", short(v)));
                    }
                }
                "const" => {
                    if v != want {
                        fail(errors, format!("{} is not {want}", short(v)));
                    }
                }
                "properties" | "required" | "additionalProperties" => {}
                "items" => {
                    if let Value::Array(items) = v {
                        for (i, item) in items.iter().enumerate() {
                            self.check(
                                want,
                                &format!("{at_schema}/items"),
                                item,
                                &format!("{at}/{i}"),
                                errors,
                                seen,
                            );
                        }
                    }
                }
                "anyOf" | "oneOf" | "allOf" => {
                    let branches = want.as_array().expect("a list of schemas");
                    let mut passed = 0;
                    let mut why = Vec::new();
                    let mut kept = BTreeSet::new();
                    for (i, b) in branches.iter().enumerate() {
                        let mut e = Vec::new();
                        let mut s2 = BTreeSet::new();
                        self.check(b, &format!("{at_schema}/{k}/{i}"), v, at, &mut e, &mut s2);
                        if e.is_empty() {
                            passed += 1;
                            kept.extend(s2);
                        } else {
                            why.extend(e);
                        }
                    }
                    let ok = match k {
                        "anyOf" => passed >= 1,
                        "oneOf" => passed == 1,
                        _ => passed == branches.len(),
                    };
                    if ok {
                        seen.extend(kept);
                    } else {
                        fail(
                            errors,
                            format!(
                                "{} matches {passed} of {} `{k}` branches: {}",
                                short(v),
                                branches.len(),
                                why.join("; ")
                            ),
                        );
                    }
                }
                "minimum" => {
                    if let (Some(n), Some(min)) = (v.as_f64(), want.as_f64())
                        && n < min
                    {
                        fail(errors, format!("{n} is below {min}"));
                    }
                }
                "maximum" => {
                    if let (Some(n), Some(max)) = (v.as_f64(), want.as_f64())
                        && n > max
                    {
                        fail(errors, format!("{n} is above {max}"));
                    }
                }
                "minItems" | "maxItems" => {
                    if let (Some(a), Some(n)) = (v.as_array(), want.as_u64()) {
                        let len = a.len() as u64;
                        if (k == "minItems" && len < n) || (k == "maxItems" && len > n) {
                            fail(errors, format!("{len} items, {k} is {n}"));
                        }
                    }
                }
                "minLength" | "maxLength" => {
                    if let (Some(t), Some(n)) = (v.as_str(), want.as_u64()) {
                        let len = t.chars().count() as u64;
                        if (k == "minLength" && len < n) || (k == "maxLength" && len > n) {
                            fail(errors, format!("{len} characters, {k} is {n}"));
                        }
                    }
                }
                other => panic!(
                    "{at_schema}: the contract validator does not know `{other}`; teach it \
                     (tests/support/schema.rs) before publishing a schema that uses it"
                ),
            }
        }
        if let Value::Object(obj) = v {
            self.check_object(s, at_schema, obj, at, errors, seen);
        }
    }

    fn check_object(
        &self,
        s: &serde_json::Map<String, Value>,
        at_schema: &str,
        obj: &serde_json::Map<String, Value>,
        at: &str,
        errors: &mut Vec<String>,
        seen: &mut BTreeSet<String>,
    ) {
        let props = s.get("properties").and_then(Value::as_object);
        if let Some(req) = s.get("required").and_then(Value::as_array) {
            for r in req.iter().filter_map(Value::as_str) {
                if !obj.contains_key(r) {
                    errors.push(format!("{at}: lacks required `{r}` ({at_schema})"));
                }
            }
        }
        for (key, value) in obj {
            let here = format!("{at}/{key}");
            if let Some(p) = props.and_then(|p| p.get(key)) {
                let loc = format!("{at_schema}/properties/{key}");
                seen.insert(loc.clone());
                self.check(p, &loc, value, &here, errors, seen);
                continue;
            }
            match s.get("additionalProperties") {
                Some(extra @ Value::Object(_)) => self.check(
                    extra,
                    &format!("{at_schema}/additionalProperties"),
                    value,
                    &here,
                    errors,
                    seen,
                ),
                Some(Value::Bool(true)) => {}
                // Said `false`, or left open where properties are listed:
                // an undescribed field.
                Some(Value::Bool(false)) | None if props.is_some() => errors.push(format!(
                    "{here}: `{key}` is not described by the schema ({at_schema})"
                )),
                Some(Value::Bool(false)) => {
                    errors.push(format!("{here}: no property is allowed here ({at_schema})"))
                }
                // A free-form object (`{"type": "object"}`), on purpose.
                _ => {}
            }
        }
    }
}

fn is_type(v: &Value, t: &str) -> bool {
    match t {
        "null" => v.is_null(),
        "boolean" => v.is_boolean(),
        "object" => v.is_object(),
        "array" => v.is_array(),
        "string" => v.is_string(),
        "number" => v.is_number(),
        "integer" => v.is_i64() || v.is_u64() || v.as_f64().is_some_and(|f| f.fract() == 0.0),
        other => panic!("unknown type `{other}`"),
    }
}

fn short(v: &Value) -> String {
    let s = v.to_string();
    match s.char_indices().nth(80) {
        Some((cut, _)) => format!("{}…", &s[..cut]),
        None => s,
    }
}

fn collect_properties(s: &Value, at: &str, out: &mut BTreeSet<String>) {
    match s {
        Value::Object(o) => {
            for (k, v) in o {
                let here = format!("{at}/{k}");
                if k == "properties"
                    && let Some(props) = v.as_object()
                {
                    for (name, p) in props {
                        let loc = format!("{here}/{name}");
                        out.insert(loc.clone());
                        collect_properties(p, &loc, out);
                    }
                } else if k != "enum" && k != "const" && k != "examples" && k != "default" {
                    collect_properties(v, &here, out);
                }
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                collect_properties(v, &format!("{at}/{i}"), out);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn errors(schema: Value, v: Value) -> Vec<String> {
        Validator::new(schema)
            .validate(&v)
            .err()
            .unwrap_or_default()
    }

    #[test]
    fn each_keyword_accepts_and_refuses() {
        let s = json!({
            "$defs": {"N": {"type": ["integer", "null"], "minimum": 0}},
            "type": "object",
            "required": ["a"],
            "properties": {
                "a": {"$ref": "#/$defs/N"},
                "b": {"enum": ["x", "y"]},
                "c": {"type": "array", "items": {"const": 1}, "maxItems": 2},
                "d": {"anyOf": [{"type": "string", "minLength": 2}, {"type": "null"}]},
                "e": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
                "m": {"type": "object", "additionalProperties": {"type": "integer"}},
                "f": {"type": "object"}
            }
        });
        let ok = json!({"a": 1, "b": "x", "c": [1, 1], "d": "ab", "e": 1.5,
            "m": {"k": 2}, "f": {"anything": true}});
        assert_eq!(errors(s.clone(), ok), Vec::<String>::new());
        for (bad, why) in [
            (json!({}), "lacks required `a`"),
            (json!({"a": -1}), "below"),
            (json!({"a": "1"}), "not of type"),
            (json!({"a": 1, "b": "z"}), "not one of"),
            (json!({"a": 1, "c": [2]}), "is not 1"),
            (json!({"a": 1, "c": [1, 1, 1]}), "maxItems"),
            (json!({"a": 1, "d": "a"}), "branches"),
            (json!({"a": 1, "e": 1}), "matches 2 of 2"),
            (json!({"a": 1, "m": {"k": "no"}}), "not of type"),
            (json!({"a": 1, "z": 0}), "`z` is not described"),
        ] {
            let e = errors(s.clone(), bad.clone());
            assert!(e.iter().any(|m| m.contains(why)), "{bad}: {e:?}");
        }
    }

    #[test]
    fn an_unknown_keyword_is_refused_not_ignored() {
        let r = std::panic::catch_unwind(|| errors(json!({"patternProperties": {}}), json!({})));
        assert!(r.is_err());
    }

    #[test]
    fn seen_properties_are_counted_only_for_valid_values() {
        let s = json!({"type": "object", "properties": {"a": {"type": "integer"}, "b": {}}});
        let mut v = Validator::new(s);
        assert!(v.validate(&json!({"a": "x"})).is_err());
        assert!(v.seen.is_empty());
        v.validate(&json!({"a": 1})).unwrap();
        assert_eq!(
            v.described().difference(&v.seen).collect::<Vec<_>>(),
            ["#/properties/b"]
        );
    }
}
