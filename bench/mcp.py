#!/usr/bin/env python3
"""`make bench-mcp`: what `baton mcp` costs.

1. start-up: spawn `baton mcp`, send `initialize` and `tools/list`, time until
   the tools arrive (targets: <= 10 ms);
2. size: the bytes of `tools/list` (budget: 64 KiB) and of what a host puts
   in front of its model, each tool's name, description and input schema as
   compact JSON (budget: 12 KiB), per tool too;
3. idle: CPU the server uses while connected and idle (target: ~0 %);
4. a `run` through MCP against the same run from the command line, with a
   fake codex that prints a recorded transcript (target: <= 5 ms added).

The budgets are checked at the end: a line says each is met or OVER, and the
script exits 1 when one is over.

Everything runs in a temporary directory with its own state directory; the
fake peer is a shell script on PATH. Usage: bench/mcp.py [BATON] [ROUNDS]
"""

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

BATON = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else "target/release/baton")
ROUNDS = int(sys.argv[2]) if len(sys.argv) > 2 else 40
HERE = os.path.dirname(os.path.abspath(__file__))
TRANSCRIPT = os.path.join(HERE, "..", "tests", "fixtures", "codex", "codex-exec-basic.jsonl")

LIST_BUDGET = 64 << 10
VISIBLE_BUDGET = 12 << 10
STARTUP_BUDGET_MS = 10.0

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {},
    "clientInfo": {"name": "bench", "version": "1"}}}


def env_in(tmp):
    bin_dir = os.path.join(tmp, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    fake = os.path.join(bin_dir, "codex")
    with open(fake, "w") as f:
        f.write("#!/bin/sh\ncat > /dev/null\ncat '%s'\n" % os.path.abspath(TRANSCRIPT))
    os.chmod(fake, 0o755)
    e = dict(os.environ)
    e["PATH"] = bin_dir + ":/usr/bin:/bin"
    e["BATON_STATE_DIR"] = os.path.join(tmp, "state")
    e["BATON_CONFIG"] = os.path.join(tmp, "none.toml")
    e.pop("BATON_DEPTH", None)
    return e


class Server:
    def __init__(self, env, cwd):
        self.p = subprocess.Popen([BATON, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=subprocess.DEVNULL, env=env, cwd=cwd)
        self.next = 10

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def wait(self, id_):
        while True:
            line = self.p.stdout.readline()
            if not line:
                raise SystemExit("baton mcp closed stdout")
            m = json.loads(line)
            if m.get("id") == id_:
                return m

    def call(self, method, params):
        self.next += 1
        self.send({"jsonrpc": "2.0", "id": self.next, "method": method, "params": params})
        return self.wait(self.next)

    def close(self):
        self.p.stdin.close()
        self.p.wait(timeout=30)


def ms(xs):
    return "median %.2f ms, p90 %.2f ms" % (statistics.median(xs),
                                             sorted(xs)[int(len(xs) * 0.9) - 1])


def children_cpu_ms():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return (r.ru_utime + r.ru_stime) * 1000


def startup(env, cwd):
    """Wall time to the tools, and the server's CPU time for it (user +
    system, whole process life: on a loaded machine the CPU time is the
    steadier figure, and the wall time on an idle one is close to it)."""
    times = []
    cpu = []
    for _ in range(ROUNDS):
        c0 = children_cpu_ms()
        t0 = time.perf_counter()
        s = Server(env, cwd)
        s.send(INIT)
        s.wait(1)
        s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        r = s.call("tools/list", {})
        times.append((time.perf_counter() - t0) * 1000)
        assert len(r["result"]["tools"]) >= 14
        s.close()
        cpu.append(children_cpu_ms() - c0)
    return times, cpu


def compact(v):
    return len(json.dumps(v, separators=(",", ":"), ensure_ascii=False).encode())


def sizes(env, cwd):
    """tools/list as the server sent it (bytes of the line), and the part a
    host shows its model: name, description and input schema of each tool."""
    s = Server(env, cwd)
    s.send(INIT)
    s.wait(1)
    s.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    line = s.p.stdout.readline()
    s.close()
    tools = json.loads(line)["result"]["tools"]
    visible = [{k: t.get(k) for k in ("name", "description", "inputSchema")} for t in tools]
    per_tool = [(t["name"], compact(v), compact(t.get("outputSchema")))
                for t, v in zip(tools, visible)]
    return len(line), compact(visible), per_tool


def cpu_ticks(pid):
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def idle(env, cwd, seconds=10):
    s = Server(env, cwd)
    s.send(INIT)
    s.wait(1)
    s.call("tools/list", {})
    before = cpu_ticks(s.p.pid)
    time.sleep(seconds)
    after = cpu_ticks(s.p.pid)
    s.close()
    hz = os.sysconf("SC_CLK_TCK")
    return 100.0 * (after - before) / hz / seconds


def run_overhead(env, cwd):
    args = {"task": "say hi", "agent": "codex", "access": "read-only"}
    cli = []
    mcp = []
    s = Server(env, cwd)
    s.send(INIT)
    s.wait(1)
    # Interleaved, so a slower moment of the machine hits both alike.
    for _ in range(ROUNDS):
        t0 = time.perf_counter()
        out = subprocess.run([BATON, "run", "--agent", "codex", "--access", "read-only", "say hi"],
                             env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        cli.append((time.perf_counter() - t0) * 1000)
        assert json.loads(out.stdout)["status"] == "success", out.stdout
        t0 = time.perf_counter()
        r = s.call("tools/call", {"name": "run", "arguments": args})
        mcp.append((time.perf_counter() - t0) * 1000)
        assert r["result"]["structuredContent"]["status"] == "success", r
    s.close()
    return cli, mcp


def main():
    with tempfile.TemporaryDirectory() as tmp:
        env = env_in(tmp)
        cwd = os.path.join(tmp, "work")
        os.makedirs(cwd)
        print("baton:", BATON, "rounds:", ROUNDS)
        wall, cpu = startup(env, cwd)
        print("start-up (spawn + initialize + tools/list):", ms(wall))
        print("start-up CPU time (user + system, whole life):", ms(cpu))
        print("load average:", " ".join("%.1f" % x for x in os.getloadavg()))
        listed, visible, per_tool = sizes(env, cwd)
        print("tools/list: %d B; model-visible (name + description + input schema): %d B"
              % (listed, visible))
        for name, v, o in per_tool:
            print("  %-16s visible %5d B, output schema %5d B" % (name, v, o))
        print("idle CPU over 10 s: %.3f %%" % idle(env, cwd))
        cli, mcp = run_overhead(env, cwd)
        print("run from the CLI:  ", ms(cli))
        print("run through MCP:   ", ms(mcp))
        print("added by MCP: %.2f ms (median of MCP minus median of CLI)"
              % (statistics.median(mcp) - statistics.median(cli)))
        over = False
        for what, got, budget, unit in [
                ("tools/list", listed, LIST_BUDGET, "B"),
                ("model-visible part", visible, VISIBLE_BUDGET, "B"),
                ("start-up to tools/list (median wall)", statistics.median(wall),
                 STARTUP_BUDGET_MS, "ms")]:
            ok = got <= budget
            over = over or not ok
            print("budget %s: %s %s <= %s %s: %s" % (what, "%g" % got, unit, "%g" % budget, unit,
                                                   "met" if ok else "OVER"))
        if over:
            sys.exit(1)


if __name__ == "__main__":
    main()
