//! One value of a config file checked against what its key holds (`Kind`,
//! and the keys of each section): its type, its range, and what a project
//! file may not set.

use toml::de::DeValue;

use super::file::{Ctx, Scope, Val, names};
use crate::agent::{Access, Agent};
use crate::error::Error;
use crate::error::Result;

/// What a key holds; checked by `check`.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    AgentName,
    Adviser,
    Model,
    Effort,
    Provider,
    Profile,
    Command,
    Transport,
    Duration,
    Access,
    Count,
    PositiveCount,
    AskScope,
    /// `run.sandbox`: auto, require or off.
    Sandbox,
    /// `run.fallback`: a list of `NAME[:MODEL]`.
    Fallback,
    /// `run.network_hosts`: a list of `HOST[:PORT]` (the user file only).
    NetworkHosts,
    /// `bench.test_patterns`: a list of path globs.
    Globs,
    /// `true` or `false` (`notify.desktop`).
    Bool,
    /// `notify.on`: a list of `NOTIFY_TRIGGERS`.
    Triggers,
    /// `notify.url`: an http(s) URL (the user file only).
    Url,
    /// `notify.url_token_env`: a variable name (the user file only).
    EnvName,
}

pub(super) const AGENT_KEYS: &[(&str, Kind)] = &[
    ("model", Kind::Model),
    ("effort", Kind::Effort),
    ("provider", Kind::Provider),
    ("profile", Kind::Profile),
    ("command", Kind::Command),
    ("transport", Kind::Transport),
];
pub(super) const RUN_KEYS: &[(&str, Kind)] = &[
    ("timeout", Kind::Duration),
    ("idle_timeout", Kind::Duration),
    ("access", Kind::Access),
    ("sandbox", Kind::Sandbox),
    ("fallback", Kind::Fallback),
    ("network_hosts", Kind::NetworkHosts),
    ("retry", Kind::Count),
];
pub(super) const BENCH_KEYS: &[(&str, Kind)] = &[("test_patterns", Kind::Globs)];
pub(super) const NOTIFY_KEYS: &[(&str, Kind)] = &[
    ("desktop", Kind::Bool),
    ("terminal", Kind::Bool),
    ("command", Kind::Command),
    ("url", Kind::Url),
    ("url_token_env", Kind::EnvName),
    ("on", Kind::Triggers),
    ("stall_after", Kind::Duration),
];
pub(super) const ASK_KEYS: &[(&str, Kind)] = &[
    ("agent", Kind::Adviser),
    ("budget", Kind::Count),
    ("max_chars", Kind::PositiveCount),
    ("scope", Kind::AskScope),
];

fn want(kind: Kind) -> &'static str {
    match kind {
        Kind::Count | Kind::PositiveCount => "a whole number",
        Kind::Fallback => "a list of agent names (\"claude\", \"pi:glm-5.2\")",
        Kind::Command => "a list of strings",
        Kind::NetworkHosts => "a list of hosts (\"api.example.com\", \"127.0.0.1:8080\")",
        Kind::Globs => "a list of globs (\"tests/**\", \"**/*_spec.rb\")",
        Kind::Duration => "a duration (\"90s\", \"45m\") or a number of seconds",
        Kind::Bool => "true or false",
        Kind::Triggers => {
            "a list of triggers (\"ended\", \"needs_approval\", \"stopped\", \"stalled\")"
        }
        Kind::Url => "an http:// or https:// URL",
        Kind::EnvName => "the name of an environment variable",
        _ => "a string",
    }
}

