//! The permission policy: how baton answers an ACP agent's
//! `session/request_permission`, per access mode.
//!
//! - read-only: reading and searching are allowed; every edit, delete, move,
//!   command, fetch, mode switch or unknown tool is rejected.
//! - workspace: edits, deletes and moves are allowed when every path the
//!   request names is inside the working directory (or a directory the run
//!   must write, such as a linked worktree's git metadata), judged where the
//!   path really leads (`resolve`); a request that names no path is
//!   rejected, and so is any path inside a `.git` directory (git's config
//!   runs programs: `core.fsmonitor`, hooks), a path starting with `~` (a
//!   tool may read it as a home directory) and a `file:` URI that leads
//!   outside once decoded. Commands are rejected: nothing confines what a
//!   command touches once it runs — unless baton's sandbox confines the
//!   agent (`confined`, `run::confine`): then its file system holds the
//!   workspace for every process the agent starts, and `execute` is allowed.
//! - full: everything is allowed.
//!
//! The one I/O here is `resolve`: it walks a path one component at a time
//! as the kernel does (`lstat` each, follow each link, dangling or not,
//! and only then apply `..` to where that led), so a link inside the
//! workspace that points out of it, or a `..` after one, cannot pass for a
//! path inside.

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
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
    /// The agent runs under baton's sandbox: commands are allowed in
    /// workspace access (they cannot write outside it).
    pub confined: bool,
}

impl Policy {
    pub fn new(access: Access, cwd: &Path, writable: &[PathBuf], protected: &[PathBuf]) -> Policy {
        // A root or a protected path that cannot be resolved (a loop of
        // links) is kept as written: it then matches nothing else.
        let canon = |p: &Path| resolve(p, cwd).unwrap_or_else(|| p.to_path_buf());
        let mut roots = vec![canon(cwd)];
        roots.extend(writable.iter().map(|p| canon(p)));
        Policy {
            access,
            roots,
            protected: protected.iter().map(|p| canon(p)).collect(),
            cwd: cwd.to_path_buf(),
            confined: false,
        }
    }

    /// The same rules for an agent under baton's sandbox.
    pub fn confined(mut self, yes: bool) -> Policy {
        self.confined = yes;
        self
    }

