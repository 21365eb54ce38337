//! The house rules, checked on the source: no import cycle among the
//! top-level modules of `src/`, none among the files of a feature folder
//! (`NO_CYCLE_INSIDE`), no clap below `cli`, no file over 500 lines,
//! `unsafe` only in `src/sys/`, children started only by `process::Command`.
//!
//! Only non-test code counts (but for `unsafe`, which tests may not use
//! either): a file is read up to its first `#[cfg(test)]`
//! line (unit tests sit at the bottom of each file and may use anything).
//! `docs/architecture.md` explains the layers these tests enforce.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Feature modules: they take plain requests and never see the command line.
const FEATURES: &[&str] = &[
    "run", "job", "ask", "worktree", "council", "fanout", "group", "view", "doctor", "setup",
    "bench", "config", "schema", "spend", "notify",
    // A surface beside `cli`, not a feature, but held to the same rule: it
    // gets each command's flags from `cli` as plain data and never sees clap.
    "mcp",
];

/// The most non-test lines a file under `src/` may have.
const MAX_LINES: usize = 500;

/// Files allowed over `MAX_LINES`: each with its own limit (about what it has
/// now, so it cannot keep growing unseen) and why it is one concept that two
/// files would cut in halves. A file listed here is held to its limit.
const LONG_FILES: &[(&str, usize, &str)] = &[(
    "config/file.rs",
    575,
    "one pass over a config file's keys: the `[agents.NAME]` checks of a brought agent \
     read its `Ctx` and are called from the middle of the pass (cut out to brought.rs by \
     size, the two files imported each other)",
)];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Every `.rs` file under `src/`: its path relative to `src/` and its non-test text.
pub(crate) fn sources() -> Vec<(String, String)> {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p.strip_prefix(src()).unwrap().display().to_string();
            let text = std::fs::read_to_string(&p).expect("read source");
            (rel, non_test(&text).to_string())
        })
        .collect()
}

/// The text before the first `#[cfg(test)]` line.
fn non_test(text: &str) -> &str {
    let mut at = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("#[cfg(test)]") {
            return &text[..at];
        }
        at += line.len();
    }
    text
}

/// The top-level module a file belongs to (`worktree/check.rs` → `worktree`);
/// `None` for the crate roots.
fn top_module(rel: &str) -> Option<String> {
    let first = rel.split('/').next()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_string())
}

/// The top-level modules `text` names through `crate::`: in `use` lines,
/// grouped ones (`use crate::{a, b::C}`, nested and over several lines)
/// included, and in paths in code (`crate::agent::clip(…)`).
fn crate_refs(text: &str) -> BTreeSet<String> {
    let mut refs = path_refs(text, "crate::");
    refs.remove("self");
    refs
}

/// The first segments of the paths `text` names after `prefix` (`crate::`,
/// `super::`, `crate::council::`), comments left out: in `use` lines,
/// grouped (`prefix{a, b::C}`, nested, over several lines), and in code.
fn path_refs(text: &str, prefix: &str) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|l| match l.find("//") {
            Some(i) => &l[..i],
            None => l,
        })
        .collect::<Vec<_>>()
        .join("\n");
    let mut refs = BTreeSet::new();
    let mut at = 0;
    while let Some(i) = code[at..].find(prefix) {
        let before = code[..at + i].chars().last();
        at += i + prefix.len();
        let rest = &code[at..];
        // `$crate::` or `foo_crate::` is not ours, nor the `super::` that
        // ends `super::super::` (a path that climbs higher).
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$' || c == ':') {
            continue;
        }
        let rest_trim = rest.trim_start();
        if let Some(group) = rest_trim.strip_prefix('{') {
            let mut depth = 1;
            let mut end = group.len();
            for (j, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => {
                        depth -= 1;
                        if depth == 0 {
                            end = j;
                            break;
                        }
                    }
                    _ => {}
                }
            }
            // Top-level items of the group: split on commas outside braces.
            let mut depth = 0;
            let mut item = String::new();
            for c in group[..end].chars().chain(std::iter::once(',')) {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        if let Some(n) = leading_ident(item.trim()) {
                            refs.insert(n);
                        }
                        item.clear();
                        continue;
                    }
                    _ => {}
                }
                item.push(c);
            }
        } else if let Some(n) = leading_ident(rest_trim) {
            refs.insert(n);
        }
    }
    refs
}