pub(super) fn check(
    cx: &Ctx,
    key: &str,
    kind: Kind,
    v: &DeValue,
    at: usize,
    agent: Option<Agent>,
) -> Result<Val> {
    let wrong = |want: &str| {
        cx.err(
            at,
            key,
            format!("expected {want}, found {}", v.type_str()),
            "see docs/config.md for the type of each key",
        )
    };
    let bad = |msg: String, hint: &str| cx.err(at, key, msg, hint);
    if let (Kind::Fallback, DeValue::Array(items)) = (kind, v) {
        let mut list = Vec::new();
        for item in items.iter() {
            let Some(s) = item.get_ref().as_str() else {
                return Err(wrong("a list of agent names (\"claude\", \"pi:glm-5.2\")"));
            };
            if cx.scope == Scope::Project && super::secret::looks_like_secret(s) {
                return Err(bad(
                    "this value looks like a credential, and baton.toml is committed with the \
                     repository"
                        .into(),
                    "remove it now (and rotate the credential if it was ever committed)",
                ));
            }
            // The agent and the shape here; the model's characters where
            // every value bound for an argv is checked (`agent::argv`).
            crate::agent::models::parse_item(s)
                .map_err(|e| bad(e.to_string(), &e.hint().unwrap_or_default()))?;
            list.push(s.trim().to_string());
        }
        return Ok(Val::List(list));
    }
    if let Kind::NetworkHosts = kind {
        // A committed file must not widen what a confined peer may reach.
        if cx.scope == Scope::Project {
            return Err(bad(
                "a project file may not add hosts a confined peer may reach".into(),
                "set run.network_hosts in your user file (`baton config path`), or pass \
                 --network-host",
            ));
        }
        let DeValue::Array(items) = v else {
            return Err(wrong(want(kind)));
        };
        let mut list = Vec::new();
        for item in items.iter() {
            let Some(s) = item.get_ref().as_str() else {
                return Err(wrong(want(kind)));
            };
            let rule = crate::sandbox::proxy::Rule::parse(s)
                .map_err(|m| bad(m, "give HOST, HOST:PORT, [IPV6]:PORT or *.DOMAIN"))?;
            list.push(rule.to_string());
        }
        return Ok(Val::List(list));
    }
    if let Kind::Globs = kind {
        let DeValue::Array(items) = v else {
            return Err(wrong(want(kind)));
        };
        let mut list = Vec::new();
        for item in items.iter() {
            let Some(s) = item.get_ref().as_str() else {
                return Err(wrong(want(kind)));
            };
            globset::Glob::new(s).map_err(|e| bad(e.to_string(), "see docs/bench.md"))?;
            list.push(s.to_string());
        }
        return Ok(Val::List(list));
    }
    if let Kind::Bool = kind {
        return match v {
            DeValue::Boolean(b) => Ok(Val::Bool(*b)),
            _ => Err(wrong(want(kind))),
        };
    }
    if let Kind::Triggers = kind {
        let DeValue::Array(items) = v else {
            return Err(wrong(want(kind)));
        };
        let known = super::NOTIFY_TRIGGERS;
        let mut list: Vec<String> = Vec::new();
        for item in items.iter() {
            let Some(s) = item.get_ref().as_str() else {
                return Err(wrong(want(kind)));
            };
            let t = s.trim().to_ascii_lowercase();
            if !known.contains(&t.as_str()) {
                return Err(bad(
                    format!("unknown trigger `{}`", crate::agent::argv::shown(s)),
                    &format!(
                        "use any of: {} (an empty list announces nothing unless --notify)",
                        known.join(", ")
                    ),
                ));
            }
            if !list.contains(&t) {
                list.push(t);
            }
        }
        return Ok(Val::List(list));
    }
    if let (Kind::Command, DeValue::Array(items)) = (kind, v) {
        if cx.scope == Scope::Project {
            return Err(bad(
                "a project file may not choose the program baton runs".into(),
                "set agents.<name>.command in your user file (`baton config path`)",
            ));
        }
        let mut argv = Vec::new();
        for item in items.iter() {
            match item.get_ref().as_str() {
                Some(s) if !s.is_empty() => argv.push(s.to_string()),
                _ => return Err(wrong("a list of non-empty strings")),
            }
        }
        if argv.is_empty() {
            return Err(bad(
                "the command is empty".into(),
                "give the argv prefix, e.g. [\"node\", \"/opt/cli/bin/cli.js\"]",
            ));
        }
        // The one rule for a program baton starts from the config.
        crate::agent::argv::check_command(&argv).map_err(|why| {
            bad(
                format!("this command may not be run: {why}"),
                "give the program and its arguments as separate strings, e.g. \
                 [\"notify-me\", \"--quiet\"]",
            )
        })?;
        return Ok(Val::List(argv));
    }
    if let DeValue::Integer(i) = v {
        let n: i64 = i
            .as_str()
            .replace('_', "")
            .parse()
            .map_err(|_| wrong("a small whole number"))?;
        return match kind {
            Kind::Count | Kind::PositiveCount | Kind::Duration if n < 0 => {
                Err(bad(format!("{n} is negative"), "use a positive number"))
            }
            Kind::PositiveCount if n == 0 => Err(bad(
                "must be more than zero".into(),
                "use a positive number",
            )),
            Kind::Count | Kind::PositiveCount => Ok(Val::Int(n as u64)),
            // A bare number of seconds, as `--timeout 90` accepts.
            Kind::Duration => Ok(Val::Str(format!("{n}s"))),
            _ => Err(wrong(want(kind))),
        };
    }
    let Some(s) = v.as_str().filter(|_| {
        !matches!(
            kind,
            Kind::Count
                | Kind::PositiveCount
                | Kind::Command
                | Kind::Fallback
                | Kind::NetworkHosts
                | Kind::Globs
                | Kind::Bool
                | Kind::Triggers
        )
    }) else {
        return Err(wrong(want(kind)));
    };
    if cx.scope == Scope::Project && super::secret::looks_like_secret(s) {
        return Err(bad(
            "this value looks like a credential, and baton.toml is committed with the repository"
                .into(),
            "remove it now (and rotate the credential if it was ever committed)",
        ));
    }
    let usage = |e: Error| bad(e.to_string(), &e.hint().unwrap_or_default());
    Ok(match kind {
        Kind::AgentName => Val::Str(Agent::parse(s).map_err(usage)?.name().to_string()),
        Kind::Adviser => {
            let a = Agent::parse(s).map_err(usage)?;
            if !a.supported_access().contains(&Access::ReadOnly) {
                return Err(bad(
                    format!("`{}` cannot advise: it has no read-only mode", a.name()),
                    "use codex, claude, zai, pi or gemini-cli",
                ));
            }
            Val::Str(a.name().to_string())
        }
        // Whether a value may reach a CLI's argv (no leading `-`, …) is
        // checked where every source meets, `agent::argv`, naming this line.
        Kind::Model | Kind::Effort | Kind::Provider | Kind::Profile if s.trim().is_empty() => {
            return Err(bad(
                "empty value".into(),
                "remove the key to use the default",
            ));
        }
        Kind::Model | Kind::Effort => Val::Str(s.to_string()),
        Kind::Provider => {
            let takes = |a: &Agent| Agent::TAKES_PROVIDER.contains(a);
            match agent {
                Some(a) if !takes(&a) => {
                    return Err(bad(
                        format!("`{}` has no provider setting", a.name()),
                        &format!(
                            "`provider` is a setting of {} only; remove it here",
                            names(&Agent::TAKES_PROVIDER)
                        ),
                    ));
                }
                // qwen's provider is its auth type: a closed list.
                Some(Agent::Qwen) => crate::agent::qwen::check_provider(s).map_err(usage)?,
                _ => {}
            }
            Val::Str(s.to_string())
        }
        Kind::Profile => {
            if agent != Some(Agent::Codex) {
                return Err(bad(
                    "`profile` is a codex setting".into(),
                    "move it under [agents.codex]",
                ));
            }
            Val::Str(s.to_string())
        }
        Kind::Transport => {
            let a = agent.ok_or_else(|| bad("not an agent setting".into(), ""))?;
            let t = crate::agent::Transport::parse(s).map_err(usage)?;
            if !a.transports().contains(&t) {
                let have: Vec<&str> = a.transports().iter().map(|t| t.as_str()).collect();
                return Err(bad(
                    format!("{} has no {} transport", a.name(), t.as_str()),
                    &format!("use {}", have.join(" or ")),
                ));
            }
            Val::Str(t.as_str().to_string())
        }
        Kind::Duration => {
            crate::duration::parse(s).map_err(usage)?;
            Val::Str(s.trim().to_string())
        }
        Kind::Access => {
            let a = Access::parse(s).map_err(usage)?;
            if cx.scope == Scope::Project && a == Access::Full {
                return Err(bad(
                    "a project file may not make full access the default".into(),
                    "use read-only or workspace here; pass --full-access (or set it in your \
                     user file) when you mean it",
                ));
            }
            Val::Str(a.as_str().to_string())
        }
        Kind::Sandbox => {
            let w =
                crate::sandbox::Want::parse(s).map_err(|m| bad(m, "use auto, require or off"))?;
            if cx.scope == Scope::Project && w == crate::sandbox::Want::Off {
                return Err(bad(
                    "a project file may not turn baton's sandbox off".into(),
                    "use auto or require here; pass --sandbox off (or set it in your user file) \
                     when you mean it",
                ));
            }
            Val::Str(w.as_str().to_string())
        }
        Kind::Url | Kind::EnvName if cx.scope == Scope::Project => {
            return Err(bad(
                "a project file may not choose where notifications are sent".into(),
                "set [notify] url and url_token_env in your user file (`baton config path`)",
            ));
        }
        Kind::Url => {
            crate::agent::argv::check_url(s).map_err(|why| {
                bad(
                    format!(
                        "`{}` cannot be a notification URL: {why}",
                        crate::agent::argv::shown(s)
                    ),
                    "give an http:// or https:// URL, e.g. \"https://ntfy.sh/my-topic\"",
                )
            })?;
            Val::Str(s.trim().to_string())
        }
        Kind::EnvName => {
            crate::agent::argv::check_env_name(s).map_err(|why| {
                bad(
                    format!(
                        "`{}` cannot name a variable: {why}",
                        crate::agent::argv::shown(s)
                    ),
                    "give the variable's name (letters, digits, `_`), e.g. \"NTFY_TOKEN\"; \
                     never the token itself",
                )
            })?;
            Val::Str(s.trim().to_string())
        }
        Kind::AskScope => match s {
            "packet" | "repo" => Val::Str(s.to_string()),
            _ => return Err(bad(format!("unknown scope `{s}`"), "use packet or repo")),
        },
        Kind::Count
        | Kind::PositiveCount
        | Kind::Command
        | Kind::Fallback
        | Kind::NetworkHosts
        | Kind::Globs
        | Kind::Bool
        | Kind::Triggers => unreachable!("handled above"),
    })
}

