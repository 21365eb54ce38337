#!/usr/bin/env -S python3 -S
"""A scripted fake of the codex, claude and pi CLIs for council tests.

One script, several names: symlinks called `codex`, `claude` and `pi` point
here and argv[0] says which CLI to impersonate. Each call prints that CLI's
real headless output (codex `exec --json` JSONL, claude `-p --output-format
stream-json` events, pi `-p --mode json` events; shapes taken from
shared/realcli fixtures), so baton's own parsers read it.

What a call answers comes from a scenario file ($COUNCIL_SCENARIO, default
$FAKE_DIR/council/scenario.json), chosen by (agent, stage, round):

  stage  the schema id the call names: the schema passed on argv (claude
         --json-schema TEXT, codex --output-schema FILE) wins, else the ids in
         the prompt, the latest stage first (a review prompt may quote the
         plan); `baton.council.proposal/1` -> proposal, `.critique/1` ->
         critique, `.plan/1` -> plan, `.review/1` -> review,
         `baton.fanout.review/1` -> fanout_review (a fan-out's judge); none
         -> implement (a writer's implementation or repair turn, a fan-out
         candidate's too).
  round  the number of earlier calls for the same (agent, stage) in the log.

Scenario: {"agents": {"codex" | "codex:MODEL" | "*": {STAGE: [STEP, ...]}}}
(round n takes step n, the last step repeats). A STEP is an object:
  json: VALUE        answer this JSON (claude: `structured_output` when
                     --json-schema was given; codex: the final agent_message
                     is the JSON text; else the JSON text as the message)
  say: TEXT          answer prose
  nothing: true      a well-formed run whose final message is empty
  stdout: TEXT       print exactly TEXT instead of any CLI framing
  exit: N, stderr: T exit N after printing T on stderr, no stdout
  fail: TEXT         the CLI's own failure shape (codex turn.failed exit 1,
                     claude is_error exit 1, pi stopReason error exit 0)
  hang: true         sleep until killed (after logging the call)
  delay_ms: N        sleep N ms, then answer
  gate: NAME         wait until the file $FAKE_DIR/NAME exists, then answer (a
                     test holds a stage for as long as it looks, no longer)
  progress: TEXT     before a hang or delay, print TEXT as a command starting
                     (codex `item.started`, claude stream-json `tool_use`; pi: nothing)
  inject: TEXT       append TEXT to the prose, or to every top-level string
                     of the JSON answer (instructions smuggled in data)
  edits: [{path, content}]   write files (paths relative to the cwd)
  git: [[ARG, ...], ...]     run `git ARG...` in the cwd, in order
  session: ID        the session id to report (default: derived, or the
                     resumed one)
  usage: {input, output}     token counts to report
  cost: USD                  claude: the total_cost_usd to report (default 0.001)
No step for a call: exit 97 with "council_fake: no step for …" on stderr.

fake_acp_council.py imports this script for the same stage logic, scenario
and log, and speaks ACP (copilot, brought agents) instead of a CLI's output.

Every call (but --version) appends one JSON line to $COUNCIL_LOG (default
$FAKE_DIR/council/log.jsonl): agent, model, argv, cwd, stdin, stage, round,
resume (the session id a resume named, else null), session, schema (the text
of claude's --json-schema or codex's --output-schema file, else null), pid. The log is
locked while the round is counted and the line written, so parallel members
get distinct rounds.

It runs as `python3 -S` (the shebang): stdlib only, no site import, which
is a third of a start-up on the test machine, and a council test starts it
dozens of times.
"""

import fcntl
import json
import os
import sys
import time

STAGES = [  # latest first: a later stage's prompt may quote an earlier schema
    ("fanout_review", "baton.fanout.review/1"),
    ("review", "baton.council.review/1"),
    ("plan", "baton.council.plan/1"),
    ("critique", "baton.council.critique/1"),
    ("proposal", "baton.council.proposal/1"),
]
VERSIONS = {"codex": "codex-cli 0.171.0", "claude": "2.1.332 (Claude Code)", "pi": "0.73.1"}
MODELS = {"codex": "gpt-5.5", "claude": "claude-opus-5-5", "pi": "mock-model"}


