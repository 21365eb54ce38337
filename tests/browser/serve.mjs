// The browser test of `baton serve` (`make e2e-browser`): Debian's headless
// Chromium, driven over the DevTools protocol by a pinned playwright-core,
// opens the page with its token, sees a fake job appear and finish, cancels
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
const fake = path.join(tmp, 'fake');
for (const d of [bin, work, fake]) fs.mkdirSync(d, { recursive: true });
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

function baton(...args) {
  const r = spawnSync(BATON, args, { cwd: work, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0) fail(`baton ${args.join(' ')} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}
const startJob = (task) => baton('run', '--async', '--agent', 'codex', task).job_id;

// --- the server ----------------------------------------------------------------
const server = spawn(BATON, ['serve'], { cwd: work, env, stdio: ['ignore', 'pipe', 'inherit'] });
const first = await new Promise((resolve, reject) => {
  const rl = readline.createInterface({ input: server.stdout });
  rl.once('line', resolve);
  server.once('exit', (c) => reject(new Error(`baton serve exited ${c}`)));
}).catch((e) => fail(e.message));
const started = JSON.parse(first);
if (!/^http:\/\/127\.0\.0\.1:\d+\/#token=[0-9a-f]{64}$/.test(started.url)) fail(`url: ${started.url}`);
say(`server on port ${started.port}`);

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
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  // Nothing but our server: any other request fails the test.
  await page.route('**/*', (route) => {
    const u = new URL(route.request().url());
    if (u.hostname !== '127.0.0.1') {
      problems.push(`request to ${u.href}`);
      return route.abort();
    }
    return route.continue();
  });
  const row = (id) => page.locator(`#jobs tr[data-id="${id}"]`);
  const status = (id, s) => row(id).locator(`td.status.s-${s}`).waitFor({ timeout: 20000 });

  await page.goto(started.url);
  await page.locator('#conn', { hasText: 'live' }).waitFor({ timeout: 10000 });
  if (new URL(page.url()).hash !== '') fail(`the token stayed in the address bar: ${page.url()}`);
  const cookies = await ctx.cookies();
  const c = cookies.find((k) => k.name === 'baton_session');
  if (!c || !c.httpOnly || c.sameSite !== 'Strict') fail(`session cookie: ${JSON.stringify(cookies)}`);
  if (await page.evaluate(() => document.cookie) !== '') fail('the page script can read the cookie');
  say('token exchanged for an HttpOnly, SameSite=Strict cookie; fragment removed');

  // A job appears, runs, and finishes.
  const a = startJob('<img src=x onerror=window.pwned=1> say hi gate:alpha');
  await status(a, 'running');
  await row(a).click();
  await page.locator('#d-log div', { hasText: '$ make test' }).waitFor({ timeout: 10000 });
  fs.writeFileSync(path.join(fake, 'alpha'), '');
  await status(a, 'success');
  await page.locator('#d-log div', { hasText: 'stays text' }).waitFor({ timeout: 10000 });
  await page.locator('#d-log .k-end').waitFor({ timeout: 10000 });
  say(`job ${a} appeared, streamed and finished`);

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
  server.kill('SIGTERM');
  fs.rmSync(userData, { recursive: true, force: true });
}
if (!ok) fail('see above');
say('PASS');
process.exit(0);