fn leading_ident(s: &str) -> Option<String> {
    let n: String = s
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!n.is_empty()).then_some(n)
}

/// Whether `text` uses clap (`use clap…`, `clap::` paths, or its derives).
fn uses_clap(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l.trim_start();
        !l.starts_with("//")
            && (l.contains("clap::")
                || l.starts_with("use clap")
                || l.contains("derive(Parser")
                || l.contains("Subcommand)")
                || l.contains("#[arg(")
                || l.contains("#[command("))
    })
}

/// Edges among top-level modules, each with one file that makes it.
fn graph() -> BTreeMap<String, BTreeMap<String, String>> {
    let mut g: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    let mut tops = BTreeSet::new();
    let all = sources();
    for (rel, _) in &all {
        if let Some(t) = top_module(rel) {
            tops.insert(t);
        }
    }
    for (rel, text) in &all {
        let Some(from) = top_module(rel) else {
            continue;
        };
        let edges = g.entry(from.clone()).or_default();
        for to in crate_refs(text) {
            if to != from && tops.contains(&to) {
                edges.entry(to).or_insert_with(|| rel.clone());
            }
        }
    }
    g
}

/// Feature folders whose files must not import each other in a circle:
/// the driver sits at the top, what several files share below them.
const NO_CYCLE_INSIDE: &[&str] = &["council", "fanout", "group", "bench"];

/// The module of `folder` a file belongs to (`council/flow.rs` → `flow`,
/// `ask/packet/diff.rs` → `packet`), and how deep below it the file is;
/// `None` for the folder's `mod.rs` (it only declares and re-exports).
fn sub_module(rel: &str, folder: &str) -> Option<(String, usize)> {
    let parts: Vec<&str> = rel.split('/').collect();
    if parts.len() < 2 || parts[0] != folder || rel == format!("{folder}/mod.rs") {
        return None;
    }
    let name = parts[1].strip_suffix(".rs").unwrap_or(parts[1]);
    Some((name.to_string(), parts.len() - 2))
}

/// Edges among the modules inside `folder`, each with one file that makes
/// it: paths through `crate::<folder>::`, and `super::` from a file just
/// below the folder (`super::super::` from one a level deeper).
fn folder_graph(folder: &str) -> BTreeMap<String, BTreeMap<String, String>> {
    let all = sources();
    let subs: BTreeSet<String> = all
        .iter()
        .filter_map(|(rel, _)| sub_module(rel, folder).map(|(m, _)| m))
        .collect();
    let mut g: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for (rel, text) in &all {
        let Some((from, depth)) = sub_module(rel, folder) else {
            continue;
        };
        let mut refs = path_refs(text, &format!("crate::{folder}::"));
        let up = "super::".repeat(depth + 1);
        refs.extend(path_refs(text, &up).into_iter().filter(|r| r != "super"));
        let edges = g.entry(from.clone()).or_default();
        for to in refs {
            if to != from && subs.contains(&to) {
                edges.entry(to).or_insert_with(|| rel.clone());
            }
        }
    }
    g
}

