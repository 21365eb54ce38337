//! The tools `baton mcp` serves: which baton command each one runs, the
//! flags it leaves out (and why), what it publishes as its output schema,
//! and the annotations that say what it may change.

use std::sync::Arc;

use rmcp::model::{JsonObject, Tool, ToolAnnotations};
use serde_json::Value;

use super::input::{self, Field};
use super::wording;
use crate::agent::Access;

/// What a tool's `structuredContent` is: the schema `baton schema NAME`
/// publishes for that command's JSON; the `outputSchema` is its top level
/// (`shape`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Output {
    /// A run's result or a fan-out's (`baton schema run-or-fanout`).
    RunOrFanout,
    /// What a job id names: a run's, a fan-out's or a council's result
    /// (`baton schema job-result`).
    JobResult,
    /// One adviser's result or several side by side (`baton schema ask`).
    Ask,
    /// A council (`baton schema council`).
    Council,
    /// A job's, council's or fan-out's status (`baton schema job-status`).
    JobStatus,
    /// `baton schema jobs`.
    Jobs,
    /// `baton schema agents`.
    Agents,
    /// `baton schema doctor`.
    Doctor,
}

impl Output {
    /// Its name for `baton schema`.
    pub fn schema_name(self) -> &'static str {
        match self {
            Output::RunOrFanout => "run-or-fanout",
            Output::JobResult => "job-result",
            Output::Ask => "ask",
            Output::Council => "council",
            Output::JobStatus => "job-status",
            Output::Jobs => "jobs",
            Output::Agents => "agents",
            Output::Doctor => "doctor",
        }
    }
}

/// What calling the tool may do to the user's files.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Reads records or asks read-only advisers; changes nothing.
    ReadOnly,
    /// Starts a peer with the access the call asks for: read-only when the
    /// server's cap is read-only, else it may change files.
    Delegates,
    /// Changes baton's own records (an approval, a cancel).
    Records { destructive: bool },
}

/// One tool: the command it runs and what the MCP side adds.
#[derive(Debug)]
pub struct ToolDef {
    pub name: &'static str,
    pub title: &'static str,
    /// `baton <path…>`: the command whose flags are the tool's input.
    pub path: &'static [&'static str],
    /// The command's arguments the tool leaves out (by field name: the long
    /// flag in snake case), each with the reason.
    pub cli_only: &'static [(&'static str, &'static str)],
    /// Optional on the command line, required here.
    pub also_required: &'static [&'static str],
    /// What the model reads about the tool: not the command's `about`,
    /// which is for a person at a shell, but when to call it and what it
    /// blocks on, in as few words as that takes (docs/mcp.md#size).
    pub description: &'static str,
    pub output: Output,
    pub effect: Effect,
    /// Whether the call streams the peer's activity as progress.
    pub progress: bool,
}

/// Left out of every tool that has them: the user's own configuration of
/// an agent (`agents.<name>.*` in config.md), which the account that pays,
/// the way baton talks to the CLI and the user's limits depend on, not a
/// caller's choice; and a replay seed, for a person reproducing a run.
/// Each also costs every session of a host the tokens of its schema.
const CONFIGURED: &str = "the user's configuration (`agents.<name>.*`), not a caller's choice";

/// baton's sandbox is the user's to set, never a host model's.
const SANDBOX: (&str, &str) = (
    "sandbox",
    "the user's setting (`run.sandbox`, `BATON_SANDBOX`): a host's model may not turn baton's sandbox off",
);

const RUN_CLI_ONLY: &[(&str, &str)] = &[
    ("dry_run", "it prints a plan, not a result"),
    ("quiet", "there is no terminal line to hide"),
    ("prompt_file", "the task is given as text"),
    ("read_only", "the same as `access: read-only`"),
    ("full_access", "the same as `access: full`"),
    SANDBOX,
    (
        "network",
        "for an offline agent with a model of its own: a person's choice",
    ),
    (
        "network_host",
        "which hosts a confined peer may reach is a person's choice",
    ),
    ("profile", CONFIGURED),
    ("transport", CONFIGURED),
    (
        "seed",
        "a replay of the judges' shuffles, for a person reproducing a fan-out",
    ),
    NOTIFY,
    NO_NOTIFY,
];

/// The packet as a file to read: the tool's arguments are its fields.
const PACKET_FILE: (&str, &str) = ("packet", "the packet's fields are the tool's arguments");
/// The user's limit on what is sent (`ask.max_chars`), not the caller's.
const MAX_CHARS: (&str, &str) = ("max_chars", "the user's limit (`ask.max_chars`)");