def flag_value(argv, *names):
    for i, a in enumerate(argv):
        if a in names and i + 1 < len(argv):
            return argv[i + 1]
        for n in names:
            if n.startswith("--") and a.startswith(n + "="):
                return a[len(n) + 1 :]
    return None


def resumed(agent, argv):
    if agent == "codex":
        if "resume" in argv:
            i = argv.index("resume")
            nxt = argv[i + 1] if i + 1 < len(argv) else None
            return nxt if nxt not in (None, "-") else "--last"
        return None
    if agent == "claude":
        return flag_value(argv, "--resume", "-r")
    if agent == "pi":
        return flag_value(argv, "--session")
    return None


def schema_text(agent, argv):
    if agent == "claude":
        return flag_value(argv, "--json-schema")
    if agent == "codex":
        path = flag_value(argv, "--output-schema")
        if path:
            try:
                with open(path, encoding="utf-8") as f:
                    return f.read()
            except OSError:
                return None
    return None


def stage_of(schema, prompt):
    for text in (schema, prompt):
        if text:
            for stage, sid in STAGES:
                if sid in text:
                    return stage
    return "implement"


def load_scenario(path):
    """The scenario, or None after saying on stderr why it cannot be read."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.stderr.write(f"council_fake: cannot read the scenario {path}: {e}\n")
        return None


def fake_paths():
    base = os.path.join(os.environ.get("FAKE_DIR", "."), "council")
    return (
        os.environ.get("COUNCIL_SCENARIO") or os.path.join(base, "scenario.json"),
        os.environ.get("COUNCIL_LOG") or os.path.join(base, "log.jsonl"),
    )


def pick_step(scenario, agent, model, stage, log_path, entry, session=None):
    """Count the round and append the log line under one lock. `session`:
    the id the caller already reported (an ACP agent names its session
    before the prompt says the stage), else one is derived."""
    agents = scenario.get("agents", {})
    key = None
    for k in ([f"{agent}:{model}"] if model else []) + [agent, "*"]:
        if stage in agents.get(k, {}):
            key = k
            break
    os.makedirs(os.path.dirname(os.path.abspath(log_path)), exist_ok=True)
    with open(log_path, "a+", encoding="utf-8") as log:
        fcntl.flock(log, fcntl.LOCK_EX)
        log.seek(0)
        rnd = 0
        for line in log:
            try:
                e = json.loads(line)
            except ValueError:
                continue
            if e.get("agent") == agent and e.get("stage") == stage:
                # A model-specific script counts that model's calls only.
                if key and ":" in key and e.get("model") != model:
                    continue
                rnd += 1
        entry["round"] = rnd
        steps = agents.get(key, {}).get(stage, []) if key else []
        step = steps[min(rnd, len(steps) - 1)] if steps else None
        entry["session"] = session or session_id(agent, stage, rnd, entry["resume"], step)
        log.write(json.dumps(entry) + "\n")
        log.flush()
        os.fsync(log.fileno())
    return step, rnd, entry["session"]


def session_id(agent, stage, rnd, resume, step):
    if step and step.get("session"):
        return step["session"]
    if resume and resume != "--last":
        return resume  # the real CLIs keep the id of the session they resume
    return f"{agent}-{stage}-{rnd}-session"


def wait_gate(step):
    if step.get("gate"):
        gate = os.path.join(os.environ.get("FAKE_DIR", "."), step["gate"])
        while not os.path.exists(gate):
            time.sleep(0.02)


def apply_edits(step, cwd):
    done = []
    for e in step.get("edits", []):
        path = os.path.join(cwd, e["path"])
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(e["content"])
        done.append(e["path"])
    if not step.get("git") and not step.get("sh"):
        return done
    import subprocess  # only here: most calls run nothing, and start-up counts

    for args in step.get("git", []):
        subprocess.run(["git", *args], cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    for script in step.get("sh", []):
        # A hostile peer's shell commands (an unsandboxed peer can run any).
        subprocess.run(["sh", "-c", script], cwd=cwd, stdin=subprocess.DEVNULL,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return done


def answer_text(step):
    """(message text, structured value or None) of a step."""
    inject = step.get("inject")
    if "json" in step:
        v = step["json"]
        if inject and isinstance(v, dict):
            v = {k: (s + " " + inject if isinstance(s, str) else s) for k, s in v.items()}
        return json.dumps(v), v
    if step.get("nothing"):
        return "", None
    text = step.get("say", "done")
    if inject:
        text = text + "\n" + inject
    return text, None


def emit(lines):
    out = sys.stdout
    for v in lines:
        out.write(json.dumps(v, separators=(",", ":")) + "\n")
    out.flush()


def codex(step, session, edited, usage, schema_given):
    text, _ = answer_text(step)
    sys.stderr.write("Reading additional input from stdin...\n")
    lines = [{"type": "thread.started", "thread_id": session}, {"type": "turn.started"}]
    n = 0
    if edited:
        lines.append({"type": "item.completed", "item": {
            "id": f"item_{n}", "type": "file_change", "status": "completed",
            "changes": [{"path": p, "kind": "add"} for p in edited]}})
        n += 1
    if "fail" in step:
        lines += [{"type": "error", "message": step["fail"]},
                  {"type": "turn.failed", "error": {"message": step["fail"]}}]
        emit(lines)
        return 1
    if text:
        lines.append({"type": "item.completed", "item": {
            "id": f"item_{n}", "type": "agent_message", "text": text}})
    lines.append({"type": "turn.completed", "usage": {
        "input_tokens": usage["input"], "cached_input_tokens": 0,
        "cache_write_input_tokens": 0, "output_tokens": usage["output"],
        "reasoning_output_tokens": 0}})
    emit(lines)
    return 0


def claude(step, session, edited, usage, schema_given, cwd, stream):
    text, structured = answer_text(step)
    model = MODELS["claude"]
    lines = [{"type": "system", "subtype": "init", "cwd": cwd, "session_id": session,
              "tools": ["StructuredOutput"] if schema_given else ["Read", "Grep", "Glob"],
              "mcp_servers": [], "model": model, "permissionMode": "default"}]
    for i, p in enumerate(edited):
        tid = f"toolu_fake_{i}"
        lines.append({"type": "assistant", "session_id": session, "message": {
            "model": model, "role": "assistant", "content": [
                {"type": "tool_use", "id": tid, "name": "Write",
                 "input": {"file_path": os.path.join(cwd, p), "content": "…"}}]}})
        lines.append({"type": "user", "session_id": session, "message": {"role": "user", "content": [
            {"tool_use_id": tid, "type": "tool_result",
             "content": f"File created successfully at: {os.path.join(cwd, p)}"}]}})
    result = {"type": "result", "subtype": "success", "is_error": False, "session_id": session,
              "result": text, "num_turns": 1, "total_cost_usd": step.get("cost", 0.001), "permission_denials": [],
              "api_error_status": None,
              "usage": {"input_tokens": usage["input"], "cache_creation_input_tokens": 0,
                        "cache_read_input_tokens": 0, "output_tokens": usage["output"]}}
    if "fail" in step:
        result.update({"subtype": "error_during_execution", "is_error": True, "result": step["fail"]})
        emit(lines + [result] if stream else [result])
        return 1
    if structured is not None and schema_given:
        lines.append({"type": "assistant", "session_id": session, "message": {
            "model": model, "role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_fake_so", "name": "StructuredOutput",
                 "input": structured}]}})
        lines.append({"type": "user", "session_id": session, "message": {"role": "user", "content": [
            {"tool_use_id": "toolu_fake_so", "type": "tool_result",
             "content": "Structured output provided successfully"}]}})
        result["structured_output"] = structured
    elif text:
        lines.append({"type": "assistant", "session_id": session, "message": {
            "model": model, "role": "assistant", "content": [{"type": "text", "text": text}]}})
    emit(lines + [result] if stream else [result])
    return 0


def pi(step, session, edited, usage, cwd):
    text, _ = answer_text(step)
    model = MODELS["pi"]

    def assistant(content, stop="stop", err=None):
        m = {"role": "assistant", "content": content, "api": "openai-completions",
             "provider": "mock", "model": model,
             "usage": {"input": usage["input"], "output": usage["output"], "cacheRead": 0,
                       "cacheWrite": 0, "totalTokens": usage["input"] + usage["output"],
                       "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0,
                                "total": 0}},
             "stopReason": stop}
        if err:
            m["errorMessage"] = err
        return m

    lines = [{"type": "session", "version": 3, "id": session, "cwd": cwd},
             {"type": "agent_start"}, {"type": "turn_start"}]
    for i, p in enumerate(edited):
        call = {"type": "toolCall", "id": f"call_fake_{i}", "name": "write",
                "arguments": {"path": p, "content": "…"}}
        lines += [{"type": "message_end", "message": assistant([call], "toolUse")},
                  {"type": "tool_execution_start", "toolCallId": call["id"], "toolName": "write"},
                  {"type": "tool_execution_end", "toolCallId": call["id"], "toolName": "write",
                   "result": {"content": [{"type": "text", "text": f"Successfully wrote to {p}"}]},
                   "isError": False},
                  {"type": "turn_start"}]
    if "fail" in step:
        final = assistant([], "error", step["fail"])
    else:
        final = assistant([{"type": "text", "text": text}] if text else [])
    lines += [{"type": "message_start", "message": assistant([])},
              {"type": "message_end", "message": final},
              {"type": "turn_end", "message": final},
              {"type": "agent_end", "messages": [final]}]
    emit(lines)
    return 0  # pi's JSON mode exits 0 even when the turn failed


def main():
    agent = os.path.basename(sys.argv[0])
    argv = sys.argv[1:]
    if agent not in VERSIONS:
        sys.stderr.write(f"council_fake: call me as codex, claude or pi, not {agent}\n")
        return 98
    if "--version" in argv or "-V" in argv:
        # pi prints its version on stderr, the others on stdout.
        (sys.stderr if agent == "pi" else sys.stdout).write(VERSIONS[agent] + "\n")
        return 0
    prompt = sys.stdin.read()
    cwd = os.getcwd()
    model = flag_value(argv, "-m", "--model")
    schema = schema_text(agent, argv)
    stage = stage_of(schema, prompt)
    scenario_path, log_path = fake_paths()
    scenario = load_scenario(scenario_path)
    if scenario is None:
        return 96
    entry = {"agent": agent, "model": model, "argv": argv, "cwd": cwd, "stdin": prompt,
             "stage": stage, "round": None, "resume": resumed(agent, argv), "session": None,
             "schema": schema,
             "pid": os.getpid(), "time_ms": int(time.time() * 1000)}
    step, rnd, session = pick_step(scenario, agent, model, stage, log_path, entry)
    if step is None:
        sys.stderr.write(f"council_fake: no step for {agent} {stage} round {rnd}\n")
        return 97
    if step.get("progress") and agent == "codex":
        emit([{"type": "item.started", "item": {"id": "item_p", "type": "command_execution",
              "command": step["progress"], "status": "in_progress"}}])
    elif step.get("progress") and agent == "claude" and flag_value(argv, "--output-format") != "json":
        emit([{"type": "assistant", "session_id": session, "message": {"role": "assistant",
              "content": [{"type": "tool_use", "id": "toolu_p", "name": "Bash",
                           "input": {"command": step["progress"]}}]}}])
    if step.get("hang"):
        while True:
            time.sleep(3600)
    wait_gate(step)
    if step.get("delay_ms"):
        time.sleep(step["delay_ms"] / 1000.0)
    edited = apply_edits(step, cwd)
    if "exit" in step:
        sys.stderr.write(step.get("stderr", f"{agent}: scripted failure") + "\n")
        return int(step["exit"])
    if "stdout" in step:
        sys.stdout.write(step["stdout"])
        return 0
    usage = {"input": 100, "output": 10}
    usage.update(step.get("usage", {}))
    if agent == "codex":
        return codex(step, session, edited, usage, schema is not None)
    if agent == "claude":
        stream = flag_value(argv, "--output-format") != "json"
        return claude(step, session, edited, usage, schema is not None, cwd, stream)
    return pi(step, session, edited, usage, cwd)


if __name__ == "__main__":
    sys.exit(main())
