// The browser cell of `baton bench report --html` (`make e2e-browser`, after
// serve.mjs): a bench run's record written by hand (two settings, and a
// third whose name is markup), its page written by the real binary and
// opened from the file in Debian's headless Chromium, offline. It checks
// that the page asks for nothing but itself, runs nothing, turns no record
// string into an element, and that both SVG charts render: a solve-rate bar
// with its interval whisker per setting, a cost bar per priced one, each
// with a size on screen. Saves a screenshot. Then the same record in a
// project's state, and `baton serve`'s bench panel shows it (the same
// numbers, the markup still text).
//
// Environment: as serve.mjs (BATON, BATON_E2E_BROWSER_DIR,
// BATON_E2E_BROWSER_OUT, CHROMIUM).
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import readline from 'node:readline';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const need = (k) => process.env[k] || fail(`${k} is not set (run \`make e2e-browser\`)`);
function fail(msg) {
  console.error(`e2e-browser bench: FAIL: ${msg}`);
  process.exit(1);
}
const say = (msg) => console.error(`e2e-browser bench: ${msg}`);

const BATON = need('BATON');
const OUT = need('BATON_E2E_BROWSER_OUT');
const require = createRequire(path.join(need('BATON_E2E_BROWSER_DIR'), 'package.json'));
const { chromium } = require('playwright-core');

// --- a record: claude:opus 15/20, pi:glm-5.2 14/20, and a setting of markup --
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-browser-bench-'));
const record = path.join(tmp, 'benches', '0k1m2n3p4q5r6');
fs.mkdirSync(path.join(record, 'trials'), { recursive: true });
const EVIL = '<img src=x onerror=window.pwned=1>';
fs.writeFileSync(path.join(record, 'bench.json'), JSON.stringify({
  format: 1, id: '0k1m2n3p4q5r6', set: path.join(tmp, 'gone'),
  settings: ['claude:opus', 'pi:glm-5.2', EVIL], repeat: 1, created_at_ms: 1, options: {},
}));
const trial = (task, setting, solved, cost) => ({
  task, setting, repeat: 0, solved, still_failing: solved ? [] : ['t'], broken: [],
  tampered_tests: [], status: 'ok', ...(cost === null ? {} : { cost_usd: cost }),
  tokens: 1000, wall_ms: 60000, diff_lines: 3, started_at_ms: 1, ended_at_ms: 2,
});
let n = 0;
for (const [a, b, count] of [[true, true, 13], [true, false, 2], [false, true, 1], [false, false, 4]]) {
  for (let i = 0; i < count; i++, n++) {
    const task = `task-${String(n).padStart(2, '0')}`;
    const all = [['claude:opus', a, 0.675], ['pi:glm-5.2', b, 0.07], [EVIL, n % 2 === 0, null]];
    all.forEach(([s, solved, cost], k) => fs.writeFileSync(
      path.join(record, 'trials', `${task}.s${k}.0.json`), JSON.stringify(trial(task, s, solved, cost))));
  }
}
const html = path.join(tmp, 'report.html');
const r = spawnSync(BATON, ['bench', 'report', record, '--html', html], {
  cwd: tmp, encoding: 'utf8', env: { ...process.env, BATON_STATE_DIR: path.join(tmp, 'state') },
});
if (r.status !== 0) fail(`baton bench report exited ${r.status}: ${r.stdout}${r.stderr}`);
const url = pathToFileURL(html).href;

