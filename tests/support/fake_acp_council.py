#!/usr/bin/env python3
"""A fake ACP agent for council tests: it speaks ACP as the recorded copilot
exchanges do (tests/fixtures/acp/copilot/*.acp) and answers each prompt with
the step council_fake.py would give a headless member for the same stage.

Called as `copilot` (a symlink) or with `--agent NAME` (a brought agent's
command), it serves any number of turns the way the real agents do, one
session per process:

  initialize             -> copilot's recorded capabilities (loadSession)
  session/new | load     -> the session (load keeps the id it was given)
  session/set_mode       -> an empty result
  session/prompt         -> the stage and round come from council_fake.py
                            (`stage_of` on the prompt's text, `pick_step`
                            logs the call to $COUNCIL_LOG like any member's,
                            its stdin being the prompt); then, as recorded:
                            session_info_update, usage_update, for each of the
                            step's `edits` a `tool_call` (kind edit, a diff)
                            and a `session/request_permission` (allow_once /
                            allow_always / reject_once) whose answer decides
                            whether the file is written; the step's text as
                            agent_message_chunk; end_turn with the step's usage.
A rejected edit does not end the turn (the answer still follows, as an
adviser that tried an edit and then answered would). A step's `fail` is
copilot's own shape, "Error: TEXT" as the final message; `exit`, `hang`,
`gate` and `delay_ms` act as in council_fake.py.

Every permission answer is appended to $FAKE_DIR/council/permissions.jsonl:
agent, stage, round, path (absolute), option the client picked, written.

Argv: `--agent NAME` (default: the program's name), `--record FILE` (append
every line the client sent to FILE); any other argument (copilot's `--acp
--stdio`) is ignored.
"""
import json
import os
import sys
import time
import uuid

sys.path.insert(0, os.path.dirname(os.path.realpath(__file__)))
import council_fake as cf  # noqa: E402
from acp_wire import out, reply  # noqa: E402
from acp_wire import read_client as _read_client  # noqa: E402

args = sys.argv[1:]
agent = cf.flag_value(args, "--agent") or os.path.basename(sys.argv[0])
record_to = cf.flag_value(args, "--record")
model = cf.flag_value(args, "--model")

# copilot 1.0.102's answers, as recorded (tests/fixtures/acp/copilot/plain.acp).
INIT = {
    "protocolVersion": 1,
    "agentCapabilities": {
        "loadSession": True,
        "mcpCapabilities": {"http": True, "sse": True},
        "promptCapabilities": {"image": True, "audio": False, "embeddedContext": True},
        "sessionCapabilities": {"close": {}, "list": {}},
    },
    "agentInfo": {"name": "Copilot", "title": "Copilot", "version": "1.0.102"},
    "authMethods": [],
}
MODE = "https://agentclientprotocol.com/protocol/session-modes#agent"
MODES = {"availableModes": [{"id": MODE, "name": "Agent"}], "currentModeId": MODE}
OPTIONS = [
    {"optionId": "allow_once", "kind": "allow_once", "name": "Allow once"},
    {"optionId": "allow_always", "kind": "allow_always", "name": "Always allow"},
    {"optionId": "reject_once", "kind": "reject_once", "name": "Deny"},
]


def read_client():
    return _read_client(record_to)


def update(session, u):
    out({"jsonrpc": "2.0", "method": "session/update",
         "params": {"sessionId": session, "update": u}})


def permission_log(entry):
    path = os.path.join(os.environ.get("FAKE_DIR", "."), "council", "permissions.jsonl")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(entry) + "\n")


