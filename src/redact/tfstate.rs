//! Terraform state: a `random_password` resource keeps the password it
//! generated in clear, as the `"result"` attribute of its instance
//! (`terraform.tfstate`, `terraform state pull`, `terraform show -json`).
//! Nothing in the value says it is a secret; its place does.
//!
//! From each occurrence of `random_password` (the resource's `"type"` or
//! its address), every JSON `"result": "…"` up to the next resource's
//! `"type"` key (at most `REACH` bytes on) is a password. JSON that is itself
//! escaped inside a string (`\"result\": \"…\"`) counts too.

/// How far after `random_password` a result may be: a resource's instance
/// with its keepers is well under this.
const REACH: usize = 16 * 1024;

/// Byte ranges of `random_password` results, from the keyword's offsets.
pub fn find(text: &str, hits: &[usize]) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut covered = 0;
    for &h in hits {
        let from = h.max(covered);
        let mut to = (h + REACH).min(text.len());
        while !text.is_char_boundary(to) {
            to -= 1;
        }
        if from >= to {
            continue;
        }
        let region = &text[from..to];
        // Past `random_password` itself, the region ends at the next
        // resource's `"type"` (not a path step's `"type": "get_attr"`).
        let skip = "random_password".len().min(region.len());
        let end = keys(region, "type")
            .filter(|&(k, v)| {
                k >= skip && !matches!(value_head(&region[v..]), "get_attr" | "index")
            })
            .map(|(k, _)| k)
            .next()
            .unwrap_or(region.len());
        for (_, v) in keys(&region[..end], "result") {
            if let Some((s, e)) = string_value(&region[v..]) {
                out.push((from + v + s, from + v + e));
            }
        }
        covered = from + end;
    }
    out
}

/// Offsets of each JSON key `"name"` (or `\"name\"`) in `text` that is
/// followed by a colon: (where the key starts, where its value starts).
fn keys<'a>(text: &'a str, name: &'a str) -> impl Iterator<Item = (usize, usize)> + 'a {
    text.match_indices(name).filter_map(move |(at, _)| {
        let before = &text[..at];
        let opened = before.strip_suffix('"')?;
        let escaped = opened.ends_with('\\');
        let after = &text[at + name.len()..];
        let after = if escaped {
            after.strip_prefix("\\\"")?
        } else {
            after.strip_prefix('"')?
        };
        let rest = after.trim_start().strip_prefix(':')?;
        let value = rest.trim_start();
        Some((at, text.len() - value.len()))
    })
}

/// A JSON string value at the start of `v` (`"…"` or, escaped, `\"…\"`):
/// the range of its content. Other values (`null`, `true`) are not.
fn string_value(v: &str) -> Option<(usize, usize)> {
    let (open, escaped) = if v.starts_with("\\\"") {
        (2, true)
    } else if v.starts_with('"') {
        (1, false)
    } else {
        return None;
    };
    let b = v.as_bytes();
    let mut i = open;
    while i < b.len() {
        match b[i] {
            // In escaped JSON the closing quote is `\"`; a generated password
            // has no quote in it.
            b'\\' if escaped && b.get(i + 1) == Some(&b'"') => break,
            b'\\' => i += 1,
            b'"' => break,
            b'\n' => return None,
            _ => {}
        }
        i += 1;
    }
    let end = i.min(b.len());
    (end > open).then_some((open, end))
}

/// The first characters of a string value (`get_attr` in `"type": "get_attr"`).
fn value_head(v: &str) -> &str {
    let v = v.trim_start_matches(['\\', '"']);
    let n = v
        .bytes()
        .take_while(|c| c.is_ascii_alphanumeric() || *c == b'_')
        .count();
    &v[..n]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn results(text: &str) -> Vec<&str> {
        let hits: Vec<usize> = text
            .match_indices("random_password")
            .map(|(i, _)| i)
            .collect();
        find(text, &hits)
            .into_iter()
            .map(|(s, e)| &text[s..e])
            .collect()
    }

    const STATE: &str = r#"{
  "version": 4,
  "resources": [
    {
      "mode": "managed",
      "type": "random_password",
      "name": "db",
      "instances": [
        {
          "schema_version": 3,
          "attributes": {
            "id": "none",
            "length": 20,
            "result": "Xy8#kP2!mQ9$vR4@aB1c",
            "special": true
          },
          "sensitive_attributes": [[{"type": "get_attr", "value": "result"}]]
        }
      ]
    },
    {
      "mode": "managed",
      "type": "random_pet",
      "name": "name",
      "instances": [{"attributes": {"id": "good-dog", "result": "not-a-secret"}}]
    }
  ]
}"#;

    #[test]
    fn the_result_of_a_random_password_is_found_and_nothing_after_it() {
        assert_eq!(results(STATE), ["Xy8#kP2!mQ9$vR4@aB1c"]);
        // `terraform show -json`, one line, and the same escaped in a string.
        let show = r#"{"address":"random_password.db","mode":"managed","type":"random_password","name":"db","values":{"bcrypt_hash":"x","result":"Qw3\"rt!yu","special":true},"sensitive_values":{"result":true}},{"address":"random_string.s","type":"random_string","values":{"result":"abc"}}"#;
        assert_eq!(results(show), [r#"Qw3\"rt!yu"#]);
        let escaped = r#"{"body": "{\"type\": \"random_password\", \"result\": \"Zz9!k2Lp\"}"}"#;
        assert_eq!(results(escaped), ["Zz9!k2Lp"]);
        // Format 3: the attributes under `primary`.
        let v3 = "\"random_password.db\": {\n \"type\": \"random_password\",\n \"primary\": {\n  \"attributes\": {\n   \"result\": \"h7%Tq-2mW\"\n  }\n }\n}";
        assert_eq!(results(v3), ["h7%Tq-2mW"]);
    }

    #[test]
    fn other_results_stay() {
        for t in [
            r#"{"type": "random_string", "result": "abc"}"#,
            r#"{"result": "ok"} and later random_password"#,
            "resource \"random_password\" \"db\" {\n  length = 16\n}\noutput \"pw\" { value = random_password.db.result }",
            r#"{"type": "random_password", "values": {"result": null}}"#,
        ] {
            assert!(results(t).is_empty(), "{t}");
        }
    }
}