/// One cycle in `g`, as the path of modules that closes it, if there is one.
fn find_cycle(g: &BTreeMap<String, BTreeMap<String, String>>) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        New,
        Open,
        Done,
    }
    fn visit(
        n: &str,
        g: &BTreeMap<String, BTreeMap<String, String>>,
        mark: &mut BTreeMap<String, Mark>,
        stack: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        mark.insert(n.to_string(), Mark::Open);
        stack.push(n.to_string());
        for next in g.get(n).into_iter().flat_map(|e| e.keys()) {
            match mark.get(next.as_str()).copied().unwrap_or(Mark::New) {
                Mark::Open => {
                    let start = stack.iter().position(|s| s == next).unwrap();
                    let mut cycle = stack[start..].to_vec();
                    cycle.push(next.clone());
                    return Some(cycle);
                }
                Mark::New => {
                    if let Some(c) = visit(next, g, mark, stack) {
                        return Some(c);
                    }
                }
                Mark::Done => {}
            }
        }
        stack.pop();
        mark.insert(n.to_string(), Mark::Done);
        None
    }
    let mut mark = BTreeMap::new();
    for n in g.keys() {
        if mark.get(n.as_str()).copied().unwrap_or(Mark::New) == Mark::New
            && let Some(c) = visit(n, g, &mut mark, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

fn describe(cycle: &[String], g: &BTreeMap<String, BTreeMap<String, String>>) -> String {
    cycle
        .windows(2)
        .map(|w| format!("{} -> {} (in src/{})", w[0], w[1], g[&w[0]][&w[1]]))
        .collect::<Vec<_>>()
        .join("\n  ")
}

#[test]
fn no_import_cycle_among_top_level_modules() {
    let g = graph();
    if let Some(cycle) = find_cycle(&g) {
        panic!(
            "import cycle among top-level modules: {}\n  {}",
            cycle.join(" -> "),
            describe(&cycle, &g)
        );
    }
}

#[test]
fn no_import_cycle_inside_a_feature_folder() {
    let mut bad = Vec::new();
    for folder in NO_CYCLE_INSIDE {
        let g = folder_graph(folder);
        if let Some(cycle) = find_cycle(&g) {
            bad.push(format!(
                "src/{folder}/: {}\n  {}",
                cycle.join(" -> "),
                describe(&cycle, &g)
            ));
        }
    }
    assert!(
        bad.is_empty(),
        "the files of a feature folder import each other in a circle (move what they share \
         into a module below them):\n{}",
        bad.join("\n")
    );
}

#[test]
fn features_never_see_the_command_line() {
    let mut bad = Vec::new();
    for (rel, text) in sources() {
        let Some(top) = top_module(&rel) else {
            continue;
        };
        if !FEATURES.contains(&top.as_str()) {
            continue;
        }
        if crate_refs(&text).contains("cli") {
            bad.push(format!("src/{rel} imports `cli`"));
        }
        if uses_clap(&text) {
            bad.push(format!("src/{rel} uses clap"));
        }
    }
    assert!(
        bad.is_empty(),
        "feature modules must take plain requests (clap stays in src/cli/):\n{}",
        bad.join("\n")
    );
}

#[test]
fn only_cli_uses_clap() {
    let bad: Vec<String> = sources()
        .into_iter()
        .filter(|(rel, text)| top_module(rel).as_deref() != Some("cli") && uses_clap(text))
        .map(|(rel, _)| format!("src/{rel}"))
        .collect();
    assert!(bad.is_empty(), "clap outside src/cli/: {bad:?}");
}

/// Files outside `src/sys/` allowed an `unsafe` block, each with the reason.
const UNSAFE_ALLOWED: &[(&str, &str)] = &[(
    "sandbox/sys.rs",
    "the sandbox's own platform calls (landlock, seccomp), written beside it",
)];

/// Whether `text` (code, comments left in) uses the `unsafe` keyword: a
/// block, a function, an impl or a trait. `unsafe_value` and the word in a
/// message are not it.
fn uses_unsafe(text: &str) -> bool {
    text.match_indices("unsafe").any(|(i, _)| {
        let before = text[..i].chars().next_back();
        let after = text[i + "unsafe".len()..].trim_start();
        !before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '"' || c == '`')
            && ["{", "fn ", "impl", "trait ", "extern "]
                .iter()
                .any(|k| after.starts_with(k))
    })
}

/// Every platform call that needs `unsafe` is a safe function in `src/sys/`
/// (one place to review them): no `unsafe` elsewhere, tests included.
#[test]
fn unsafe_only_in_sys() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    let bad: Vec<String> = files
        .into_iter()
        .filter_map(|p| {
            let rel = p.strip_prefix(src()).unwrap().display().to_string();
            let text = std::fs::read_to_string(&p).expect("read source");
            (!rel.starts_with("sys/")
                && !UNSAFE_ALLOWED.iter().any(|(f, _)| *f == rel)
                && uses_unsafe(&text))
            .then(|| format!("src/{rel}"))
        })
        .collect();
    assert!(
        bad.is_empty(),
        "`unsafe` outside src/sys/ (give it a safe wrapper there): {bad:?}"
    );
}

