//! `baton setup --mcp HOST` into a temporary HOME: each host's MCP entry
//! merged beside existing entries (JSON) or appended as one block (codex's
//! TOML), a rerun writing nothing, `--dry-run` touching nothing,
//! `--uninstall` removing exactly the entry, conflicts left alone.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::support::{BATON, Env, Run};

struct Home {
    env: Env,
    home: PathBuf,
}

impl Home {
    fn new() -> Home {
        let env = Env::new();
        let home = env.tmp.path().join("home");
        fs::create_dir_all(&home).unwrap();
        Home { env, home }
    }

    fn setup(&self, args: &[&str]) -> Run {
        let mut c = std::process::Command::new(BATON);
        c.current_dir(&self.env.work)
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("HOME", &self.home)
            .arg("setup")
            .args(args);
        Run::from(c.output().unwrap())
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.home.join(rel)
    }

    fn json(&self, rel: &str) -> Value {
        serde_json::from_str(&fs::read_to_string(self.path(rel)).unwrap()).unwrap()
    }
}

const FILES: &[(&str, &str)] = &[
    ("claude", ".claude.json"),
    ("codex", ".codex/config.toml"),
    ("gemini", ".gemini/settings.json"),
    ("qwen", ".qwen/settings.json"),
    ("opencode", ".config/opencode/opencode.json"),
    ("cursor", ".cursor/mcp.json"),
];

fn write(p: &Path, text: &str) {
    fs::create_dir_all(p.parent().unwrap()).unwrap();
    fs::write(p, text).unwrap();
}

