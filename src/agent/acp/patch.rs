//! Requests that carry an `apply_patch` payload instead of a path: Cline's
//! `apply_patch` tool asks with kind `other` and only the patch text
//! (`rawInput.input`, measured with cline 3.0.65). The patch grammar names
//! every file it touches in a header line, so the policy can judge the
//! request by those paths like any other edit.

use serde_json::Value;

/// The header lines of the patch grammar, each followed by one path.
const HEADERS: &[&str] = &[
    "*** Add File:",
    "*** Update File:",
    "*** Delete File:",
    "*** Move to:",
];

/// The patch text of a request's `rawInput`, if it carries one.
pub fn patch_text(tool_call: &Value) -> Option<&str> {
    let input = tool_call.get("rawInput")?;
    ["input", "patch"]
        .iter()
        .filter_map(|k| input.get(*k).and_then(Value::as_str))
        .find(|s| s.trim_start().starts_with("*** Begin Patch"))
}

/// Every path a patch's headers name, in order, without repeats. A patch
/// that names none yields none (and the policy then rejects it).
pub fn paths(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in patch.lines() {
        let line = line.trim_end_matches('\r');
        if let Some(p) = HEADERS.iter().find_map(|h| line.strip_prefix(h)) {
            let p = p.trim();
            if !p.is_empty() && !out.iter().any(|o| o == p) {
                out.push(p.to_string());
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn headers_name_every_file_a_patch_touches() {
        let p = "*** Begin Patch\n*** Add File: out.txt\n+hi\n*** Update File: src/a.rs\n\
                 *** Move to: ../elsewhere/b.rs\n@@\n-x\n+y\n*** Delete File: /etc/passwd\n\
                 *** Update File: out.txt\n*** End Patch";
        assert_eq!(
            paths(p),
            ["out.txt", "src/a.rs", "../elsewhere/b.rs", "/etc/passwd"]
        );
        // A line that only contains a header is not one.
        assert!(paths("*** Begin Patch\n+*** Add File: x\n*** End Patch").is_empty());
    }

    #[test]
    fn only_a_patch_payload_counts() {
        let t = |v: Value| json!({ "rawInput": v });
        let add = "*** Begin Patch\n*** Add File: a\n+x\n*** End Patch";
        assert_eq!(patch_text(&t(json!({ "input": add }))), Some(add));
        assert_eq!(patch_text(&t(json!({ "patch": add }))), Some(add));
        assert_eq!(patch_text(&t(json!({ "input": "rm -rf /" }))), None);
        assert_eq!(patch_text(&json!({})), None);
    }
}