/// Whether `text` starts a child other than through `process::Command`
/// (`std::process::Command::new`, or a `Command` imported from std), or
/// sets a child's group or pre-exec hook itself (`CommandExt`).
fn spawns_by_itself(text: &str) -> bool {
    let bare_new = text.match_indices("Command::new(").any(|(i, _)| {
        let before = &text[..i];
        !before.ends_with("process::") || before.ends_with("std::process::")
    });
    bare_new || text.contains("CommandExt")
}

/// Every child baton starts goes through `process::Command` (its group,
/// stdin, parent-death signal, deadline, grace: see src/process/command.rs).
#[test]
fn every_child_is_started_by_process() {
    let bad: Vec<String> = sources()
        .into_iter()
        .filter(|(rel, text)| {
            !rel.starts_with("process/") && !rel.starts_with("sys/") && spawns_by_itself(text)
        })
        .map(|(rel, _)| format!("src/{rel}"))
        .collect();
    assert!(
        bad.is_empty(),
        "children started outside process::Command: {bad:?}"
    );
}

#[test]
fn the_launcher_checks_see_what_they_look_for() {
    assert!(uses_unsafe("let x = unsafe { f() };"));
    assert!(uses_unsafe("pub unsafe fn f() {}"));
    assert!(uses_unsafe("unsafe impl Send for X {}"));
    assert!(!uses_unsafe("kind: \"unsafe_value\", // an unsafe value"));
    assert!(!uses_unsafe("e.kind() == \"unsafe_state_dir\""));
    assert!(spawns_by_itself("let c = Command::new(\"git\");"));
    assert!(spawns_by_itself("std::process::Command::new(p)"));
    assert!(spawns_by_itself("use std::os::unix::process::CommandExt;"));
    assert!(!spawns_by_itself("crate::process::Command::new(p).arg(x)"));
    assert!(!spawns_by_itself("let c = process::Command::new(p);"));
}

/// The files over their limit: `MAX_LINES`, or their own in `exceptions`.
fn too_long(files: &[(String, usize)], exceptions: &[(&str, usize, &str)]) -> Vec<String> {
    let mut long = Vec::new();
    for (rel, n) in files {
        match exceptions.iter().find(|(f, _, _)| f == rel) {
            Some((_, limit, _)) if n > limit => long.push(format!(
                "src/{rel}: {n} non-test lines, over its own limit of {limit} in LONG_FILES"
            )),
            Some(_) => {}
            None if *n > MAX_LINES => long.push(format!("src/{rel}: {n} non-test lines")),
            None => {}
        }
    }
    long
}

#[test]
fn no_file_is_over_500_non_test_lines() {
    let files: Vec<(String, usize)> = sources()
        .into_iter()
        .map(|(rel, text)| (rel, text.lines().count()))
        .collect();
    let long = too_long(&files, LONG_FILES);
    assert!(
        long.is_empty(),
        "split these into one-concept files (or list one concept that two files would cut \
         in halves in LONG_FILES, with its limit and why):\n{}",
        long.join("\n")
    );
    // Every exception names a file that exists and needs it, with a reason.
    for (rel, limit, why) in LONG_FILES {
        let n = files.iter().find(|(f, _)| f == rel).map(|(_, n)| *n);
        assert!(n.is_some(), "LONG_FILES names src/{rel}, which is gone");
        assert!(
            *limit > MAX_LINES && !why.is_empty(),
            "src/{rel}: a limit over 500 and a reason"
        );
    }
}

#[test]
fn the_line_limit_sees_unlisted_and_listed_files() {
    let ex: &[(&str, usize, &str)] = &[("a/long.rs", 600, "one concept")];
    let files = |n_long: usize, n_other: usize| {
        vec![
            ("a/long.rs".to_string(), n_long),
            ("b/other.rs".to_string(), n_other),
        ]
    };
    assert!(too_long(&files(600, 500), ex).is_empty());
    assert_eq!(
        too_long(&files(600, 501), ex),
        ["src/b/other.rs: 501 non-test lines"],
        "an unlisted file over 500"
    );
    assert_eq!(
        too_long(&files(601, 10), ex),
        ["src/a/long.rs: 601 non-test lines, over its own limit of 600 in LONG_FILES"],
        "a listed file over its own limit"
    );
    assert_eq!(
        too_long(&files(601, 10), &[]).len(),
        1,
        "not listed: 500 holds"
    );
}