const userData = fs.mkdtempSync(path.join(os.tmpdir(), 'baton-chromium-'));
let ctx;
let ok = false;
try {
  ctx = await chromium.launchPersistentContext(userData, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    offline: true,
    viewport: { width: 1100, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = ctx.pages()[0] || await ctx.newPage();
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error') problems.push(m.text()); });
  page.on('pageerror', (e) => problems.push(String(e)));
  page.on('request', (q) => { if (q.url() !== url) problems.push(`request to ${q.url()}`); });
  await page.goto(url);

  const svgs = page.locator('svg');
  if (await svgs.count() !== 2) fail(`${await svgs.count()} charts, not 2`);
  for (let i = 0; i < 2; i++) {
    const box = await svgs.nth(i).boundingBox();
    if (!box || box.width < 300 || box.height < 60) fail(`chart ${i} renders at ${JSON.stringify(box)}`);
  }
  // A bar and a whisker per setting, each drawn with a size.
  const bars = page.locator('svg rect.bar');
  if (await bars.count() !== 3) fail(`${await bars.count()} solve-rate bars, not 3`);
  const widths = [];
  for (let i = 0; i < 3; i++) widths.push((await bars.nth(i).boundingBox())?.width ?? 0);
  // 75 % and 70 % of the same axis: the first is longer, both are drawn.
  if (!(widths[0] > widths[1] && widths[1] > 100)) fail(`bar widths ${widths}`);
  const whiskers = page.locator('svg path.whisker');
  if (await whiskers.count() !== 3) fail(`${await whiskers.count()} whiskers, not 3`);
  const wbox = await whiskers.first().boundingBox();
  if (!wbox || wbox.width < 20) fail(`the first whisker renders at ${JSON.stringify(wbox)}`);
  // Cost: two priced bars (opus 9 × pi's), the unpriced setting says why.
  const cost = page.locator('svg rect.cost');
  if (await cost.count() !== 2) fail(`${await cost.count()} cost bars, not 2`);
  const [c0, c1] = [await cost.nth(0).boundingBox(), await cost.nth(1).boundingBox()];
  const ratio = c0.width / c1.width;
  if (Math.abs(ratio - 9) > 0.2) fail(`cost bars ${c0.width} and ${c1.width}: not 9 to 1`);
  if (await page.locator('svg text.unknown', { hasText: 'unpriced' }).count() !== 1) fail('no unpriced note');
  const rec = await page.textContent('.rec');
  if (!rec.includes('pi:glm-5.2') || !rec.includes('1/9 the cost')) fail(`recommendation: ${rec}`);

  // The markup in a setting's name stayed text.
  if (await page.evaluate(() => window.pwned)) fail('a setting name ran as HTML');
  if (await page.locator('img, script, link, iframe').count() !== 0) fail('a record string became an element');
  if (!(await page.textContent('body')).includes(EVIL)) fail('the setting name is not shown as text');
  if (problems.length) fail(`page problems: ${problems.join('; ')}`);

  // --- serve's bench panel: the record in a project's state ---------------
  const work = path.join(tmp, 'work');
  fs.mkdirSync(work);
  if (spawnSync('git', ['init', '-q', work]).status !== 0) fail('git init');
  const canon = fs.realpathSync(work);
  const key = `${path.basename(canon)}-${crypto.createHash('sha256').update(canon).digest('hex').slice(0, 16)}`;
  const state = path.join(tmp, 'state');
  const benches = path.join(state, 'repos', key, 'benches');
  fs.mkdirSync(benches, { recursive: true, mode: 0o700 });
  for (let d = benches; d !== tmp; d = path.dirname(d)) fs.chmodSync(d, 0o700);
  fs.cpSync(record, path.join(benches, '0k1m2n3p4q5r6'), { recursive: true });
  const srv = spawn(BATON, ['serve'], {
    cwd: work, stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, BATON_STATE_DIR: state, BATON_CONFIG: path.join(tmp, 'no-config.toml') },
  });
  try {
    const line = await new Promise((resolve, reject) => {
      readline.createInterface({ input: srv.stdout }).once('line', resolve);
      srv.once('exit', (c) => reject(new Error(`baton serve exited ${c}`)));
    });
    const { url: served } = JSON.parse(line);
    await ctx.setOffline(false);
    const p2 = await ctx.newPage();
    p2.on('pageerror', (e) => problems.push(String(e)));
    p2.on('request', (q) => { if (!q.url().startsWith('http://127.0.0.1:')) problems.push(`request to ${q.url()}`); });
    await p2.goto(served);
    await p2.locator('#bench').waitFor({ state: 'visible', timeout: 15000 });
    const runs = p2.locator('#b-runs .bench');
    if (await runs.count() !== 1) fail(`${await runs.count()} bench runs in the panel, not 1`);
    const panel = await p2.textContent('#bench');
    for (const want of ['bench 0k1m2n3p4q5r6', '15/20', '53–89 %', '$0.90', '1/9 the cost', EVIL]) {
      if (!panel.includes(want)) fail(`the bench panel lacks ${want}: ${panel}`);
    }
    if (await p2.locator('#bench img').count() !== 0) fail('a setting name became an element in the panel');
    if (await p2.evaluate(() => window.pwned)) fail('a setting name ran in the panel');
    fs.mkdirSync(OUT, { recursive: true });
    await p2.locator('#bench').screenshot({ path: path.join(OUT, 'bench-panel.png') });
    say('serve\'s bench panel shows the run: its numbers, its verdicts, the markup as text');
  } finally {
    srv.kill('SIGTERM');
  }
  if (problems.length) fail(`page problems: ${problems.join('; ')}`);

  fs.mkdirSync(OUT, { recursive: true });
  const shot = path.join(OUT, 'bench-report.png');
  await page.screenshot({ path: shot, fullPage: true });
  say(`charts render (bars ${widths.map((w) => w.toFixed(0)).join(', ')} px; cost ${ratio.toFixed(2)} : 1), nothing fetched, nothing ran; screenshot: ${shot}`);
  ok = true;
} catch (e) {
  console.error(e);
} finally {
  if (ctx) await ctx.close().catch(() => {});
  fs.rmSync(userData, { recursive: true, force: true });
  fs.rmSync(tmp, { recursive: true, force: true });
}
if (!ok) fail('see above');
say('PASS');
process.exit(0);