/// Whether the person is told about the work is theirs to set (`[notify]`,
/// or `--notify` on a command they type), not a host model's.
const NOTIFY: (&str, &str) = (
    "notify",
    "the user's setting (`[notify]`), not a caller's choice",
);
const NO_NOTIFY: (&str, &str) = (
    "no_notify",
    "the user's setting (`[notify]`): a host's model may not silence it",
);

const COUNCIL_SEED: &str = "a replay of the label shuffles, for a person reproducing a council";

pub const TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "run",
        title: "Delegate a task to a peer agent",
        path: &["run"],
        cli_only: RUN_CLI_ONLY,
        also_required: &["task"],
        description: "Delegate a task to a peer agent CLI. Blocks until the peer ends (minutes); \
`async: true` returns a `job_id` at once instead: then job_wait.",
        output: Output::RunOrFanout,
        effect: Effect::Delegates,
        progress: true,
    },
    ToolDef {
        name: "ask",
        title: "Ask advisers for a read-only second opinion",
        path: &["ask"],
        cli_only: &[
            ("dry_run", "it prints a plan, not advice"),
            ("quiet", "there is no terminal line to hide"),
            ("profile", CONFIGURED),
            PACKET_FILE,
            MAX_CHARS,
            (
                "previous_advice",
                "a file or stdin; through MCP the earlier advice goes in the question",
            ),
            ("follow_up", "it goes with previous_advice"),
            SANDBOX,
        ],
        also_required: &[],
        description: "Ask advisers for a read-only second opinion. Blocks until they answer.",
        output: Output::Ask,
        effect: Effect::ReadOnly,
        progress: true,
    },
    ToolDef {
        name: "council_discuss",
        title: "Council: proposals, blind critique, synthesis (read-only)",
        path: &["council", "discuss"],
        cli_only: &[
            ("dry_run", "it prints a plan of calls, not a council"),
            (
                "yes",
                "council_plan approves; a discussion has nothing to approve",
            ),
            (
                "execute",
                "council_plan executes; a discussion has nothing to execute",
            ),
            PACKET_FILE,
            MAX_CHARS,
            ("seed", COUNCIL_SEED),
            NOTIFY,
            NO_NOTIFY,
        ],
        also_required: &[],
        description: "A council, read-only: proposals, a blind critique, the chair's synthesis. \
Blocks until done (minutes): `async: true` returns its id at once, for job_wait.",
        output: Output::Council,
        effect: Effect::ReadOnly,
        progress: true,
    },
    ToolDef {
        name: "council_plan",
        title: "Council: an executable plan, awaiting approval",
        path: &["council", "plan"],
        cli_only: &[
            ("dry_run", "it prints a plan of calls, not a council"),
            PACKET_FILE,
            MAX_CHARS,
            ("seed", COUNCIL_SEED),
            NOTIFY,
            NO_NOTIFY,
        ],
        also_required: &[],
        description: "A council that ends in an executable plan, which waits for council_approve \
(or `yes`). Blocks as council_discuss does.",
        output: Output::Council,
        effect: Effect::Delegates,
        progress: true,
    },
    ToolDef {
        name: "council_approve",
        title: "Council: approve a plan (bound to its sha256)",
        path: &["council", "approve"],
        cli_only: &[],
        also_required: &[],
        description: "Approve a council's plan, bound to its sha256; then council_execute.",
        output: Output::Council,
        effect: Effect::Records { destructive: false },
        progress: true,
    },
    ToolDef {
        name: "council_execute",
        title: "Council: carry out an approved plan",
        path: &["council", "execute"],
        cli_only: &[],
        also_required: &[],
        description: "Carry out an approved plan: implement, verify, review, repair. Blocks until \
done.",
        output: Output::Council,
        effect: Effect::Delegates,
        progress: true,
    },
    ToolDef {
        name: "job_status",
        title: "A background job's state",
        path: &["status"],
        cli_only: &[],
        also_required: &[],
        description: "A job's state, without waiting.",
        output: Output::JobStatus,
        effect: Effect::ReadOnly,
        progress: false,
    },
    ToolDef {
        name: "job_wait",
        title: "Wait for a background job, at most `timeout`",
        path: &["wait"],
        cli_only: &[],
        also_required: &["timeout"],
        description: "Wait for a job to end, at most `timeout` (keep it under your tool-call \
time-out), then return its result or running status; call again while `running`.",
        output: Output::JobResult,
        effect: Effect::ReadOnly,
        progress: true,
    },
    ToolDef {
        name: "job_result",
        title: "A job's result, or its running status",
        path: &["result"],
        cli_only: &[],
        also_required: &[],
        description: "A job's result if it ended, else its running status.",
        output: Output::JobResult,
        effect: Effect::ReadOnly,
        progress: false,
    },
    ToolDef {
        name: "job_cancel",
        title: "Stop a background job and its whole process tree",
        path: &["cancel"],
        cli_only: &[],
        also_required: &[],
        description: "Stop a job and its whole process tree.",
        output: Output::JobResult,
        effect: Effect::Records { destructive: true },
        progress: false,
    },
    ToolDef {
        name: "jobs",
        title: "List background jobs",
        path: &["jobs"],
        cli_only: &[],
        also_required: &[],
        description: "List jobs, running first.",
        output: Output::Jobs,
        effect: Effect::ReadOnly,
        progress: false,
    },
    ToolDef {
        name: "continue",
        title: "Continue an ended job's peer session (a new job)",
        path: &["continue"],
        cli_only: &[NOTIFY, NO_NOTIFY],
        also_required: &["task"],
        description: "Continue an ended job's peer session as a new job; returns its `job_id` at once.",
        output: Output::RunOrFanout,
        effect: Effect::Delegates,
        progress: false,
    },
    ToolDef {
        name: "agents",
        title: "The supported agents and whether they are installed",
        path: &["agents"],
        cli_only: &[],
        also_required: &[],
        description: "The agents, whether each is installed, its models and options.",
        output: Output::Agents,
        effect: Effect::ReadOnly,
        progress: false,
    },
    ToolDef {
        name: "doctor",
        title: "Check agent CLIs, credentials, sandboxes and baton",
        path: &["doctor"],
        cli_only: &[],
        also_required: &[],
        description: "Check agent CLIs, credentials, sandboxes and baton itself.",
        output: Output::Doctor,
        effect: Effect::ReadOnly,
        progress: false,
    },
];

