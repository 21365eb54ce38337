//! The dependency tree stays small (issue 30 §5: the linux-amd64 binary
//! under 7 MiB): crates that were removed for their weight stay out, and
//! crates that were built in two versions are built in one.

use std::collections::BTreeMap;

/// Every package in Cargo.lock with the versions it is locked at.
fn locked() -> BTreeMap<String, Vec<String>> {
    let lock = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.lock"))
        .expect("Cargo.lock");
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    let mut name = None;
    for line in lock.lines() {
        if let Some(n) = line.strip_prefix("name = \"") {
            name = Some(n.trim_end_matches('"').to_string());
        } else if let Some(v) = line.strip_prefix("version = \"")
            && let Some(n) = name.take()
        {
            out.entry(n)
                .or_default()
                .push(v.trim_end_matches('"').to_string());
        }
    }
    out
}

#[test]
fn the_lock_file_is_read() {
    let l = locked();
    assert_eq!(l["baton"].len(), 1, "{:?}", l.get("baton"));
    assert!(l.contains_key("serde_json") && l.len() > 50, "{}", l.len());
}

/// ACP's five requests and two answers are baton's own types
/// (src/agent/acp/requests.rs, client.rs): the published crate brought
/// futures-concurrency, tracing, serde_with, anyhow and a second syn.
#[test]
fn agent_client_protocol_is_not_a_dependency() {
    let heavy: Vec<_> = locked()
        .into_keys()
        .filter(|n| n.starts_with("agent-client-protocol"))
        .collect();
    assert!(heavy.is_empty(), "back in Cargo.lock: {heavy:?}");
}

/// Built in two versions, each of these was in the binary twice.
#[test]
fn sha2_and_signal_hook_are_built_in_one_version() {
    let l = locked();
    for name in ["sha2", "digest", "signal-hook"] {
        let v = &l[name];
        assert_eq!(
            v.len(),
            1,
            "{name} is locked at {v:?}: align baton's version with the other user's"
        );
    }
}

/// The release profile builds the glue for size (`"*"` at "z") but every
/// crate on redaction's and the pump's hot path keeps the level its speed was
/// measured at (docs/benchmarks.md, docs/redaction.md): a named entry wins
/// over `"*"`, so losing one would silently build that crate at "z".
#[test]
fn hot_crates_keep_their_opt_level_beside_the_size_default() {
    let manifest = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
        .expect("Cargo.toml");
    // Section header -> its `opt-level` value, as written.
    let mut levels: BTreeMap<String, String> = BTreeMap::new();
    let mut section = String::new();
    for line in manifest.lines() {
        if let Some(h) = line.strip_prefix('[') {
            section = h.trim_end_matches(']').to_string();
        } else if let Some(v) = line.strip_prefix("opt-level = ") {
            levels.insert(section.clone(), v.trim().to_string());
        }
    }
    let level = |package: &str| {
        let key = if package.is_empty() {
            "profile.release".to_string()
        } else {
            format!("profile.release.package.{package}")
        };
        levels
            .get(&key)
            .cloned()
            .unwrap_or_else(|| panic!("no opt-level in [{key}]"))
    };
    assert_eq!(level(""), "\"z\"", "baton itself");
    assert_eq!(level("\"*\""), "\"z\"");
    for hot in [
        "aho-corasick",
        "memchr",
        "regex-automata",
        "serde_json",
        "ratatui-core",
        "ratatui-widgets",
    ] {
        assert_eq!(level(hot), "3", "{hot}");
    }
    for rules in ["regex", "regex-syntax"] {
        assert_eq!(level(rules), "\"s\"", "{rules}");
    }
}
