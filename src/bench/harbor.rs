//! The files of one Harbor task, made from a baton task: pure text, no
//! I/O (`export` writes them).
//!
//! Harbor's layout, as its task loader reads it (`harbor` 0.26,
//! `harbor/models/task/paths.py`, `task.py`, `config.py`;
//! `verifier/verifier.py` for the reward):
//!
//! - `task.toml`: `schema_version = "1.4"`, `[metadata]` (free), `[verifier]`,
//!   `[agent]`, `[environment]`;
//! - `instruction.md`: what the agent is told (the task text);
//! - `environment/Dockerfile`: the container, built with `environment/` as
//!   its context (here: the base tree's `repo.tar` unpacked in `/app`);
//! - `tests/test.sh`: copied to `/tests` after the agent and run; it writes
//!   the reward, a number, to `/logs/verifier/reward.txt`;
//! - `solution/solve.sh`: copied to `/solution` and run by the oracle agent.
//!
//! The verifier does what `bench run` does after a peer: the hidden test
//! files written over whatever the agent left (the commit's versions, in
//! `tests/hidden/`), the test command run with the selected tests, the
//! per-test outcomes read from its output by the runner's rules (an awk
//! copy of `outcomes::parse`, or node's for jest's JSON), and reward 1 only
//! when every fail_to_pass and pass_to_pass test passed.

use super::task::{Runner, Task, quote};

/// The `schema_version` of `task.toml` written.
pub const SCHEMA_VERSION: &str = "1.4";

/// Where the repository is unpacked in the container (the Dockerfile's
/// WORKDIR; `BATON_APP` overrides it in the scripts, for tests).
pub const APP: &str = "/app";

/// The user the agent runs as (`[agent] user`; the Dockerfile makes it
/// and gives it `/app`): not root, as Harbor's linter asks. The verifier
/// runs as the image's user (root).
pub const AGENT_USER: &str = "agent";

