//! Strict checks of a member's JSON answer, shared by every council schema:
//! required fields, no unknown ones, the right types, with readable errors.

use serde_json::Value;

/// Find the answer in a reply (whole text, fenced block, first balanced
/// object: `ask`'s rules) and validate it.
pub fn extract<T>(
    answer: &str,
    validate: &dyn Fn(&Value) -> Result<T, Vec<String>>,
    fields: &[&str],
) -> Result<T, Vec<String>> {
    crate::ask::advice::extract_with(answer, validate, fields)
}

/// A JSON object checked against a fixed list of fields.
pub struct Obj<'a> {
    v: &'a serde_json::Map<String, Value>,
    fields: &'a [&'a str],
}

impl<'a> Obj<'a> {
    pub fn new(v: &'a Value, fields: &'a [&'a str]) -> Result<Obj<'a>, Vec<String>> {
        match v.as_object() {
            Some(v) => Ok(Obj { v, fields }),
            None => Err(vec!["the answer must be one JSON object".into()]),
        }
    }

    /// Missing and unknown fields.
    pub fn errors(&self) -> Vec<String> {
        let mut e = Vec::new();
        for f in self.fields {
            if !self.v.contains_key(*f) {
                e.push(format!("`{f}` is missing"));
            }
        }
        for k in self.v.keys() {
            if !self.fields.contains(&k.as_str()) {
                e.push(format!("`{k}` is not a field of the schema"));
            }
        }
        e
    }

    pub fn string(&self, f: &str, errs: &mut Vec<String>) -> String {
        match self.v.get(f) {
            Some(Value::String(s)) => s.clone(),
            Some(_) => {
                errs.push(format!("`{f}` must be a string"));
                String::new()
            }
            None => String::new(),
        }
    }

    pub fn opt_string(&self, f: &str, errs: &mut Vec<String>) -> Option<String> {
        match self.v.get(f) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Null) | None => None,
            Some(_) => {
                errs.push(format!("`{f}` must be a string or null"));
                None
            }
        }
    }

    pub fn strings(&self, f: &str, errs: &mut Vec<String>) -> Vec<String> {
        match self.v.get(f) {
            Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
                .iter()
                .filter_map(|s| s.as_str().map(str::to_string))
                .collect(),
            Some(_) => {
                errs.push(format!("`{f}` must be an array of strings"));
                Vec::new()
            }
            None => Vec::new(),
        }
    }

    /// An array field deserialised into `T`, or an error naming the field.
    pub fn list<T: serde::de::DeserializeOwned>(&self, f: &str, errs: &mut Vec<String>) -> Vec<T> {
        match self.v.get(f) {
            Some(v) => serde_json::from_value(v.clone()).unwrap_or_else(|e| {
                errs.push(format!("`{f}`: {e}"));
                Vec::new()
            }),
            None => Vec::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn types_and_fields_are_checked() {
        let v = json!({"a": "x", "b": 1, "z": null});
        let o = Obj::new(&v, &["a", "b", "c"]).unwrap();
        let mut e = o.errors();
        assert_eq!(o.string("a", &mut e), "x");
        o.strings("b", &mut e);
        assert!(e.iter().any(|m| m.contains("`c` is missing")));
        assert!(e.iter().any(|m| m.contains("`z` is not a field")));
        assert!(e.iter().any(|m| m.contains("`b` must be an array")));
        assert!(Obj::new(&json!([1]), &["a"]).is_err());
    }
}
