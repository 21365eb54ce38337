//! The permission policy: how baton answers an ACP agent's
//! `session/request_permission`, per access mode.
//!
//! - read-only: reading and searching are allowed; every edit, delete, move,
//!   command, fetch, mode switch or unknown tool is rejected.
//! - workspace: edits, deletes and moves are allowed when every path the
//!   request names is inside the working directory (or a directory the run
//!   must write, such as a linked worktree's git metadata), judged after
//!   resolving `..` and symlinks; a request that names no path is rejected,
//!   and so is any path inside a `.git` directory (git's config runs
//!   programs: `core.fsmonitor`, hooks). Commands are rejected: nothing
//!   confines what a command touches once it runs.
//! - full: everything is allowed.
//!
//! The one I/O here is resolving symlinks of paths that exist (`canonicalize`
//! of the longest existing ancestor): a symlink inside the workspace that
//! points out of it must not pass for a path inside.

use std::path::{Component, Path, PathBuf};

use serde_json::{Value, json};

use crate::agent::{Access, clip};
use crate::result::Denial;

/// What the agent asked to do, as far as the policy needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Read,
    Search,
    Think,
    Edit,
    Delete,
    Move,
    Execute,
    Fetch,
    SwitchMode,
    Other,
}

impl Kind {
    /// ACP's `ToolKind` as it is spelt on the wire (`other` when absent).
    pub fn parse(s: &str) -> Kind {
        match s {
            "read" => Kind::Read,
            "search" => Kind::Search,
            "think" => Kind::Think,
            "edit" => Kind::Edit,
            "delete" => Kind::Delete,
            "move" => Kind::Move,
            "execute" => Kind::Execute,
            "fetch" => Kind::Fetch,
            "switch_mode" => Kind::SwitchMode,
            _ => Kind::Other,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Read => "read",
            Kind::Search => "search",
            Kind::Think => "think",
            Kind::Edit => "edit",
            Kind::Delete => "delete",
            Kind::Move => "move",
            Kind::Execute => "execute",
            Kind::Fetch => "fetch",
            Kind::SwitchMode => "switch_mode",
            Kind::Other => "other",
        }
    }

    fn looks_only(self) -> bool {
        matches!(self, Kind::Read | Kind::Search | Kind::Think)
    }

    fn changes_files(self) -> bool {
        matches!(self, Kind::Edit | Kind::Delete | Kind::Move)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Allow,
    /// Rejected, with the reason baton records in `denials`.
    Reject(String),
}

/// The rules of one run.
#[derive(Debug, Clone)]
pub struct Policy {
    pub access: Access,
    /// Where the agent may change files in workspace access (canonical).
    pub roots: Vec<PathBuf>,
    /// Paths it must not change even inside a root (canonical).
    pub protected: Vec<PathBuf>,
    /// What relative paths in a request are relative to.
    pub cwd: PathBuf,
}

impl Policy {
    pub fn new(access: Access, cwd: &Path, writable: &[PathBuf], protected: &[PathBuf]) -> Policy {
        let canon = |p: &Path| resolve(p, cwd);
        let mut roots = vec![canon(cwd)];
        roots.extend(writable.iter().map(|p| canon(p)));
        Policy {
            access,
            roots,
            protected: protected.iter().map(|p| canon(p)).collect(),
            cwd: cwd.to_path_buf(),
        }
    }

    pub fn judge(&self, kind: Kind, paths: &[String]) -> Verdict {
        if self.access == Access::Full || kind.looks_only() {
            return Verdict::Allow;
        }
        let mode = self.access.as_str();
        if !kind.changes_files() {
            return Verdict::Reject(format!(
                "{} requests are refused in {mode} access",
                kind.as_str()
            ));
        }
        if self.access == Access::ReadOnly {
            return Verdict::Reject(format!("file changes are refused in {mode} access"));
        }
        if paths.is_empty() {
            return Verdict::Reject(
                "the request names no path, so baton cannot tell it stays in the workspace".into(),
            );
        }
        for p in paths {
            let r = resolve(Path::new(p), &self.cwd);
            if !self.roots.iter().any(|root| r.starts_with(root)) {
                return Verdict::Reject(format!("{p} is outside the workspace"));
            }
            if r.components().any(|c| c.as_os_str() == ".git")
                || self.protected.iter().any(|x| r.starts_with(x))
            {
                return Verdict::Reject(format!("{p} is git metadata baton protects"));
            }
        }
        Verdict::Allow
    }

