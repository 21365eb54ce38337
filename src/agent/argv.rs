//! The one rule for every value that reaches a peer CLI's argv (model,
//! effort, profile, provider, session id), and where each value came from.
//!
//! Those values arrive from flags, `BATON_*` variables, the user file, a
//! project's committed `baton.toml`, a job's record and a peer's own
//! transcript (session ids). Each reaches argv as the value of one of the
//! CLI's options, and a value that starts with `-` is read by many CLIs as an
//! option of their own (`gemini --model --yolo`, `codex -m
//! --dangerously-bypass-approvals-and-sandbox`). So the check sits where
//! every path meets, before any adapter builds an argv: `Agent::command` and
//! `Agent::interactive_resume` call `check_request`. Sources are not checked
//! one by one; each caller only says where its values came from (`Origins`),
//! so that a refusal can name the flag, variable or file line to fix.

use crate::error::{Error, Result};

use super::Request;

/// Longer than any model name or session id in use; a value this long is
/// garbage or an attack, and it would flood every message that names it.
pub const MAX_LEN: usize = 256;

/// Besides ASCII letters and digits, the only characters accepted. They
/// cover the names in use: `claude-opus-5-5`, `glm-5.2`, `openai/gpt-5`,
/// `qwen3-coder-plus`, `llama3.2:3b`, `claude-sonnet@20250514`,
/// `sonnet[1m]`, `ft:gpt-5:org::id`, UUIDs, `ses_…`. No whitespace, quotes,
/// `=`, `,`, control or non-ASCII characters (look-alike dashes included).
pub const PUNCTUATION: &str = "._-/:@+[]";

/// The rule, as docs and hints state it.
pub const RULE: &str = "letters, digits and . _ - / : @ + [ ], not starting with `-`, at most 256";

/// What a value is, for messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Field {
    Model,
    Effort,
    Profile,
    Provider,
    Session,
}

impl Field {
    fn noun(self) -> &'static str {
        match self {
            Field::Model => "model",
            Field::Effort => "effort",
            Field::Profile => "profile",
            Field::Provider => "provider",
            Field::Session => "session id",
        }
    }

    /// What a good value looks like.
    fn example(self) -> &'static str {
        match self {
            Field::Model => "a model name such as `gpt-5.5`, `claude-opus-5-5` or `openai/gpt-5`",
            Field::Effort => "one of the agent's efforts (`baton agents` lists them)",
            Field::Profile => "a codex profile name",
            Field::Provider => "a provider name such as `anthropic` or `openai`",
            Field::Session => "the `session` of an earlier result",
        }
    }
}

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Origin {
    /// A command-line flag (`--model`, `--agents`, `--members`, …).
    Flag(&'static str),
    /// A `BATON_*` variable.
    Env(&'static str),
    /// A config file: the key, `path:line`, and which file (`user`, `project`).
    File {
        key: String,
        at: String,
        scope: &'static str,
    },
    /// Something baton recorded earlier (a job's plan, a session id its peer
    /// reported): what it is, and what to do instead.
    Recorded { what: String, hint: String },
}

impl Origin {
    /// "`--model`", "`BATON_MODEL`", "`agents.x.model` in /p/baton.toml:2 (project file)".
    pub fn describe(&self) -> String {
        match self {
            Origin::Flag(f) | Origin::Env(f) => format!("`{f}`"),
            Origin::File { key, at, scope } => format!("`{key}` in {at} ({scope} file)"),
            Origin::Recorded { what, .. } => what.clone(),
        }
    }

    fn hint(&self, field: Field) -> String {
        let good = format!("{} ({RULE} characters)", field.example());
        match self {
            Origin::Flag(f) => format!("give `{f}` {good}"),
            Origin::Env(v) => format!("unset {v}, or set it to {good}"),
            Origin::File { key, at, scope } => {
                let why = if *scope == "project" {
                    "; baton.toml comes with the repository, so check who changed it"
                } else {
                    ""
                };
                format!("fix or remove `{key}` at {at}: {good}{why}")
            }
            Origin::Recorded { hint, .. } => hint.clone(),
        }
    }
}

/// Where each value of a `Request` came from. `None`: not known, which is
/// the case only for a plan read back from disk (a background job's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Origins {
    pub model: Option<Origin>,
    pub effort: Option<Origin>,
    pub profile: Option<Origin>,
    pub provider: Option<Origin>,
    pub resume: Option<Origin>,
}

impl Origins {
    /// Every value from the same place.
    pub fn all(o: Origin) -> Origins {
        Origins {
            model: Some(o.clone()),
            effort: Some(o.clone()),
            profile: Some(o.clone()),
            provider: Some(o.clone()),
            resume: Some(o),
        }
    }
}

/// The rule. `Err` says why the value may not reach an argv.
pub fn check(value: &str) -> std::result::Result<(), String> {
    if value.trim().is_empty() {
        return Err("it is empty".into());
    }
    if value.len() > MAX_LEN {
        return Err(format!("it is longer than {MAX_LEN} bytes"));
    }
    if value.starts_with('-') {
        return Err("it starts with `-`, so the CLI would read it as an option of its own".into());
    }
    match value
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || PUNCTUATION.contains(*c)))
    {
        None => Ok(()),
        Some(c) => Err(format!("it contains {}", what_char(c))),
    }
}

