#!/usr/bin/env python3
"""A fake ACP agent for baton's integration tests: it replays a recorded real
exchange (tests/fixtures/acp/<agent>/<name>.acp) over stdio.

A recording has one message per line: `>> {…}` is what the client sent,
`<< {…}` what the agent answered. Replaying, each `>>` line waits for the
client's next message and checks it is the same method (a client answer to a
permission request must pick an option of the same kind as recorded, or the
replay stops with exit 3: the test then fails on baton's result). Each `<<`
line is printed, with the recorded working directory (/home/user/proj)
replaced by the session's, and a response's id replaced by the id of the
client's request it answers. When the client allows an edit whose recorded
tool call carries a diff, the file is written, as the real agent did. A
`session/set_mode` the recording lacks is answered with an empty result.

Argv: the recording, then optional switches:
  --hang-init        read `initialize` and never answer
  --crash-after-init answer `initialize`, then exit 3 with a message on stderr
  --garbage          print a line that is not JSON and one that is not JSON-RPC first
  --no-modes         leave `modes` out of the agent's answers
  --record FILE      append every line the client sent to FILE
  --any-answer       accept any answer to a permission request (an allowed
                     edit is still written): shows what a client allowed

The line protocol is acp_wire.py's (shared with fake_acp_council.py); tests
write both files with `support::acp::fake_acp` and start this with
`python3 -S`.
"""
import json
import os
import sys
import time

from acp_wire import out_line as out, read_client as _read_client, reply

RECORDED_CWD = "/home/user/proj"

args = sys.argv[1:]
recording = args[0]
flags = set(a for a in args[1:] if a.startswith("--"))
record_to = None
if "--record" in args:
    record_to = args[args.index("--record") + 1]

cwd = os.getcwd()
last_request_id = None
pending_edits = {}
recorded_diffs = {}


def read_client():
    return _read_client(record_to, lambda: sys.stderr.write("fake_acp: the client closed stdin\n"))


def kind_of(msg, options):
    oid = (((msg.get("result") or {}).get("outcome") or {}).get("optionId"))
    for o in options:
        if o.get("optionId") == oid:
            return o.get("kind")
    return (((msg.get("result") or {}).get("outcome") or {}).get("outcome"))


if "--garbage" in flags:
    out("Starting fake agent... (not JSON)")
    out('{"hello": "not json-rpc"}')

last_permission_options = []
for raw in open(recording):
    raw = raw.rstrip("\n")
    if raw.startswith(">> "):
        want = json.loads(raw[3:])
        got = read_client()
        # A mode switch the recording lacks (the agent replayed under
        # another agent's profile) is accepted.
        while got.get("method") == "session/set_mode" and want.get("method") != "session/set_mode":
            reply(got["id"], {})
            got = read_client()
        if want.get("method"):
            if got.get("method") != want["method"]:
                sys.stderr.write(f"fake_acp: expected {want['method']}, got {got}\n")
                sys.exit(3)
            if "id" in got:
                last_request_id = got["id"]
            if want["method"] in ("session/new", "session/load"):
                cwd = got.get("params", {}).get("cwd", cwd)
            if want["method"] == "initialize" and "--hang-init" in flags:
                time.sleep(3600)
        else:
            # An answer to our permission request: same kind as recorded.
            wk, gk = kind_of(want, last_permission_options), kind_of(got, last_permission_options)
            if wk != gk and "--any-answer" not in flags:
                sys.stderr.write(f"fake_acp: the client answered {gk}, the recording {wk}\n")
                sys.exit(3)
            if gk == "allow_once":
                edit = pending_edits.pop(got.get("id"), None)
                if edit:
                    path, text = edit
                    os.makedirs(os.path.dirname(path), exist_ok=True)
                    with open(path, "w") as f:
                        f.write(text)
        continue
    if not raw.startswith("<< "):
        continue
    msg = json.loads(raw[3:].replace(RECORDED_CWD, cwd))
    if "method" not in msg and "id" in msg and last_request_id is not None:
        msg["id"] = last_request_id
    if "--no-modes" in flags and isinstance(msg.get("result"), dict):
        msg["result"].pop("modes", None)
    if msg.get("method") == "session/request_permission":
        last_permission_options = msg["params"].get("options", [])
        tc = msg["params"].get("toolCall", {})
        if tc.get("kind") == "edit":
            for block in recorded_diffs.get(tc.get("toolCallId"), []):
                pending_edits[msg["id"]] = (block["path"], block.get("newText", ""))
    if msg.get("method") == "session/update":
        u = msg["params"]["update"]
        if u.get("sessionUpdate") == "tool_call":
            diffs = [c for c in u.get("content", []) if c.get("type") == "diff"]
            recorded_diffs[u.get("toolCallId")] = diffs
    out(json.dumps(msg, separators=(",", ":")))
    if "--crash-after-init" in flags and msg.get("result", {}).get("protocolVersion"):
        sys.stderr.write("fake_acp: crashed on purpose\n")
        sys.exit(3)

# The real agents exit when their input ends.
while sys.stdin.readline():
    pass