    /// The answer to a `session/request_permission` (its `params`): the
    /// `outcome` to send, and the denial to record if it refuses. Never an
    /// "always" option: each request is judged on its own.
    pub fn answer(&self, params: &Value) -> (Value, Option<Denial>) {
        let mut denial = None;
        let tool = params.get("toolCall").unwrap_or(&Value::Null);
        let mut kind = Kind::parse(tool.get("kind").and_then(Value::as_str).unwrap_or("other"));
        let paths = paths_of(tool);
        // A patch payload is an edit of the files its headers name, whatever
        // kind the agent gave it (cline: `other`).
        if kind == Kind::Other && super::patch::patch_text(tool).is_some() {
            kind = Kind::Edit;
        }
        let verdict = self.judge(kind, &paths);
        let options = params
            .get("options")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        let pick = |kinds: &[&str]| {
            kinds.iter().find_map(|k| {
                options
                    .iter()
                    .find(|o| o.get("kind").and_then(Value::as_str) == Some(k))
                    .and_then(|o| o.get("optionId").cloned())
            })
        };
        // Never an "always" option: each request is judged on its own.
        let (outcome, denied) = match &verdict {
            Verdict::Allow => match pick(&["allow_once"]) {
                Some(o) => (json!({"outcome": "selected", "optionId": o}), None),
                None => (
                    json!({"outcome": "cancelled"}),
                    Some("the agent offered no one-time allow option".to_string()),
                ),
            },
            Verdict::Reject(why) => match pick(&["reject_once", "reject_always"]) {
                Some(o) => (
                    json!({"outcome": "selected", "optionId": o}),
                    Some(why.clone()),
                ),
                None => (json!({"outcome": "cancelled"}), Some(why.clone())),
            },
        };
        if let Some(why) = denied {
            let title = tool.get("title").and_then(Value::as_str).unwrap_or("");
            let target = paths.first().cloned().unwrap_or_else(|| {
                tool.pointer("/rawInput/command")
                    .and_then(Value::as_str)
                    .unwrap_or(title)
                    .to_string()
            });
            denial = Some(Denial {
                tool: format!("{} ({})", kind.as_str(), clip(title, 80)),
                detail: format!("{}: {why}", clip(&target, 200)),
            });
        }
        (outcome, denial)
    }

    /// The policy in words, per kind (`--dry-run`, `doctor`).
    pub fn describe(access: Access) -> serde_json::Value {
        match access {
            Access::ReadOnly => serde_json::json!({
                "allow": ["read", "search", "think"],
                "reject": ["edit", "delete", "move", "execute", "fetch", "switch_mode", "other"],
            }),
            Access::Workspace => serde_json::json!({
                "allow": ["read", "search", "think"],
                "allow_inside_workspace": ["edit", "delete", "move"],
                "reject": ["execute", "fetch", "switch_mode", "other",
                    "a change outside the workspace, inside .git, or naming no path"],
            }),
            Access::Full => serde_json::json!({"allow": ["everything"]}),
        }
    }
}

/// The paths a permission request names: its `locations`, the diffs in its
/// `content`, and the path-like fields of its `rawInput` (each agent spells
/// them its own way: `path`, `file_path`, `filePath`, `fileName`, …).
pub fn paths_of(tool_call: &Value) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        if !s.is_empty() && !out.iter().any(|o| o == s) {
            out.push(s.to_string());
        }
    };
    if let Some(locs) = tool_call.get("locations").and_then(Value::as_array) {
        for l in locs {
            if let Some(p) = l.get("path").and_then(Value::as_str) {
                push(p);
            }
        }
    }
    if let Some(content) = tool_call.get("content").and_then(Value::as_array) {
        for c in content {
            if c.get("type").and_then(Value::as_str) == Some("diff")
                && let Some(p) = c.get("path").and_then(Value::as_str)
            {
                push(p);
            }
        }
    }
    if let Some(patch) = super::patch::patch_text(tool_call) {
        super::patch::paths(patch).iter().for_each(|p| push(p));
    }
    if let Some(input) = tool_call.get("rawInput").and_then(Value::as_object) {
        for key in PATH_KEYS {
            match input.get(*key) {
                Some(Value::String(s)) => push(s),
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).for_each(&mut push),
                _ => {}
            }
        }
    }
    out
}

