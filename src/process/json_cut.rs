//! Closing a JSON line that was cut at the parse limit (`process::MAX_LINE`),
//! so that what was kept of it still parses.
//!
//! A peer's final message can be one enormous event line. baton keeps only
//! its first 64 MiB in memory; cut mid-string, that prefix is not JSON. This
//! ends the open string (dropping a half escape sequence) and closes every
//! open object and array, so the parser sees the same event with its long
//! text truncated. A cut anywhere else that cannot be closed (inside a key,
//! a number, a literal) gives `None`, and the line is skipped as before.

/// `prefix` (the start of a JSON document) completed into one that parses,
/// if the cut fell where a value can be closed.
pub fn close(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut stack: Vec<u8> = Vec::new();
    let mut in_string = false;
    // Where the current string's pending escape started, if one is open.
    let mut escape_at: Option<usize> = None;
    let mut unicode_left = 0u8;
    for (i, &b) in prefix.iter().enumerate() {
        if in_string {
            if unicode_left > 0 {
                if !b.is_ascii_hexdigit() {
                    return None;
                }
                unicode_left -= 1;
                if unicode_left == 0 {
                    escape_at = None;
                }
            } else if escape_at.is_some() {
                if b == b'u' {
                    unicode_left = 4;
                } else {
                    escape_at = None;
                }
            } else if b == b'\\' {
                escape_at = Some(i);
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' => stack.push(b'}'),
            b'[' => stack.push(b']'),
            b'}' | b']' if stack.pop() != Some(b) => return None,
            _ => {}
        }
    }
    let mut out = match (in_string, escape_at) {
        (true, Some(at)) => prefix[..at].to_vec(),
        _ => prefix.to_vec(),
    };
    if in_string {
        // A multi-byte character cut in half becomes U+FFFD later, when the
        // line is decoded; it cannot break the JSON structure.
        out.push(b'"');
    } else {
        while out.last().is_some_and(u8::is_ascii_whitespace) {
            out.pop();
        }
        match out.last() {
            Some(b',') => {
                out.pop();
            }
            Some(b':') => out.extend_from_slice(b"null"),
            _ => {}
        }
    }
    while let Some(c) = stack.pop() {
        out.push(c);
    }
    let text = String::from_utf8_lossy(&out);
    serde_json::from_str::<serde::de::IgnoredAny>(&text).ok()?;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn closed(s: &str) -> Option<String> {
        close(s.as_bytes()).map(|b| String::from_utf8(b).unwrap())
    }

    #[test]
    fn a_cut_inside_the_long_string_keeps_its_start() {
        assert_eq!(
            closed(r#"{"type":"item.completed","item":{"text":"STARTaaa"#).as_deref(),
            Some(r#"{"type":"item.completed","item":{"text":"STARTaaa"}}"#)
        );
        // A half escape is dropped, a whole one kept.
        assert_eq!(closed(r#"{"t":"a\"#).as_deref(), Some(r#"{"t":"a"}"#));
        assert_eq!(closed(r#"{"t":"a\u12"#).as_deref(), Some(r#"{"t":"a"}"#));
        assert_eq!(closed(r#"{"t":"a\n"#).as_deref(), Some(r#"{"t":"a\n"}"#));
        assert_eq!(
            closed(r#"{"t":["a","b"#).as_deref(),
            Some(r#"{"t":["a","b"]}"#)
        );
    }

    #[test]
    fn a_cut_between_values_is_closed() {
        assert_eq!(closed(r#"{"a":1,"#).as_deref(), Some(r#"{"a":1}"#));
        assert_eq!(closed(r#"{"a": "#).as_deref(), Some(r#"{"a":null}"#));
        assert_eq!(closed(r#"[1, 2 "#).as_deref(), Some("[1, 2]"));
    }

    #[test]
    fn a_cut_that_cannot_be_closed_is_none() {
        assert_eq!(closed(r#"{"ke"#), None);
        assert_eq!(closed(r#"{"a":tr"#), None);
        assert_eq!(closed(r#"{"a":1]"#), None);
        assert_eq!(closed(""), None);
    }
}
