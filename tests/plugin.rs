//! The plugin package: manifests for Claude Code, Codex, Pi and gemini follow the
//! rules their CLIs apply (`claude plugin validate` per
//! shared/realcli/claude-gemini.md §8; codex's manifest loader), carry
//! Cargo.toml's version, and the skill has what a host needs. Also the
//! version-sync and release scripts, run on copies of the tree.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{BATON, Run};

const VERSION: &str = env!("CARGO_PKG_VERSION");

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn json(rel: &str) -> Value {
    let text = fs::read_to_string(root().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

fn is_kebab(s: &str) -> bool {
    !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        && !s.starts_with('-')
}

/// A `./relative` path that stays inside its root (what both CLIs demand).
fn relative_inside(p: &str) -> bool {
    p.starts_with("./") && !p.split('/').any(|c| c == "..")
}

#[test]
fn every_manifest_carries_the_cargo_version() {
    let claude = json("plugin/.claude-plugin/plugin.json");
    let codex = json("plugin/.codex-plugin/plugin.json");
    let market = json(".claude-plugin/marketplace.json");
    let pi = json("package.json");
    let gemini = json("gemini-extension.json");
    assert_eq!(claude["version"], VERSION);
    assert_eq!(gemini["version"], VERSION);
    // gemini refuses an extension without a name (and names its folder by it).
    assert_eq!(gemini["name"], claude["name"]);
    assert_eq!(codex["version"], VERSION);
    assert_eq!(pi["version"], VERSION);
    assert_eq!(market["metadata"]["version"], VERSION);
    for p in market["plugins"].as_array().unwrap() {
        // A differing entry version is a validate warning (plugin.json wins).
        assert_eq!(p["version"], VERSION);
    }
}

#[test]
fn claude_plugin_manifest_passes_the_validate_rules() {
    let m = json("plugin/.claude-plugin/plugin.json");
    let known = [
        "name",
        "version",
        "description",
        "author",
        "homepage",
        "repository",
        "license",
        "keywords",
    ];
    for key in m.as_object().unwrap().keys() {
        // Unknown fields are warnings, which fail `validate --strict`.
        assert!(known.contains(&key.as_str()), "unknown field {key}");
    }
    let name = m["name"].as_str().expect("name is a string");
    assert!(is_kebab(name), "{name} is not kebab-case");
    assert!(m["description"].is_string());
    assert!(
        m["author"]["name"].is_string(),
        "author must be an object with a name"
    );
    assert!(m["keywords"].is_array());
    // repository must be a string (an npm-style object is an error), homepage a URL.
    assert!(m["repository"].as_str().unwrap().starts_with("https://"));
    assert!(m["homepage"].as_str().unwrap().starts_with("https://"));
    assert!(m["license"].is_string());
    // No `skills` path: the default skills/ directory is loaded.
    assert!(root().join("plugin/skills/peer/SKILL.md").is_file());
}

#[test]
fn claude_marketplace_passes_the_validate_rules() {
    let m = json(".claude-plugin/marketplace.json");
    let name = m["name"].as_str().unwrap();
    assert!(
        name.chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-".contains(c))
            && name.chars().next().unwrap().is_ascii_alphanumeric()
    );
    assert!(
        !name.starts_with("claude-"),
        "reserved-looking marketplace name"
    );
    assert!(m["owner"]["name"].is_string());
    assert!(
        m["metadata"]["description"].is_string(),
        "missing description is a warning"
    );
    let plugins = m["plugins"].as_array().unwrap();
    assert_eq!(plugins.len(), 1);
    let entry = &plugins[0];
    let source = entry["source"].as_str().unwrap();
    assert_eq!(source, "./plugin");
    assert!(relative_inside(source));
    let plugin = json("plugin/.claude-plugin/plugin.json");
    // install goes by the entry name; keep it the plugin's own.
    assert_eq!(entry["name"], plugin["name"]);
    for key in entry.as_object().unwrap().keys() {
        assert!(
            ["name", "source", "version", "description"].contains(&key.as_str()),
            "unknown entry field {key}"
        );
    }
}

#[test]
fn codex_marketplace_and_manifest_load() {
    let m = json(".agents/plugins/marketplace.json");
    assert!(m["name"].is_string());
    let entry = &m["plugins"][0];
    assert_eq!(
        entry["source"],
        serde_json::json!({"source": "local", "path": "./plugin"})
    );
    assert_eq!(entry["policy"]["installation"], "AVAILABLE");
    let plugin = json("plugin/.codex-plugin/plugin.json");
    assert_eq!(entry["name"], plugin["name"]);
    assert_eq!(
        plugin["name"],
        json("plugin/.claude-plugin/plugin.json")["name"]
    );
    let skills = plugin["skills"].as_str().unwrap();
    assert_eq!(skills, "./skills/");
    assert!(
        root()
            .join("plugin")
            .join(skills)
            .join("peer/SKILL.md")
            .is_file()
    );
    let ui = &plugin["interface"];
    for key in [
        "displayName",
        "shortDescription",
        "longDescription",
        "developerName",
        "category",
    ] {
        assert!(
            ui[key].as_str().is_some_and(|s| !s.is_empty()),
            "interface.{key}"
        );
    }
    assert!(!ui["capabilities"].as_array().unwrap().is_empty());
    let prompts = ui["defaultPrompt"].as_array().unwrap();
    // codex keeps at most 3 prompts of at most 128 characters; it drops the rest.
    assert!((1..=3).contains(&prompts.len()));
    for p in prompts {
        assert!(p.as_str().unwrap().chars().count() <= 128, "{p}");
    }
}

#[test]
fn pi_package_points_at_the_skills() {
    let p = json("package.json");
    assert!(
        p["keywords"]
            .as_array()
            .unwrap()
            .contains(&Value::from("pi-package"))
    );
    assert_eq!(p["pi"]["skills"], serde_json::json!(["./plugin/skills"]));
    assert_eq!(p["private"], true, "never published to npm by accident");
}

#[test]
fn peer_skill_has_front_matter_and_covers_what_a_host_needs() {
    let text = fs::read_to_string(root().join("plugin/skills/peer/SKILL.md")).unwrap();
    let rest = text.strip_prefix("---\n").expect("front matter first");
    let (front, body) = rest.split_once("\n---\n").expect("front matter closed");
    let field = |k: &str| {
        front
            .lines()
            .find_map(|l| l.strip_prefix(&format!("{k}: ")))
            .unwrap_or_else(|| panic!("no {k}"))
    };
    assert_eq!(field("name"), "peer");
    let desc = field("description");
    assert!(
        !desc.is_empty() && desc.chars().count() <= 1024,
        "{}",
        desc.len()
    );
    // A plain YAML scalar: no `: ` or ` #` that would end or break it.
    assert!(!desc.contains(": ") && !desc.contains(" #"), "{desc}");
    for needle in [
        "BATON_BIN",
        "CLAUDE_PLUGIN_ROOT",
        "--async",
        "baton wait",
        "read-only",
        "explicitly asks",
        "**Outcome**",
        "**Why it matters**",
        "**Known context**",
        "**Autonomy**",
        "**Pushback wanted**",
        "**Sensitivity**",
        "**Return format**",
        "delegate",
        "git diff",
        "changed_files",
        "unsupported_platform",
    ] {
        assert!(body.contains(needle), "SKILL.md lacks {needle}");
    }
    // Every exit code of the README's table is explained.
    let readme = fs::read_to_string(root().join("README.md")).unwrap();
    // The section ends at the next heading, so a section added after it cannot leak rows in.
    let section = readme.split("\n## Exit codes\n").nth(1).unwrap();
    let table = section.split("\n#").next().unwrap();
    assert!(
        table.contains("| 130 |"),
        "README's exit-code table not found"
    );
    for line in table
        .lines()
        .filter(|l| l.starts_with("| ") && !l.starts_with("| code"))
    {
        let code = line.trim_start_matches("| ").split(' ').next().unwrap();
        assert!(
            body.contains(&format!("| {code} |")) || body.contains(&format!("| {code},")),
            "SKILL.md does not explain exit code {code}"
        );
    }
    // Every agent baton knows appears in the table.
    for agent in ["codex", "claude", "gemini", "zai", "pi", "gemini-cli"] {
        assert!(body.contains(&format!("`{agent}`")), "{agent}");
    }
}

#[test]
fn plugin_has_readme_and_license_for_the_catalog() {
    let readme = fs::read_to_string(root().join("plugin/README.md")).unwrap();
    assert!(readme.split_whitespace().count() >= 40);
    let license = fs::read_to_string(root().join("plugin/LICENSE")).unwrap();
    assert!(license.starts_with("MIT License"));
    assert_eq!(license, fs::read_to_string(root().join("LICENSE")).unwrap());
    // The catalog's icon rule: a square PNG of 512 to 2048 px, under 2 MB.
    let icon = fs::read(root().join("plugin/.claude-plugin/icon.png")).unwrap();
    assert!(icon.starts_with(b"\x89PNG\r\n\x1a\n") && icon.len() < 2 << 20);
    let (w, h) = (
        u32::from_be_bytes(icon[16..20].try_into().unwrap()),
        u32::from_be_bytes(icon[20..24].try_into().unwrap()),
    );
    assert!(w == h && (512..=2048).contains(&w), "{w}x{h}");
}

#[test]
fn every_script_is_executable() {
    // make calls them directly; a lost exec bit fails only at release time.
    for entry in fs::read_dir(root().join("scripts")).unwrap() {
        let path = entry.unwrap().path();
        let mode = fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o111, 0o111, "{} is not executable", path.display());
        let text = fs::read_to_string(&path).unwrap();
        assert!(text.starts_with("#!/"), "{} has no #! line", path.display());
    }
}

/// A copy of the files the manifest scripts read and write.
fn manifest_tree() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    for rel in [
        "Cargo.toml",
        "Cargo.lock",
        "LICENSE",
        "package.json",
        ".claude-plugin/marketplace.json",
        ".agents/plugins/marketplace.json",
        "plugin/.claude-plugin/plugin.json",
        "plugin/.codex-plugin/plugin.json",
        "plugin/LICENSE",
        "plugin/bin/baton",
        "plugin/skills/peer/SKILL.md",
        "gemini-extension.json",
        "skills/peer/SKILL.md",
        "scripts/manifests.py",
        "scripts/sync-version.sh",
        "scripts/check-version.sh",
    ] {
        let to = tmp.path().join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(root().join(rel), &to).unwrap();
    }
    tmp
}

