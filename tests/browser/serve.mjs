// The browser test of `baton serve` (`make e2e-browser`): Debian's headless
// Chromium, driven over the DevTools protocol by a pinned playwright-core,
// opens the page with its token (no cookie: a session kept in the page's
// sessionStorage), checks that a page of another local port receives nothing
// that works against the server, that a tab without the token gets nothing,
// that the clocks read true in a tab opened late and move without events,
// and that two servers side by side both keep working; sees a fake job
// appear and finish (and what it spent in the usage panel), cancels
// a running job (accepting the confirm), continues an ended one, keeps a
// long live transcript within its 2,000-line bound, and saves a screenshot;
// then a council (the council fake as codex, claude and pi, every member held
// in its proposal) shows as a group of its members' runs, one run's
// transcript opens, and the council is cancelled. Every process here talks
// to 127.0.0.1 only.
//
// Environment: BATON (the binary), BATON_E2E_BROWSER_DIR (where
// scripts/e2e-browser-install.sh put playwright-core), BATON_E2E_BROWSER_OUT
// (the artifact directory), CHROMIUM (default /usr/bin/chromium).
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { fileURLToPath } from 'node:url';

const need = (k) => process.env[k] || fail(`${k} is not set (run \`make e2e-browser\`)`);
function fail(msg) {
  console.error(`e2e-browser: FAIL: ${msg}`);
  process.exit(1);
}
const say = (msg) => console.error(`e2e-browser: ${msg}`);

const BATON = need('BATON');
const OUT = need('BATON_E2E_BROWSER_OUT');
const require = createRequire(path.join(need('BATON_E2E_BROWSER_DIR'), 'package.json'));
const { chromium } = require('playwright-core');

// --- a project with a fake codex on PATH -------------------------------------
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-browser-'));
const bin = path.join(tmp, 'bin');
const work = path.join(tmp, 'work');
const work2 = path.join(tmp, 'work2'); // the second server's project
const fake = path.join(tmp, 'fake');
for (const d of [bin, work, work2, fake]) fs.mkdirSync(d, { recursive: true });
// The fake peer: it records its prompt, starts a command, waits for the gate
// its prompt names (`gate:NAME`), then answers — with markup that must stay text.
fs.writeFileSync(path.join(bin, 'codex'), `#!/bin/sh
set -eu
p=$(cat)
printf '%s\\n' "$p" >> "$FAKE_DIR/prompts"
printf '%s\\n' '{"type":"thread.started","thread_id":"t-browser"}'
printf '%s\\n' '{"type":"item.started","item":{"type":"command_execution","command":"make test"}}'
g=$(printf '%s' "$p" | grep -o 'gate:[a-z]*' | head -n 1 | cut -d: -f2 || true)
if [ -n "$g" ]; then while [ ! -e "$FAKE_DIR/$g" ]; do sleep 0.05; done; fi
n=$(printf '%s' "$p" | grep -o 'lines:[0-9]*' | head -n 1 | cut -d: -f2 || true)
if [ -n "$n" ]; then
  seq "$n" | awk '{ printf "{\\"type\\":\\"item.started\\",\\"item\\":{\\"type\\":\\"command_execution\\",\\"command\\":\\"line %d\\"}}\\n", $1 }'
fi
printf '%s\\n' '{"type":"item.completed","item":{"type":"agent_message","text":"Done. <img src=x onerror=window.pwned=1> stays text"}}'
printf '%s\\n' '{"type":"turn.completed","usage":{"input_tokens":1200,"output_tokens":345}}'
`, { mode: 0o755 });
const env = {
  ...process.env,
  PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
  FAKE_DIR: fake,
  BATON_STATE_DIR: path.join(tmp, 'state'),
  BATON_CONFIG: path.join(tmp, 'no-config.toml'),
};
for (const k of ['BATON_AGENT', 'BATON_MODEL', 'BATON_ACCESS', 'BATON_DEPTH']) delete env[k];