#[cfg(test)]
mod tests {
    use super::super::tests::{Fixture, load_err};
    use super::super::{NOTIFY_STALL_AFTER, Source};
    #[test]
    fn the_notify_section_is_read_with_defaults() {
        let c = Fixture::new(None, None).load(&[]).unwrap();
        assert_eq!(c.flag("notify.desktop"), Some(false));
        assert_eq!(
            c.effective("notify.on")
                .unwrap()
                .value
                .to_json()
                .as_array()
                .unwrap()
                .len(),
            4
        );
        assert_eq!(
            c.effective("notify.stall_after").unwrap().str(),
            NOTIFY_STALL_AFTER
        );
        let user = "[notify]\ndesktop = true\nterminal = false\ncommand = [\"notify-me\", \"--to\", \"me\"]\n\
                    url = \"https://ntfy.sh/t\"\nurl_token_env = \"NTFY_TOKEN\"\n\
                    on = [\"ended\", \"Stalled\", \"ended\"]\nstall_after = 90\n";
        let c = Fixture::new(Some(user), None).load(&[]).unwrap();
        assert_eq!(c.flag("notify.desktop"), Some(true));
        assert_eq!(c.flag("notify.terminal"), Some(false));
        assert_eq!(
            c.list("notify.command").unwrap(),
            ["notify-me", "--to", "me"]
        );
        assert_eq!(c.string("notify.url").unwrap(), "https://ntfy.sh/t");
        assert_eq!(c.string("notify.url_token_env").unwrap(), "NTFY_TOKEN");
        assert_eq!(c.list("notify.on").unwrap(), ["ended", "stalled"]);
        assert_eq!(c.string("notify.stall_after").unwrap(), "90s");
        match c.lookup("notify.url").unwrap().source {
            Source::File { line, .. } => assert_eq!(line, 5),
            other => panic!("{other:?}"),
        }
        // The project file may turn channels on, never choose a program or a URL.
        let c = Fixture::new(None, Some("[notify]\nterminal = true\non = []\n"))
            .load(&[])
            .unwrap();
        assert_eq!(c.flag("notify.terminal"), Some(true));
        assert_eq!(c.list("notify.on").unwrap(), Vec::<String>::new());
    }

