#!/usr/bin/env python3
# A fake `codex exec --json` for the view benchmarks (bench/view.sh,
# bench/tab-memory.sh), in python so no process is forked per event. It starts
# a command; while $BENCH_WORK/stream exists it prints a new command event every
# 100 ms; it ends when $BENCH_WORK/release-all exists (at once with BENCH_NOW set).
# A prompt holding `backlog:N` first prints N command events at once.
import os
import re
import sys
import time

work = os.environ["BENCH_WORK"]
prompt = sys.stdin.read()
out = sys.stdout
out.write('{"type":"thread.started","thread_id":"bench-session"}\n')
out.write('{"type":"item.started","item":{"type":"command_execution","command":"cargo test"}}\n')
m = re.search(r"backlog:(\d+)", prompt)
for i in range(1, int(m.group(1)) + 1 if m else 1):
    out.write('{"type":"item.started","item":{"type":"command_execution","command":"backlog %d"}}\n' % i)
out.flush()
n = 0
while not os.environ.get("BENCH_NOW") and not os.path.exists(work + "/release-all"):
    if os.path.exists(work + "/stream"):
        n += 1
        out.write('{"type":"item.started","item":{"type":"command_execution","command":"step %d"}}\n' % n)
        out.flush()
    time.sleep(0.1)
out.write('{"type":"item.completed","item":{"id":"i","type":"agent_message","text":"ok"}}\n')
out.write('{"type":"turn.completed","usage":{"input_tokens":1,"cached_input_tokens":0,"output_tokens":1}}\n')
