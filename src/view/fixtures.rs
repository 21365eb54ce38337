//! Test support: every real transcript in `tests/fixtures/<agent>/`, and
//! golden files beside them (`BATON_BLESS=1` rewrites them after a change).

use std::path::PathBuf;

use crate::agent::Agent;

pub struct Transcript {
    pub dir: &'static str,
    pub name: String,
    pub agent: Agent,
    pub bytes: Vec<u8>,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

/// Every recorded stdout transcript (not READMEs or stderr captures).
pub fn transcripts() -> Vec<Transcript> {
    let mut out = Vec::new();
    for (dir, agent) in [
        ("codex", Agent::Codex),
        ("claude", Agent::Claude),
        ("pi", Agent::Pi),
        ("gemini-cli", Agent::GeminiCli),
        ("agy", Agent::Agy),
        ("opencode", Agent::Opencode),
        ("qwen", Agent::Qwen),
    ] {
        let mut names: Vec<String> = std::fs::read_dir(root().join(dir))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n != "README.md" && !n.ends_with(".stderr.txt"))
            // Qwen's one-array `json` output is parsed, never streamed into a log.
            .filter(|n| !(dir == "qwen" && n.ends_with(".json")))
            .collect();
        names.sort();
        for name in names {
            let bytes = std::fs::read(root().join(dir).join(&name)).unwrap();
            out.push(Transcript {
                dir,
                name,
                agent,
                bytes,
            });
        }
    }
    assert!(out.len() > 30, "fixtures missing: {}", out.len());
    out
}

/// Compare `actual` with `tests/fixtures/<kind>/<dir>/<name><ext>`.
pub fn check_golden(kind: &str, t: &Transcript, ext: &str, actual: &str) {
    let path = root()
        .join(kind)
        .join(t.dir)
        .join(format!("{}{ext}", t.name));
    if std::env::var_os("BATON_BLESS").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (BATON_BLESS=1 writes it)", path.display()));
    assert_eq!(
        actual,
        want,
        "{} differs (BATON_BLESS=1 rewrites it)",
        path.display()
    );
}
