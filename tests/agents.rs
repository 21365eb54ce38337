//! `baton agents` and `baton schema`.

use crate::support::{Env, Run};

/// `baton agents --json` with fake CLIs that report their versions the way
/// the real ones do (`shared/realcli/fixtures/*-version*`).
#[test]
fn agents_lists_installed_clis_with_their_versions() {
    let env = Env::new();
    // codex: version on stdout, a warning on stderr.
    env.fake(
        "codex",
        "echo 'WARNING: proceeding, even though we could not create PATH aliases' >&2\necho 'codex-cli 0.171.0'",
    );
    // pi prints its version on stderr.
    env.fake("pi", "echo '0.73.1' >&2");
    env.fake("claude", "echo '2.1.332 (Claude Code)'");
    env.fake("gemini", "echo '0.61.0'");
    // agy is not installed. Only the fakes are on PATH.
    let r = Run::from(
        env.baton()
            .env("PATH", &env.bin)
            .args(["agents", "--json"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let j = r.json();
    assert_eq!(j["schema_version"], 1);
    let agents = j["agents"].as_array().unwrap();
    let names: Vec<&str> = agents.iter().map(|a| a["name"].as_str().unwrap()).collect();
    assert_eq!(
        names,
        [
            "codex",
            "claude",
            "gemini",
            "zai",
            "pi",
            "gemini-cli",
            "opencode",
            "qwen",
            "copilot",
            "kilo",
            "cline",
            "nanocoder"
        ]
    );
    let get = |n: &str| agents.iter().find(|a| a["name"] == n).unwrap();

    let codex = get("codex");
    assert_eq!(codex["installed"], true);
    assert_eq!(codex["version"], "codex-cli 0.171.0");
    assert_eq!(codex["default_effort"], "high");
    assert_eq!(
        codex["efforts"],
        serde_json::json!(["low", "medium", "high", "xhigh"])
    );
    assert_eq!(
        codex["access"],
        serde_json::json!(["read-only", "workspace", "full"])
    );
    assert!(
        codex["path"]
            .as_str()
            .unwrap()
            .starts_with(&env.bin.display().to_string())
    );

    assert_eq!(get("pi")["version"], "0.73.1");
    assert_eq!(get("zai")["version"], "0.73.1");
    assert_eq!(get("zai")["binary"], "pi");
    assert_eq!(get("zai")["default_model"], "glm-5.2");
    assert_eq!(get("claude")["version"], "2.1.332 (Claude Code)");
    assert_eq!(get("claude")["default_effort"], "xhigh");
    assert_eq!(get("gemini-cli")["version"], "0.61.0");
    assert_eq!(get("gemini-cli")["efforts"], serde_json::json!([]));

    let agy = get("gemini");
    assert_eq!(agy["binary"], "agy");
    assert_eq!(agy["installed"], false);
    assert!(agy["version"].is_null());
    assert!(
        agy["install_hint"]
            .as_str()
            .unwrap()
            .contains("Antigravity")
    );
    assert_eq!(agy["access"], serde_json::json!(["workspace", "full"]));
    // Each agent names its transports, the default first.
    assert_eq!(codex["transports"], serde_json::json!(["headless"]));
    assert_eq!(
        get("qwen")["transports"],
        serde_json::json!(["headless", "acp"])
    );
    assert_eq!(get("copilot")["transports"], serde_json::json!(["acp"]));
    assert_eq!(agy["default_model"], "gemini-3.7-flash");
}

#[test]
fn agents_survives_clis_that_hang_or_fail() {
    let env = Env::new();
    // Only `--version` matters; a broken CLI that never answers it must not
    // block the listing forever. (The limit is 15 s, shortened here to 1 s
    // through `process::timeouts`; the test allows 40.)
    env.fake("claude", "exec /bin/sleep 300");
    // The npm wrapper without its native binary (install scripts skipped).
    env.fake(
        "gemini",
        "echo 'Error: gemini native binary not installed.' >&2\nexit 1",
    );
    let started = std::time::Instant::now();
    let r = Run::from(
        env.baton()
            .env("PATH", &env.bin)
            .env("BATON_VERSION_TIMEOUT_MS", "1000")
            .args(["agents"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0);
    assert!(started.elapsed() < std::time::Duration::from_secs(40));
    let j = r.json();
    let claude = &j["agents"][1];
    assert_eq!(claude["installed"], true);
    assert!(claude["version"].is_null(), "{claude}");
    assert!(
        claude["notes"].to_string().contains("no answer"),
        "{claude}"
    );
    let gemini = &j["agents"][5];
    assert!(gemini["version"].is_null(), "{gemini}");
    assert!(
        gemini["notes"]
            .to_string()
            .contains("native binary not installed"),
        "{gemini}"
    );
}

/// `--text` is a table: a header, then one row per agent whose every cell
/// starts under its column's header, whatever the lengths of names (`gemini-cli`),
/// binaries (`opencode`) and versions; notes and install commands below it.
#[test]
fn agents_text_mode_is_an_aligned_table() {
    let env = Env::new();
    env.fake("codex", "echo 'codex-cli 0.171.0'");
    env.fake("claude", "echo '2.1.332 (Claude Code)'");
    env.fake("opencode", "echo '1.18.33'");
    let agents = |mode: &str| {
        Run::from(
            env.baton()
                .env("PATH", &env.bin)
                .args(["agents", mode])
                .output()
                .unwrap(),
        )
    };
    let r = agents("--text");
    assert_eq!(r.code, 0);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let header = lines[0];
    let titles = [
        "AGENT",
        "BINARY",
        "STATUS",
        "VERSION",
        "MODEL",
        "EFFORT",
        "EFFORTS",
        "COST",
        "ACCESS",
        "TRANSPORT",
    ];
    let starts: Vec<usize> = titles
        .iter()
        .map(|t| {
            header
                .match_indices(t)
                .find(|(i, _)| {
                    header[i + t.len()..].starts_with(' ') || i + t.len() == header.len()
                })
                .unwrap_or_else(|| panic!("no {t} in {header:?}"))
                .0
        })
        .collect();
    assert_eq!(starts[0], 0, "{header}");
    assert!(starts.windows(2).all(|w| w[0] < w[1]), "{header}");
    let j = agents("--json").json();
    let list = j["agents"].as_array().unwrap();
    assert!(lines.len() > list.len(), "{}", r.stdout);
    let s = |v: &serde_json::Value| v.as_str().unwrap_or("-").to_string();
    for (row, a) in lines[1..=list.len()].iter().zip(list) {
        let efforts: Vec<String> = a["efforts"].as_array().unwrap().iter().map(s).collect();
        let access: Vec<String> = a["access"].as_array().unwrap().iter().map(s).collect();
        let want = [
            s(&a["name"]),
            s(&a["binary"]),
            if a["installed"] == true {
                "installed"
            } else {
                "missing"
            }
            .to_string(),
            s(&a["version"]),
            a["default_model"]
                .as_str()
                .unwrap_or("(CLI default)")
                .to_string(),
            s(&a["default_effort"]),
            if efforts.is_empty() {
                "-".to_string()
            } else {
                efforts.join("|")
            },
            s(&a["cost"]),
            access.join(", "),
            a["transports"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| t.as_str().unwrap())
                .collect::<Vec<_>>()
                .join(", "),
        ];
        for (c, w) in want.iter().enumerate() {
            let end = starts.get(c + 1).copied().unwrap_or(row.len());
            assert!(row.len() >= end, "{row:?} is short");
            assert!(
                c == 0 || row.as_bytes()[starts[c] - 1] == b' ',
                "{row:?} col {c}"
            );
            assert_eq!(
                row[starts[c]..end].trim_end(),
                w,
                "{row:?} column {}",
                titles[c]
            );
        }
    }
    assert!(r.stdout.contains("2.1.332 (Claude Code)"));
    // Installed CLIs need no install line; missing ones get theirs.
    let install = r
        .stdout
        .split("\ninstall:\n")
        .nth(1)
        .expect("install section");
    assert!(!install.contains("@openai/codex"), "{install}");
    assert!(install.contains("  qwen "), "{install}");
    let notes = r.stdout.split("\nnotes:\n").nth(1).expect("notes section");
    assert!(notes.contains("  gemini      no read-only mode"), "{notes}");
    // The dated price table that estimates costs a CLI does not report.
    let prices = &j["prices"];
    let as_of = prices["as_of"].as_str().unwrap();
    assert!(as_of.len() == 10 && as_of.starts_with("20"), "{as_of}");
    assert_eq!(prices["unit"], "USD per million tokens");
    let gpt = prices["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["model"] == "gpt-5.4")
        .expect("gpt-5.4 priced");
    assert_eq!(gpt["provider"], "openai");
    assert_eq!(gpt["output"], 15.0);
    let table = r
        .stdout
        .split(&format!("\nprices (USD per million tokens, as of {as_of}"))
        .nth(1)
        .expect("prices section");
    // The models baton's tables name; the rest only in --json.
    assert!(table.contains("openai     gpt-5.6-luna "), "{table}");
    assert!(!table.contains(" gpt-5.4 "), "{table}");
    assert!(
        table.contains("more models: `baton agents --json` lists them all"),
        "{table}"
    );
}

#[test]
fn schema_describes_the_result() {
    let env = Env::new();
    let r = env.run(&["schema"]);
    assert_eq!(r.code, 0);
    let s = r.json();
    assert_eq!(s["$id"], "https://baton.dev/schema/result-v1.json");
    assert_eq!(s["title"], "RunResult");
    // Its fields are checked against the contract in `json.rs`.
    // The statuses a caller must handle are spelled out.
    let text = s.to_string();
    for st in ["success", "failed", "timeout", "cancelled"] {
        assert!(text.contains(&format!("\"{st}\"")), "schema lacks {st}");
    }
}

#[test]
fn version_and_help() {
    let env = Env::new();
    let r = env.run(&["--version"]);
    assert_eq!(r.code, 0);
    assert!(
        r.stdout
            .starts_with(&format!("baton {} (", env!("CARGO_PKG_VERSION"))),
        "{}",
        r.stdout
    );
    let r = env.run(&["run", "--help"]);
    assert_eq!(r.code, 0);
    for flag in [
        "--agent",
        "--model",
        "--effort",
        "--access",
        "--read-only",
        "--full-access",
        "--cwd",
        "--prompt-file",
        "--resume",
        "--timeout",
        "--idle-timeout",
        "--profile",
        "--provider",
        "--raw",
        "--dry-run",
        "--json",
        "--text",
    ] {
        assert!(r.stdout.contains(flag), "help lacks {flag}");
    }
}

/// A `--version` probe that ignores SIGTERM and forks a grandchild is
/// stopped as a group at its deadline (`process::Command::output`): neither
/// is left running, and the deadline is the one `process::timeouts` gives.
#[test]
fn a_hung_version_probe_is_stopped_with_its_group_at_the_deadline() {
    let env = Env::new();
    env.fake(
        "claude",
        "trap '' TERM\n/bin/sleep 300 &\necho $! > \"$FAKE_DIR/grandchild.pid\"\necho $$ > \"$FAKE_DIR/leader.pid\"\nwait",
    );
    let r = Run::from(
        env.baton()
            .env("PATH", &env.bin)
            .env("BATON_VERSION_TIMEOUT_MS", "2000")
            .args(["agents"])
            .output()
            .unwrap(),
    );
    assert_eq!(r.code, 0);
    let j = r.json();
    let claude = &j["agents"][1];
    assert_eq!(claude["name"], "claude", "{claude}");
    assert!(
        claude["notes"].to_string().contains("no answer within 2 s"),
        "{claude}"
    );
    for name in ["leader", "grandchild"] {
        let pid: i32 = std::fs::read_to_string(env.fake_dir.join(format!("{name}.pid")))
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        assert!(
            crate::support::wait_for(std::time::Duration::from_secs(5), || {
                !crate::support::pid_alive(pid)
            }),
            "the probe's {name} {pid} survived its deadline"
        );
    }
}
