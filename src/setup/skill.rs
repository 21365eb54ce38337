//! The `peer` skill as `baton setup` writes it: plugin/skills/peer/SKILL.md,
//! embedded in the binary, made self-contained for a host without the plugin.
//!
//! The plugin's SKILL.md finds baton through the plugin (`$CLAUDE_PLUGIN_ROOT`,
//! the shim at `../../bin/baton`). A skill copied by setup has no plugin
//! beside it, so its "Finding the binary" section is replaced by the absolute
//! path of the baton that ran setup, and each shell example starts that path.
//! An absolute path rather than `baton` on PATH: a host session's PATH comes
//! from wherever the host was started (an IDE, a desktop launcher, a service)
//! and often lacks `~/.cargo/bin`; the path keeps working until the binary
//! moves, and re-running `baton setup` then updates the skill.

use std::path::Path;

/// The plugin's skill, as committed.
pub const PLUGIN_SKILL: &str = include_str!("../../plugin/skills/peer/SKILL.md");

/// The skill's folder name (hosts list it as `peer`).
pub const NAME: &str = "peer";

const SECTION: &str = "## Finding the binary\n";

/// SKILL.md for `baton` at `exe`.
pub fn render(exe: &Path) -> String {
    let path = exe.display().to_string();
    let quoted = sh_quote(&path);
    let mut out = String::with_capacity(PLUGIN_SKILL.len() + 256);
    let mut in_section = false;
    let mut in_sh = false;
    for line in PLUGIN_SKILL.split_inclusive('\n') {
        if line == SECTION {
            in_section = true;
            out.push_str(line);
            out.push_str(&format!(
                "`baton setup` installed this skill for the baton binary at `{path}`. \
                 Run that binary wherever this text says `baton` (the examples below already do), \
                 or `$BATON_BIN` if the user set it to another baton binary. \
                 If the path no longer exists, tell the user to run `baton setup` again \
                 from their current baton.\n\n"
            ));
            continue;
        }
        if in_section {
            if line.starts_with("## ") {
                in_section = false;
            } else {
                continue;
            }
        }
        if line.starts_with("```") {
            in_sh = !in_sh && line.trim_end() == "```sh";
            out.push_str(line);
            continue;
        }
        // The exit table's shim row: setup installs no shim.
        if line.starts_with("| 3 |") {
            continue;
        }
        match line.strip_prefix("baton ") {
            Some(rest) if in_sh => {
                out.push_str(&quoted);
                out.push(' ');
                out.push_str(rest);
            }
            _ => out.push_str(line),
        }
    }
    out
}

/// `s` quoted for a POSIX shell when it needs it.
fn sh_quote(s: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%".contains(c);
    if !s.is_empty() && s.chars().all(plain) {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', r"'\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn front_matter(s: &str) -> &str {
        let rest = s.strip_prefix("---\n").unwrap();
        &rest[..rest.find("\n---\n").unwrap()]
    }

    #[test]
    fn the_plugin_skill_has_the_section_setup_replaces() {
        assert!(PLUGIN_SKILL.contains(SECTION));
        assert!(PLUGIN_SKILL.contains("${CLAUDE_PLUGIN_ROOT}"));
        assert!(PLUGIN_SKILL.contains("\n```sh\nbaton "));
    }

    #[test]
    fn the_written_skill_calls_this_baton_and_needs_no_plugin() {
        let s = render(Path::new("/opt/my tools/baton"));
        assert_eq!(front_matter(&s), front_matter(PLUGIN_SKILL));
        for gone in [
            "CLAUDE_PLUGIN_ROOT",
            "bin/baton",
            "shim",
            "unsupported_platform",
        ] {
            assert!(!s.contains(gone), "{gone} left in\n{s}");
        }
        assert!(s.contains("baton binary at `/opt/my tools/baton`"));
        assert!(s.contains("\n'/opt/my tools/baton' --agent codex --access read-only"));
        assert!(s.contains("\n'/opt/my tools/baton' ask --agents codex,claude"));
        // Every shell example starts the binary by its path.
        assert!(!s.contains("\nbaton --") && !s.contains("\nbaton ask"));
        // The rest of the skill is kept.
        assert!(s.contains("## Which peer\n"));
        assert!(s.contains("## Access\n"));
        assert!(s.contains("| 130 | `cancelled` |"));
    }

    #[test]
    fn quoting() {
        assert_eq!(sh_quote("/usr/bin/baton"), "/usr/bin/baton");
        assert_eq!(sh_quote("/a b/baton"), "'/a b/baton'");
        assert_eq!(sh_quote("/it's/baton"), r"'/it'\''s/baton'");
    }
}
