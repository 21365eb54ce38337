use std::collections::HashMap;
use std::fs;

use super::*;

pub(super) struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    pub(super) fn new(user: Option<&str>, project: Option<&str>) -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        fs::create_dir_all(dir.path().join("repo/.git")).unwrap();
        if let Some(u) = user {
            fs::write(dir.path().join("user.toml"), u).unwrap();
        }
        if let Some(p) = project {
            fs::write(dir.path().join("repo").join(PROJECT_FILE), p).unwrap();
        }
        Fixture { dir }
    }

    pub(super) fn load(&self, env: &[(&str, &str)]) -> Result<Config> {
        let env: HashMap<String, String> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Config::load_from(
            Some((self.dir.path().join("user.toml"), None)),
            &self.dir.path().join("repo"),
            &|k| env.get(k).cloned(),
        )
    }
}

/// flags > env > project > user > default, one row per layer: each row
/// removes the layer above it and expects the next one to win.
#[test]
fn precedence_table_row_by_row() {
    let user = "agent = \"pi\"\n[run]\ntimeout = \"5m\"\n[agents.claude]\nmodel = \"haiku\"\n";
    let project =
        "agent = \"claude\"\n[run]\ntimeout = \"7m\"\n[agents.claude]\nmodel = \"sonnet\"\n";
    let env = [
        ("BATON_AGENT", "zai"),
        ("BATON_TIMEOUT", "9m"),
        ("BATON_MODEL", "opus"),
    ];
    // (user file, project file, environment, expected agent, timeout, claude model, winning layer)
    type Row<'a> = (
        Option<&'a str>,
        Option<&'a str>,
        &'a [(&'a str, &'a str)],
        &'a str,
        &'a str,
        &'a str,
        &'a str,
    );
    let rows: [Row; 4] = [
        (Some(user), Some(project), &env, "zai", "9m", "opus", "env"),
        (
            Some(user),
            Some(project),
            &[],
            "claude",
            "7m",
            "sonnet",
            "project",
        ),
        (Some(user), None, &[], "pi", "5m", "haiku", "user"),
        (None, None, &[], "codex", "60m", "", "default"),
    ];
    for (u, p, env, agent, timeout, model, src) in rows {
        let c = Fixture::new(u, p).load(env).unwrap();
        assert_eq!(c.default_agent().name(), agent, "row {src}");
        let t = c.effective("run.timeout").unwrap();
        assert_eq!(t.str(), timeout, "row {src}");
        assert!(
            t.source.to_string().starts_with(src),
            "row {src}: {}",
            t.source
        );
        assert_eq!(
            c.string("agents.claude.model").unwrap_or_default(),
            model,
            "row {src}"
        );
    }
}

#[test]
fn sources_name_the_file_and_line() {
    let f = Fixture::new(None, Some("\n\n[run]\naccess = \"read-only\"\n"));
    let c = f.load(&[]).unwrap();
    let s = c.lookup("run.access").unwrap();
    assert_eq!(s.str(), "read-only");
    match s.source {
        Source::File { scope, line, .. } => assert_eq!((scope, line), (Scope::Project, 4)),
        other => panic!("{other:?}"),
    }
    assert_eq!(c.files_read().len(), 1);
}

pub(super) fn load_err(user: &str) -> String {
    let f = Fixture::new(Some(user), None);
    let e = f.load(&[]).unwrap_err();
    assert_eq!(e.kind(), "config");
    assert_eq!(e.exit_code(), 2);
    e.to_string()
}

#[test]
fn bad_files_name_file_line_and_key() {
    let cases = [
        (
            "agent = \"codex\"\nmodle = \"x\"\n",
            ":2: `modle`: unknown key",
        ),
        (
            "[run]\n\ntimeout = true\n",
            ":3: `run.timeout`: expected a duration",
        ),
        (
            "[run]\ntimeout = \"soon\"\n",
            ":2: `run.timeout`: invalid duration",
        ),
        (
            "[agents.claude]\neffort = \"turbo\"\n",
            ":2: `agents.claude.effort`: effort `turbo`",
        ),
        (
            "[agents.clod]\nmodel = \"x\"\n",
            ":1: `agents.clod`: unknown agent",
        ),
        (
            "[agents.codex]\nprovider = \"x\"\n",
            ":2: `agents.codex.provider`: `codex` has no provider setting",
        ),
        (
            "[agents.zai]\nprovider = \"openai\"\n",
            ":2: `agents.zai.provider`: `zai` has no provider setting",
        ),
        (
            "[agents.qwen]\nprovider = \"zai\"\n",
            ":2: `agents.qwen.provider`: qwen has no auth type `zai`",
        ),
        (
            "[agents.pi]\nprofile = \"work\"\n",
            ":2: `agents.pi.profile`: `profile` is a codex setting",
        ),
        (
            "[ask]\nmax_chars = 0\n",
            ":2: `ask.max_chars`: must be more than zero",
        ),
        (
            "[ask]\nbudget = \"two\"\n",
            ":2: `ask.budget`: expected a whole number",
        ),
        (
            "[ask]\nagent = \"gemini\"\n",
            ":2: `ask.agent`: `gemini` cannot advise",
        ),
        ("[council]\nchair = \"codex\"\n", ":1: `council`: reserved"),
        (
            "[agents.pi]\napi_key = \"x\"\n",
            "`agents.pi.api_key`: unknown key: baton's config holds no credentials",
        ),
        ("agent = \n", ":1: `(syntax)`: not valid TOML"),
        ("run = 3\n", ":1: `run`: expected a table"),
        (
            "[agents.pi]\ncommand = []\n",
            "`agents.pi.command`: the command is empty",
        ),
    ];
    for (text, want) in cases {
        let got = load_err(text);
        assert!(got.contains("user.toml"), "{text:?}: {got}");
        assert!(got.contains(want), "{text:?}: got {got}, want {want}");
    }
}