pub fn find(name: &str) -> Option<&'static ToolDef> {
    TOOLS.iter().find(|t| t.name == name)
}

/// A tool as the command line described it: its fields.
#[derive(Debug, Clone)]
pub struct Described {
    pub def: &'static ToolDef,
    pub fields: Vec<Field>,
}

/// The fields described so far in a tool list, each with the first tool
/// that described it: a field with the same name and description in a
/// later tool is not described again (council_plan's are council_discuss's,
/// the job tools' `id` job_status's), which halves what a host shows its
/// model.
#[derive(Debug, Default)]
pub struct SoFar {
    seen: Vec<(String, String, &'static str)>,
}

impl Described {
    /// The MCP tool, its annotations true for a server capped at `cap`.
    pub fn tool(&self, cap: Access, so_far: &mut SoFar) -> Tool {
        let d = self.def;
        let mut fields = self.fields.clone();
        let mut from: Vec<&str> = Vec::new();
        for f in &mut fields {
            f.help = match wording::text(d.name, &f.name) {
                Some(t) => t.to_string(),
                None => input::described(&f.help),
            };
            if f.choices.is_empty()
                && let Some(c) = wording::choices(&f.name)
            {
                f.choices = c.iter().map(|v| v.to_string()).collect();
            }
            if f.help.is_empty() {
                continue;
            }
            match so_far
                .seen
                .iter()
                .find(|(n, h, _)| *n == f.name && *h == f.help)
            {
                Some((_, _, tool)) => {
                    if !from.contains(tool) {
                        from.push(tool);
                    }
                    f.help.clear();
                }
                None => so_far.seen.push((f.name.clone(), f.help.clone(), d.name)),
            }
        }
        let input = input::schema(&fields, d.also_required);
        let mut text = d.description.to_string();
        if !from.is_empty() {
            let from: Vec<String> = from.iter().map(|t| format!("`{t}`")).collect();
            text.push_str(&format!(
                " Undescribed arguments: as in {}.",
                from.join(", ")
            ));
        }
        let mut t = Tool::new(d.name, text, input);
        t.title = Some(d.title.into());
        if let Some(s) = output_schema(d.output) {
            t = t.with_raw_output_schema(s);
        }
        t.annotate(annotations(d, cap))
    }
}

/// Every `Output`, for the test that keeps `output_schemas.json` current.
pub const OUTPUTS: [Output; 8] = [
    Output::RunOrFanout,
    Output::JobResult,
    Output::Ask,
    Output::Council,
    Output::JobStatus,
    Output::Jobs,
    Output::Agents,
    Output::Doctor,
];

/// The output schemas (the `shape` of what `baton schema NAME` prints),
/// made at build time of the tests, not at start-up: generating the
/// published schemas (schemars, and the merges of `schema::either`) took
/// ~1 ms each, 15 ms for the tool list, three times the whole start-up
/// budget (docs/benchmarks.md#mcp). The unit test
/// `embedded_output_schemas_are_current` fails when a result type changes
/// and this file does not (`BATON_BLESS=1` rewrites it).
const EMBEDDED: &str = include_str!("output_schemas.json");

static PARSED: std::sync::LazyLock<Vec<(String, Arc<JsonObject>)>> =
    std::sync::LazyLock::new(|| match serde_json::from_str(EMBEDDED) {
        Ok(Value::Object(m)) => m
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::Object(o) => Some((k, Arc::new(o))),
                _ => None,
            })
            .collect(),
        _ => Vec::new(),
    });