fn script(dir: &Path, name: &str, args: &[&str]) -> Run {
    Run::from(
        Command::new("sh")
            // The release tree's binaries are fakes: the man pages come
            // from the baton under test.
            .env("BATON_MAN_BIN", BATON)
            .arg(dir.join("scripts").join(name))
            .args(args)
            .output()
            .unwrap(),
    )
}

fn set_json(path: PathBuf, f: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    f(&mut v);
    fs::write(&path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

#[test]
fn check_version_fails_on_drift_and_sync_repairs_it() {
    let tmp = manifest_tree();
    let dir = tmp.path();
    let r = script(dir, "check-version.sh", &[]);
    assert_eq!(
        r.code, 0,
        "the committed tree must be in step: {}",
        r.stderr
    );

    set_json(dir.join("package.json"), |v| v["version"] = "0.0.9".into());
    set_json(dir.join(".claude-plugin/marketplace.json"), |v| {
        v["plugins"][0]["version"] = "1.2.3".into()
    });
    let r = script(dir, "check-version.sh", &[]);
    assert_eq!(r.code, 1);
    assert!(
        r.stderr.contains(&format!(
            "package.json: version '0.0.9', Cargo.toml says '{VERSION}'"
        )),
        "{}",
        r.stderr
    );
    assert!(
        r.stderr
            .contains(".claude-plugin/marketplace.json: version '1.2.3'")
    );

    set_json(dir.join("gemini-extension.json"), |v| {
        v["version"] = "0.0.8".into()
    });
    let r = script(dir, "check-version.sh", &[]);
    assert!(
        r.stderr.contains("gemini-extension.json: version '0.0.8'"),
        "{}",
        r.stderr
    );

    // A generated copy edited by hand is caught too.
    fs::write(dir.join("plugin/LICENSE"), "edited\n").unwrap();
    fs::write(dir.join("skills/peer/SKILL.md"), "edited\n").unwrap();
    let r = script(dir, "check-version.sh", &[]);
    assert!(r.stderr.contains("plugin/LICENSE: differs"), "{}", r.stderr);
    assert!(
        r.stderr.contains("skills/peer/SKILL.md: differs"),
        "{}",
        r.stderr
    );

    let r = script(dir, "sync-version.sh", &[]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(script(dir, "check-version.sh", &[]).code, 0);
    assert_eq!(
        fs::read_to_string(dir.join("plugin/LICENSE")).unwrap(),
        fs::read_to_string(dir.join("LICENSE")).unwrap()
    );
    // The gemini extension's skill: the plugin's, with the binary found
    // through the extension's path instead of the Claude plugin root.
    let ext_skill = fs::read_to_string(dir.join("skills/peer/SKILL.md")).unwrap();
    assert!(ext_skill.contains("`${extensionPath}/plugin/bin/baton`"));
    assert!(!ext_skill.contains("CLAUDE_PLUGIN_ROOT"));
    let plugin_skill = fs::read_to_string(dir.join("plugin/skills/peer/SKILL.md")).unwrap();
    let tail = |s: &str| s[s.find("## Access").unwrap()..].to_string();
    assert_eq!(tail(&ext_skill), tail(&plugin_skill));
    // The shim keeps its exec bit through a rewrite.
    let mode = fs::metadata(dir.join("plugin/bin/baton"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111);
}

#[test]
fn sync_version_with_a_version_bumps_cargo_and_every_manifest() {
    let tmp = manifest_tree();
    let dir = tmp.path();
    let r = script(dir, "sync-version.sh", &["9.8.7"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let cargo = fs::read_to_string(dir.join("Cargo.toml")).unwrap();
    assert!(cargo.contains("\nversion = \"9.8.7\"\n"));
    let lock = fs::read_to_string(dir.join("Cargo.lock")).unwrap();
    assert!(lock.contains("name = \"baton\"\nversion = \"9.8.7\"\n"));
    for rel in [
        "package.json",
        "plugin/.claude-plugin/plugin.json",
        "plugin/.codex-plugin/plugin.json",
        "gemini-extension.json",
    ] {
        let v: Value = serde_json::from_str(&fs::read_to_string(dir.join(rel)).unwrap()).unwrap();
        assert_eq!(v["version"], "9.8.7", "{rel}");
    }
    assert_eq!(script(dir, "check-version.sh", &[]).code, 0);
    let r = script(dir, "sync-version.sh", &["not-a-version"]);
    assert_ne!(r.code, 0);
}

/// A tree for scripts/release.sh with fake binaries that embed `reports`.
fn release_tree(reports: &str) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path();
    for rel in ["Cargo.toml", "README.md", "LICENSE", "scripts/release.sh"] {
        let to = dir.join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        fs::copy(root().join(rel), &to).unwrap();
    }
    let triples = [
        ("linux-amd64", "x86_64-unknown-linux-musl"),
        ("linux-arm64", "aarch64-unknown-linux-musl"),
        ("darwin-amd64", "x86_64-apple-darwin"),
        ("darwin-arm64", "aarch64-apple-darwin"),
    ];
    let mut sums = String::new();
    for (t, triple) in triples {
        let f = dir.join("plugin/bin").join(t).join("baton");
        fs::create_dir_all(f.parent().unwrap()).unwrap();
        fs::write(
            &f,
            format!("\x7fELF...{reports} ({triple}, commit 0123456789ab)..."),
        )
        .unwrap();
        fs::set_permissions(&f, fs::Permissions::from_mode(0o700)).unwrap();
        let out = Command::new("sha256sum").arg(&f).output().unwrap();
        let hash = String::from_utf8_lossy(&out.stdout)[..64].to_string();
        sums.push_str(&format!("{hash}  {t}/baton\n"));
    }
    fs::write(dir.join("plugin/bin/SHA256SUMS"), sums).unwrap();
    fs::write(
        dir.join("plugin/bin/BUILDINFO"),
        format!("version={reports}\nsource_date_epoch=1764000000\n"),
    )
    .unwrap();
    tmp
}

#[test]
fn release_archives_are_reproducible_and_checksummed() {
    let tmp = release_tree(VERSION);
    let dir = tmp.path();
    let (a, b) = (dir.join("out-a"), dir.join("out-b"));
    for out in [&a, &b] {
        let r = script(dir, "release.sh", &[VERSION, out.to_str().unwrap()]);
        assert_eq!(r.code, 0, "{}", r.stderr);
    }
    let checksums = fs::read_to_string(a.join("checksums.txt")).unwrap();
    assert_eq!(
        checksums,
        fs::read_to_string(b.join("checksums.txt")).unwrap()
    );
    let names: Vec<&str> = checksums.lines().map(|l| &l[66..]).collect();
    assert_eq!(
        names,
        ["darwin_amd64", "darwin_arm64", "linux_amd64", "linux_arm64"]
            .map(|p| format!("baton_{VERSION}_{p}.tar.gz"))
    );
    let ok = Command::new("sha256sum")
        .args(["--check", "--quiet", "checksums.txt"])
        .current_dir(&a)
        .status()
        .unwrap();
    assert!(ok.success());
    // Sorted entries, fixed owner, modes and time.
    let out = Command::new("tar")
        .env("TZ", "UTC")
        .args(["--numeric-owner", "-tvzf"])
        .arg(a.join(format!("baton_{VERSION}_linux_arm64.tar.gz")))
        .output()
        .unwrap();
    let listing = String::from_utf8_lossy(&out.stdout);
    let rows: Vec<Vec<&str>> = listing
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    let dir_name = format!("baton_{VERSION}_linux_arm64/");
    let entries: Vec<&str> = rows.iter().map(|r| r[5]).collect();
    assert_eq!(
        entries[..6],
        [
            dir_name.clone(),
            format!("{dir_name}LICENSE"),
            format!("{dir_name}README.md"),
            format!("{dir_name}baton"),
            format!("{dir_name}man/"),
            format!("{dir_name}man/man1/"),
        ]
    );
    // Every page `baton man` writes, baton.1 among them.
    let pages: Vec<&str> = entries[6..].to_vec();
    assert!(pages.contains(&format!("{dir_name}man/man1/baton.1").as_str()));
    assert!(pages.contains(&format!("{dir_name}man/man1/baton-setup.1").as_str()));
    assert!(pages.iter().all(|p| p.ends_with(".1")), "{pages:?}");
    for r in &rows[6..] {
        assert_eq!(r[0], "-rw-r--r--", "{r:?}");
    }
    for r in &rows {
        assert_eq!(r[1], "0/0", "{r:?}");
    }
    assert_eq!(rows[3][0], "-rwxr-xr-x");
    assert_eq!(rows[1][0], "-rw-r--r--");
    assert_eq!(
        rows[0][3], "2025-11-24",
        "mtime = BUILDINFO's source_date_epoch"
    );
}

#[test]
fn release_refuses_a_version_the_binaries_do_not_report() {
    let tmp = release_tree("0.0.1");
    let dir = tmp.path();
    let r = script(
        dir,
        "release.sh",
        &[VERSION, dir.join("out").to_str().unwrap()],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("does not report version"), "{}", r.stderr);
    let r = script(
        dir,
        "release.sh",
        &["7.7.7", dir.join("out").to_str().unwrap()],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("Cargo.toml says"), "{}", r.stderr);
}
