//! `baton setup --mcp HOST`: baton's MCP server entry in each host's own
//! configuration file (user scope), merged beside the entries already there.
//!
//! JSON files (claude, gemini, qwen, opencode, cursor) are read, the one key
//! `<servers>.baton` set, and written back atomically (other entries keep
//! their values; keys come back sorted and pretty-printed). Codex's TOML is
//! never re-serialised: setup appends one `[mcp_servers.baton]` block and
//! removes exactly that text again. The manifest records each entry by file,
//! key and checksum, so `--uninstall` removes only an entry still as setup
//! wrote it, and a rerun updates only its own.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value, json};
use toml::de::{DeTable, DeValue};

use super::Places;
use super::manifest::{Entry, Manifest, sha256_hex};
use super::report::HostReport;
use crate::error::{Error, Result};
use crate::fsutil;

/// Longer than a run's default time-out (60m), so a host does not give up
/// on a `run` call baton itself would still let finish.
const TOOL_TIMEOUT_SECS: u64 = 3660;

/// A host whose MCP configuration setup writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum McpHost {
    Claude,
    Codex,
    Gemini,
    Qwen,
    Opencode,
    Cursor,
}

impl McpHost {
    pub const ALL: [McpHost; 6] = [
        McpHost::Claude,
        McpHost::Codex,
        McpHost::Gemini,
        McpHost::Qwen,
        McpHost::Opencode,
        McpHost::Cursor,
    ];

    pub fn name(self) -> &'static str {
        match self {
            McpHost::Claude => "claude",
            McpHost::Codex => "codex",
            McpHost::Gemini => "gemini",
            McpHost::Qwen => "qwen",
            McpHost::Opencode => "opencode",
            McpHost::Cursor => "cursor",
        }
    }

    /// The manifest's owner of this host's entry (apart from its skill).
    pub fn owner(self) -> &'static str {
        match self {
            McpHost::Claude => "mcp-claude",
            McpHost::Codex => "mcp-codex",
            McpHost::Gemini => "mcp-gemini",
            McpHost::Qwen => "mcp-qwen",
            McpHost::Opencode => "mcp-opencode",
            McpHost::Cursor => "mcp-cursor",
        }
    }

    pub fn parse(s: &str) -> Option<McpHost> {
        McpHost::ALL
            .into_iter()
            .find(|h| h.name() == s)
            .or(match s {
                "claude-code" => Some(McpHost::Claude),
                "gemini-cli" => Some(McpHost::Gemini),
                _ => None,
            })
    }

    /// The file the host reads its user-wide MCP servers from.
    pub fn config_file(self, places: &Places) -> Result<PathBuf> {
        let home = || places.home().map(Path::to_path_buf);
        let var_or = |var: &str, default: &[&str]| -> Result<PathBuf> {
            Ok(match places.var(var) {
                Some(d) => PathBuf::from(d),
                None => default.iter().fold(home()?, |p, c| p.join(c)),
            })
        };
        Ok(match self {
            // `claude mcp add --scope user` writes ~/.claude.json, which
            // CLAUDE_CONFIG_DIR moves with the rest of the config.
            McpHost::Claude => var_or("CLAUDE_CONFIG_DIR", &[])?.join(".claude.json"),
            McpHost::Codex => var_or("CODEX_HOME", &[".codex"])?.join("config.toml"),
            McpHost::Gemini => var_or("GEMINI_CLI_HOME", &[])?.join(".gemini/settings.json"),
            McpHost::Qwen => home()?.join(".qwen/settings.json"),
            McpHost::Opencode => {
                var_or("XDG_CONFIG_HOME", &[".config"])?.join("opencode/opencode.json")
            }
            McpHost::Cursor => home()?.join(".cursor/mcp.json"),
        })
    }

    /// Where the entry sits in a JSON file.
    fn key(self) -> [&'static str; 2] {
        match self {
            McpHost::Opencode => ["mcp", "baton"],
            _ => ["mcpServers", "baton"],
        }
    }

    /// The entry for a JSON host.
    fn entry(self, exe: &Path) -> Value {
        let exe = exe.display().to_string();
        match self {
            McpHost::Claude => {
                json!({"type": "stdio", "command": exe, "args": ["mcp"], "env": {}})
            }
            McpHost::Gemini | McpHost::Qwen => json!({
                "command": exe, "args": ["mcp"], "timeout": TOOL_TIMEOUT_SECS * 1000,
            }),
            McpHost::Opencode => json!({"type": "local", "command": [exe, "mcp"], "enabled": true}),
            McpHost::Cursor | McpHost::Codex => json!({"command": exe, "args": ["mcp"]}),
        }
    }
}

