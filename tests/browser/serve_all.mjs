// The browser test of `baton serve --all` (`make e2e-browser`): Debian's
// headless Chromium, driven by the pinned playwright-core, opens the page of
// one server over THREE projects — alpha (an ended job), beta (a running
// job) and gamma (an ended job, then the project deleted) — and checks the
// rows of both live projects with their repository column, gamma listed as
// gone and none of its work shown, the repository filter, a cancel of
// beta's job from the page (the server acting on beta's store), and the
// usage panel's repository filter (all, one project, the deleted one).
// Every process here talks to 127.0.0.1 only.
//
// Environment: as tests/browser/serve.mjs.
import { spawn, spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';

const need = (k) => process.env[k] || fail(`${k} is not set (run \`make e2e-browser\`)`);
function fail(msg) {
  console.error(`e2e-browser (serve --all): FAIL: ${msg}`);
  process.exit(1);
}
const say = (msg) => console.error(`e2e-browser (serve --all): ${msg}`);

const BATON = need('BATON');
const OUT = need('BATON_E2E_BROWSER_OUT');
const require = createRequire(path.join(need('BATON_E2E_BROWSER_DIR'), 'package.json'));
const { chromium } = require('playwright-core');

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-browser-all-'));
const bin = path.join(tmp, 'bin');
const fake = path.join(tmp, 'fake');
const dirs = { alpha: path.join(tmp, 'alpha'), beta: path.join(tmp, 'beta'), gamma: path.join(tmp, 'gamma') };
for (const d of [bin, fake, ...Object.values(dirs)]) fs.mkdirSync(d, { recursive: true });
// The fake peer: a command, then (if its prompt names `gate:NAME`) a wait
// for that file, then an answer and its usage.
fs.writeFileSync(path.join(bin, 'codex'), `#!/bin/sh
set -eu
p=$(cat)
printf '%s\\n' '{"type":"thread.started","thread_id":"t-all"}'
printf '%s\\n' '{"type":"item.started","item":{"type":"command_execution","command":"make test"}}'
g=$(printf '%s' "$p" | grep -o 'gate:[a-z]*' | head -n 1 | cut -d: -f2 || true)
if [ -n "$g" ]; then while [ ! -e "$FAKE_DIR/$g" ]; do sleep 0.05; done; fi
printf '%s\\n' '{"type":"item.completed","item":{"type":"agent_message","text":"done"}}'
printf '%s\\n' '{"type":"turn.completed","usage":{"input_tokens":1000,"output_tokens":100}}'
`, { mode: 0o755 });
const env = {
  ...process.env,
  PATH: `${bin}:/usr/local/bin:/usr/bin:/bin`,
  FAKE_DIR: fake,
  BATON_STATE_DIR: path.join(tmp, 'state'),
  BATON_CONFIG: path.join(tmp, 'no-config.toml'),
};
for (const k of ['BATON_AGENT', 'BATON_MODEL', 'BATON_ACCESS', 'BATON_DEPTH']) delete env[k];

// `baton ARGS` in `cwd`: its JSON answer (`status` of a cancelled job exits 130).
function batonIn(cwd, ...args) {
  const r = spawnSync(BATON, args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  if (r.status !== 0 && !(args[0] === 'status' && r.status === 130)) fail(`baton ${args.join(' ')} in ${cwd} exited ${r.status}: ${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}
const startJob = (cwd, task) => batonIn(cwd, 'run', '--async', '--agent', 'codex', task).job_id;

const done = startJob(dirs.alpha, 'alpha work');
batonIn(dirs.alpha, 'wait', done);
const running = startJob(dirs.beta, 'beta work gate:never');
const old = startJob(dirs.gamma, 'gamma work');
batonIn(dirs.gamma, 'wait', old);
fs.rmSync(dirs.gamma, { recursive: true });
say(`alpha ${done} ended, beta ${running} running, gamma ${old} ended and gamma deleted`);

const srv = spawn(BATON, ['serve', '--all'], { cwd: tmp, env, stdio: ['ignore', 'pipe', 'inherit'] });
process.on('exit', () => srv.kill('SIGTERM'));
const line = await new Promise((resolve, reject) => {
  readline.createInterface({ input: srv.stdout }).once('line', resolve);
  srv.once('exit', (c) => reject(new Error(`baton serve --all exited ${c}`)));
}).catch((e) => fail(e.message));
const started = JSON.parse(line);

const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-chromium-all-'));
let ctx;
let ok = false;
try {
  ctx = await chromium.launchPersistentContext(userData, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  await ctx.route('**/*', (route) => {
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

  // The rows of both live projects, each with its repository; none of gamma's.
  await status(done, 'success');
  await status(running, 'running');
  if (!await page.locator('thead th.repo-col').isVisible()) fail('no repository column under --all');
  const repoCell = async (id) => (await row(id).locator('td.repo-col').textContent()).trim();
  if (await repoCell(done) !== 'alpha' || await repoCell(running) !== 'beta') {
    fail(`repository column: ${await repoCell(done)} / ${await repoCell(running)}`);
  }
  if (await row(old).count() !== 0) fail('a deleted project\'s job is shown');
  const gone = await page.locator('#gone').textContent();
  if (!await page.locator('#gone').isVisible() || !gone.includes(dirs.gamma)) fail(`gamma is not shown as gone: ${gone}`);
  const choices = await page.locator('#repo-filter option').allTextContents();
  if (choices.length !== 4 || !choices.some((c) => c.includes('gamma') && c.includes('root gone'))) {
    fail(`the filter's choices: ${JSON.stringify(choices)}`);
  }
  say(`rows with their repository; gamma listed as gone (${gone.trim()})`);

  // The filter: beta only, then alpha only, then all again.
  const keyOf = async (name) => page.evaluate((n) => [...document.querySelectorAll('#repo-filter option')]
    .find((o) => o.textContent.endsWith('/' + n)).value, name);
  await page.selectOption('#repo-filter', await keyOf('beta'));
  await row(done).waitFor({ state: 'detached', timeout: 5000 });
  if (await row(running).count() !== 1) fail('beta\'s job left with the beta filter');
  await page.selectOption('#repo-filter', await keyOf('alpha'));
  await row(running).waitFor({ state: 'detached', timeout: 5000 });
  await row(done).waitFor({ timeout: 5000 });
  await page.selectOption('#repo-filter', '');
  await row(running).waitFor({ timeout: 5000 });
  say('the repository filter shows one project, then all');

  // The usage panel's filter: every project with a ledger (alpha and
  // gamma: beta's job still runs), one, and the deleted one.
  const total = () => page.locator('#u-total').textContent();
  const totalIs = async (re) => {
    for (let i = 0; i < 100 && !re.test(await total()); i++) await sleep(100);
    if (!re.test(await total())) fail(`usage total ${await total()} is not ${re}`);
  };
  await page.locator('#usage').waitFor({ state: 'visible', timeout: 10000 });
  await totalIs(/^2 runs, .* in 2 projects$/);
  await page.selectOption('#u-repo', await keyOf('alpha'));
  await totalIs(/^1 runs, .* in 1 project$/);
  const alphaRow = await page.locator('#u-rows tr').first().locator('td').allTextContents();
  if (alphaRow[0] !== 'codex' || alphaRow[5] !== '1000 / 100') fail(`alpha's usage: ${JSON.stringify(alphaRow)}`);
  const gammaKey = await page.evaluate(() => [...document.querySelectorAll('#u-repo option')]
    .find((o) => o.textContent.includes('root gone')).value);
  await page.selectOption('#u-repo', gammaKey);
  await totalIs(/^1 runs, .* in 1 project$/);
  await page.selectOption('#u-repo', '');
  await totalIs(/^2 runs, .* in 2 projects$/);
  say('the usage panel: all projects, alpha only, gamma (deleted) only');

  // Cancel beta's job from the page: beta's store acts.
  page.on('dialog', (d) => d.accept());
  await row(running).click();
  await page.locator('#d-log div', { hasText: '$ make test' }).waitFor({ timeout: 10000 });
  await page.click('#d-cancel');
  await status(running, 'cancelled');
  const st = batonIn(dirs.beta, 'status', running);
  if (st.status !== 'cancelled') fail(`beta's job after the page's cancel: ${st.status}`);
  say(`cancelled beta's job ${running} from the page`);

  await page.screenshot({ path: path.join(OUT, 'serve-all.png'), fullPage: true });
  if (problems.length) fail(`the page reported: ${problems.join('; ')}`);
  ok = true;
} catch (e) {
  fail(e.stack || String(e));
} finally {
  if (ctx) await ctx.close().catch(() => {});
  // The server's piped stdout keeps node alive until it is gone: stop it
  // here, not only on 'exit' (which never came, so `make e2e-browser` hung).
  srv.kill('SIGTERM');
  fs.rmSync(userData, { recursive: true, force: true });
}
if (!ok) fail('see above');
fs.rmSync(tmp, { recursive: true, force: true });
say('PASS');
process.exit(0);

function sleep(ms) {
  return new Promise((r) => setTimeout(r, ms));
}