/// Every agent that takes baton's provider (pi, opencode, qwen) takes it
/// from a file too, as the flag; no other agent does.
#[test]
fn provider_is_accepted_for_exactly_the_agents_that_take_it() {
    for a in Agent::ALL {
        let value = if a == Agent::Qwen {
            "openai"
        } else {
            "anthropic"
        };
        let text = format!("[agents.{}]\nprovider = \"{value}\"\n", a.name());
        let loaded = Fixture::new(Some(&text), None).load(&[]);
        match loaded {
            Ok(c) if Agent::TAKES_PROVIDER.contains(&a) => assert_eq!(
                c.string(&format!("agents.{}.provider", a.name()))
                    .as_deref(),
                Some(value)
            ),
            Err(e) if !Agent::TAKES_PROVIDER.contains(&a) => {
                assert!(e.to_string().contains("has no provider setting"), "{e}")
            }
            other => panic!("{}: {:?}", a.name(), other.map(|_| ())),
        }
    }
}

#[test]
fn the_project_file_refuses_secrets_programs_and_full_access() {
    for (text, want) in [
        (
            "[agents.claude]\nmodel = \"sk-ant-api03-AbCdEfGhIjKlMnOpQrStUv\"\n",
            "looks like a credential",
        ),
        (
            "[agents.pi]\ncommand = [\"sh\", \"-c\", \"x\"]\n",
            "may not choose the program",
        ),
        ("[run]\naccess = \"full\"\n", "may not make full access"),
    ] {
        let e = Fixture::new(None, Some(text)).load(&[]).unwrap_err();
        assert!(e.to_string().contains("baton.toml:2"), "{e}");
        assert!(e.to_string().contains(want), "{e}");
    }
    // The same command and access are fine in the user file.
    let c = Fixture::new(
        Some("[run]\naccess = \"full\"\n[agents.pi]\ncommand = [\"node\", \"/opt/pi.js\"]\n"),
        None,
    )
    .load(&[])
    .unwrap();
    assert_eq!(
        c.command(Agent::Pi).unwrap(),
        ["node".to_string(), "/opt/pi.js".to_string()]
    );
    assert_eq!(c.string("run.access").unwrap(), "full");
}

#[test]
fn bad_environment_values_name_the_variable() {
    let f = Fixture::new(None, None);
    for (var, val) in [
        ("BATON_TIMEOUT", "soon"),
        ("BATON_AGENT", "gpt"),
        ("BATON_ACCESS", "root"),
        ("BATON_ASK_BUDGET", "many"),
    ] {
        let e = f.load(&[(var, val)]).unwrap_err();
        assert_eq!(e.kind(), "config");
        assert!(
            e.to_string().starts_with(&format!("environment: `{var}`")),
            "{e}"
        );
    }
    // Empty means unset.
    let c = f.load(&[("BATON_AGENT", "")]).unwrap();
    assert_eq!(c.default_agent(), Agent::Codex);
}

#[test]
fn the_templates_are_valid_and_change_nothing() {
    for (text, scope) in [
        (template::USER, Scope::User),
        (template::PROJECT, Scope::Project),
    ] {
        let l = file::parse(Path::new("t.toml"), text, scope).unwrap();
        assert!(l.values.is_empty());
        // Uncommented, every example key is valid too.
        let is_setting = |r: &str| {
            r.starts_with('[')
                || r.split_once(" = ").is_some_and(|(k, _)| {
                    !k.is_empty() && k.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                })
        };
        let on: String = text
            .lines()
            .map(|l| l.strip_prefix("# ").filter(|r| is_setting(r)).unwrap_or(l))
            .map(|l| format!("{l}\n"))
            .collect();
        let l = file::parse(Path::new("t.toml"), &on, scope)
            .unwrap_or_else(|e| panic!("{scope:?} template uncommented: {e}\n{on}"));
        assert!(l.values.contains_key("agent"), "{scope:?}");
        // Every agent that takes a provider shows how.
        for a in ["opencode", "qwen"] {
            let key = format!("agents.{a}.provider");
            assert!(l.values.contains_key(&key), "{scope:?}: {key}");
        }
        assert!(text.contains("gemini-cli, opencode, qwen") || scope == Scope::Project);
        if scope == Scope::User {
            // The user template names every agent, and shows a price.
            for a in Agent::ALL {
                assert!(text.contains(a.name()), "the template lacks {}", a.name());
            }
            assert_eq!(l.prices.len(), 1, "{on}");
        }
    }
}

