// `make bench-tab` (bench/tab-memory.sh runs this): the browser tab's memory
// while N_PEERS fake peers stream for DURATION_S (issue 13: "the browser tab's
// memory stays flat over 30 minutes of streaming (bounded transcript in the page)").
//
// It starts N_PEERS fake codex peers (bench/fake-codex.py, one command event
// every 100 ms each) with `baton run --async`, `baton serve` on 127.0.0.1, and
// Debian's headless Chromium (driven by the pinned playwright-core of
// scripts/e2e-browser-install.sh) with the page open on the fleet AND the
// newest job's detail, its live transcript following — the worst case. Every
// SAMPLE_S it forces a GC and records the JS heap, DOM nodes, event listeners,
// the transcript's line count, the renderer's RSS and CPU; then a summary and a
// verdict ("flat" or "NOT flat").
//
// Environment: BATON (the binary), BATON_E2E_BROWSER_DIR (playwright-core),
// CHROMIUM (/usr/bin/chromium), N_PEERS (50), DURATION_S (1800), SAMPLE_S (60),
// WARMUP_S (120).
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';

const MAX_LINES = 2000; // the page's bound (src/serve/assets/app.js)
const MIB = 1024 * 1024;
const TCK = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout) || 100;

function fail(msg) {
  console.error(`bench-tab: FAIL: ${msg}`);
  process.exitCode = 1;
  throw new Error(msg);
}
const need = (k) => process.env[k] || fail(`${k} is not set (run \`make bench-tab\`)`);
const num = (k, d) => {
  const v = Number(process.env[k] || d);
  if (!Number.isFinite(v) || v <= 0) fail(`${k} must be a positive number, got ${process.env[k]}`);
  return v;
};

const BATON = need('BATON');
const require = createRequire(path.join(need('BATON_E2E_BROWSER_DIR'), 'package.json'));
const { chromium } = require('playwright-core');
const N_PEERS = num('N_PEERS', 50);
const DURATION_S = num('DURATION_S', 1800);
const SAMPLE_S = num('SAMPLE_S', 60);
const WARMUP_S = num('WARMUP_S', 120);