#[test]
fn every_host_gets_the_entry_beside_its_own_and_uninstall_restores_the_files() {
    let h = Home::new();
    // Existing configuration, with other servers and settings.
    let before_claude = "{\n  \"mcpServers\": {\n    \"other\": {\"command\": \"o\"}\n  },\n  \"theme\": \"dark\"\n}\n";
    write(&h.path(".claude.json"), before_claude);
    fs::set_permissions(h.path(".claude.json"), fs::Permissions::from_mode(0o600)).unwrap();
    let before_codex = "model = \"gpt-5.6-sol\"\n\n[mcp_servers.other]\ncommand = \"o\"\n";
    write(&h.path(".codex/config.toml"), before_codex);

    let r = h.setup(&["--mcp", "all"]);
    assert_eq!(r.code, 0, "{}{}", r.stdout, r.stderr);
    let j = r.json();
    assert_eq!(j["status"], "ok");
    assert_eq!(j["hosts"].as_array().unwrap().len(), 6);

    let exe = fs::canonicalize(BATON).unwrap().display().to_string();
    let claude = h.json(".claude.json");
    assert_eq!(claude["theme"], "dark");
    assert_eq!(claude["mcpServers"]["other"]["command"], "o");
    assert_eq!(
        claude["mcpServers"]["baton"],
        json!({"type": "stdio", "command": exe, "args": ["mcp"], "env": {}})
    );
    let mode = fs::metadata(h.path(".claude.json"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the file's mode is kept");
    let codex = fs::read_to_string(h.path(".codex/config.toml")).unwrap();
    assert!(codex.starts_with(before_codex), "{codex}");
    assert!(codex.contains("[mcp_servers.baton]\ncommand = "), "{codex}");
    assert!(codex.contains("tool_timeout_sec = 3660"), "{codex}");
    // Headless `codex exec` calls the tools without an approval prompt
    // (the key tests/e2e/mcp_hosts.rs proves against the real Codex).
    toml::de::DeTable::parse(&codex).expect("codex's config is still TOML");
    let table = &codex[codex.find("[mcp_servers.baton]").unwrap()..];
    let table = table[1..].split("\n[").next().unwrap();
    assert!(
        table
            .lines()
            .any(|l| l == "default_tools_approval_mode = \"approve\""),
        "{codex}"
    );
    assert_eq!(
        h.json(".gemini/settings.json")["mcpServers"]["baton"]["timeout"],
        3_660_000
    );
    assert_eq!(
        h.json(".qwen/settings.json")["mcpServers"]["baton"]["args"],
        json!(["mcp"])
    );
    assert_eq!(
        h.json(".config/opencode/opencode.json")["mcp"]["baton"]["command"],
        json!([exe, "mcp"])
    );
    assert_eq!(
        h.json(".cursor/mcp.json")["mcpServers"]["baton"]["command"],
        json!(exe)
    );

    // A rerun writes nothing.
    let again = h.setup(&["--mcp", "all"]).json();
    for host in again["hosts"].as_array().unwrap() {
        assert!(host["written"].as_array().unwrap().is_empty(), "{host}");
        assert_eq!(host["skipped"][0]["reason"], "unchanged", "{host}");
    }

    // --dry-run of the uninstall lists, and changes nothing.
    let codex_now = fs::read_to_string(h.path(".codex/config.toml")).unwrap();
    let dry = h
        .setup(&["--mcp", "all", "--uninstall", "--dry-run"])
        .json();
    assert_eq!(
        dry["hosts"][1]["removed"][0],
        json!(h.path(".codex/config.toml"))
    );
    assert_eq!(
        fs::read_to_string(h.path(".codex/config.toml")).unwrap(),
        codex_now
    );

    let r = h.setup(&["--mcp", "all", "--uninstall"]);
    assert_eq!(r.code, 0, "{}", r.stdout);
    // What was there before is there again; the files setup created are gone.
    let claude = h.json(".claude.json");
    assert!(claude["mcpServers"].get("baton").is_none());
    assert_eq!(claude["mcpServers"]["other"]["command"], "o");
    assert_eq!(claude["theme"], "dark");
    assert_eq!(
        fs::read_to_string(h.path(".codex/config.toml")).unwrap(),
        before_codex
    );
    for (host, rel) in FILES.iter().skip(2) {
        assert!(!h.path(rel).exists(), "{host}: {rel} left behind");
        assert!(
            !h.path(rel).parent().unwrap().exists(),
            "{host}: its directory left behind"
        );
    }
}

#[test]
fn dry_run_writes_nothing_and_conflicts_are_left_alone() {
    let h = Home::new();
    let r = h.setup(&["--mcp", "cursor", "--dry-run"]);
    assert_eq!(
        r.json()["hosts"][0]["written"][0],
        json!(h.path(".cursor/mcp.json"))
    );
    assert!(!h.path(".cursor").exists());

    // Someone else's `baton` entry, a file that is no JSON, a codex table.
    write(
        &h.path(".cursor/mcp.json"),
        "{\"mcpServers\": {\"baton\": {\"command\": \"mine\"}}}\n",
    );
    write(
        &h.path(".gemini/settings.json"),
        "{ // comments are not JSON\n}\n",
    );
    write(
        &h.path(".codex/config.toml"),
        "[mcp_servers.baton]\ncommand = \"mine\"\n",
    );
    let r = h.setup(&["--mcp", "cursor,gemini,codex"]);
    assert_eq!(r.code, 2, "{}", r.stdout);
    let j = r.json();
    assert_eq!(j["status"], "conflict");
    let reasons: Vec<&str> = j["hosts"]
        .as_array()
        .unwrap()
        .iter()
        .map(|h| h["skipped"][0]["reason"].as_str().unwrap())
        .collect();
    assert_eq!(reasons, ["not_ours", "unreadable", "not_ours"]);
    assert_eq!(
        h.json(".cursor/mcp.json")["mcpServers"]["baton"]["command"],
        "mine"
    );
    // --force replaces a JSON entry (never someone's TOML).
    let r = h.setup(&["--mcp", "cursor", "--force"]);
    assert_eq!(r.code, 0);
    assert_ne!(
        h.json(".cursor/mcp.json")["mcpServers"]["baton"]["command"],
        "mine"
    );

    // An entry edited after setup wrote it is not removed.
    let mut v = h.json(".cursor/mcp.json");
    v["mcpServers"]["baton"]["args"] = json!(["mcp", "--allow-full-access"]);
    write(&h.path(".cursor/mcp.json"), &v.to_string());
    let r = h.setup(&["--mcp", "cursor", "--uninstall"]);
    assert_eq!(r.code, 2);
    assert_eq!(r.json()["hosts"][0]["skipped"][0]["reason"], "changed");
    assert!(h.json(".cursor/mcp.json")["mcpServers"]["baton"].is_object());

    let e = h.setup(&["--mcp", "vim"]);
    assert_eq!(e.code, 2);
    assert_eq!(e.json()["error"]["kind"], "usage");
    let e = h.setup(&["--mcp", "claude", "--scope", "project"]);
    assert_eq!(e.json()["error"]["kind"], "usage");
}
