//! Where a call may work: `baton mcp --root DIR` (repeatable; none given:
//! the directory the server was started in). A call's working directory
//! (`cwd`, else the server's own) and every path it names for the command
//! to read (`file`, `previous_advice`) must resolve inside a root.
//!
//! Both sides are compared after resolving every link (`canonicalize`), so
//! `..` and a symlink inside a root that points out are judged by where they
//! lead. The call's `cwd` is then replaced by the resolved directory, so the
//! child works where the check looked, not wherever the link points by then.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::input::Field;
use crate::error::{Error, Result};

/// Why a call was refused: its message and hint.
pub type Refusal = (String, String);

#[derive(Debug, Clone)]
pub struct Roots {
    dirs: Vec<PathBuf>,
    /// The server's own directory (resolved): a call's default `cwd`, and
    /// what a relative `cwd` is relative to.
    here: PathBuf,
}

impl Roots {
    /// The roots as given (each must be a directory), else the server's own.
    pub fn new(given: &[PathBuf]) -> Result<Roots> {
        let here = std::env::current_dir()
            .and_then(|d| d.canonicalize())
            .map_err(|e| Error::io("finding the server's working directory", e))?;
        let mut dirs = Vec::new();
        for g in given {
            let d = g.canonicalize().map_err(|e| {
                Error::usage_hint(
                    format!("--root {}: {e}", g.display()),
                    "give a directory that exists",
                )
            })?;
            if !d.is_dir() {
                return Err(Error::usage(format!(
                    "--root {}: not a directory",
                    g.display()
                )));
            }
            dirs.push(d);
        }
        if dirs.is_empty() {
            dirs.push(here.clone());
        }
        Ok(Roots { dirs, here })
    }

    fn inside(&self, p: &Path) -> bool {
        self.dirs.iter().any(|r| p.starts_with(r))
    }

    /// The roots, for messages and the instructions.
    pub fn listed(&self) -> String {
        let d: Vec<String> = self.dirs.iter().map(|d| d.display().to_string()).collect();
        d.join(", ")
    }

    fn outside(&self, what: &str, given: &str, resolved: &Path) -> Refusal {
        let to = if Path::new(given) == resolved {
            String::new()
        } else {
            format!(" (it resolves to {})", resolved.display())
        };
        (
            format!(
                "{what} `{given}` is outside this server's roots{to}: {}",
                self.listed()
            ),
            "work inside a root, or start the server with `baton mcp --root DIR` for another"
                .into(),
        )
    }

    /// Check the call's arguments against the roots, and put the resolved
    /// directory in place of a `cwd` it gave.
    pub fn confine(
        &self,
        fields: &[Field],
        args: &mut Map<String, Value>,
    ) -> std::result::Result<(), Refusal> {
        let takes_cwd = fields.iter().any(|f| f.name == "cwd");
        let given = args.get("cwd").and_then(Value::as_str).map(str::to_string);
        let dir = match (&given, takes_cwd) {
            (Some(c), _) => {
                let d = self.here.join(c).canonicalize().map_err(|e| {
                    (
                        format!("cwd `{c}`: {e}"),
                        "give a directory inside one of the server's roots".to_string(),
                    )
                })?;
                if !self.inside(&d) {
                    return Err(self.outside("cwd", c, &d));
                }
                let Some(s) = d.to_str() else {
                    return Err((
                        format!("cwd `{c}` resolves to a path that is not UTF-8"),
                        "give another directory".into(),
                    ));
                };
                args.insert("cwd".into(), s.into());
                d
            }
            (None, true) if !self.inside(&self.here) => {
                return Err((
                    format!(
                        "this server's own directory {} is outside its roots: {}",
                        self.here.display(),
                        self.listed()
                    ),
                    "pass `cwd`: a directory inside a root".into(),
                ));
            }
            (None, _) => self.here.clone(),
        };
        for f in fields.iter().filter(|f| f.path && f.name != "cwd") {
            let values: Vec<&str> = match args.get(&f.name) {
                Some(Value::String(s)) => vec![s.as_str()],
                Some(Value::Array(a)) => a.iter().filter_map(Value::as_str).collect(),
                _ => continue,
            };
            for v in values {
                self.readable(&dir, &f.name, v)?;
            }
        }
        Ok(())
    }

