"""The JSON-RPC line protocol both fake ACP agents speak (fake_acp.py replays
recordings, fake_acp_council.py answers council stages): one message a line
on stdout, flushed; the client's lines read from stdin, optionally appended
to a record file the tests read back. Stdlib only, so the fakes start with
`python3 -S` (no site import: about a third of a start-up here, and no
user's site-packages in a test)."""
import json
import sys


def out_line(line):
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def out(msg):
    out_line(json.dumps(msg, separators=(",", ":")))


def reply(rid, result):
    out({"jsonrpc": "2.0", "id": rid, "result": result})


def read_client(record_to, on_eof=None):
    """The client's next message; at the end of input, `on_eof` then exit 0
    (the real agents exit when their input ends)."""
    line = sys.stdin.readline()
    if not line:
        if on_eof:
            on_eof()
        sys.exit(0)
    if record_to:
        with open(record_to, "a", encoding="utf-8") as f:
            f.write(line)
    return json.loads(line)
