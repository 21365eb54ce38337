//! What README.md and docs/ say about the binary, checked against it where
//! a test can (the result's shape is checked in `json.rs`).

use std::path::{Path, PathBuf};

use crate::support::Env;

fn pages() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    files.push(root.join("README.md"));
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let name = p.strip_prefix(root).unwrap().display().to_string();
            (name, std::fs::read_to_string(&p).unwrap())
        })
        .collect()
}

/// The visible subcommands, as `baton --help` lists them.
fn commands() -> Vec<String> {
    let help = Env::new().run(&["--help"]).stdout;
    let list = &help[help.find("Commands:").expect("a command list")..];
    list.lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// Text that announces something as not there yet: a section whose
/// heading says so, and the rest of the sentence after such a phrase in
/// running text (lines joined, so "the\nfuture `council`" is found).
fn announced(text: &str) -> Vec<String> {
    const SAYS: [&str; 3] = ["still to come", "the future", "not yet implemented"];
    let mut out = Vec::new();
    let mut prose = String::new();
    let mut in_section = false;
    for l in text.lines() {
        if l.starts_with('#') {
            let h = l.to_lowercase();
            in_section = h.contains("to come") || h.contains("planned") || h.contains("roadmap");
            continue;
        }
        if in_section {
            out.push(l.to_string());
        }
        prose.push_str(l);
        prose.push(' ');
    }
    let lower = prose.to_lowercase();
    for w in SAYS {
        for (at, _) in lower.match_indices(w) {
            let sentence: String = prose[at..]
                .chars()
                .take_while(|c| !matches!(c, '.' | ';' | ':'))
                .take(120)
                .collect();
            out.push(sentence);
        }
    }
    out
}

#[test]
fn no_page_announces_as_to_come_a_command_that_exists() {
    let commands = commands();
    assert!(commands.iter().any(|c| c == "serve"), "{commands:?}");
    let mut wrong = Vec::new();
    for (page, text) in pages() {
        for said in announced(&text) {
            for c in &commands {
                if said.contains(&format!("baton {c}")) || said.contains(&format!("`{c}`")) {
                    wrong.push(format!("{page}: `{c}` exists, yet: {}", said.trim()));
                }
            }
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_announcement_finder_finds_both_forms() {
    let text = "intro\n## Still to come (issue 13)\n- `baton serve`: soon\n## Next\n\
                ok\n`run`, `job` (and the\nfuture `council`) never …\n";
    let found = announced(text);
    assert!(found.iter().any(|l| l.contains("baton serve")), "{found:?}");
    assert!(
        found.iter().any(|l| l.contains("future `council`")),
        "{found:?}"
    );
    assert!(!found.iter().any(|l| l.contains("ok")), "{found:?}");
}