/// Codex's block, appended as is and removed as is.
///
/// `default_tools_approval_mode = "approve"`: headless `codex exec` (approval
/// policy `never`) refuses a call to a tool that needs approval, and Codex
/// asks for one before every tool not marked read-only (`run`, `continue`,
/// …): without it a Codex session could list baton's tools but not delegate.
/// What a call may do is still bounded by `baton mcp`'s own access cap
/// (`workspace` unless the server was started with `--allow-full-access`).
fn codex_block(exe: &Path) -> String {
    // A JSON string is a valid TOML basic string (the same escapes).
    let cmd = serde_json::to_string(&exe.display().to_string()).unwrap_or_default();
    format!(
        "\n# baton's MCP server, written by `baton setup --mcp codex` (`--uninstall` removes this block)\n\
         [mcp_servers.baton]\ncommand = {cmd}\nargs = [\"mcp\"]\ntool_timeout_sec = {TOOL_TIMEOUT_SECS}\n\
         default_tools_approval_mode = \"approve\"\n"
    )
}

/// What one host's entry needs, as setup decides it.
pub struct Job<'a> {
    pub host: McpHost,
    pub exe: &'a Path,
    pub places: &'a Places,
    pub dry_run: bool,
    pub force: bool,
}

pub fn install(j: &Job, manifest: &mut Manifest, rep: &mut HostReport) -> Result<()> {
    let path = j.host.config_file(j.places)?;
    let text = match fs::read_to_string(&path) {
        Ok(t) => Some(t),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io(format!("reading {}", path.display()), e)),
    };
    let owner = j.host.owner();
    let recorded = manifest.entry(&path).cloned();
    let (new_text, stored) = if j.host == McpHost::Codex {
        let block = codex_block(j.exe);
        let old = text.clone().unwrap_or_default();
        if old.contains(&block) {
            rep.skip(path, "unchanged");
            return Ok(());
        }
        let ours = recorded
            .as_ref()
            .and_then(|r| r.text.clone())
            .filter(|t| old.contains(t.as_str()));
        let base = match ours {
            Some(t) => old.replacen(&t, "", 1),
            None => match toml_has_baton(&old) {
                Ok(false) => old,
                Ok(true) => {
                    // Someone else's table: setup never rewrites TOML it did not write.
                    rep.skip(path, "not_ours");
                    return Ok(());
                }
                Err(_) => {
                    rep.skip(path, "unreadable");
                    return Ok(());
                }
            },
        };
        let mut t = base;
        if !t.is_empty() && !t.ends_with('\n') {
            t.push('\n');
        }
        t.push_str(&block);
        (t, block)
    } else {
        let mut root = match text.as_deref().map(serde_json::from_str::<Value>) {
            None => Value::Object(Map::new()),
            Some(Ok(v @ Value::Object(_))) => v,
            Some(_) => {
                rep.skip(path, "unreadable");
                return Ok(());
            }
        };
        let want = j.host.entry(j.exe);
        let [k1, k2] = j.host.key();
        let servers = root
            .as_object_mut()
            .expect("an object")
            .entry(k1)
            .or_insert_with(|| Value::Object(Map::new()));
        let Some(servers) = servers.as_object_mut() else {
            rep.skip(path, "unreadable");
            return Ok(());
        };
        match servers.get(k2) {
            Some(v) if *v == want => {
                rep.skip(path, "unchanged");
                return Ok(());
            }
            Some(v) => {
                let ours = recorded.as_ref().is_some_and(|r| r.sha256 == value_sha(v));
                if !ours && !j.force {
                    rep.skip(path, "not_ours");
                    return Ok(());
                }
            }
            None => {}
        }
        let sha = value_sha(&want);
        servers.insert(k2.into(), want);
        let mut t =
            serde_json::to_string_pretty(&root).map_err(|e| Error::Internal(e.to_string()))?;
        t.push('\n');
        (t, sha)
    };
    if !j.dry_run {
        let dir = path.parent().unwrap_or(Path::new("/"));
        super::create_dirs(dir, owner, manifest)?;
        write_keeping_mode(&path, new_text.as_bytes(), text.is_none())?;
        let (sha256, block) = if j.host == McpHost::Codex {
            (sha256_hex(stored.as_bytes()), Some(stored))
        } else {
            (stored, None)
        };
        manifest.record_entry(Entry {
            path: path.clone(),
            key: key_name(j.host),
            sha256,
            owner: owner.into(),
            text: block,
            created_file: text.is_none() || recorded.as_ref().is_some_and(|r| r.created_file),
        });
    }
    rep.written.push(path);
    Ok(())
}