/// The output schema of the tools that return `o`: the shape of what
/// `baton schema …` publishes for it.
pub fn output_schema(o: Output) -> Option<Arc<JsonObject>> {
    if let Some((_, s)) = PARSED.iter().find(|(k, _)| k == o.schema_name()) {
        return Some(s.clone());
    }
    // Only a stale file gets here, and its test says so.
    let full = crate::schema::named(Some(o.schema_name()))?;
    Some(Arc::new(super::shape::of(o.schema_name(), &full)))
}

fn annotations(d: &ToolDef, cap: Access) -> ToolAnnotations {
    let local = d.effect != Effect::Delegates && d.name != "ask" && d.name != "doctor";
    let a = ToolAnnotations::with_title(d.title).open_world(!local);
    match d.effect {
        Effect::ReadOnly => a.read_only(true),
        Effect::Delegates if cap == Access::ReadOnly => a.read_only(true),
        Effect::Delegates => a.read_only(false).destructive(true).idempotent(false),
        Effect::Records { destructive } => {
            a.read_only(false).destructive(destructive).idempotent(true)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn described(name: &str) -> Described {
        Described {
            def: find(name).unwrap(),
            fields: Vec::new(),
        }
    }

    #[test]
    fn annotations_tell_what_a_call_may_change() {
        let hints = |name: &str, cap: Access| {
            let a = described(name)
                .tool(cap, &mut SoFar::default())
                .annotations
                .unwrap();
            (a.read_only_hint, a.destructive_hint)
        };
        for name in ["ask", "job_status", "jobs", "agents", "doctor", "job_wait"] {
            assert_eq!(hints(name, Access::Workspace), (Some(true), None), "{name}");
        }
        assert_eq!(hints("run", Access::Workspace), (Some(false), Some(true)));
        assert_eq!(hints("run", Access::Full), (Some(false), Some(true)));
        // A server capped at read-only cannot let a peer write.
        assert_eq!(hints("run", Access::ReadOnly), (Some(true), None));
        assert_eq!(
            hints("job_cancel", Access::Workspace),
            (Some(false), Some(true))
        );
        assert_eq!(
            hints("council_approve", Access::Workspace),
            (Some(false), Some(false))
        );
    }

    #[test]
    fn output_schemas_are_the_shape_of_the_published_ones() {
        // Every tool has one, and it is the top level of what `baton
        // schema NAME` prints.
        for d in TOOLS {
            let t = described(d.name).tool(Access::Workspace, &mut SoFar::default());
            let out = Value::Object((*t.output_schema.expect(d.name)).clone());
            let name = d.output.schema_name();
            assert!(crate::schema::NAMES.contains(&name), "{}", d.name);
            let full = crate::schema::named(Some(name)).unwrap();
            assert_eq!(out, Value::Object(super::super::shape::of(name, &full)));
            assert_eq!(out["type"], "object", "{}", d.name);
        }
        // The run's: every field of a run's result and of a fan-out's.
        let run = described("run").tool(Access::Workspace, &mut SoFar::default());
        let out = Value::Object((*run.output_schema.unwrap()).clone());
        for k in crate::schema::result()["properties"]
            .as_object()
            .unwrap()
            .keys()
        {
            assert!(out["properties"].get(k).is_some(), "{k}");
        }
        for k in ["kind", "winner", "candidates"] {
            assert!(out["properties"].get(k).is_some(), "{k}");
        }
        // Required: what both shapes require.
        let req = out["required"].as_array().unwrap();
        assert!(req.contains(&"status".into()) && req.contains(&"schema_version".into()));
        assert!(!req.contains(&"kind".into()), "{req:?}");
        // Every reference of every published schema names a definition that is there.
        for d in TOOLS {
            let out = crate::schema::named(Some(d.output.schema_name())).unwrap();
            let text = out.to_string();
            for r in text.split("\"#/$defs/").skip(1) {
                let name = &r[..r.find('"').unwrap()];
                assert!(
                    out["$defs"].get(name).is_some(),
                    "{}: dangling #/$defs/{name}",
                    d.name
                );
            }
        }
    }

    #[test]
    fn a_field_is_described_once_in_the_list() {
        let field = |name: &str, help: &str| input::Field {
            name: name.into(),
            flag: Some(format!("--{name}")),
            kind: input::Kind::Text,
            help: help.into(),
            required: false,
            choices: Vec::new(),
            default: None,
            path: false,
        };
        let tool = |name: &str| Described {
            def: find(name).unwrap(),
            fields: vec![
                field("raw", "Send it as-is [default: no]"),
                field(
                    "window",
                    if name == "job_wait" {
                        "Stop waiting"
                    } else {
                        "Stop the peer"
                    },
                ),
            ],
        };
        let mut so_far = SoFar::default();
        let run = tool("run").tool(Access::Workspace, &mut so_far);
        let start = tool("continue").tool(Access::Workspace, &mut so_far);
        let wait = tool("job_wait").tool(Access::Workspace, &mut so_far);
        let desc = |t: &Tool, f: &str| t.input_schema["properties"][f].get("description").cloned();
        assert_eq!(desc(&run, "raw"), Some("Send it as-is".into()));
        assert_eq!(desc(&start, "raw"), None);
        assert!(
            start
                .description
                .as_deref()
                .unwrap()
                .ends_with(" as in `run`.")
        );
        // The same name with another meaning is described where it is.
        assert_eq!(desc(&wait, "window"), Some("Stop waiting".into()));
        assert_eq!(desc(&wait, "raw"), None);
    }

    /// What the model reads: `wording`'s texts over the help lines, fixed
    /// values as an `enum`, and `run`'s `async` (what `job_start` was).
    #[test]
    fn the_model_reads_the_short_texts_and_the_values() {
        let listed = super::super::listed(
            &crate::cli::mcp::described(),
            &super::super::Options::default(),
        )
        .unwrap();
        let props = |tool: &str| {
            let t = listed.iter().find(|t| t.name == tool).unwrap();
            Value::Object((*t.input_schema).clone())["properties"].clone()
        };
        let run = props("run");
        assert_eq!(
            run["access"],
            serde_json::json!({"type": "string", "enum": ["read-only", "workspace", "full"]})
        );
        assert_eq!(
            run["pick"]["enum"],
            serde_json::json!(["best", "first-green"])
        );
        assert_eq!(run["async"]["type"], "boolean");
        assert!(
            run["async"]["description"]
                .as_str()
                .unwrap()
                .contains("job_wait")
        );
        assert_eq!(
            props("job_wait")["timeout"]["description"],
            "Stop waiting (not the job) after this long"
        );
        assert_eq!(props("council_discuss")["depth"]["enum"][2], "deep");
        assert!(listed.iter().all(|t| t.name != "job_start"));
    }

    #[test]
    fn embedded_output_schemas_are_current() {
        let now: serde_json::Map<String, Value> = OUTPUTS
            .iter()
            .map(|o| {
                let s = crate::schema::named(Some(o.schema_name())).unwrap();
                let shape = Value::Object(super::super::shape::of(o.schema_name(), &s));
                (o.schema_name().to_string(), shape)
            })
            .collect();
        let path =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src/mcp/output_schemas.json");
        if std::env::var_os("BATON_BLESS").is_some() {
            let text = serde_json::to_string(&Value::Object(now.clone())).unwrap() + "\n";
            std::fs::write(&path, text).unwrap();
        }
        let embedded: Value = serde_json::from_str(EMBEDDED).unwrap();
        assert!(
            embedded == Value::Object(now),
            "{} is not what `baton schema` prints now: BATON_BLESS=1 cargo test --lib \
             mcp::tools rewrites it",
            path.display()
        );
        assert_eq!(PARSED.len(), OUTPUTS.len());
    }

    #[test]
    fn tool_names_are_unique_and_valid() {
        let mut names: Vec<&str> = TOOLS.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TOOLS.len());
        assert!(
            TOOLS
                .iter()
                .all(|t| t.name.chars().all(|c| c.is_ascii_lowercase() || c == '_'))
        );
    }
}