    pub fn judge(&self, kind: Kind, paths: &[String]) -> Verdict {
        if self.access == Access::Full || kind.looks_only() {
            return Verdict::Allow;
        }
        let mode = self.access.as_str();
        if kind == Kind::Execute && self.confined {
            return Verdict::Allow;
        }
        // Read-only under baton's sandbox is held by the file system (the
        // agent writes its files itself: baton offers no fs capability), so
        // an edit is let through to fail by the kernel, not by a tool list.
        if kind.changes_files() && self.access == Access::ReadOnly && self.confined {
            return Verdict::Allow;
        }
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
            if let Some(why) = self.refuse_path(p) {
                return Verdict::Reject(why);
            }
        }
        Verdict::Allow
    }

    /// Why a change of `p` is refused in workspace access, if it is.
    fn refuse_path(&self, p: &str) -> Option<String> {
        if p.starts_with('~') {
            return Some(format!(
                "{p} starts with `~`, which a tool may read as a home directory: name the path \
                 inside the workspace"
            ));
        }
        // ACP's paths are plain absolute paths, but an agent's own fields
        // are its own: a `file:` URI is judged both as written (a relative
        // path) and decoded, and must pass both ways.
        let mut readings = vec![PathBuf::from(p)];
        if let Some(u) = strip_file_scheme(p) {
            match file_uri_path(u) {
                Some(decoded) => readings.push(decoded),
                None => {
                    return Some(format!(
                        "{p} is a `file:` URI baton cannot read as a local path"
                    ));
                }
            }
        }
        for path in readings {
            let Some(r) = resolve(&path, &self.cwd) else {
                return Some(format!("{p} goes through too many symbolic links"));
            };
            if !self.roots.iter().any(|root| r.starts_with(root)) {
                return Some(format!("{p} is outside the workspace"));
            }
            if r.components().any(|c| c.as_os_str() == ".git")
                || self.protected.iter().any(|x| r.starts_with(x))
            {
                return Some(format!("{p} is git metadata baton protects"));
            }
        }
        None
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
    pub fn describe(access: Access, confined: bool) -> serde_json::Value {
        match access {
            Access::Workspace if confined => serde_json::json!({
                "allow": ["read", "search", "think", "execute (confined by baton's sandbox)"],
                "allow_inside_workspace": ["edit", "delete", "move"],
                "reject": ["fetch", "switch_mode", "other",
                    "a change outside the workspace, inside .git, or naming no path"],
            }),
            Access::ReadOnly if confined => serde_json::json!({
                "allow": ["read", "search", "think", "execute (confined by baton's sandbox)",
                    "edit, delete, move (the sandbox's read-only file system refuses the write)"],
                "reject": ["fetch", "switch_mode", "other"],
            }),
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

/// The kernel's own limit on links followed in one lookup (`ELOOP`).
const MAX_LINKS: usize = 40;

/// Where `p` (made absolute against `cwd`) really leads: walked one
/// component at a time as the kernel walks it. Each component is
/// `lstat`ed; a symbolic link is replaced by its target (a dangling link
/// too: writing through it creates its target) and the walk goes on from
/// there; `..` leaves the directory reached so far, after the links before
/// it were followed (`link/..` is the link target's parent, not the
/// directory holding the link). What does not exist yet is appended as
/// written. `None`: more than `MAX_LINKS` links (a loop), or a link that
/// could not be read.
pub fn resolve(p: &Path, cwd: &Path) -> Option<PathBuf> {
    let abs = if p.is_absolute() {
        p.to_path_buf()
    } else {
        cwd.join(p)
    };
    // What is left to walk, last component first.
    let mut todo: Vec<OsString> = Vec::new();
    push_steps(&mut todo, &abs);
    let mut out = PathBuf::from("/");
    let mut links = 0;
    while let Some(step) = todo.pop() {
        if step == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&step);
        match std::fs::symlink_metadata(&next) {
            Ok(m) if m.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return None;
                }
                let target = std::fs::read_link(&next).ok()?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_steps(&mut todo, &target);
            }
            _ => out = next,
        }
    }
    Some(out)
}

/// `path`'s names and `..`s pushed onto `todo` so that its first one is
/// walked next (`.` and the root are no steps).
fn push_steps(todo: &mut Vec<OsString>, path: &Path) {
    let steps: Vec<OsString> = path
        .components()
        .filter_map(|c| match c {
            Component::ParentDir => Some(OsString::from("..")),
            Component::Normal(n) => Some(n.to_os_string()),
            _ => None,
        })
        .collect();
    todo.extend(steps.into_iter().rev());
}

/// What follows `file:` (any case), if `p` is a `file:` URI.
fn strip_file_scheme(p: &str) -> Option<&str> {
    let head = p.get(..5)?;
    head.eq_ignore_ascii_case("file:").then(|| &p[5..])
}