#[test]
fn the_checker_sees_grouped_nested_and_inline_paths() {
    let text = "use crate::{a, b::{C, D}, c::E};\nuse crate::d::F;\n\
                fn f() { crate::e::g(); } // crate::z::not_code\n\
                use crate::{\n    f,\n    g::H,\n};\nmacro_rules! m { () => { $crate::q } }\n";
    let got: Vec<String> = crate_refs(text).into_iter().collect();
    assert_eq!(got, ["a", "b", "c", "d", "e", "f", "g"]);
    assert_eq!(non_test("a\n#[cfg(test)]\nb\n"), "a\n");
    let g: BTreeMap<String, BTreeMap<String, String>> = [("x", "y"), ("y", "z"), ("z", "x")]
        .into_iter()
        .map(|(a, b)| {
            (
                a.to_string(),
                BTreeMap::from([(b.to_string(), format!("{a}.rs"))]),
            )
        })
        .collect();
    assert_eq!(find_cycle(&g).unwrap(), ["x", "y", "z", "x"]);
    let mut g2 = g.clone();
    g2.get_mut("z").unwrap().clear();
    assert!(find_cycle(&g2).is_none());
    // Inside a folder: `super::` from its files, `crate::<folder>::` paths.
    let inner = "use super::{call::Call, store};\nuse crate::council::flow::drive;\n\
                 use super::super::up;\n";
    let got: Vec<String> = path_refs(inner, "super::").into_iter().collect();
    assert_eq!(got, ["call", "store", "super"]);
    let got: Vec<String> = path_refs(inner, "super::super::").into_iter().collect();
    assert_eq!(got, ["up"]);
    assert_eq!(
        path_refs(inner, "crate::council::")
            .into_iter()
            .collect::<Vec<_>>(),
        ["flow"]
    );
    assert_eq!(
        sub_module("council/flow.rs", "council"),
        Some(("flow".into(), 0))
    );
    assert_eq!(
        sub_module("ask/packet/diff.rs", "ask"),
        Some(("packet".into(), 1))
    );
    assert_eq!(sub_module("council/mod.rs", "council"), None);
    assert_eq!(sub_module("run/mod.rs", "council"), None);
    assert!(uses_clap("use clap::Args;\n"));
    assert!(!uses_clap("// no clap:: here\nuse serde;\n"));
}

/// Whether `rel` is declared `#[cfg(test)] mod …;` by its parent module.
fn test_only(rel: &str) -> bool {
    let path = Path::new(rel);
    let name = path.file_stem().unwrap().to_str().unwrap();
    let dir = path.parent().unwrap();
    let parents = if dir.as_os_str().is_empty() {
        vec![src().join("lib.rs")]
    } else {
        vec![
            src().join(dir).join("mod.rs"),
            src().join(format!("{}.rs", dir.display())),
        ]
    };
    parents.iter().any(|p| {
        let text = std::fs::read_to_string(p).unwrap_or_default();
        let lines: Vec<&str> = text.lines().map(str::trim).collect();
        lines.iter().enumerate().any(|(i, l)| {
            l.ends_with(&format!("mod {name};")) && i > 0 && lines[i - 1] == "#[cfg(test)]"
        })
    })
}

/// docs/architecture.md's module map names every file under `src/` that
/// ships (a file new to `src/` fails here until the map says what it owns).
#[test]
fn every_source_file_is_on_the_map() {
    let doc =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/architecture.md"))
            .expect("docs/architecture.md");
    let start = doc.find("## Module map").expect("a module map");
    let map = &doc[start..start + doc[start..].find("\n## ").unwrap_or(doc.len() - start)];
    let words: BTreeSet<&str> = map
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .collect();
    let mut missing = Vec::new();
    for (rel, _) in sources() {
        let stem = Path::new(&rel).file_stem().unwrap().to_str().unwrap();
        if stem == "mod" || test_only(&rel) {
            continue;
        }
        if !words.contains(stem) {
            missing.push(format!("src/{rel}"));
        }
    }
    assert!(
        missing.is_empty(),
        "not on docs/architecture.md's module map: {missing:?}"
    );
}