    /// A path the command will read, relative to the call's directory:
    /// as written, and without a `:LINES` suffix (`src/a.rs:10-40`). One
    /// that does not exist is left to the command, which refuses it.
    fn readable(&self, dir: &Path, name: &str, spec: &str) -> std::result::Result<(), Refusal> {
        if spec == "-" {
            return Ok(());
        }
        let mut candidates = vec![spec];
        if let Some((path, range)) = spec.rsplit_once(':')
            && !range.is_empty()
            && range.chars().all(|c| c.is_ascii_digit() || c == '-')
        {
            candidates.push(path);
        }
        for c in candidates {
            if let Ok(p) = dir.join(c).canonicalize()
                && !self.inside(&p)
            {
                return Err(self.outside(&format!("`{name}`"), c, &p));
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::input::Kind;
    use serde_json::json;

    fn field(name: &str, kind: Kind, path: bool) -> Field {
        Field {
            name: name.into(),
            flag: Some(format!("--{name}")),
            kind,
            help: String::new(),
            required: false,
            choices: Vec::new(),
            default: None,
            path,
        }
    }

    fn fields() -> Vec<Field> {
        vec![
            field("cwd", Kind::Text, true),
            field("file", Kind::List, true),
            field("goal", Kind::Text, false),
        ]
    }

    fn roots(root: &Path, here: &Path) -> Roots {
        Roots {
            dirs: vec![root.canonicalize().unwrap()],
            here: here.canonicalize().unwrap(),
        }
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_cwd_must_resolve_inside_a_root() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("project");
        let out = t.path().join("elsewhere");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::create_dir_all(&out).unwrap();
        std::os::unix::fs::symlink(&out, root.join("link")).unwrap();
        let r = roots(&root, &root);
        let f = fields();
        // Inside, relative or absolute: accepted, and given resolved.
        let mut a = args(json!({"cwd": "sub"}));
        r.confine(&f, &mut a).unwrap();
        assert_eq!(
            a["cwd"],
            root.join("sub").canonicalize().unwrap().to_str().unwrap()
        );
        for bad in [
            "/etc".to_string(),
            out.display().to_string(),
            "..".into(),
            "sub/../..".into(),
            "link".into(),
            "link/.".into(),
        ] {
            let mut a = args(json!({ "cwd": bad }));
            let (msg, hint) = r.confine(&f, &mut a).unwrap_err();
            assert!(msg.contains("outside this server's roots"), "{bad}: {msg}");
            assert!(hint.contains("--root"), "{hint}");
        }
        // No cwd: the server's own directory, inside its default root.
        r.confine(&f, &mut args(json!({"goal": "g"}))).unwrap();
        // A server whose own directory is outside every root needs a cwd.
        let away = roots(&root, &out);
        let (msg, _) = away
            .confine(&f, &mut args(json!({"goal": "g"})))
            .unwrap_err();
        assert!(msg.contains("pass") || msg.contains("outside"), "{msg}");
        // A tool without a cwd (job ids only) is not held to it.
        away.confine(&[], &mut args(json!({}))).unwrap();
    }

    #[test]
    fn paths_to_read_must_resolve_inside_a_root() {
        let t = tempfile::tempdir().unwrap();
        let root = t.path().join("project");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.rs"), "x").unwrap();
        std::fs::write(t.path().join("secret"), "x").unwrap();
        std::os::unix::fs::symlink(t.path().join("secret"), root.join("s")).unwrap();
        let r = roots(&root, &root);
        let f = fields();
        r.confine(
            &f,
            &mut args(json!({"file": ["a.rs", "a.rs:1-2", "missing"]})),
        )
        .unwrap();
        for bad in ["../secret", "s", "s:1-3", "/etc/passwd"] {
            let e = r.confine(&f, &mut args(json!({ "file": [bad] })));
            assert!(e.is_err(), "{bad}");
        }
    }
}