    #[test]
    fn bad_notify_values_name_file_line_and_key() {
        let cases = [
            (
                "[notify]\ndesktop = \"yes\"\n",
                ":2: `notify.desktop`: expected true or false",
            ),
            (
                "[notify]\non = [\"done\"]\n",
                ":2: `notify.on`: unknown trigger `done`",
            ),
            (
                "[notify]\non = \"ended\"\n",
                ":2: `notify.on`: expected a list of triggers",
            ),
            (
                "[notify]\ncommand = \"notify-send hi\"\n",
                "`notify.command`: expected a list",
            ),
            (
                "[notify]\ncommand = [\"--x\"]\n",
                "may not be run: its program `--x` starts with `-`",
            ),
            (
                "[notify]\ncommand = [\"x\", \"a\\u001b[2J\"]\n",
                "may not be run: element 1",
            ),
            (
                "[notify]\nurl = \"ntfy.sh/t\"\n",
                ":2: `notify.url`: `ntfy.sh/t` cannot be a notification URL",
            ),
            ("[notify]\nurl = \"https://h/a b\"\n", "whitespace"),
            (
                "[notify]\nurl_token_env = \"$TOKEN\"\n",
                "`notify.url_token_env`: `$TOKEN` cannot name a variable",
            ),
            (
                "[notify]\nstall_after = \"later\"\n",
                "`notify.stall_after`: invalid duration",
            ),
            ("[notify]\nsound = true\n", "`notify.sound`: unknown key"),
        ];
        for (text, want) in cases {
            let e = load_err(text);
            assert!(e.contains(want), "{text:?}: {e}");
        }
        let e = Fixture::new(Some("[notify]\non = [\"done\"]\n"), None)
            .load(&[])
            .unwrap_err();
        assert!(
            e.hint()
                .unwrap()
                .contains("ended, needs_approval, stopped, stalled"),
            "{e:?}"
        );
        for text in [
            "[notify]\ncommand = [\"notify-me\"]\n",
            "[notify]\nurl = \"https://evil.example/\"\n",
            "[notify]\nurl_token_env = \"GITHUB_TOKEN\"\n",
        ] {
            let e = Fixture::new(None, Some(text)).load(&[]).unwrap_err();
            assert!(
                e.to_string().contains("a project file may not"),
                "{text:?}: {e}"
            );
        }
    }
}
