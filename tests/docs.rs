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

fn page(name: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(root.join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// Whether `text` has `word` as a whole word (`pi` is not in `pipe`;
/// `gemini` is in `gemini/agy` but not in `gemini-cli`).
fn has_word(text: &str, word: &str) -> bool {
    let is_part = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
    text.match_indices(word).any(|(at, _)| {
        let before = text[..at].chars().next_back();
        let after = text[at + word.len()..].chars().next();
        !before.is_some_and(is_part) && !after.is_some_and(is_part)
    })
}

/// The built-in agents as the binary lists them: name, binary, whether it
/// can run read-only (advise, judge).
fn agents() -> Vec<(String, String, bool)> {
    let j = Env::new().run(&["agents"]).json();
    j["agents"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| {
            (
                a["name"].as_str().unwrap().to_string(),
                a["binary"].as_str().unwrap().to_string(),
                a["access"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .any(|x| x == "read-only"),
            )
        })
        .collect()
}

/// The text of option `flag` in a `--help`: its line and the lines that
/// continue its description.
fn option_help(help: &str, flag: &str) -> String {
    let mut out = String::new();
    let mut on = false;
    for l in help.lines() {
        let t = l.trim_start();
        if t.starts_with('-') {
            on = t.contains(flag);
        }
        if on {
            out.push_str(t);
            out.push(' ');
        }
    }
    assert!(!out.is_empty(), "no {flag} in\n{help}");
    out
}

/// The first paragraph-like piece of `text` that starts at `start`: up to
/// the end of its line, or of the sentence (`end`).
fn from<'a>(text: &'a str, start: &str, end: &str) -> &'a str {
    let at = text
        .find(start)
        .unwrap_or_else(|| panic!("no `{start}` in the page"));
    let rest = &text[at..];
    &rest[..rest.find(end).unwrap_or(rest.len())]
}

/// Every list of agents in the docs and the help names each agent the
/// binary has (issue 29 §7: the ACP agents were missing from six of them).
#[test]
fn every_list_of_agents_names_each_agent_the_binary_has() {
    let agents = agents();
    assert!(agents.len() >= 12, "{agents:?}");
    let env = Env::new();
    let run_help = env.run(&["run", "--help"]).stdout;
    let ask_help = env.run(&["ask", "--help"]).stdout;
    let brief = env.run(&["--dry-run", "x"]).json()["prompt"]
        .as_str()
        .unwrap()
        .to_string();
    let run_md = page("docs/run.md");
    let lists: Vec<(&str, String, bool)> = vec![
        (
            "`run --help` --agent",
            option_help(&run_help, "--agent <NAME>"),
            false,
        ),
        (
            "`ask --help` --agent",
            option_help(&ask_help, "--agent <NAME>"),
            true,
        ),
        (
            "docs/run.md --agent row",
            from(&run_md, "| `-a, --agent NAME`", "\n").to_string(),
            false,
        ),
        (
            "docs/config.md's agent tables",
            from(&page("docs/config.md"), "one table per agent:", "\n").to_string(),
            false,
        ),
        (
            "the config template",
            from(
                &page("src/config/template.rs"),
                "One table per agent:",
                ".\n",
            )
            .to_string(),
            false,
        ),
        (
            "docs/doctor.md's checks",
            from(&page("docs/doctor.md"), "For each agent (", "),").to_string(),
            false,
        ),
        (
            "docs/README.md's run.md row",
            from(&page("docs/README.md"), "| [run.md](run.md)", "\n").to_string(),
            false,
        ),
    ];
    let mut missing = Vec::new();
    for (what, text, advisers_only) in &lists {
        for (name, _, read_only) in &agents {
            if (!advisers_only || *read_only) && !has_word(text, name) {
                missing.push(format!("{what} lacks {name}"));
            }
        }
    }
    // The brief names every agent's program, so a peer runs none of them.
    let line = from(&brief, "do not run ", "\n");
    for (_, binary, _) in &agents {
        if !has_word(line, binary) {
            missing.push(format!(
                "the brief's list of CLIs not to run lacks {binary}"
            ));
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

#[test]
fn the_word_finder_respects_word_edges() {
    assert!(has_word("codex, pi, gemini/agy", "pi"));
    assert!(has_word("codex, pi, gemini/agy", "gemini"));
    assert!(!has_word("pipe and gemini-cli", "pi"));
    assert!(!has_word("gemini-cli only", "gemini"));
    assert!(has_word("`--agent` copilot.", "copilot"));
}

/// `baton schema --help` lists every name `baton schema` takes (it listed
/// 10 of 17), each gives a schema, and run.md's section names each.
#[test]
fn every_schema_name_is_listed_by_help_and_in_the_docs() {
    let env = Env::new();
    let help = env.run(&["schema", "--help"]).stdout;
    let list = from(&help, "[possible values:", "]");
    let names: Vec<String> = list["[possible values:".len()..]
        .split(',')
        .map(|n| n.split_whitespace().collect::<String>())
        .filter(|n| !n.is_empty())
        .collect();
    assert!(names.len() >= 17, "{names:?}");
    let section = from(&page("docs/run.md"), "## `baton schema`", "\n## ").to_string();
    let mut wrong = Vec::new();
    for n in &names {
        let r = env.run(&["schema", n]);
        if r.code != 0 || !r.stdout.starts_with('{') {
            wrong.push(format!("`baton schema {n}` fails: {}", r.stderr));
        }
        if !has_word(&section, n) {
            wrong.push(format!("docs/run.md's `baton schema` section lacks {n}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

/// The page (or pages) that document each command's flags.
fn pages_of(command: &str) -> &'static [&'static str] {
    match command.split(' ').next().unwrap() {
        "run" => &[
            "docs/run.md",
            "docs/jobs.md",
            "docs/worktree.md",
            "docs/fanout.md",
            "docs/watch.md",
        ],
        "ask" => &["docs/ask.md"],
        "agents" | "schema" => &["docs/run.md"],
        "doctor" => &["docs/doctor.md"],
        "config" => &["docs/config.md"],
        "usage" => &["docs/usage.md"],
        "notify" => &["docs/notify.md"],
        "council" => &["docs/council.md"],
        "worktree" => &["docs/worktree.md"],
        "wait" | "status" | "result" | "cancel" | "jobs" | "logs" | "continue" | "prune" => {
            &["docs/jobs.md"]
        }
        "watch" => &["docs/watch.md"],
        "serve" => &["docs/serve.md"],
        "attach" => &["docs/attach.md"],
        "mcp" => &["docs/mcp.md"],
        "bench" => &["docs/bench.md"],
        "setup" | "completions" | "man" => &["docs/setup.md"],
        _ => &[],
    }
}

/// The subcommands a `--help` lists.
fn subcommands(help: &str) -> Vec<String> {
    let Some(at) = help.find("Commands:") else {
        return Vec::new();
    };
    help[at..]
        .lines()
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

/// The long flags a `--help` lists (on an option's own line, not in a
/// description that wraps onto the next), but the ones every command has.
fn flags(help: &str) -> Vec<String> {
    help.lines()
        .filter(|l| {
            let t = l.trim_start();
            t.starts_with('-') && l.len() - t.len() <= 6
        })
        .filter_map(|l| {
            let at = l.find("--")?;
            let f: String = l[at + 2..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '-')
                .collect();
            Some(format!("--{f}"))
        })
        .filter(|f| !["--help", "--json", "--text", "--version"].contains(&f.as_str()))
        .collect()
}

/// Every flag of every command's `--help` is in that command's page, so a
/// flag cannot be added (or renamed) without its documentation.
#[test]
fn every_flag_of_every_command_is_in_its_page() {
    let env = Env::new();
    let mut queue: Vec<String> = commands();
    let mut missing = Vec::new();
    let mut seen = 0;
    while let Some(cmd) = queue.pop() {
        let words: Vec<&str> = cmd.split(' ').collect();
        let mut args = words.clone();
        args.push("--help");
        let help = env.run(&args).stdout;
        for sub in subcommands(&help) {
            queue.push(format!("{cmd} {sub}"));
        }
        let pages = pages_of(&cmd);
        if pages.is_empty() {
            missing.push(format!(
                "`baton {cmd}`: no page is known for it (add it to pages_of)"
            ));
            continue;
        }
        let text: String = pages.iter().map(|p| page(p)).collect();
        for f in flags(&help) {
            seen += 1;
            if !has_word(&text, &f) {
                missing.push(format!("`baton {cmd} {f}` is in none of {pages:?}"));
            }
        }
    }
    assert!(seen > 80, "{seen} flags seen");
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}

/// Every page of docs/ is in docs/README.md's table.
#[test]
fn every_page_is_in_the_docs_index() {
    let index = page("docs/README.md");
    let missing: Vec<String> = pages()
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| p.starts_with("docs/") && p != "docs/README.md")
        .filter(|p| !index.contains(&format!("]({})", &p["docs/".len()..])))
        .collect();
    assert!(missing.is_empty(), "not in docs/README.md: {missing:?}");
}
