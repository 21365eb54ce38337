//! `baton config show|path|init`: print the merged configuration with the
//! source of every value, print where the files are, write a template.

use std::path::PathBuf;

use serde::Serialize;

use super::{Config, FileInfo, PROJECT_FILE, all_keys, env_var, template};
use crate::error::{Error, Result};
use crate::output::render::Render;
use crate::output::{self, Mode};
use crate::result::SCHEMA_VERSION;
use crate::spend::prices::Price;

/// What `baton config init` writes and where.
#[derive(Debug, Clone, Default)]
pub struct InitRequest {
    /// Write the project's `baton.toml` instead of the user file.
    pub project: bool,
    /// The directory whose project is meant (default: the current one).
    pub cwd: Option<PathBuf>,
}

/// `config show`: the files, every key that has a value with its source,
/// and the user's prices.
#[derive(Serialize)]
pub struct Shown<'a> {
    schema_version: u32,
    files: &'a [FileInfo],
    values: Vec<ShownValue>,
    prices: Vec<&'a Price>,
}

#[derive(Serialize)]
struct ShownValue {
    key: String,
    value: serde_json::Value,
    source: String,
    env: Option<&'static str>,
    /// The value as `--text` writes it (a string quoted, as in TOML).
    #[serde(skip)]
    text: String,
}

pub fn show(c: &Config, mode: Mode) -> Result<i32> {
    let values = all_keys()
        .into_iter()
        .filter_map(|k| c.effective(&k).map(|s| (k, s)))
        .map(|(k, s)| ShownValue {
            value: s.value.to_json(),
            source: s.source.to_string(),
            env: env_var(&k),
            text: match &s.value {
                super::Val::Str(v) => format!("{v:?}"),
                other => other.to_json().to_string(),
            },
            key: k,
        })
        .collect();
    output::emit(
        &Shown {
            schema_version: SCHEMA_VERSION,
            files: &c.files,
            values,
            prices: c.prices(),
        },
        mode,
    )
}

impl Render for Shown<'_> {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        let mut t = String::new();
        for f in self.files {
            t.push_str(&format!(
                "# {} file: {} ({})\n",
                f.scope,
                f.path.display(),
                if f.exists { "read" } else { "not found" }
            ));
        }
        let width = self.values.iter().map(|v| v.key.len()).max().unwrap_or(0);
        for v in &self.values {
            t.push_str(&format!("{:<width$} = {}  # {}\n", v.key, v.text, v.source));
        }
        for p in &self.prices {
            t.push_str(&format!(
                "prices.{:?} = {{ input = {}, cached_input = {}, output = {} }}  # user {}\n",
                p.model,
                p.input,
                p.cached_input,
                p.output,
                p.source.as_deref().unwrap_or_default()
            ));
        }
        t
    }
}

/// `config path`: where the files are.
#[derive(Serialize)]
pub struct Paths<'a> {
    schema_version: u32,
    files: &'a [FileInfo],
}

pub fn path(files: &[FileInfo], mode: Mode) -> Result<i32> {
    output::emit(
        &Paths {
            schema_version: SCHEMA_VERSION,
            files,
        },
        mode,
    )
}

impl Render for Paths<'_> {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        self.files
            .iter()
            .map(|f| format!("{}\t{}\n", f.scope, f.path.display()))
            .collect()
    }
}

/// Write the commented template; never over an existing file.
pub fn init(req: &InitRequest, mode: Mode) -> Result<i32> {
    let (path, text) = if req.project {
        (
            super::project_root(req.cwd.as_deref())?.join(PROJECT_FILE),
            template::PROJECT,
        )
    } else {
        let env = |k: &str| std::env::var(k).ok();
        let (p, _) = super::user_file(&env).ok_or_else(|| {
            Error::usage_hint(
                "no home directory: cannot place the user config file",
                "set HOME, or point BATON_CONFIG at a file",
            )
        })?;
        (p, template::USER)
    };
    if path.exists() {
        return Err(Error::Refused {
            kind: "config_exists",
            message: format!(
                "{} already exists; baton will not overwrite it",
                path.display()
            ),
            hint: "edit it, or move it away and run `baton config init` again".into(),
        });
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| Error::io(format!("creating {}", dir.display()), e))?;
    }
    // The project file is committed and read by the team: ordinary
    // permissions. The user file is the user's own: private.
    if req.project {
        write_new(&path, text.as_bytes(), 0o644)?;
    } else {
        write_new(&path, text.as_bytes(), 0o600)?;
    }
    output::emit(
        &Written {
            schema_version: SCHEMA_VERSION,
            status: "success",
            path,
            scope: if req.project { "project" } else { "user" },
        },
        mode,
    )
}

/// `config init`: the file written.
#[derive(Serialize)]
pub struct Written {
    schema_version: u32,
    status: &'static str,
    path: PathBuf,
    scope: &'static str,
}

impl Render for Written {
    fn exit_code(&self) -> i32 {
        0
    }

    fn text(&self) -> String {
        format!("wrote {}\n", self.path.display())
    }
}

/// Create `path` exclusively (a file that appeared meanwhile is not replaced).
fn write_new(path: &std::path::Path, data: &[u8], mode: u32) -> Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt as _;
    let ctx = || format!("writing {}", path.display());
    let mut f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)
        .map_err(|e| Error::io(ctx(), e))?;
    f.write_all(data)
        .and_then(|_| f.sync_all())
        .map_err(|e| Error::io(ctx(), e))
}