pub fn uninstall(j: &Job, manifest: &mut Manifest, rep: &mut HostReport) -> Result<()> {
    let owner = j.host.owner();
    let entries: Vec<Entry> = manifest
        .entries
        .iter()
        .filter(|e| e.owner == owner)
        .cloned()
        .collect();
    for e in entries {
        let text = match fs::read_to_string(&e.path) {
            Ok(t) => t,
            Err(err) if err.kind() == std::io::ErrorKind::NotFound => {
                rep.skip(e.path.clone(), "gone");
                if !j.dry_run {
                    manifest.forget_entry(&e.path);
                }
                continue;
            }
            Err(err) => return Err(Error::io(format!("reading {}", e.path.display()), err)),
        };
        let left = match &e.text {
            Some(block) if text.contains(block.as_str()) => {
                Some(text.replacen(block.as_str(), "", 1))
            }
            Some(_) => None,
            None => remove_json(&text, j.host, &e.sha256, j.force),
        };
        let Some(left) = left else {
            let reason = if still_there(&text, j.host) {
                "changed"
            } else {
                "gone"
            };
            rep.skip(e.path.clone(), reason);
            if reason == "gone" && !j.dry_run {
                manifest.forget_entry(&e.path);
            }
            continue;
        };
        if !j.dry_run {
            if e.created_file && is_empty_config(&left, j.host) {
                fs::remove_file(&e.path)
                    .map_err(|err| Error::io(format!("removing {}", e.path.display()), err))?;
            } else {
                write_keeping_mode(&e.path, left.as_bytes(), false)?;
            }
            manifest.forget_entry(&e.path);
        }
        rep.removed.push(e.path.clone());
    }
    if !j.dry_run {
        super::remove_empty_dirs(manifest, |d| d == owner);
    }
    Ok(())
}

/// The JSON text without baton's entry, when the entry is still what setup
/// wrote (or `force`); `None` when it is gone or changed.
fn remove_json(text: &str, host: McpHost, sha: &str, force: bool) -> Option<String> {
    let mut root: Value = serde_json::from_str(text).ok()?;
    let [k1, k2] = host.key();
    let servers = root.get_mut(k1)?.as_object_mut()?;
    let v = servers.get(k2)?;
    if value_sha(v) != sha && !force {
        return None;
    }
    servers.remove(k2);
    let mut t = serde_json::to_string_pretty(&root).ok()?;
    t.push('\n');
    Some(t)
}