function batonIn(cwd, ...args) {
  const r = spawnSync(BATON, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) fail(`baton ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}
const baton = (...args) => batonIn(work, ...args);
const startJob = (task, cwd = work) => batonIn(cwd, 'run', '--async', '--agent', 'codex', task).job_id;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// Seconds from the page's "12s", "1m05s" or "2h03m" (an "ago" after it is ignored).
function seconds(text) {
  const m = /^(?:(\d+)h(\d+)m|(?:(\d+)m)?(\d+)s)/.exec(text.trim());
  if (!m) fail(`not a duration: ${text}`);
  return m[1] ? m[1] * 3600 + m[2] * 60 : (Number(m[3]) || 0) * 60 + Number(m[4]);
}

// --- the servers ---------------------------------------------------------------
const servers = [];
async function startServer(cwd) {
  const srv = spawn(BATON, ['serve'], { cwd, env, stdio: ['ignore', 'pipe', 'inherit'] });
  servers.push(srv);
  const line = await new Promise((resolve, reject) => {
    const rl = readline.createInterface({ input: srv.stdout });
    rl.once('line', resolve);
    srv.once('exit', (c) => reject(new Error(`baton serve exited ${c}`)));
  }).catch((e) => fail(e.message));
  const s = JSON.parse(line);
  if (!/^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/.test(s.url)) fail(`url: ${s.url}`);
  s.token = s.url.split('#token=')[1];
  return s;
}
// `fail` exits at once: the servers go with it.
process.on('exit', () => { for (const srv of servers) srv.kill('SIGTERM'); });
const started = await startServer(work);
say(`server on port ${started.port}`);

// One request to baton's server from outside any browser, with these headers.
function raw(port, method, p, headers, body) {
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, method, path: p, headers }, (res) => {
      let text = '';
      res.on('data', (c) => { text += c; });
      res.on('end', () => resolve({ status: res.statusCode, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

// Another local listener (a dev server, another user's process): it records
// every request the browser sends it.
const seen = [];
const other = http.createServer((req, res) => {
  seen.push({ url: req.url, headers: req.headers });
  if (req.url === '/') {
    res.writeHead(200, { 'Content-Type': 'text/html' });
    res.end('<!doctype html><title>other</title><script src="/other.js"></script><img src="/pixel.png">');
  } else if (req.url === '/other.js') {
    res.writeHead(200, { 'Content-Type': 'text/javascript' });
    res.end("fetch('/probe', { credentials: 'include' }).then(() => { document.title = 'probed'; });");
  } else {
    res.writeHead(200, { 'Content-Type': 'text/plain' });
    res.end('ok');
  }
});
await new Promise((r) => other.listen(0, '127.0.0.1', r));
const otherPort = other.address().port;

const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-chromium-'));
let ctx;
let page;
let ok = false;
try {
  ctx = await chromium.launchPersistentContext(userData, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = ctx.pages()[0] || await ctx.newPage();
  const problems = [];
  const watchPage = (p) => {
    p.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
    p.on('pageerror', (e) => problems.push(String(e)));
  };
  watchPage(page);
  // Nothing but 127.0.0.1, from any tab: any other request fails the test.
  await ctx.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname !== '127.0.0.1') {
      problems.push(`request to ${u.href}`);
      return route.abort();
    }
    return route.continue();
  });
  const rowIn = (p, id) => p.locator(`#jobs tr[data-id="${id}"]`);
  const statusIn = (p, id, s) => rowIn(p, id).locator(`td.status.s-${s}`).waitFor({ timeout: 20000 });
  const row = (id) => rowIn(page, id);
  const status = (id, s) => statusIn(page, id, s);
  const live = (p) => p.locator('#conn', { hasText: 'live' }).waitFor({ timeout: 10000 });
  const sessionOf = (p) => p.evaluate(() => sessionStorage.getItem('baton-session'));

  await page.goto(started.url);
  await live(page);
  if (new URL(page.url()).hash !== '') fail(`the token stayed in the address bar: ${page.url()}`);
  const cookies = await ctx.cookies();
  if (cookies.length !== 0) fail(`the page left cookies, which every port of 127.0.0.1 would get: ${JSON.stringify(cookies)}`);
  if (await page.evaluate(() => document.cookie) !== '') fail('document.cookie is not empty');
  const session = await sessionOf(page);
  if (!/^[0-9a-f]{64}$/.test(session || '') || session === started.token) fail(`the session kept by the page: ${session}`);
  say('token exchanged for a session in this origin\'s sessionStorage, no cookie; fragment removed');

  // A job appears, runs, and finishes.
  const a = startJob('<img src=x onerror=window.pwned=1> say hi gate:alpha');
  await status(a, 'running');
  await row(a).click();
  await page.locator('#d-log div', { hasText: '$ make test' }).waitFor({ timeout: 10000 });
  fs.writeFileSync(path.join(fake, 'alpha'), '');
  await status(a, 'success');
  const aEndedBy = Date.now(); // it ended before this
  await page.locator('#d-log div', { hasText: 'stays text' }).waitFor({ timeout: 10000 });
  await page.locator('#d-log .k-end').waitFor({ timeout: 10000 });
  say(`job ${a} appeared, streamed and finished`);

  // What was spent: the panel shows `baton usage --by agent`, refreshed when
  // a job ends, with the finished job's tokens under its agent.
  await page.locator('#usage').waitFor({ state: 'visible', timeout: 10000 });
  const spent = page.locator('#u-rows tr', { hasText: 'codex' });
  await spent.waitFor({ timeout: 10000 });
  const cells = await spent.locator('td').allTextContents();
  if (cells[0] !== 'codex' || cells[1] !== '1' || cells[2] !== '1' || cells[5] !== '1200 / 345') {
    fail(`the usage panel's codex row: ${JSON.stringify(cells)}`);
  }
  const totalText = await page.textContent('#u-total');
  if (!/^1 runs, 1 calls, \$0\.00 \(\+1 calls without a known price\) in 1 project$/.test(totalText)) {
    fail(`the usage panel's total: ${totalText}`);
  }
  say(`the usage panel shows ${cells.join(' | ')} (${totalText})`);

  // A transcript longer than the page keeps: every line arrives live (the
  // detail is open before the gate), the page trims to its bound (2,000 lines,
  // so memory stays flat however long a job streams) and shows the newest.
  const LINES = 2500;
  // Rows are updated in place, not rebuilt per frame: a click whose press
  // and release land on two different row elements would be lost.
  const kept = await row(a).elementHandle();
  const long = startJob(`many lines gate:bulk lines:${LINES}`);
  await status(long, 'running');
  await row(long).click();
  await page.locator('#d-log div', { hasText: '$ make test' }).waitFor({ timeout: 10000 });
  const bulk = Date.now();
  fs.writeFileSync(path.join(fake, 'bulk'), '');
  await page.locator('#d-log .k-end').waitFor({ timeout: 60000 });
  const shown = await page.evaluate(() => [...document.querySelectorAll('#d-log div')].map((d) => d.textContent));
  if (shown.length > 2000) fail(`the transcript holds ${shown.length} lines, more than the page's bound of 2,000`);
  if (!shown.includes(`$ line ${LINES}`)) fail(`the newest line is missing; the last ones: ${shown.slice(-3).join(' | ')}`);
  if (shown.includes('$ line 1') || shown.includes('$ make test')) fail('the oldest lines were not dropped');
  say(`job ${long}: ${LINES + 2} live lines in ${Date.now() - bulk} ms, the page keeps the newest ${shown.length}`);
  if (!(await kept.evaluate((e) => e.isConnected))) fail(`job ${a}'s row was replaced while another job streamed`);
  say(`job ${a}'s row stayed the same element through ${LINES} updates of the fleet`);

  // Cancel a running job (the confirm is accepted).
  const b = startJob('a long one gate:never');
  await status(b, 'running');
  await row(b).click();
  let confirmed = '';
  page.once('dialog', (d) => { confirmed = d.message(); d.accept(); });
  await page.locator('#d-cancel').click();
  await status(b, 'cancelled');
  if (!confirmed.includes(b)) fail(`no confirm before cancelling: ${confirmed}`);
  say(`job ${b} cancelled after the confirm`);

  // Continue the ended job.
  await row(a).click();
  await page.locator('#d-continue').waitFor({ state: 'visible', timeout: 10000 });
  await page.fill('#d-prompt', 'now the tests too');
  await page.click('#d-send');
  await page.locator('#d-msg', { hasText: 'started job' }).waitFor({ timeout: 10000 });
  const next = (await page.textContent('#d-msg')).replace('started job ', '').trim();
  await status(next, 'success');
  const prompts = fs.readFileSync(path.join(fake, 'prompts'), 'utf8');
  if (!prompts.includes('now the tests too')) fail(`the follow-up prompt never reached the peer: ${prompts}`);
  say(`job ${a} continued as ${next}`);

  // --- another local port gets nothing that works against baton -----------
  const held = startJob('held long gate:held');
  const heldBy = Date.now(); // it was created before this
  await status(held, 'running');
  const p2 = await ctx.newPage();
  // Its console reports baton's 401 to its cross-port fetch: that is the point.
  p2.on('pageerror', (e) => problems.push(String(e)));
  // Cross-port requests from that page to baton go out as the browser makes them.
  const toBaton = [];
  p2.on('request', (r) => { if (new URL(r.url()).port === String(started.port)) toBaton.push(r); });
  await p2.goto(`http://127.0.0.1:${otherPort}/`);
  await p2.waitForFunction(() => document.title === 'probed', null, { timeout: 10000 });
  await p2.evaluate((u) => fetch(u, { credentials: 'include', mode: 'no-cors' }).catch(() => {}),
    `http://127.0.0.1:${started.port}/api/jobs`);
  if (await p2.evaluate(() => document.cookie + sessionStorage.length) !== '0') fail('the other port\'s page sees storage');
  if (seen.length < 3) fail(`the other listener saw ${seen.length} requests`);
  const all = JSON.stringify(seen);
  if (all.includes(session) || all.includes(started.token)) fail(`the other port received the session or the token: ${all}`);
  for (const r of seen) {
    if (r.headers.cookie || r.headers.authorization) fail(`the other port received credentials: ${JSON.stringify(r)}`);
  }
  for (const r of toBaton) {
    const h = await r.allHeaders();
    if (h.cookie || h.authorization) fail(`a page of another port sent baton credentials: ${JSON.stringify(h)}`);
    const res = await r.response();
    if (res && res.status() !== 401) fail(`baton answered another port's page ${res.status()}`);
  }
  // Replaying everything the other port received, with Host and Origin forged
  // as a non-browser client can: refused.
  for (const r of seen) {
    const h = { ...r.headers };
    for (const k of ['host', 'origin', 'content-length', 'connection']) delete h[k];
    Object.assign(h, { host: `127.0.0.1:${started.port}`, origin: `http://127.0.0.1:${started.port}` });
    const list = await raw(started.port, 'GET', '/api/jobs', h);
    if (list.status !== 401) fail(`replayed ${r.url}'s headers read the jobs: ${list.status}`);
    const cancel = await raw(started.port, 'POST', `/api/jobs/${held}/cancel`,
      { ...h, 'content-type': 'application/json' }, '{}');
    if (cancel.status !== 401) fail(`replayed ${r.url}'s headers reached cancel: ${cancel.status} ${cancel.text}`);
  }
  if (baton('status', held).status !== 'running') fail('a replayed request cancelled the job');
  await p2.close();
  say(`another port (${otherPort}) got ${seen.length} requests without a credential; replayed against baton: 401`);

  // --- a new tab needs the URL with its token; a reload keeps the session ----
  const p3 = await ctx.newPage();
  watchPage(p3);
  await p3.goto(`http://127.0.0.1:${started.port}/`);
  await p3.locator('#conn', { hasText: 'no session in this tab' }).waitFor({ timeout: 10000 });
  if (await rowIn(p3, held).count() !== 0) fail('a tab without the token shows jobs');
  say('a new tab without the token gets no session and shows nothing');

  // --- the clocks: true in a tab opened late, moving without events --------
  // `held` has been silent since it printed its first command: a tab opened
  // now must show the time since it started, not since its last change.
  await sleep(Math.max(0, 5000 - (Date.now() - heldBy)));
  // The URL with its token pasted into this tab: only its fragment changes
  // (no reload), and the page trades the token then.
  await p3.goto(started.url);
  await live(p3);
  if (new URL(p3.url()).hash !== '') fail(`the token stayed in the address bar: ${p3.url()}`);
  await statusIn(p3, held, 'running');
  const elapsedCell = (id) => rowIn(p3, id).locator('td.t-elapsed').textContent();
  const ageCell = (id) => rowIn(p3, id).locator('td.t-age').textContent();
  const e1 = seconds(await elapsedCell(held));
  const least = Math.floor((Date.now() - heldBy) / 1000) - 1;
  if (e1 < least) fail(`a job running for ${least + 1}s shows ${e1}s in a tab opened late`);
  const ageA = seconds(await ageCell(a));
  const leastA = Math.floor((Date.now() - aEndedBy) / 1000) - 1;
  if (ageA < leastA) fail(`a job ended over ${leastA + 1}s ago shows "${await ageCell(a)}"`);
  const at1 = await p3.evaluate((id) => [...jobs.values()].find((j) => j.view.job_id === id).at, held);
  // The page's clock ticks each second; a loaded machine may delay a tick.
  const moved = await p3.waitForFunction(([id, least]) => {
    const t = document.querySelector(`#jobs tr[data-id="${id}"] td.t-elapsed`).textContent;
    const m = /^(?:(\d+)m)?(\d+)s$/.exec(t);
    return m && (Number(m[1]) || 0) * 60 + Number(m[2]) >= least && t;
  }, [held, e1 + 2], { timeout: 10000 }).then((h) => h.jsonValue(), () => null);
  const e2 = seconds(moved || await elapsedCell(held));
  const at2 = await p3.evaluate((id) => [...jobs.values()].find((j) => j.view.job_id === id).at, held);
  if (at1 !== at2) fail('an event arrived for the silent job: the clock test proves nothing');
  if (!moved) fail(`the elapsed time did not move without an event: ${e1}s, then ${e2}s 10 s later`);
  say(`clocks: ${held} shows ${e1}s then ${e2}s (no event in between); ${a} ended "${await ageCell(a)}"`);
  await p3.reload();
  await live(p3);
  await statusIn(p3, held, 'running');
  say('a reload keeps the session (sessionStorage of this tab)');
  await p3.close();
  fs.writeFileSync(path.join(fake, 'held'), '');
  await status(held, 'success');

  // --- two servers side by side: both pages keep working ---------------------
  const second = await startServer(work2);
  const pB = await ctx.newPage();
  watchPage(pB);
  await pB.goto(second.url);
  await live(pB);
  if ((await ctx.cookies()).length !== 0) fail('the second server left a cookie');
  const inA = startJob('in the first project gate:ga');
  const inB = startJob('in the second project gate:gb', work2);
  await status(inA, 'running');
  await statusIn(pB, inB, 'running');
  if (await row(inB).count() || await rowIn(pB, inA).count()) fail('a page shows the other server\'s job');
  // Opening a transcript is a new request: it carries each page's own session.
  await row(inA).click();
  await page.locator('#d-log div', { hasText: '$ make test' }).waitFor({ timeout: 10000 });
  await rowIn(pB, inB).click();
  await pB.locator('#d-log div', { hasText: '$ make test' }).waitFor({ timeout: 10000 });
  const listed = async (p) => p.evaluate(async () => {
    const r = await fetch('/api/jobs', { headers: { Authorization: 'Bearer ' + sessionStorage.getItem('baton-session') } });
    return r.ok ? (await r.json()).jobs.map((j) => j.job_id) : r.status;
  });
  const la = await listed(page);
  const lb = await listed(pB);
  if (!Array.isArray(la) || !la.includes(inA) || la.includes(inB)) fail(`the first page lists ${JSON.stringify(la)}`);
  if (!Array.isArray(lb) || !lb.includes(inB) || lb.includes(inA)) fail(`the second page lists ${JSON.stringify(lb)}`);
  if (await sessionOf(page) === await sessionOf(pB)) fail('two servers gave one session');
  fs.writeFileSync(path.join(fake, 'ga'), '');
  fs.writeFileSync(path.join(fake, 'gb'), '');
  await status(inA, 'success');
  await statusIn(pB, inB, 'success');
  await page.locator('#d-log .k-end').waitFor({ timeout: 10000 });
  await pB.locator('#d-log .k-end').waitFor({ timeout: 10000 });
  await pB.close();
  say(`two servers (ports ${started.port} and ${second.port}): each page lists and streams its own jobs`);

  // A council: a header row and a row per member run; a run's transcript; cancel.
  const councilFake = fileURLToPath(new URL('../support/council_fake.py', import.meta.url));
  for (const a of ['codex', 'claude', 'pi']) {
    fs.rmSync(path.join(bin, a), { force: true });
    fs.copyFileSync(councilFake, path.join(bin, a));
    fs.chmodSync(path.join(bin, a), 0o755);
  }
  fs.mkdirSync(path.join(fake, 'council'), { recursive: true });
  fs.writeFileSync(path.join(fake, 'council', 'scenario.json'), JSON.stringify({
    agents: { '*': { proposal: [{ hang: true, progress: 'rg -n cache src' }] } },
  }));
  const council = baton('council', 'discuss', '--async', '--members', 'codex,claude,pi',
    '<img src=x onerror=window.pwned=1> where is the cache?').council_id;
  await status(council, 'running');
  const m0 = `${council}/proposing-m0`;
  await status(m0, 'running');
  for (const who of ['m1', 'm2']) await row(`${council}/proposing-${who}`).waitFor({ timeout: 20000 });
  await row(m0).click();
  await page.locator('#d-log div', { hasText: '$ rg -n cache src' }).waitFor({ timeout: 10000 });
  await row(council).click();
  await page.locator('#d-cancel').waitFor({ state: 'visible', timeout: 10000 });
  let asked = '';
  page.once('dialog', (d) => { asked = d.message(); d.accept(); });
  await page.locator('#d-cancel').click();
  await status(council, 'cancelled');
  await status(m0, 'cancelled');
  if (!asked.includes(council)) fail(`no confirm before cancelling the council: ${asked}`);
  say(`council ${council} shown as its runs, a run's transcript opened, the council cancelled`);

  // Agent text and task stayed text.
  if (await page.evaluate(() => window.pwned)) fail('markup from a job ran as HTML');
  if (await page.locator('#jobs img, #detail img').count() !== 0) fail('markup from a job became elements');
  if (problems.length) fail(`page problems: ${problems.join('; ')}`);

  await row(a).click();
  await page.locator('#d-log .k-end').waitFor({ timeout: 10000 });
  fs.mkdirSync(OUT, { recursive: true });
  const shot = path.join(OUT, 'serve.png');
  await page.screenshot({ path: shot, fullPage: true });
  say(`screenshot: ${shot}`);
  ok = true;
} catch (e) {
  console.error(e);
  if (page) {
    console.error(`e2e-browser: page message: ${await page.textContent('#d-msg').catch(() => '?')}`);
    fs.mkdirSync(OUT, { recursive: true });
    await page.screenshot({ path: path.join(OUT, 'serve-failed.png'), fullPage: true }).catch(() => {});
  }
} finally {
  if (ctx) await ctx.close().catch(() => {});
  for (const srv of servers) srv.kill('SIGTERM');
  other.close();
  fs.rmSync(userData, { recursive: true, force: true });
}
if (!ok) fail('see above');
// Kept when the test failed (above), to look at; removed when it passed.
fs.rmSync(tmp, { recursive: true, force: true });
say('PASS');
process.exit(0);