#[test]
fn integers_are_durations_in_seconds() {
    let c = Fixture::new(Some("[run]\ntimeout = 90\n"), None)
        .load(&[])
        .unwrap();
    assert_eq!(c.string("run.timeout").unwrap(), "90s");
}

#[test]
fn prices_in_the_user_file_are_checked_and_kept_with_their_line() {
    let user = "[prices.\"Acme-1\"]\ninput = 2\noutput = 8.5\n\n[prices.\"acme-2\"]\ninput = 1.0\ncached_input = 0.1\noutput = 4\n";
    let f = Fixture::new(Some(user), None);
    let c = f.load(&[]).unwrap();
    let p = c.prices();
    assert_eq!(p.len(), 2);
    assert_eq!(
        (
            p[0].model.as_str(),
            p[0].input,
            p[0].cached_input,
            p[0].output
        ),
        ("acme-1", 2.0, 2.0, 8.5),
        "no cache rate: the input rate"
    );
    assert_eq!(p[0].provider, "user");
    assert!(
        p[0].source.as_deref().unwrap().ends_with("user.toml:1"),
        "{:?}",
        p[0].source
    );
    assert_eq!((p[1].cached_input, p[1].output), (0.1, 4.0));
    assert!(p[1].source.as_deref().unwrap().ends_with("user.toml:5"));
}

#[test]
fn bad_prices_name_file_line_and_key() {
    for (text, key, says) in [
        (
            "[prices.\"m\"]\ninput = -1\noutput = 1\n",
            "prices.\"m\".input",
            "not a price",
        ),
        (
            "[prices.\"m\"]\ninput = nan\noutput = 1\n",
            "prices.\"m\".input",
            "not a price",
        ),
        (
            "[prices.\"m\"]\ninput = inf\noutput = 1\n",
            "prices.\"m\".input",
            "not a price",
        ),
        (
            "[prices.\"m\"]\ninput = 1e9\noutput = 1\n",
            "prices.\"m\".input",
            "not a price",
        ),
        (
            "[prices.\"m\"]\ninput = \"1\"\noutput = 1\n",
            "prices.\"m\".input",
            "expected a number",
        ),
        (
            "[prices.\"m\"]\ninput = 1\n",
            "prices.\"m\"",
            "`output` is missing",
        ),
        (
            "[prices.\"m\"]\ninput = 1\noutput = 1\nextra = 1\n",
            "prices.\"m\".extra",
            "unknown key",
        ),
        (
            "[prices.\"openai/m\"]\ninput = 1\noutput = 1\n",
            "prices.\"openai/m\"",
            "without its provider",
        ),
        (
            "[prices.\"a b\"]\ninput = 1\noutput = 1\n",
            "prices.\"a b\"",
            "spaces",
        ),
        (
            "[prices.\"m\"]\ninput = 1\noutput = 1\n[prices.\"M\"]\ninput = 1\noutput = 1\n",
            "prices.\"m\"",
            "priced twice",
        ),
        ("prices = 3\n", "prices", "expected a table"),
    ] {
        let e = load_err(text);
        assert!(
            e.contains(&format!("`{key}`")) && e.contains(says),
            "{text:?}: {e}"
        );
    }
    // The project file may not set prices: a repository must not make a
    // model free for --max-usd.
    let f = Fixture::new(None, Some("[prices.\"m\"]\ninput = 0\noutput = 0\n"));
    let e = f.load(&[]).unwrap_err().to_string();
    assert!(e.contains("a project file may not set prices"), "{e}");
}

#[test]
fn network_hosts_are_checked_and_kept_out_of_a_project_file() {
    let c = Fixture::new(
        Some("[run]\nnetwork_hosts = [\"LLM.Example.\", \"127.0.0.1:4010\", \"[::1]:9\"]\n"),
        None,
    )
    .load(&[])
    .unwrap();
    assert_eq!(
        c.list("run.network_hosts").unwrap(),
        ["llm.example", "127.0.0.1:4010", "[::1]:9"]
    );
    let e = load_err("[run]\nnetwork_hosts = [\"a b\"]\n");
    assert!(
        e.contains("run.network_hosts") && e.contains("not a host"),
        "{e}"
    );
    let e = load_err("[run]\nnetwork_hosts = \"one.example\"\n");
    assert!(e.contains("a list of hosts"), "{e}");
    let e = Fixture::new(None, Some("[run]\nnetwork_hosts = [\"evil.example\"]\n"))
        .load(&[])
        .unwrap_err();
    assert!(e.to_string().contains("may not add hosts"), "{e}");
}
