//! `--allow GLOB`: the only paths a worktree peer may change.
//!
//! Globs are matched against paths relative to the repository top, with `/`
//! separators: `*` and `?` stay inside one path component, `**` spans any
//! number of directories, `{a,b}` and `[ab]` work as in a shell. A glob that
//! matches a directory covers everything under it (`--allow src` and
//! `--allow 'src/'` allow `src/deep/file.rs`). A leading `/` or `./` anchors
//! at the top, which is where every glob is anchored anyway, so
//! `--allow '*.md'` is the top-level Markdown files only and
//! `--allow '**/*.md'` is every one.

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

use crate::error::{Error, Result};

#[derive(Debug, Clone)]
pub struct Allow {
    set: GlobSet,
}

impl Allow {
    /// `None` when no glob was given: every path is allowed.
    pub fn new(globs: &[String]) -> Result<Option<Allow>> {
        if globs.is_empty() {
            return Ok(None);
        }
        let mut b = GlobSetBuilder::new();
        for g in globs {
            let norm = normalize(g)?;
            let glob = GlobBuilder::new(&norm)
                .literal_separator(true)
                .backslash_escape(true)
                .build()
                .map_err(|e| {
                    Error::usage_hint(
                        format!("--allow `{g}` is not a valid glob: {}", e.kind()),
                        "use `*`, `?`, `**`, `[…]` and `{a,b}`, e.g. --allow 'src/**' --allow '**/*.md'",
                    )
                })?;
            b.add(glob);
        }
        let set = b
            .build()
            .map_err(|e| Error::usage(format!("--allow: {e}")))?;
        Ok(Some(Allow { set }))
    }

    /// Whether `path` (repository-relative, `/`-separated) may change: the
    /// path itself or one of its parent directories matches a glob.
    pub fn permits(&self, path: &str) -> bool {
        let path = path.trim_end_matches('/');
        if self.set.is_match(path) {
            return true;
        }
        path.match_indices('/')
            .any(|(i, _)| self.set.is_match(&path[..i]))
    }
}

fn normalize(g: &str) -> Result<String> {
    let mut s = g.trim();
    while let Some(rest) = s.strip_prefix("./") {
        s = rest;
    }
    let s = s.trim_start_matches('/').trim_end_matches('/');
    if s.is_empty() || s == "." {
        return Err(Error::usage_hint(
            format!("--allow `{g}` names no path"),
            "drop --allow to allow everything, or name paths: --allow 'src/**'",
        ));
    }
    if s.split('/').any(|c| c == "..") {
        return Err(Error::usage_hint(
            format!("--allow `{g}` leaves the repository"),
            "globs are relative to the repository top and may not use `..`",
        ));
    }
    Ok(s.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allow(globs: &[&str]) -> Allow {
        Allow::new(&globs.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .unwrap()
            .unwrap()
    }

    #[test]
    fn star_stays_in_one_component_and_double_star_spans() {
        let a = allow(&["*.md", "src/**/*.rs"]);
        assert!(a.permits("README.md"));
        assert!(!a.permits("docs/guide.md"));
        assert!(a.permits("src/main.rs"));
        assert!(a.permits("src/a/b/c.rs"));
        assert!(!a.permits("src/a/b/c.txt"));
        assert!(!a.permits("tests/x.rs"));
        let all_md = allow(&["**/*.md"]);
        assert!(all_md.permits("README.md") && all_md.permits("docs/a/guide.md"));
    }

    #[test]
    fn a_directory_glob_covers_its_contents() {
        for g in ["src", "src/", "./src", "/src", "src/**"] {
            let a = allow(&[g]);
            assert!(a.permits("src/a.rs"), "{g}");
            assert!(a.permits("src/deep/er/b.rs"), "{g}");
            assert!(!a.permits("srcx/a.rs"), "{g}");
            assert!(!a.permits("lib/src/a.rs"), "{g}");
        }
        let a = allow(&["tests/*"]);
        assert!(
            a.permits("tests/unit/x.rs"),
            "a matched directory covers its files"
        );
    }

    #[test]
    fn braces_classes_and_escapes() {
        let a = allow(&["{src,tests}/*.{rs,toml}", "file[0-9].txt", "weird\\*name"]);
        assert!(a.permits("tests/a.toml"));
        assert!(!a.permits("bench/a.rs"));
        assert!(a.permits("file7.txt"));
        assert!(!a.permits("fileX.txt"));
        assert!(a.permits("weird*name"));
        assert!(!a.permits("weirdXname"));
    }

    #[test]
    fn no_globs_means_everything_and_bad_globs_are_usage_errors() {
        assert!(Allow::new(&[]).unwrap().is_none());
        for bad in ["", "/", ".", "../x", "src/../../etc", "src/[", "{a,b"] {
            let e = Allow::new(&[bad.to_string()]).unwrap_err();
            assert_eq!(e.exit_code(), 2, "{bad:?}");
        }
    }
}