/// The local path a `file:` URI names (what follows `file:`), its
/// `%XX` escapes decoded: `///a`, `//localhost/a` or `/a`. `None` for
/// another host or a path that is not absolute.
fn file_uri_path(rest: &str) -> Option<PathBuf> {
    let path = match rest.strip_prefix("//") {
        Some(r) => {
            let slash = r.find('/')?;
            let host = &r[..slash];
            if !(host.is_empty() || host.eq_ignore_ascii_case("localhost")) {
                return None;
            }
            &r[slash..]
        }
        None => rest,
    };
    // A query or fragment is not part of the path.
    let path = path.split(['?', '#']).next().unwrap_or("");
    if !path.starts_with('/') {
        return None;
    }
    let b = path.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && let (Some(h), Some(l)) = (
                b.get(i + 1).copied().and_then(hex),
                b.get(i + 2).copied().and_then(hex),
            )
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    Some(PathBuf::from(OsStr::from_bytes(&out)))
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
    fn read_only_under_the_sandbox_lets_the_file_system_refuse() {
        let d = tempfile::tempdir().unwrap();
        let p = policy(Access::ReadOnly, d.path()).confined(true);
        let inside = d.path().join("a.txt").display().to_string();
        for k in [Kind::Edit, Kind::Delete, Kind::Move, Kind::Execute] {
            assert_eq!(
                p.judge(k, std::slice::from_ref(&inside)),
                Verdict::Allow,
                "{k:?}"
            );
        }
        // What no file system can hold stays refused.
        for k in [Kind::Fetch, Kind::SwitchMode, Kind::Other] {
            assert!(matches!(p.judge(k, &[]), Verdict::Reject(_)), "{k:?}");
        }
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

    /// A workspace `d` (its own temp dir) and a place `out` outside it.
    fn linked() -> (tempfile::TempDir, tempfile::TempDir, Policy) {
        let d = tempfile::tempdir().unwrap();
        let out = tempfile::tempdir().unwrap();
        let p = policy(Access::Workspace, d.path());
        (d, out, p)
    }

    fn refused(p: &Policy, path: &str) -> String {
        match p.judge(Kind::Edit, &[path.to_string()]) {
            Verdict::Reject(why) => why,
            Verdict::Allow => panic!("{path} was allowed"),
        }
    }

    fn allowed(p: &Policy, path: &str) {
        assert_eq!(
            p.judge(Kind::Edit, &[path.to_string()]),
            Verdict::Allow,
            "{path}"
        );
    }

    #[test]
    fn dotdot_after_a_link_leaves_the_links_target() {
        // Issue 29 §2: `link -> /outside/sub`, then `link/../escaped.txt`
        // is `/outside/escaped.txt` (the kernel follows the link first).
        let (d, out, p) = linked();
        std::fs::create_dir(out.path().join("sub")).unwrap();
        std::os::unix::fs::symlink(out.path().join("sub"), d.path().join("link")).unwrap();
        assert!(refused(&p, "link/../escaped.txt").contains("outside"));
        let abs = d.path().join("link/../escaped.txt").display().to_string();
        assert!(refused(&p, &abs).contains("outside"));
        // `..` of a plain directory stays as it was.
        std::fs::create_dir(d.path().join("dir")).unwrap();
        allowed(&p, "dir/../fine.txt");
    }

    #[test]
    fn a_dangling_link_is_judged_by_its_target() {
        let (d, out, p) = linked();
        let target = out.path().join("file");
        std::os::unix::fs::symlink(&target, d.path().join("dangling")).unwrap();
        assert!(!target.exists());
        assert!(refused(&p, "dangling").contains("outside"));
        assert!(refused(&p, "dangling/below.txt").contains("outside"));
        // One that dangles inside the workspace is inside.
        std::os::unix::fs::symlink(d.path().join("later.txt"), d.path().join("inner")).unwrap();
        allowed(&p, "inner");
        // A relative target is relative to the link's directory.
        std::fs::create_dir(d.path().join("a")).unwrap();
        std::os::unix::fs::symlink("../../x.txt", d.path().join("a/rel")).unwrap();
        assert!(refused(&p, "a/rel").contains("outside"));
    }

    #[test]
    fn chained_links_are_followed_to_the_end() {
        let (d, out, p) = linked();
        let w = d.path();
        std::os::unix::fs::symlink(out.path(), w.join("last")).unwrap();
        std::os::unix::fs::symlink("last", w.join("middle")).unwrap();
        std::os::unix::fs::symlink(w.join("middle"), w.join("first")).unwrap();
        assert!(refused(&p, "first/x.txt").contains("outside"));
        // A chain that ends inside is inside.
        std::fs::create_dir(w.join("real")).unwrap();
        std::os::unix::fs::symlink("real", w.join("r1")).unwrap();
        std::os::unix::fs::symlink("r1", w.join("r2")).unwrap();
        allowed(&p, "r2/x.txt");
        // A loop is refused, not walked forever.
        std::os::unix::fs::symlink("loop2", w.join("loop1")).unwrap();
        std::os::unix::fs::symlink("loop1", w.join("loop2")).unwrap();
        assert!(refused(&p, "loop1/x").contains("too many symbolic links"));
    }

    #[test]
    fn a_link_to_dotdot_leads_out_of_the_workspace() {
        let (d, _out, p) = linked();
        std::os::unix::fs::symlink("..", d.path().join("up")).unwrap();
        assert!(refused(&p, "up/x.txt").contains("outside"));
        // …unless it comes back in.
        let name = d.path().file_name().unwrap().to_str().unwrap().to_string();
        allowed(&p, &format!("up/{name}/x.txt"));
    }

    #[test]
    fn a_link_into_git_is_git_metadata() {
        let (d, _out, p) = linked();
        std::fs::create_dir_all(d.path().join(".git/hooks")).unwrap();
        std::os::unix::fs::symlink(".git", d.path().join("g")).unwrap();
        assert!(refused(&p, "g/config").contains("git metadata"));
        std::os::unix::fs::symlink(".git/hooks", d.path().join("h")).unwrap();
        assert!(refused(&p, "h/pre-commit").contains("git metadata"));
        // A dangling link whose target would be inside `.git`.
        std::os::unix::fs::symlink(".git/info/new", d.path().join("n")).unwrap();
        assert!(refused(&p, "n").contains("git metadata"));
    }

    #[test]
    fn a_tilde_path_is_refused() {
        let (_d, _out, p) = linked();
        assert!(refused(&p, "~/x.txt").contains("`~`"));
        assert!(refused(&p, "~").contains("`~`"));
        assert!(refused(&p, "~root/.bashrc").contains("`~`"));
        // Not at the start: an ordinary name.
        allowed(&p, "a~b/x~");
    }

    #[test]
    fn absolute_paths_inside_and_outside() {
        let (d, out, p) = linked();
        allowed(
            &p,
            &d.path().join("new/deep/file.txt").display().to_string(),
        );
        assert!(refused(&p, &out.path().join("x").display().to_string()).contains("outside"));
        assert!(refused(&p, "/").contains("outside"));
        // The workspace named through a link to it is the workspace.
        std::os::unix::fs::symlink(d.path(), out.path().join("alias")).unwrap();
        allowed(&p, &out.path().join("alias/x.txt").display().to_string());
    }

    #[test]
    fn file_uris_are_judged_decoded_too() {
        let (d, out, p) = linked();
        let inside = d.path().join("a b.txt").display().to_string();
        allowed(&p, &format!("file://{}", inside.replace(' ', "%20")));
        allowed(&p, &format!("FILE://localhost{inside}"));
        let o = out.path().display().to_string();
        assert!(refused(&p, &format!("file://{o}/x")).contains("outside"));
        // `..` and `/` escaped: decoded, then resolved.
        let w = d.path().display().to_string();
        assert!(refused(&p, &format!("file://{w}/%2E%2E/%2e%2E/x")).contains("outside"));
        assert!(refused(&p, &format!("file:{w}%2F..%2F..%2Fx")).contains("outside"));
        assert!(refused(&p, &format!("file://{w}/%2Egit/config")).contains("git metadata"));
        // Another host, or no absolute path: not a local file baton can judge.
        assert!(refused(&p, "file://example.com/x").contains("`file:` URI"));
        assert!(refused(&p, "file:x.txt").contains("`file:` URI"));
    }

    #[test]
    fn resolve_walks_each_component() {
        let d = tempfile::tempdir().unwrap();
        let w = d.path().canonicalize().unwrap();
        std::fs::create_dir_all(w.join("a/b")).unwrap();
        std::os::unix::fs::symlink("a/b", w.join("l")).unwrap();
        assert_eq!(resolve(Path::new("l/../c"), &w), Some(w.join("a/c")));
        assert_eq!(resolve(Path::new("./l/./x"), &w), Some(w.join("a/b/x")));
        assert_eq!(resolve(Path::new("/../.."), &w), Some(PathBuf::from("/")));
        assert_eq!(resolve(Path::new("new/../x"), &w), Some(w.join("x")));
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