def ask_and_edit(session, cwd, n, edit, stage, rnd):
    """One edit as copilot makes it: announce, ask, write only if allowed."""
    path = os.path.join(cwd, edit["path"])
    call = f"call_{n}"
    diff = {"type": "diff", "path": path, "oldText": "", "newText": edit["content"]}
    update(session, {"sessionUpdate": "tool_call", "toolCallId": call,
                     "title": f"Creating {path}", "kind": "edit", "status": "pending",
                     "rawInput": {"path": path, "file_text": edit["content"]},
                     "locations": [{"path": path}], "content": [diff]})
    rid = 100 + n
    out({"jsonrpc": "2.0", "id": rid, "method": "session/request_permission",
         "params": {"sessionId": session, "toolCall": {
             "toolCallId": call, "title": "Create file", "kind": "edit", "status": "pending",
             "rawInput": {"fileName": path}, "locations": [{"path": path}]},
             "options": OPTIONS}})
    got = read_client()
    while got.get("id") != rid or "method" in got:
        got = read_client()  # nothing else is expected mid-turn; skip it
    picked = (((got.get("result") or {}).get("outcome") or {}).get("optionId"))
    allowed = picked in ("allow_once", "allow_always")
    if allowed:
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(edit["content"])
        update(session, {"sessionUpdate": "tool_call_update", "toolCallId": call,
                         "status": "completed", "content": [diff],
                         "rawOutput": {"content": f"Created file {path}"}})
    else:
        update(session, {"sessionUpdate": "tool_call_update", "toolCallId": call,
                         "status": "failed", "rawOutput": {
                             "message": "The user rejected this tool call.",
                             "code": "rejected"}})
    permission_log({"agent": agent, "stage": stage, "round": rnd, "path": path,
                    "option": picked, "written": allowed})


def prompt_turn(msg, session, cwd, resumed):
    text = "".join(b.get("text", "") for b in msg["params"].get("prompt", [])
                   if b.get("type") == "text")
    stage = cf.stage_of(None, text)
    scenario_path, log_path = cf.fake_paths()
    scenario = cf.load_scenario(scenario_path)
    if scenario is None:
        sys.exit(96)
    entry = {"agent": agent, "model": model, "argv": args, "cwd": cwd, "stdin": text,
             "stage": stage, "round": None, "resume": resumed, "session": None,
             "schema": None, "pid": os.getpid(), "time_ms": int(time.time() * 1000)}
    step, rnd, _ = cf.pick_step(scenario, agent, model, stage, log_path, entry, session)
    if step is None:
        sys.stderr.write(f"fake_acp_council: no step for {agent} {stage} round {rnd}\n")
        sys.exit(97)
    if step.get("hang"):
        while True:
            time.sleep(3600)
    cf.wait_gate(step)
    if step.get("delay_ms"):
        time.sleep(step["delay_ms"] / 1000.0)
    if "exit" in step:
        sys.stderr.write(step.get("stderr", f"{agent}: scripted failure") + "\n")
        sys.exit(int(step["exit"]))
    update(session, {"sessionUpdate": "session_info_update", "title": text[:40],
                     "updatedAt": "2026-12-02T00:40:14.678Z"})
    update(session, {"sessionUpdate": "usage_update", "used": 8672, "size": 128000})
    for n, e in enumerate(step.get("edits", [])):
        ask_and_edit(session, cwd, n, e, stage, rnd)
    cf.apply_edits({"git": step.get("git", [])}, cwd)
    answer = "Error: " + step["fail"] if "fail" in step else cf.answer_text(step)[0]
    if answer:
        # Streamed in two chunks: baton must join them.
        half = len(answer) // 2
        for part in (answer[:half], answer[half:]):
            if part:
                update(session, {"sessionUpdate": "agent_message_chunk",
                                 "content": {"type": "text", "text": part}})
    usage = {"input": 100, "output": 10}
    usage.update(step.get("usage", {}))
    out({"jsonrpc": "2.0", "id": msg["id"], "result": {"stopReason": "end_turn", "usage": {
        "inputTokens": usage["input"], "outputTokens": usage["output"],
        "totalTokens": usage["input"] + usage["output"],
        "cachedReadTokens": 0, "cachedWriteTokens": 0}}})


def main():
    session, cwd, resumed = None, os.getcwd(), None
    while True:
        msg = read_client()
        method, rid = msg.get("method"), msg.get("id")
        if method == "initialize":
            reply(rid, INIT)
        elif method == "session/new":
            cwd = msg["params"].get("cwd", cwd)
            session = str(uuid.uuid4())
            reply(rid, {"sessionId": session, "modes": MODES})
        elif method == "session/load":
            cwd = msg["params"].get("cwd", cwd)
            session = resumed = msg["params"]["sessionId"]
            reply(rid, {"modes": MODES})
        elif method == "session/set_mode":
            reply(rid, {})
        elif method == "session/prompt":
            prompt_turn(msg, session, cwd, resumed)
        elif method == "session/cancel":
            pass
        elif rid is not None:
            out({"jsonrpc": "2.0", "id": rid,
                 "error": {"code": -32601, "message": f"Method not found: {method}"}})


if __name__ == "__main__":
    main()