/// A TOML basic string: quoted, `\` and `"` escaped, control characters
/// as `\uXXXX`.
pub fn toml_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            c if c.is_control() => o.push_str(&format!("\\u{:04X}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

fn runner_name(r: Runner) -> &'static str {
    match r {
        Runner::Cargo => "cargo",
        Runner::Pytest => "pytest",
        Runner::Go => "go",
        Runner::Jest => "jest",
    }
}

/// `task.toml`: Harbor's defaults but for longer timeouts (a test suite
/// that builds a project takes a while), baton's provenance in `[metadata]`.
pub fn task_toml(t: &Task, set: &str, by: &str) -> String {
    let kv = |k: &str, v: &str| format!("{k} = {}\n", toml_str(v));
    let mut s = format!(
        "# baton task {} exported for Harbor by `baton bench export` (docs/bench.md).\n\
         schema_version = {}\n\n[metadata]\n",
        t.id,
        toml_str(SCHEMA_VERSION)
    );
    s += &kv("baton_task", &t.id);
    s += &kv("baton_set", set);
    s += &kv("base_commit", &t.base);
    s += &kv("reference_commit", &t.commit);
    s += &kv("runner", runner_name(t.test_cmd.runner));
    s += &kv("test_cmd", &t.test_cmd.command);
    s += &kv("exported_by", by);
    s += "\n[verifier]\ntimeout_sec = 1800.0\n\n[agent]\ntimeout_sec = 3600.0\n";
    s += &kv("user", AGENT_USER);
    s += "\n";
    s += &format!(
        "[environment]\nbuild_timeout_sec = 1200.0\nworkdir = {}\n",
        toml_str(APP)
    );
    s
}

/// `instruction.md`: the task text, as `bench run` gives it to a peer.
pub fn instruction(t: &Task) -> String {
    format!("{}\n", t.task.trim_end())
}

/// The image and the lines a runner is known to need; the rest of the
/// project's toolchain baton cannot know.
fn image(r: Runner) -> (&'static str, &'static str) {
    match r {
        Runner::Cargo => ("rust:1-bookworm", ""),
        Runner::Go => ("golang:1-bookworm", ""),
        Runner::Pytest => (
            "python:3.12-bookworm",
            "RUN pip install --no-cache-dir pytest\n",
        ),
        Runner::Jest => ("node:22-bookworm", ""),
    }
}

/// `environment/Dockerfile`: the runner's official image (each has git and
/// tar), the base tree unpacked in `/app`.
pub fn dockerfile(t: &Task) -> String {
    let (from, known) = image(t.test_cmd.runner);
    format!(
        "# The repository of baton task {id} at its base commit {base}.\n\
         # baton knows the test runner ({runner}), not the project's toolchain: pin\n\
         # the image, and add what the tests need (system packages, dependencies\n\
         # fetched here, e.g. `cargo fetch`, `pip install -r …`, `npm ci`) so\n\
         # that the verifier needs no network.\n\
         FROM {from}\n\
         {known}\
         WORKDIR {APP}\n\
         COPY repo.tar /tmp/baton-repo.tar\n\
         RUN tar -xf /tmp/baton-repo.tar -C {APP} && rm /tmp/baton-repo.tar \\\n\
         \x20   && useradd --create-home {AGENT_USER} && chown -R {AGENT_USER}: {APP}\n",
        id = t.id,
        base = t.base,
        runner = runner_name(t.test_cmd.runner),
    )
}

/// `solution/solve.sh`: the reference fix (`solution/fix.patch`, the
/// commit's changes outside the tests) applied in `/app`.
pub fn solve_sh(t: &Task, has_patch: bool) -> String {
    let apply = if has_patch {
        "git apply --whitespace=nowarn \"$here/fix.patch\"\n"
    } else {
        "# The reference commit changed no file outside the tests.\n"
    };
    format!(
        "#!/bin/sh\n\
         # The reference fix of baton task {id} (commit {commit}), for Harbor's oracle agent.\n\
         set -eu\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         cd \"${{BATON_APP:-{APP}}}\"\n\
         {apply}",
        id = t.id,
        commit = t.commit,
    )
}

/// One hidden test file: written from `tests/hidden/`, or removed (the
/// commit deleted it).
pub enum Hidden<'a> {
    Put(&'a str),
    Remove(&'a str),
}

/// `tests/test.sh`: Harbor's verifier. It always writes a reward (0 first,
/// 1 at the end when earned), so nothing the agent left in
/// `/logs/verifier` counts.
pub fn test_sh(t: &Task, hidden: &[Hidden]) -> String {
    let mut want = t.fail_to_pass.clone();
    want.extend(t.pass_to_pass.iter().cloned());
    let command = t.test_cmd.for_tests(&want);
    let parse = match t.test_cmd.runner {
        Runner::Jest => "node \"$here/passed.js\" \"$logs/test.log\"",
        _ => "awk -f \"$here/passed.awk\" \"$logs/test.log\"",
    };
    let mut s = format!(
        "#!/bin/sh\n\
         # Harbor's verifier for baton task {id}: the hidden tests written over the\n\
         # agent's work, the test command, reward 1 when every fail_to_pass test\n\
         # passes and no pass_to_pass test broke (as `baton bench run` scores).\n\
         set -u\n\
         here=$(cd \"$(dirname \"$0\")\" && pwd)\n\
         logs=${{BATON_VERIFIER_LOGS:-/logs/verifier}}\n\
         mkdir -p \"$logs\"\n\
         echo 0 > \"$logs/reward.txt\"\n\
         cd \"${{BATON_APP:-{APP}}}\" || exit 0\n\
         put() {{ rm -rf \"./$1\" && mkdir -p \"$(dirname \"./$1\")\" && cp \"$here/hidden/$1\" \"./$1\"; }}\n",
        id = t.id
    );
    for h in hidden {
        match h {
            Hidden::Put(p) => s += &format!("put {} || exit 0\n", quote(p)),
            Hidden::Remove(p) => s += &format!("rm -rf {}\n", quote(&format!("./{p}"))),
        }
    }
    s += &format!(
        "sh -c {} > \"$logs/test.log\" 2>&1 < /dev/null\n\
         echo \"test command exited $?\"\n\
         {parse} > \"$logs/passed.txt\" || exit 0\n\
         : > \"$logs/not-passed.txt\"\n\
         while IFS= read -r t; do\n\
         \x20 grep -Fxq -e \"$t\" \"$logs/passed.txt\" || printf '%s\\n' \"$t\" >> \"$logs/not-passed.txt\"\n\
         done < \"$here/expected.txt\"\n\
         if [ -s \"$logs/not-passed.txt\" ]; then\n\
         \x20 echo 'not passed:'; cat \"$logs/not-passed.txt\"\n\
         else\n\
         \x20 echo 1 > \"$logs/reward.txt\"\n\
         fi\n",
        quote(&command)
    );
    s
}

/// `tests/expected.txt`: the tests that must pass, one a line (a test
/// name holds no control character: `task::valid_test_name`).
pub fn expected(t: &Task) -> String {
    let mut s = String::new();
    for n in t.fail_to_pass.iter().chain(&t.pass_to_pass) {
        s.push_str(n);
        s.push('\n');
    }
    s
}

/// The parser of the runner's output that prints the tests that passed
/// (a failure anywhere wins over a pass), the rules of `outcomes::parse`:
/// `(file name, text)`.
pub fn parser(r: Runner) -> (&'static str, &'static str) {
    match r {
        Runner::Cargo => ("passed.awk", AWK_CARGO),
        Runner::Pytest => ("passed.awk", AWK_PYTEST),
        Runner::Go => ("passed.awk", AWK_GO),
        Runner::Jest => ("passed.js", JS_JEST),
    }
}

const AWK_CARGO: &str = r#"# libtest's `test NAME ... ok|FAILED|ignored` lines (baton's outcomes.rs).
function put(n, o) { gsub(/^[ \t]+|[ \t]+$/, "", n); if (n == "") return; if (!(n in st) || st[n] < o) st[n] = o }
{ sub(/\r$/, "") }
substr($0, 1, 5) == "test " {
  rest = substr($0, 6); s = rest; p = 0; off = 0
  while ((j = index(s, " ... ")) > 0) { p = off + j; off += j; s = substr(s, j + 1) }
  if (p == 0) next
  name = substr(rest, 1, p - 1); v = substr(rest, p + 5)
  sub(/ - should panic$/, "", name); gsub(/^[ \t]+|[ \t]+$/, "", v)
  if (v == "ok") put(name, 1); else if (v == "FAILED") put(name, 3); else if (index(v, "ignored") == 1) put(name, 2)
}
END { for (n in st) if (st[n] == 1) print n }
"#;

const AWK_PYTEST: &str = r#"# pytest -rA's `PASSED|FAILED|ERROR|XPASS|XFAIL NODEID` lines (baton's outcomes.rs).
function put(n, o) { gsub(/^[ \t]+|[ \t]+$/, "", n); if (n == "") return; if (!(n in st) || st[n] < o) st[n] = o }
{
  sub(/\r$/, ""); sp = index($0, " "); if (sp == 0) next
  w = substr($0, 1, sp - 1); rest = substr($0, sp + 1)
  if (w == "PASSED" || w == "XPASS") o = 1; else if (w == "FAILED" || w == "ERROR") o = 3; else if (w == "XFAIL") o = 2; else next
  d = index(rest, " - "); id = d ? substr(rest, 1, d - 1) : rest
  if (index(id, "::") > 0 || id ~ /\.py$/) put(id, o)
}
END { for (n in st) if (st[n] == 1) print n }
"#;

const AWK_GO: &str = r#"# `go test -v`'s `--- PASS|FAIL|SKIP: Name (0.00s)` lines (baton's outcomes.rs).
function put(n, o) { gsub(/^[ \t]+|[ \t]+$/, "", n); if (n == "") return; if (!(n in st) || st[n] < o) st[n] = o }
{
  sub(/\r$/, ""); l = $0; sub(/^[ \t]+/, "", l)
  if (substr(l, 1, 4) != "--- ") next
  rest = substr(l, 5); c = index(rest, ": "); if (c == 0) next
  v = substr(rest, 1, c - 1); name = substr(rest, c + 2)
  p = index(name, " ("); if (p > 0) name = substr(name, 1, p - 1)
  if (v == "PASS") put(name, 1); else if (v == "FAIL") put(name, 3); else if (v == "SKIP") put(name, 2)
}
END { for (n in st) if (st[n] == 1) print n }
"#;

const JS_JEST: &str = r#"// jest/vitest's JSON report (baton's outcomes.rs): the first `{` on.
const out = require("fs").readFileSync(process.argv[2], "utf8");
const start = out.indexOf("{");
let v = null;
for (let end = out.lastIndexOf("}"); start >= 0 && end > start && v === null; end = out.lastIndexOf("}", end - 1)) {
  try { v = JSON.parse(out.slice(start, end + 1)); } catch (e) {}
}
const rank = { passed: 1, pending: 2, skipped: 2, todo: 2, disabled: 2, failed: 3 };
const st = new Map();
for (const f of (v && v.testResults) || []) {
  for (const a of f.assertionResults || []) {
    const o = rank[a.status];
    const n = typeof a.fullName === "string" ? a.fullName.trim() : "";
    if (o && n) st.set(n, Math.max(st.get(n) || 0, o));
  }
}
for (const [n, o] of st) if (o === 1) console.log(n);
"#;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bench::task::{FORMAT, TestCmd};

    fn task() -> Task {
        Task {
            format: FORMAT,
            id: "0123456789ab".into(),
            base: "a".repeat(40),
            commit: "b".repeat(40),
            task: "Fix \"two\"\n\nIt was 3.\n\n".into(),
            source_files: vec!["src/lib.rs".into()],
            test_files: vec!["tests/two.rs".into()],
            test_patch: "diff".into(),
            test_cmd: TestCmd {
                runner: Runner::Cargo,
                command: "cargo test -- --exact {tests}".into(),
            },
            fail_to_pass: vec!["two".into()],
            pass_to_pass: vec!["it's one".into()],
            mined_at_ms: 0,
            mined_by: "baton".into(),
            described_by: None,
            describe_usage: None,
        }
    }

    /// The string at `path` in the TOML document `doc`, as a TOML reader
    /// reads it.
    fn get(doc: &str, path: &[&str]) -> Option<String> {
        use toml::de::{DeTable, DeValue};
        let t = DeTable::parse(doc).unwrap();
        let mut table = t.get_ref();
        for (i, k) in path.iter().enumerate() {
            let v = table.iter().find(|(n, _)| n.get_ref() == k)?.1.get_ref();
            match v {
                DeValue::Table(t) => table = t,
                DeValue::String(s) if i + 1 == path.len() => return Some(s.to_string()),
                DeValue::Float(f) if i + 1 == path.len() => return Some(f.to_string()),
                _ => return None,
            }
        }
        None
    }

    #[test]
    fn toml_strings_escape_quotes_backslashes_and_controls() {
        assert_eq!(toml_str(r#"a"b\c"#), r#""a\"b\\c""#);
        assert_eq!(toml_str("x\ny\u{7f}"), r#""x\u000Ay\u007F""#);
        let doc = format!("k = {}\n", toml_str("sh -c \"a\\b\"\n\t'x'"));
        assert_eq!(get(&doc, &["k"]).as_deref(), Some("sh -c \"a\\b\"\n\t'x'"));
    }

    #[test]
    fn task_toml_reads_back_with_the_tasks_provenance() {
        let mut t = task();
        t.test_cmd.command = "sh -c \"x\" # \\".into();
        let doc = task_toml(&t, "recent", "baton 9");
        let g = |p: &[&str]| get(&doc, p);
        assert_eq!(g(&["schema_version"]).as_deref(), Some(SCHEMA_VERSION));
        assert_eq!(
            g(&["metadata", "baton_task"]).as_deref(),
            Some("0123456789ab")
        );
        assert_eq!(g(&["metadata", "base_commit"]), Some(t.base.clone()));
        assert_eq!(
            g(&["metadata", "test_cmd"]),
            Some(t.test_cmd.command.clone())
        );
        assert_eq!(g(&["environment", "workdir"]).as_deref(), Some(APP));
        assert_eq!(g(&["agent", "user"]).as_deref(), Some(AGENT_USER));
        assert!(g(&["verifier", "timeout_sec"]).is_some());
    }

    #[test]
    fn the_verifier_runs_the_selected_tests_quoted_and_writes_each_hidden_file() {
        let t = task();
        let s = test_sh(
            &t,
            &[
                Hidden::Put("tests/two.rs"),
                Hidden::Remove("tests/old's.rs"),
            ],
        );
        // The whole command is one shell word; inside it each test is quoted.
        let inner = t.test_cmd.for_tests(&["two".into(), "it's one".into()]);
        assert!(s.contains(&format!("sh -c {} >", quote(&inner))), "{s}");
        assert!(s.contains("put 'tests/two.rs' || exit 0\n"), "{s}");
        assert!(s.contains(r"rm -rf './tests/old'\''s.rs'"), "{s}");
        assert!(s.starts_with("#!/bin/sh\n"));
        // The reward starts at 0 and becomes 1 only at the end.
        let zero = s.find("echo 0 >").unwrap();
        let one = s.find("echo 1 >").unwrap();
        assert!(zero < s.find("sh -c").unwrap() && one > s.find("sh -c").unwrap());
        assert_eq!(expected(&t), "two\nit's one\n");
    }

    #[test]
    fn each_runner_gets_its_image_and_parser() {
        let mut t = task();
        for (r, from, file) in [
            (Runner::Cargo, "FROM rust:", "passed.awk"),
            (Runner::Pytest, "FROM python:", "passed.awk"),
            (Runner::Go, "FROM golang:", "passed.awk"),
            (Runner::Jest, "FROM node:", "passed.js"),
        ] {
            t.test_cmd.runner = r;
            let d = dockerfile(&t);
            assert!(d.contains(from) && d.contains("WORKDIR /app"), "{d}");
            assert!(
                d.contains("useradd --create-home agent && chown -R agent: /app"),
                "{d}"
            );
            assert_eq!(parser(r).0, file);
            assert!(test_sh(&t, &[]).contains(file));
        }
        assert!(dockerfile(&t).contains(&t.base));
    }

    #[test]
    fn the_oracle_applies_the_fix_or_says_there_is_none() {
        let t = task();
        assert!(solve_sh(&t, true).contains("git apply --whitespace=nowarn \"$here/fix.patch\""));
        assert!(!solve_sh(&t, false).contains("git apply"));
        assert_eq!(instruction(&t), "Fix \"two\"\n\nIt was 3.\n");
    }
}