const PATH_KEYS: &[&str] = &[
    "path",
    "paths",
    "file_path",
    "filePath",
    "filepath",
    "fileName",
    "file_name",
    "filename",
    "abs_path",
    "absolute_path",
    "notebook_path",
    "target",
    "target_file",
    "destination",
    "source",
    "old_path",
    "new_path",
    "from",
    "to",
];

/// `p` made absolute (against `cwd`), `.`/`..` folded, and the symlinks of
/// its longest existing ancestor resolved; the rest (what does not exist
/// yet) is appended as written.
pub fn resolve(p: &Path, cwd: &Path) -> PathBuf {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    let mut clean = PathBuf::new();
    for c in abs.components() {
        match c {
            Component::ParentDir => {
                clean.pop();
            }
            Component::CurDir => {}
            c => clean.push(c),
        }
    }
    let mut existing = clean.as_path();
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = existing.canonicalize() {
            let mut out = real;
            for r in rest.iter().rev() {
                out.push(r);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return clean,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn policy(access: Access, dir: &Path) -> Policy {
        Policy::new(access, dir, &[], &[])
    }

    #[test]
    fn read_only_refuses_every_change_and_command() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(Access::ReadOnly, d.path());
        let inside = d.path().join("a.txt").display().to_string();
        for k in [
            Kind::Edit,
            Kind::Delete,
            Kind::Move,
            Kind::Execute,
            Kind::Other,
        ] {
            assert!(
                matches!(
                    p.judge(k, std::slice::from_ref(&inside)),
                    Verdict::Reject(_)
                ),
                "{k:?}"
            );
        }
        assert_eq!(p.judge(Kind::Read, &[]), Verdict::Allow);
        assert_eq!(p.judge(Kind::Search, &[]), Verdict::Allow);
    }

    #[test]
    fn workspace_allows_edits_inside_only() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(Access::Workspace, d.path());
        let inside = d.path().join("sub/new.txt").display().to_string();
        assert_eq!(
            p.judge(Kind::Edit, std::slice::from_ref(&inside)),
            Verdict::Allow
        );
        assert_eq!(p.judge(Kind::Edit, &["rel.txt".into()]), Verdict::Allow);
        let escape = d.path().join("../x.txt").display().to_string();
        assert!(
            matches!(p.judge(Kind::Edit, &[escape]), Verdict::Reject(r) if r.contains("outside"))
        );
        assert!(matches!(
            p.judge(Kind::Edit, &["/etc/passwd".into()]),
            Verdict::Reject(_)
        ));
        // One path outside is enough to refuse a move.
        assert!(matches!(
            p.judge(Kind::Move, &[inside.clone(), "/tmp/elsewhere".into()]),
            Verdict::Reject(_)
        ));
        assert!(matches!(p.judge(Kind::Edit, &[]), Verdict::Reject(r) if r.contains("no path")));
        assert!(matches!(
            p.judge(Kind::Execute, &[inside]),
            Verdict::Reject(_)
        ));
        let git = d.path().join(".git/config").display().to_string();
        assert!(matches!(p.judge(Kind::Edit, &[git]), Verdict::Reject(r) if r.contains("git")));
    }

    #[test]
    fn a_symlink_out_of_the_workspace_is_outside() {
        let d = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(out.path(), d.path().join("link")).unwrap();
        let p = policy(Access::Workspace, d.path());
        let via = d.path().join("link/evil.txt").display().to_string();
        assert!(matches!(p.judge(Kind::Edit, &[via]), Verdict::Reject(_)));
    }

    #[test]
    fn full_allows_everything() {
        let p = policy(Access::Full, Path::new("/w"));
        assert_eq!(p.judge(Kind::Execute, &[]), Verdict::Allow);
        assert_eq!(p.judge(Kind::Edit, &["/etc/x".into()]), Verdict::Allow);
    }

    #[test]
    fn paths_come_from_locations_diffs_and_raw_input() {
        let tc = json!({
            "locations": [{"path": "/w/a"}],
            "content": [{"type": "diff", "path": "/w/b", "newText": ""}],
            "rawInput": {"fileName": "/w/c", "paths": ["/w/d"], "path": "/w/a"}
        });
        assert_eq!(paths_of(&tc), ["/w/a", "/w/b", "/w/d", "/w/c"]);
    }
}