// --- the project: a git repo, the fake codex first on PATH, its own state dir
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-tab-'));
const bin = path.join(tmp, 'bin');
const repo = path.join(tmp, 'repo');
for (const d of [bin, repo]) fs.mkdirSync(d, { recursive: true });
fs.copyFileSync(new URL('./fake-codex.py', import.meta.url), path.join(bin, 'codex'));
fs.chmodSync(path.join(bin, 'codex'), 0o755);
const env = {
  ...process.env,
  PATH: `${bin}:${process.env.PATH}`,
  BENCH_WORK: tmp,
  BATON_STATE_DIR: path.join(tmp, 'state'),
  BATON_CONFIG: path.join(tmp, 'no-config.toml'),
  // The peers must outlive the run (the default timeout is 60m).
  BATON_TIMEOUT: `${Math.ceil(DURATION_S + 900)}s`,
};
for (const k of ['BATON_AGENT', 'BATON_MODEL', 'BATON_ACCESS', 'BATON_DEPTH', 'BATON_MAX_DEPTH']) delete env[k];

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: repo, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
  if (r.status !== 0) fail(`${cmd} ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return r.stdout;
}

// --- the renderer's memory, from /proc ------------------------------------------
// Chromium is a descendant of this process; its renderers carry --type=renderer.
function children(pid) {
  try {
    return fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}
// The page's renderer: the one that has used the most CPU (a spare renderer
// or the first blank page's idles).
function cpuTicks(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces): utime and stime are 14 and 15.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(f[11]) + Number(f[12]);
  } catch {
    return -1;
  }
}
function renderers() {
  const out = [];
  const todo = [process.pid];
  while (todo.length) {
    const pid = todo.pop();
    for (const c of children(pid)) {
      todo.push(c);
      let cmd = '';
      try { cmd = fs.readFileSync(`/proc/${c}/cmdline`, 'utf8'); } catch { continue; }
      if (cmd.includes('--type=renderer')) out.push(c);
    }
  }
  return out;
}
function rssKiB(pid) {
  try {
    const m = /^VmRSS:\s+(\d+) kB/m.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

// --- statistics -------------------------------------------------------------------
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
// Least-squares slope of ys over xs.
function slope(xs, ys) {
  const mx = mean(xs);
  const my = mean(ys);
  let num = 0;
  let den = 0;
  for (let i = 0; i < xs.length; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? 0 : num / den;
}
const mib = (b) => (b / MIB).toFixed(2) + ' MiB';

let stopping = false;
let wake = null;
for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
  process.on(sig, () => {
    console.error(`bench-tab: ${sig}: stopping and cleaning up`);
    stopping = true;
    if (wake) wake();
  });
}
// A sleep that a signal cuts short.
const pause = (ms) => new Promise((resolve) => {
  const t = setTimeout(resolve, ms);
  wake = () => { clearTimeout(t); resolve(); };
});

const ids = [];
let server = null;
let ctx = null;
let userData = null;
const samples = [];
try {
  run('git', ['init', '-q']);
  run('git', ['-c', 'user.name=b', '-c', 'user.email=b@example.com', 'commit', '-q', '--allow-empty', '-m', 'init']);
  console.log(`baton: ${run(BATON, ['--version']).trim()}`);
  console.log(`chromium: ${run(process.env.CHROMIUM || '/usr/bin/chromium', ['--version']).trim()}`);
  console.log(`machine: ${os.cpus().length} CPUs, ${os.type()} ${os.release()}; load average: ${os.loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  console.log(`settings: N_PEERS=${N_PEERS} DURATION_S=${DURATION_S} SAMPLE_S=${SAMPLE_S} WARMUP_S=${WARMUP_S}`);

  fs.writeFileSync(path.join(tmp, 'stream'), ''); // the peers stream from their start
  // The watched peer (the last, newest, listed first) prints more lines than
  // the page keeps at its start, so the page holds MAX_LINES from the first
  // sample on (at 10 lines a second the bound would be reached only after the
  // warm-up).
  for (let i = 1; i <= N_PEERS; i++) {
    const task = i === N_PEERS ? `peer ${i} backlog:${MAX_LINES + 500}` : `peer ${i}`;
    ids.push(JSON.parse(run(BATON, ['run', '--async', '--agent', 'codex', task])).job_id);
  }
  const watched = ids[ids.length - 1]; // the newest: listed first

  server = spawn(BATON, ['serve'], { cwd: repo, env, stdio: ['ignore', 'pipe', 'inherit'] });
  const first = await new Promise((resolve, reject) => {
    readline.createInterface({ input: server.stdout }).once('line', resolve);
    server.once('exit', (c) => reject(new Error(`baton serve exited ${c}`)));
  });
  const url = JSON.parse(first).url;

  userData = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-bench-chromium-'));
  ctx = await chromium.launchPersistentContext(userData, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  await page.goto(url);
  await page.locator('#conn', { hasText: 'live' }).waitFor({ timeout: 15000 });
  await page.locator('#jobs td.status.s-running').nth(N_PEERS - 1).waitFor({ timeout: 60000 });
  // A real pointer click while 50 peers stream: rows are updated in place,
  // so the row pressed is the row released.
  await page.locator(`#jobs tr[data-id="${watched}"]`).click();
  await page.locator('#d-log div', { hasText: '$ step' }).first().waitFor({ timeout: 15000 });
  console.log(`page: fleet of ${N_PEERS} running peers, detail of ${watched} following its transcript`);

  const cdp = await ctx.newCDPSession(page);
  await cdp.send('Performance.enable');
  const t0 = Date.now();
  console.log('   t(s)   heap(MiB)  nodes  listeners  lines  renderer-rss(MiB)  renderer-cpu  newest line');
  for (let k = 0; ; k++) {
    const due = t0 + k * SAMPLE_S * 1000;
    if (due > t0 + DURATION_S * 1000 || stopping) break;
    await pause(Math.max(0, due - Date.now()));
    if (stopping) break;
    if (server.exitCode !== null) fail(`baton serve exited ${server.exitCode} during the run`);
    await cdp.send('HeapProfiler.collectGarbage');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
    const log = await page.evaluate(() => {
      const l = document.getElementById('d-log');
      return { lines: l.childElementCount, newest: l.lastElementChild ? l.lastElementChild.textContent : '' };
    });
    const pids = renderers();
    const busiest = pids.reduce((a, b) => (a == null || cpuTicks(b) > cpuTicks(a) ? b : a), null);
    const rss = busiest == null ? null : rssKiB(busiest);
    const s = {
      t: (Date.now() - t0) / 1000,
      heap: m.JSHeapUsedSize,
      nodes: m.Nodes,
      listeners: m.JSEventListeners,
      lines: log.lines,
      rss: rss == null ? null : rss * 1024,
      renderers: pids.length,
      pid: busiest,
      ticks: busiest == null ? -1 : cpuTicks(busiest),
      cpu: null, // % of one core since the previous sample
    };
    const prev = samples[samples.length - 1];
    if (prev && prev.pid === s.pid && s.ticks >= 0 && prev.ticks >= 0) {
      s.cpu = (100 * (s.ticks - prev.ticks)) / TCK / (s.t - prev.t);
    }
    samples.push(s);
    console.log(`${s.t.toFixed(0).padStart(7)} ${(s.heap / MIB).toFixed(2).padStart(11)} ${String(s.nodes).padStart(6)}`
      + ` ${String(s.listeners).padStart(10)} ${String(s.lines).padStart(6)}`
      + ` ${(s.rss == null ? '?' : (s.rss / MIB).toFixed(1) + (s.renderers > 1 ? ` (of ${s.renderers})` : '')).padStart(18)}`
      + ` ${(s.cpu == null ? '-' : s.cpu.toFixed(1) + ' %').padStart(13)}  ${log.newest}`);
  }

  // --- summary
  const post = samples.filter((s) => s.t >= WARMUP_S);
  if (post.length < 2) {
    fail(`only ${post.length} samples after the ${WARMUP_S} s warm-up: ${stopping ? 'stopped early' : 'make DURATION_S longer'}`);
  }
  const end = post[post.length - 1].t;
  const tail = post.filter((s) => s.t > end - 600);
  const firstHeap = post[0].heap;
  const tailMean = mean(tail.map((s) => s.heap));
  const kibPerMin = slope(post.map((s) => s.t / 60), post.map((s) => s.heap / 1024));
  const maxLines = Math.max(...samples.map((s) => s.lines));
  const row = (label, f, fmt) => console.log(`${label.padEnd(22)} first ${fmt(f(post[0]))}, max ${fmt(Math.max(...post.map(f)))}, last ${fmt(f(post[post.length - 1]))}`);
  console.log(`== summary over ${post.length} samples after a ${WARMUP_S} s warm-up (t=${post[0].t.toFixed(0)}..${end.toFixed(0)} s)`);
  row('JS heap (after GC):', (s) => s.heap, mib);
  console.log(`${'heap slope:'.padEnd(22)} ${kibPerMin >= 0 ? '+' : ''}${kibPerMin.toFixed(1)} KiB/min (least squares)`);
  console.log(`${'heap, last 10 min:'.padEnd(22)} mean ${mib(tailMean)} over ${tail.length} samples (${(100 * (tailMean - firstHeap) / firstHeap).toFixed(1)} % vs first)`);
  row('DOM nodes:', (s) => s.nodes, String);
  row('event listeners:', (s) => s.listeners, String);
  if (post.every((s) => s.rss != null)) row('renderer RSS:', (s) => s.rss, mib);
  else console.log(`${'renderer RSS:'.padEnd(22)} not found in /proc`);
  const cpus = post.filter((s) => s.cpu != null).map((s) => s.cpu);
  if (cpus.length) console.log(`${'renderer CPU:'.padEnd(22)} mean ${mean(cpus).toFixed(1)} %, max ${Math.max(...cpus).toFixed(1)} % of one core`);
  console.log(`${'transcript lines:'.padEnd(22)} max ${maxLines} (bound ${MAX_LINES})`);
  const allowed = Math.max(0.1 * firstHeap, MIB);
  const flat = Math.abs(tailMean - firstHeap) <= allowed && maxLines <= MAX_LINES;
  console.log(`verdict: ${flat ? 'flat' : 'NOT flat'} (last-10-min heap mean within ${mib(allowed)} of the first post-warm-up sample: `
    + `${Math.abs(tailMean - firstHeap) <= allowed ? 'yes' : 'no'}; transcript <= ${MAX_LINES} lines: ${maxLines <= MAX_LINES ? 'yes' : 'no'})`);
  if (!flat) process.exitCode = 2;
} catch (e) {
  if (!process.exitCode) {
    console.error(e);
    process.exitCode = 1;
  }
} finally {
  // Release the peers first: they end on their own within 100 ms.
  fs.writeFileSync(path.join(tmp, 'release-all'), '');
  if (ctx) await ctx.close().catch(() => {});
  if (server && server.exitCode === null) {
    server.kill('SIGTERM');
    await Promise.race([new Promise((r) => server.once('exit', r)), sleep(5000)]);
  }
  for (const id of ids) spawnSync(BATON, ['wait', id, '--timeout', '30s'], { cwd: repo, env, stdio: 'ignore' });
  if (userData) fs.rmSync(userData, { recursive: true, force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
}