fn what_char(c: char) -> String {
    if c == '\0' {
        "a NUL byte".into()
    } else if c.is_control() {
        format!("a control character ({})", c.escape_unicode())
    } else if c.is_whitespace() {
        format!("whitespace ({})", c.escape_unicode())
    } else if !c.is_ascii() {
        format!("the non-ASCII character `{c}` ({})", c.escape_unicode())
    } else {
        format!("`{c}`")
    }
}

/// `value` as a message shows it: escaped (a control character must not
/// reach a terminal) and cut short.
pub fn shown(value: &str) -> String {
    let e: String = value.escape_debug().collect();
    super::clip(&e, 80)
}

/// Check one value; the refusal names it, its origin and what to do.
pub fn check_value(field: Field, value: &str, origin: Option<&Origin>) -> Result<()> {
    let Err(why) = check(value) else {
        return Ok(());
    };
    let stored = Origin::Recorded {
        what: "a stored run plan".into(),
        hint: "the plan was changed after baton made it; start the run again".into(),
    };
    let origin = origin.unwrap_or(&stored);
    Err(Error::Refused {
        kind: "unsafe_value",
        message: format!(
            "{} `{}` from {} may not be passed to the CLI: {why}",
            field.noun(),
            shown(value),
            origin.describe()
        ),
        hint: origin.hint(field),
    })
}

/// Every value of `req` that an adapter puts into argv. Paths are baton's
/// own and absolute (a relative one could start with `-`), so one that is
/// not is a bug.
pub fn check_request(req: &Request) -> Result<()> {
    let o = &req.origins;
    for (field, value, origin) in [
        (Field::Model, &req.model, &o.model),
        (Field::Effort, &req.effort, &o.effort),
        (Field::Profile, &req.profile, &o.profile),
        (Field::Provider, &req.provider, &o.provider),
        (Field::Session, &req.resume, &o.resume),
    ] {
        if let Some(v) = value {
            check_value(field, v, origin.as_ref())?;
        }
    }
    let schema = req.extra.output_schema.as_ref().map(|(_, p)| p);
    for p in std::iter::once(&req.cwd)
        .chain(&req.extra.writable_dirs)
        .chain(schema)
    {
        if !p.is_absolute() {
            return Err(Error::Internal(format!(
                "a relative path would reach the CLI's argv: {}",
                p.display()
            )));
        }
    }
    Ok(())
}

/// The argv of a brought agent (`[agents.NAME] command = [...]`) or of a
/// built-in's pinned program. Its switches may start with `-` (they are the
/// user's own, meant as switches), but no element may be empty or hold a
/// control character (a NUL cannot reach `execve`; a newline or escape in a
/// log or message is a trap), and the program itself must not look like an
/// option. `Err` says why.
pub fn check_command(argv: &[String]) -> std::result::Result<(), String> {
    let Some(program) = argv.first() else {
        return Err("the command is empty".into());
    };
    if program.trim().is_empty() {
        return Err("its program is empty".into());
    }
    if program.starts_with('-') {
        return Err(format!("its program `{}` starts with `-`", shown(program)));
    }
    for (i, a) in argv.iter().enumerate() {
        if a.is_empty() {
            return Err(format!("element {i} is empty"));
        }
        if a.len() > 4096 {
            return Err(format!("element {i} is longer than 4096 bytes"));
        }
        if let Some(c) = a.chars().find(|c| c.is_control()) {
            return Err(format!(
                "element {i} `{}` contains {}",
                shown(a),
                what_char(c)
            ));
        }
    }
    Ok(())
}

