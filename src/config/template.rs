//! The commented templates `baton config init` writes. Every line is a
//! comment, so a fresh file changes nothing until the user uncomments a key.

pub const USER: &str = r#"# baton user configuration (see docs/config.md).
# Precedence: command-line flags > BATON_* variables > the project's baton.toml
# > this file > built-in defaults. `baton config show` prints what is in effect.
# An unknown key, a wrong type or a bad value is an error (exit 2), never ignored.

# The agent `baton run` uses when --agent is not given (env: BATON_AGENT).
# agent = "codex"

# [run]
# timeout = "60m"          # --timeout (env: BATON_TIMEOUT)
# idle_timeout = "15m"     # --idle-timeout (env: BATON_IDLE_TIMEOUT)
# access = "workspace"     # read-only | workspace | full (env: BATON_ACCESS)
# sandbox = "auto"         # auto | require | off: baton's own sandbox for peers without one (env: BATON_SANDBOX)
# fallback = ["claude", "pi:glm-5.2"]   # --fallback: the next agents when one cannot answer
# retry = 0                # --retry: tries again of a rate-limited or unavailable provider

# [ask]
# agent = "codex"          # the adviser when --agent/--agents is not given
# budget = 2               # consultations per --task-id (env: BATON_ASK_BUDGET)
# max_chars = 200000       # --max-chars
# scope = "packet"         # packet | repo (--scope)

# One table per agent: codex, claude, gemini, zai, pi, gemini-cli, opencode, qwen,
# copilot, kilo, cline, nanocoder.
# Models, efforts, profiles and providers reach the CLI's command line: letters,
# digits and . _ - / : @ + [ ] only, never starting with `-`.
# [agents.claude]
# model = "opus"           # --model (env: BATON_MODEL, for every agent)
# effort = "high"          # --effort (env: BATON_EFFORT)

# [agents.codex]
# profile = "work"         # codex --profile

# [agents.pi]
# provider = "anthropic"   # pi --provider

# [agents.opencode]
# provider = "anthropic"   # with a model: opencode -m anthropic/<model>
# model = "claude-sonnet-4-5"

# [agents.qwen]
# provider = "openai"      # qwen --auth-type (openai, anthropic, qwen-oauth, gemini, vertex-ai, …)

# The argv prefix that starts a CLI that is not on PATH or must be pinned
# (user file only: a repository may not choose the program baton runs).
# [agents.gemini-cli]
# command = ["node", "/opt/gemini-cli/bundle/gemini.js"]

# A price for a model baton's table lacks (or your own rate), in USD per
# million tokens: --max-usd refuses a model it cannot price (user file only).
# [prices."gpt-7-nova"]
# input = 10.0
# cached_input = 1.0       # default: the input rate
# output = 80.0

# Credentials never go here: each CLI keeps its own login (`baton doctor`
# shows where), or use the CLI's API key variable.
"#;

pub const PROJECT: &str = r#"# baton project configuration, committed with the repository
# (see docs/config.md). It must hold no credentials: values that look like
# keys or tokens are refused. It may not set agents.<name>.command or make
# full access the default. Flags, BATON_* variables override it; it
# overrides each person's user file.

# agent = "claude"

# [run]
# timeout = "30m"
# access = "workspace"     # read-only | workspace
# fallback = ["claude"]   # --fallback: the next agents when one cannot answer

# [ask]
# scope = "packet"
# max_chars = 200000

# [agents.claude]
# model = "sonnet"
# effort = "high"

# [agents.opencode]
# provider = "anthropic"
# model = "claude-sonnet-4-5"

# [agents.qwen]
# provider = "openai"
"#;