fn still_there(text: &str, host: McpHost) -> bool {
    if host == McpHost::Codex {
        return toml_has_baton(text).unwrap_or(true);
    }
    let [k1, k2] = host.key();
    serde_json::from_str::<Value>(text)
        .ok()
        .and_then(|v| v.get(k1)?.get(k2).cloned())
        .is_some()
}

/// A file setup created that holds nothing but what it wrote.
fn is_empty_config(text: &str, host: McpHost) -> bool {
    if host == McpHost::Codex {
        return text.trim().is_empty();
    }
    let [k1, _] = host.key();
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(m)) => {
            m.is_empty()
                || (m.len() == 1
                    && m.get(k1)
                        .and_then(Value::as_object)
                        .is_some_and(Map::is_empty))
        }
        _ => false,
    }
}

fn key_name(host: McpHost) -> String {
    match host {
        McpHost::Codex => "mcp_servers.baton".into(),
        h => h.key().join("."),
    }
}

fn value_sha(v: &Value) -> String {
    // serde_json's map is sorted: the same value always hashes the same.
    sha256_hex(&serde_json::to_vec(v).unwrap_or_default())
}

/// Whether a TOML text already has `mcp_servers.baton` (an error: not TOML).
fn toml_has_baton(text: &str) -> std::result::Result<bool, String> {
    let doc = DeTable::parse(text).map_err(|e| e.message().to_string())?;
    let servers = doc
        .get_ref()
        .iter()
        .find(|(k, _)| k.get_ref() == "mcp_servers")
        .map(|(_, v)| v);
    Ok(match servers.map(|v| v.get_ref()) {
        None => false,
        Some(DeValue::Table(t)) => t.iter().any(|(k, _)| k.get_ref() == "baton"),
        // Not a table: nothing can be added beside it.
        Some(_) => true,
    })
}

/// Replace `path` atomically, keeping the mode it had (a new file: 0600,
/// as host configuration can hold credentials).
fn write_keeping_mode(path: &Path, data: &[u8], new: bool) -> Result<()> {
    let mode = if new {
        0o600
    } else {
        fs::metadata(path).map_or(0o600, |m| m.permissions().mode() & 0o7777)
    };
    fsutil::write_atomic(path, data)?;
    fs::set_permissions(path, fs::Permissions::from_mode(mode))
        .map_err(|e| Error::io(format!("setting the mode of {}", path.display()), e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_blocks_are_found_in_toml_and_escape_the_path() {
        let b = codex_block(Path::new("/opt/my \"baton\"/baton"));
        assert!(b.contains(r#"command = "/opt/my \"baton\"/baton""#), "{b}");
        // What headless `codex exec` needs to call the tools unasked.
        assert!(
            b.ends_with("default_tools_approval_mode = \"approve\"\n"),
            "{b}"
        );
        assert_eq!(toml_has_baton(&b), Ok(true));
        assert_eq!(
            toml_has_baton("model = \"x\"\n[mcp_servers.other]\ncommand = \"o\"\n"),
            Ok(false)
        );
        assert_eq!(
            toml_has_baton("mcp_servers.baton.command = \"x\"\n"),
            Ok(true)
        );
        assert!(toml_has_baton("[[[").is_err());
    }

    #[test]
    fn an_empty_config_is_only_what_setup_wrote() {
        assert!(is_empty_config("{}\n", McpHost::Cursor));
        assert!(is_empty_config("{\"mcpServers\": {}}", McpHost::Cursor));
        assert!(!is_empty_config(
            "{\"mcpServers\": {\"x\": {}}}",
            McpHost::Cursor
        ));
        assert!(!is_empty_config("{\"theme\": 1}", McpHost::Gemini));
        assert!(is_empty_config("{\"mcp\": {}}", McpHost::Opencode));
    }
}