/// A notification URL (`[notify] url`): it reaches a child too, the system
/// `curl` for `https://` (in a config file, never argv). http or https, a
/// host, and nothing a config file, a request line or a log could misread:
/// no whitespace, control characters, quotes or backslashes.
pub fn check_url(url: &str) -> std::result::Result<(), String> {
    let u = url.trim();
    let rest = match u.split_once("://") {
        Some((scheme, rest))
            if scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https") =>
        {
            rest
        }
        _ => return Err("it does not start with http:// or https://".into()),
    };
    if u.len() > 2048 {
        return Err("it is longer than 2048 bytes".into());
    }
    if let Some(c) = u
        .chars()
        .find(|c| c.is_whitespace() || c.is_control() || !c.is_ascii() || "\"'\\<>`".contains(*c))
    {
        return Err(format!("it contains {}", what_char(c)));
    }
    let host = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = host.rsplit_once('@').map_or(host, |(_, h)| h);
    if host.is_empty() || host.starts_with(':') || host.starts_with('-') {
        return Err("it names no host".into());
    }
    Ok(())
}

/// The name of an environment variable (`[notify] url_token_env`):
/// letters, digits and `_`, not starting with a digit.
pub fn check_env_name(name: &str) -> std::result::Result<(), String> {
    let n = name.trim();
    if n.is_empty() {
        return Err("it is empty".into());
    }
    if n.len() > 128 {
        return Err("it is longer than 128 bytes".into());
    }
    if n.starts_with(|c: char| c.is_ascii_digit()) {
        return Err("it starts with a digit".into());
    }
    if let Some(c) = n
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '_'))
    {
        return Err(format!("it contains {}", what_char(c)));
    }
    Ok(())
}

/// The name of a brought agent: the value rule (it reaches records,
/// messages and `--agent`), and no `/` or `:` (it is a config table name
/// and a word in listings, never a path).
pub fn check_agent_name(name: &str) -> std::result::Result<(), String> {
    check(name)?;
    if let Some(c) = name.chars().find(|c| "/:@+[]".contains(*c)) {
        return Err(format!("it contains `{c}`"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_and_agent_names() {
        let v = |a: &[&str]| a.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(check_command(&v(&["my-agent", "--acp", "--stdio"])), Ok(()));
        assert_eq!(check_command(&v(&["/opt/x/bin/agent"])), Ok(()));
        for (argv, why) in [
            (v(&[]), "empty"),
            (v(&[""]), "empty"),
            (v(&["--yolo"]), "starts with `-`"),
            (v(&["agent", ""]), "element 1 is empty"),
            (v(&["agent", "a\nb"]), "control character"),
            (v(&["agent", "a\0b"]), "NUL"),
        ] {
            let e = check_command(&argv).expect_err(&format!("{argv:?}"));
            assert!(e.contains(why), "{argv:?}: {e}");
        }
        assert_eq!(check_agent_name("my-agent_2"), Ok(()));
        for u in [
            "https://ntfy.sh/topic",
            "http://127.0.0.1:8080/hook?x=1",
            "HTTPS://u@h/p",
        ] {
            assert_eq!(check_url(u), Ok(()), "{u}");
        }
        for (u, why) in [
            ("ftp://h/", "http"),
            ("ntfy.sh/x", "http"),
            ("https:///x", "no host"),
            ("https://h/a b", "whitespace"),
            ("https://h/\"x", "`\"`"),
            ("https://h/\nx", "control"),
            ("https://h/\\x", "`\\`"),
        ] {
            let e = check_url(u).expect_err(u);
            assert!(e.contains(why), "{u}: {e}");
        }
        assert_eq!(check_env_name("NTFY_TOKEN"), Ok(()));
        for n in ["", "1X", "A-B", "A B", "A=B", "$X"] {
            assert!(check_env_name(n).is_err(), "{n}");
        }
        for n in ["-x", "a b", "a/b", "a:b", "", "é"] {
            assert!(check_agent_name(n).is_err(), "{n}");
        }
    }

    #[test]
    fn names_in_use_pass() {
        for v in [
            "claude-opus-5-5",
            "glm-5.2",
            "openai/gpt-5",
            "qwen3-coder-plus",
            "zai:glm-5.2",
            "llama3.2:3b",
            "claude-sonnet-4@20250514",
            "sonnet[1m]",
            "ft:gpt-4o-mini:org::abc123",
            "openrouter/meta-llama/llama-3.1-8b-instruct:free",
            "01a22af9-de6b-7251-aba9-57e300095b0c",
            "ses_dd2000f2bffetACuusqlHfAkk0",
            "xhigh",
            "anthropic",
            "qwen-oauth",
            "work_profile",
            "a",
        ] {
            assert_eq!(check(v), Ok(()), "{v}");
        }
    }

    #[test]
    fn option_like_blank_control_and_odd_values_are_refused() {
        for (v, why) in [
            ("--yolo", "starts with `-`"),
            ("-m", "starts with `-`"),
            (
                "--dangerously-bypass-approvals-and-sandbox",
                "starts with `-`",
            ),
            ("", "empty"),
            ("   ", "empty"),
            (" opus", "whitespace"),
            ("opus ", "whitespace"),
            ("gpt 5", "whitespace"),
            ("gpt\t5", "control character"),
            ("gpt-5\n--yolo", "control character"),
            ("gpt\0x", "NUL"),
            ("gpt\u{7f}", "control character"),
            ("\u{2212}\u{2212}yolo", "non-ASCII"),
            ("\u{2013}yolo", "non-ASCII"),
            ("gpt\u{200b}5", "non-ASCII"),
            ("=--yolo", "`=`"),
            ("model=x", "`=`"),
            ("a\"b", "`\"`"),
            ("a,b", "`,`"),
            ("$(id)", "`$`"),
        ] {
            let e = check(v).expect_err(v);
            assert!(e.contains(why), "{v:?}: {e}");
        }
        assert!(check(&"a".repeat(MAX_LEN)).is_ok());
        assert!(
            check(&"a".repeat(MAX_LEN + 1))
                .unwrap_err()
                .contains("longer")
        );
    }

    #[test]
    fn a_refusal_names_the_value_its_origin_and_the_fix() {
        let cases = [
            (
                Origin::Flag("--model"),
                "model `--yolo` from `--model`",
                "give `--model` a model name",
            ),
            (
                Origin::Env("BATON_MODEL"),
                "model `--yolo` from `BATON_MODEL`",
                "unset BATON_MODEL",
            ),
            (
                Origin::File {
                    key: "agents.gemini-cli.model".into(),
                    at: "/r/baton.toml:2".into(),
                    scope: "project",
                },
                "model `--yolo` from `agents.gemini-cli.model` in /r/baton.toml:2 (project file)",
                "fix or remove `agents.gemini-cli.model` at /r/baton.toml:2",
            ),
        ];
        for (origin, message, hint) in cases {
            let e = check_value(Field::Model, "--yolo", Some(&origin)).unwrap_err();
            assert_eq!(e.kind(), "unsafe_value");
            assert_eq!(e.exit_code(), 2);
            assert!(e.to_string().starts_with(message), "{e}");
            assert!(e.to_string().contains("starts with `-`"), "{e}");
            assert!(e.hint().unwrap().starts_with(hint), "{:?}", e.hint());
        }
        // A control character is shown escaped, never raw.
        let e = check_value(Field::Session, "a\u{1b}[2Jb", None).unwrap_err();
        assert!(e.to_string().contains(r"a\u{1b}[2Jb"), "{e}");
        assert!(!e.to_string().contains('\u{1b}'));
        assert!(e.to_string().contains("a stored run plan"), "{e}");
    }
}
