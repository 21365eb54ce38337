// baton serve: the page. No build step, no inline script (the CSP forbids it).
// Everything that came from a job (its task, the peer's output) is inserted
// with textContent, never as HTML.
//
// The credential: the URL's #token is traded once for a session, kept in this
// page's memory and sessionStorage (both scoped to this scheme, host and
// port; sessionStorage survives a reload of this tab) and sent as
// `Authorization: Bearer` on every API call. No cookie: a browser sends a
// cookie of 127.0.0.1 to every port of it. Event streams are read with fetch
// (EventSource cannot send a header).
'use strict';

const MAX_LINES = 2000; // transcript lines kept in the page: memory stays flat
const jobs = new Map(); // `repo/id` -> {view, at}: `at` is when the view arrived
let councils = { list: [], at: 0 }; // every council (`councils` of the fleet), and when it arrived
// {id, repo, ctl, kind: 'job' | 'council' | 'run', job, council, name}; `id` is the
// row's key: `repo/job`, `repo/council`, `repo/council/name`
let selected = null;
// The repositories the server lists (`/api/repos`): {repo, label, exists, shown}.
// Every job and council carries its repository's key (`repo`), which goes
// back to the server with every action (`?repo=KEY`).
let repos = [];
let all = false; // `baton serve --all`: the repository column and filter
let filter = ''; // the key of the repository shown, or '' for all
let renderQueued = false;
const SESSION_KEY = 'baton-session';
let session = null;
let connected = false; // whether the fleet stream is (being) held open

const $ = (id) => document.getElementById(id);
const GLYPH = { running: '●', stalled: '◐', success: '✓', failed: '✗', lost: '?', cancelled: '■',
  timeout: '⧗', corrupt: '!', error: '✗', ok: '✓', ready: '✓', done: '✓', abstained: '–',
  awaiting_approval: '◆', approved: '◆', needs_human: '△' };
const isLive = (s) => s === 'running' || s === 'stalled';
const keyOf = (repo, id) => repo + '/' + id;
const q = (repo) => '?repo=' + encodeURIComponent(repo);
function repoLabel(key) {
  const r = repos.find((x) => x.repo === key);
  return r ? r.label : key;
}
const repoName = (key) => repoLabel(key).split('/').filter(Boolean).pop() || key;
const wanted = (repo) => !filter || repo === filter;
const group = (s) => s === 'running' ? 0
  : ['stalled', 'failed', 'lost', 'timeout', 'corrupt', 'needs_human'].includes(s) ? 1 : 2;

function human(ms) {
  const s = Math.floor(ms / 1000);
  if (s < 60) return s + 's';
  if (s < 3600) return Math.floor(s / 60) + 'm' + String(s % 60).padStart(2, '0') + 's';
  return Math.floor(s / 3600) + 'h' + String(Math.floor(s / 60) % 60).padStart(2, '0') + 'm';
}

function tokens(u) {
  if (u.input_tokens == null && u.output_tokens == null) return '-';
  const n = (u.input_tokens || 0) + (u.output_tokens || 0);
  const t = n < 1000 ? String(n) : n < 1e6 ? (n / 1e3).toFixed(1) + 'k' : (n / 1e6).toFixed(1) + 'M';
  return u.cost_usd != null ? t + ' $' + u.cost_usd.toFixed(2) : t;
}

// Times advance in the page between pushes: every event carries its views'
// clocks as they read when it was sent (`now_ms`), and the page adds the time
// since it arrived. The rules are the server's (serve/clock.rs): an elapsed
// time runs until the job ends, the age of the last activity always.
const elapsedRuns = (s) => isLive(s) || s === 'corrupt';
function elapsed(j) {
  const v = j.view;
  return elapsedRuns(v.status) ? v.elapsed_ms + (performance.now() - j.at) : v.elapsed_ms;
}
function age(j) {
  const v = j.view;
  if (v.last_activity_age_ms == null) return null;
  return v.last_activity_age_ms + (performance.now() - j.at);
}
const ago = (a) => (a == null ? '-' : human(a) + ' ago');

// Rows are kept by id and updated in place: replacing them on every frame
// (50 peers streaming change every frame) costs the renderer a rebuild of
// the table and loses a click whose press and release land on two
// different row elements.
const rowCache = new Map(); // id -> { tr, tds, texts, classes }
let rowsSeen = new Set();

function row(id, kind, data) {
  let r = rowCache.get(id);
  if (!r) {
    const tr = document.createElement('tr');
    // `data-id` is the job's (council's, `council/run`'s) own id; the cache
    // key adds the repository.
    tr.dataset.kind = kind;
    Object.assign(tr.dataset, data);
    const tds = [];
    for (let i = 0; i < 9; i++) tds.push(tr.appendChild(document.createElement('td')));
    r = { tr, tds, texts: [], classes: [] };
    rowCache.set(id, r);
  }
  rowsSeen.add(id);
  return r;
}

// One cell's text, written only when it changed (text, never HTML).
function cell(r, i, text) {
  if (r.texts[i] !== text) {
    r.texts[i] = text;
    r.tds[i].textContent = text;
  }
}

// Set a row's class and its nine cells' text and class (the first: its
// repository, with the whole root as its tooltip), touching the DOM only
// where something changed.
function fill(r, repo, className, texts, classes) {
  if (r.tr.className !== className) r.tr.className = className;
  texts = [repoName(repo)].concat(texts);
  classes = ['repo-col'].concat(classes);
  const label = repoLabel(repo);
  if (r.tds[0].title !== label) r.tds[0].title = label;
  for (let i = 0; i < 9; i++) {
    cell(r, i, texts[i]);
    const c = classes[i] || '';
    if (r.classes[i] !== c) {
      r.classes[i] = c;
      r.tds[i].className = c;
    }
  }
  return r.tr;
}

const NUM = 'num';
function jobRow(j) {
  const v = j.view;
  const a = age(j);
  const id = keyOf(v.repo, v.job_id);
  return fill(row(id, 'job', { id: v.job_id, repo: v.repo, job: v.job_id }), v.repo,
    selected && selected.id === id ? 'selected' : '', [
    (GLYPH[v.status] || '·') + ' ' + v.status,
    v.job_id,
    v.agent + (v.model ? ' / ' + v.model : ''),
    human(elapsed(j)),
    (v.doing || '').split('\n')[0],
    String(v.files_changed.length),
    tokens(v.usage),
    ago(a),
  ], ['status s-' + v.status, '', '', 'num t-elapsed', 'doing', NUM, NUM, 'num t-age']);
}

// A council's clocks, like a job's, move in the page between pushes.
function councilElapsed(c) {
  return c.status === 'running' ? c.elapsed_ms + (performance.now() - councils.at) : c.elapsed_ms;
}
function runElapsed(r) {
  // A lost run never recorded its end: its clock runs on, as on the server.
  return isLive(r.status) || r.status === 'lost'
    ? r.elapsed_ms + (performance.now() - councils.at) : r.elapsed_ms;
}
function runAge(r) {
  return r.last_activity_age_ms == null ? null : r.last_activity_age_ms + (performance.now() - councils.at);
}

// The rows of councils and their runs, with their clocks (advanced every second).
let clocks = [];

// A council is a group: its header row, then a row per member run, indented.
function councilRows(c, out) {
  const sel = (id) => (selected && selected.id === id ? ' selected' : '');
  const cid = keyOf(c.repo, c.council_id);
  const hr = row(cid, 'council', { id: c.council_id, repo: c.repo, council: c.council_id });
  const tr = fill(hr, c.repo, 'council' + sel(cid), [
    (GLYPH[c.status] || '·') + ' ' + c.status,
    c.council_id,
    c.kind === 'fanout' ? 'fan-out' : 'council ' + c.kind,
    human(councilElapsed(c)),
    'stage ' + c.stage,
    '',
    tokens(c.usage),
    '',
  ], ['status s-' + c.status, '', '', 'num t-elapsed', 'doing', NUM, NUM, 'num t-age']);
  clocks.push([hr, { elapsed: () => councilElapsed(c) }]);
  out.push(tr);
  c.runs.forEach((r, i) => {
    const id = keyOf(cid, r.name);
    const who = r.who + (r.round != null ? ' r' + r.round : '');
    const a = runAge(r);
    const rc = row(id, 'run', { id: c.council_id + '/' + r.name, repo: c.repo, council: c.council_id, name: r.name });
    const rr = fill(rc, c.repo, 'run' + sel(id), [
      (GLYPH[r.status] || '·') + ' ' + r.status,
      (i + 1 === c.runs.length ? '└─ ' : '├─ ') + who,
      r.agent + (r.model ? ' / ' + r.model : ''),
      human(runElapsed(r)),
      r.stage + (r.doing ? ' · ' + r.doing.split('\n')[0] : ''),
      '',
      tokens(r.usage),
      ago(a),
    ], ['status s-' + r.status, 'tree', '', 'num t-elapsed', 'doing', NUM, NUM, 'num t-age']);
    clocks.push([rc, { elapsed: () => runElapsed(r), age: () => runAge(r) }]);
    out.push(rr);
  });
}

// One listener for every row, present and future.
$('jobs').addEventListener('click', (e) => {
  const tr = e.target.closest('tr');
  if (!tr) return;
  const d = tr.dataset;
  if (d.kind === 'job') select(d.repo, d.job);
  else if (d.kind === 'council') selectCouncil(d.repo, d.council);
  else if (d.kind === 'run') selectRun(d.repo, d.council, d.name);
});

function render() {
  renderQueued = false;
  const list = [...jobs.values()].filter((j) => wanted(j.view.repo))
    .map((j) => ({ status: j.view.status, id: j.view.job_id, job: j }))
    .concat(councils.list.filter((c) => wanted(c.repo))
      .map((c) => ({ status: c.status, id: c.council_id, council: c })))
    .sort((a, b) => group(a.status) - group(b.status) || (a.id < b.id ? 1 : -1));
  const body = $('jobs');
  const want = [];
  let running = 0;
  clocks = [];
  rowsSeen = new Set();
  for (const item of list) {
    if (isLive(item.status)) running++;
    if (item.job) want.push(jobRow(item.job));
    else councilRows(item.council, want);
  }
  // Move only the rows that are out of place; drop the ones gone.
  want.forEach((tr, i) => {
    if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null);
  });
  while (body.children.length > want.length) body.lastElementChild.remove();
  for (const id of rowCache.keys()) if (!rowsSeen.has(id)) rowCache.delete(id);
  $('empty').hidden = list.length > 0;
  const n = list.filter((i) => i.council).length;
  $('counts').textContent = (list.length - n) + ' jobs, ' + (n ? n + (n === 1 ? ' council, ' : ' councils, ') : '')
    + running + ' running';
  if (selected) detailHead();
}

function queue() {
  if (!renderQueued) {
    renderQueued = true;
    requestAnimationFrame(render);
  }
}

// The clocks move between pushes: every row's age of its last activity, and
// the elapsed time of what has not ended. Only changed texts touch the DOM.
setInterval(() => {
  for (const j of jobs.values()) {
    const r = rowCache.get(keyOf(j.view.repo, j.view.job_id));
    if (!r) continue;
    cell(r, 4, human(elapsed(j)));
    cell(r, 8, ago(age(j)));
  }
  for (const [r, c] of clocks) {
    cell(r, 4, human(c.elapsed()));
    if (c.age) cell(r, 8, ago(c.age()));
  }
}, 1000);

function put(view) {
  jobs.set(keyOf(view.repo, view.job_id), { view, at: performance.now() });
}

// --- the repositories: the column, the filter, those whose root is gone ----------

function option(value, text) {
  const o = document.createElement('option');
  o.value = value;
  o.textContent = text;
  return o;
}

// Fill a <select> with "all repositories" and `list`, keeping its choice
// while that is still listed.
function options(sel, list) {
  const was = sel.value;
  sel.replaceChildren(option('', 'all repositories'),
    ...list.map((r) => option(r.repo, r.label + (r.exists ? '' : ' (root gone)'))));
  sel.value = list.some((r) => r.repo === was) ? was : '';
  return sel.value;
}

function applyRepos(list, isAll) {
  repos = list;
  all = isAll;
  document.body.classList.toggle('all', all);
  $('filter').hidden = !all;
  if (all) filter = options($('repo-filter'), repos);
  options($('u-repo'), repos);
  const gone = repos.filter((r) => !r.exists);
  $('gone').hidden = !all || gone.length === 0;
  $('gone').textContent = 'Root no longer exists (records kept, not watched): '
    + gone.map((r) => r.label).join(', ');
  queue();
}

// --- what was spent: `baton usage --by agent` ------------------------------------

const usd = (t) => '$' + t.cost_usd.toFixed(2) + (t.cost_estimated ? '*' : '');
const count = (n) => (n < 1e4 ? String(n) : n < 1e6 ? (n / 1e3).toFixed(1) + 'k' : (n / 1e6).toFixed(1) + 'M');
const failedOf = (t) => Object.values(t.failed).reduce((a, b) => a + b, 0);
let usageTimer = null;

async function loadUsage() {
  const repo = $('u-repo').value;
  const r = await fetch('/api/usage' + (repo ? q(repo) : ''), { headers: authed({}), cache: 'no-store' });
  if (!r.ok) return;
  const u = await r.json();
  const t = u.total;
  $('u-total').textContent = t.runs + ' runs, ' + t.calls + ' calls, ' + usd(t)
    + (t.unpriced_calls ? ' (+' + t.unpriced_calls + ' calls without a known price)' : '')
    + ' in ' + u.repos.length + (u.repos.length === 1 ? ' project' : ' projects');
  const body = $('u-rows');
  body.replaceChildren(...u.groups.map((g) => {
    const tr = document.createElement('tr');
    const failed = Object.entries(g.failed).map(([k, n]) => k + ' ' + n).join(', ');
    const cells = [g.key, String(g.runs), String(g.ok), String(failedOf(g)), String(g.fell_back),
      count(g.input_tokens) + ' / ' + count(g.output_tokens), usd(g)];
    cells.forEach((text, i) => {
      const td = document.createElement('td');
      td.textContent = text;
      if (i > 0) td.className = 'num';
      if (i === 3 && failed) td.title = failed;
      tr.appendChild(td);
    });
    return tr;
  }));
  // Kept while a repository is picked, so the choice can be undone.
  $('usage').hidden = t.calls === 0 && !repo;
}

// Again shortly after a job ends (its call is in the ledger then), and once a
// minute; the bench runs' reports with it.
function refreshUsage(delay) {
  clearTimeout(usageTimer);
  usageTimer = setTimeout(() => {
    loadBenches().catch(() => {});
    loadUsage().catch(() => {}).finally(() => refreshUsage(60000));
  }, delay);
}

// --- bench runs: what `baton bench report ID` says of each ---------------------

function el(tag, text, cls) {
  const e = document.createElement(tag);
  if (text !== undefined) e.textContent = text;
  if (cls) e.className = cls;
  return e;
}

const pct = (x) => (x * 100).toFixed(0) + ' %';

function benchRun(b) {
  const box = el('div', undefined, 'bench');
  box.appendChild(el('h3', (all ? repoName(b.repo) + ' · ' : '') + 'bench ' + b.bench_id + ' · ' + b.trials + ' trials on '
    + b.tasks_run + ' tasks · repeat ' + b.repeat));
  const table = el('table');
  const head = table.appendChild(el('thead')).appendChild(el('tr'));
  ['setting', 'solved', 'rate', '95 % interval', '$/solved'].forEach((h, i) => {
    head.appendChild(el('th', h, i ? 'num' : undefined));
  });
  const body = table.appendChild(el('tbody'));
  for (const s of b.settings) {
    const tr = body.appendChild(el('tr'));
    const cells = [s.setting, s.solved + '/' + s.trials,
      s.solve_rate === null ? '-' : pct(s.solve_rate),
      s.interval ? (s.interval.low * 100).toFixed(0) + '–' + pct(s.interval.high) : '-',
      s.cost_per_solved_usd === null ? '-' : '$' + s.cost_per_solved_usd.toFixed(2)];
    cells.forEach((text, i) => {
      const td = tr.appendChild(el('td', text, i ? 'num' : undefined));
      if (i === 4 && s.cost_note) td.title = s.cost_note;
    });
  }
  box.appendChild(table);
  for (const p of b.pairs) box.appendChild(el('p', p.a + ' vs ' + p.b + ': ' + p.verdict, 'b-pair'));
  box.appendChild(el('p', b.recommendation.text, 'b-rec'));
  return box;
}

async function loadBenches() {
  const r = await fetch('/api/benches', { headers: authed({}), cache: 'no-store' });
  if (!r.ok) return;
  benchList = await r.json();
  showBenches();
}

let benchList = { benches: [], unreadable: [] };
function showBenches() {
  const l = benchList;
  const runs = l.benches.filter((b) => wanted(b.repo)).map(benchRun);
  for (const u of l.unreadable.filter((b) => wanted(b.repo))) {
    runs.push(el('p', 'bench ' + u.id + ': ' + u.error, 'b-bad'));
  }
  $('b-runs').replaceChildren(...runs);
  $('bench').hidden = runs.length === 0;
}

// --- the session and the API ---------------------------------------------------

class Refused extends Error {}

function saveSession(s) {
  session = s;
  try { sessionStorage.setItem(SESSION_KEY, s); } catch (_) { /* storage off: memory only */ }
}

function loadSession() {
  try { return sessionStorage.getItem(SESSION_KEY); } catch (_) { return null; }
}

function noSession(why) {
  session = null;
  try { sessionStorage.removeItem(SESSION_KEY); } catch (_) { /* nothing kept */ }
  $('conn').textContent = why + ': open the URL `baton serve` printed (with its #token); '
    + 'every new tab needs it';
  $('conn').className = 'conn bad';
}

function authed(headers) {
  return session ? { ...headers, Authorization: 'Bearer ' + session } : headers;
}

// Server-Sent Events over fetch: `on[event](data)` per event, until the
// stream ends or `signal` aborts it. A refusal (401) throws Refused.
async function events(path, on, signal) {
  const r = await fetch(path, {
    headers: authed({ Accept: 'text/event-stream' }),
    cache: 'no-store',
    signal,
  });
  if (r.status === 401) throw new Refused('refused');
  if (!r.ok) throw new Error((await r.text()).trim() || r.statusText);
  const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
  let buf = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const blocks = (buf + value).split('\n\n');
    buf = blocks.pop();
    for (const block of blocks) {
      let name = 'message';
      const data = [];
      for (const line of block.split('\n')) {
        if (line === '' || line[0] === ':') continue; // a keep-alive comment
        const k = line.indexOf(':');
        const field = k < 0 ? line : line.slice(0, k);
        let v = k < 0 ? '' : line.slice(k + 1);
        if (v[0] === ' ') v = v.slice(1);
        if (field === 'event') name = v;
        else if (field === 'data') data.push(v);
      }
      if (data.length && on[name]) on[name](data.join('\n'));
    }
  }
}

function connect() {
  const bad = (text) => {
    $('conn').textContent = text;
    $('conn').className = 'conn bad';
  };
  events('/api/events', {
    snapshot: (d) => {
      const snap = JSON.parse(d);
      applyRepos(snap.repos || [], !!snap.all);
      jobs.clear();
      for (const v of snap.jobs) put(v);
      councils = { list: snap.councils || [], at: performance.now() };
      $('conn').textContent = 'live';
      $('conn').className = 'conn';
      queue();
    },
    job: (d) => {
      const v = JSON.parse(d).job;
      const was = jobs.get(keyOf(v.repo, v.job_id));
      put(v);
      if (was && isLive(was.view.status) && !isLive(v.status)) refreshUsage(500);
      queue();
    },
    councils: (d) => {
      councils = { list: JSON.parse(d).councils, at: performance.now() };
      queue();
    },
    gone: (d) => {
      const g = JSON.parse(d);
      jobs.delete(keyOf(g.repo, g.job_id));
      queue();
    },
    repos: (d) => applyRepos(JSON.parse(d).repos, all),
  }).then(() => {
    bad('disconnected — is `baton serve` still running? (reconnecting)');
    setTimeout(connect, 2000);
  }, (e) => {
    if (e instanceof Refused) {
      connected = false; // the URL with a new token, pasted here, connects again
      return noSession('the session was refused (was the server restarted?)');
    }
    bad('disconnected — is `baton serve` still running? (reconnecting)');
    setTimeout(connect, 2000);
  });
}

// A transcript in the detail pane: its lines, then its end; `what` names it.
function transcript(path, what, onFail) {
  const ctl = new AbortController();
  let ended = false;
  events(path, {
    line: (d) => {
      const l = JSON.parse(d);
      logLine(l.text, l.kind);
    },
    end: (d) => {
      ended = true;
      ctl.abort();
      logLine('— ' + what + ' ended: ' + JSON.parse(d).status + ' —', 'end');
    },
  }, ctl.signal).catch((e) => {
    if (ended || ctl.signal.aborted) return;
    if (e instanceof Refused) return noSession('the session was refused');
    onFail(e);
  });
  return ctl;
}

function findCouncil(repo, id) {
  return councils.list.find((c) => c.repo === repo && c.council_id === id);
}

function detailHead() {
  if (selected.kind !== 'job') return councilHead();
  const j = jobs.get(selected.id);
  if (!j) return;
  const v = j.view;
  $('d-status').textContent = (GLYPH[v.status] || '·') + ' ' + v.status;
  $('d-status').className = 'status s-' + v.status;
  $('d-task').textContent = v.task;
  $('d-files').textContent = v.files_changed.length ? 'files: ' + v.files_changed.join(', ') : '';
  $('d-cancel').hidden = !isLive(v.status);
  $('d-continue').hidden = isLive(v.status);
}

// A council or one of its runs: cancel stops the whole council; there is no continue.
function councilHead() {
  const c = findCouncil(selected.repo, selected.council);
  if (!c) return;
  const r = selected.kind === 'run' ? c.runs.find((x) => x.name === selected.name) : null;
  const status = r ? r.status : c.status;
  $('d-status').textContent = (GLYPH[status] || '·') + ' ' + status;
  $('d-status').className = 'status s-' + status;
  $('d-task').textContent = r
    ? r.stage + ' · ' + r.who + ' (' + r.role + ') of council ' + c.council_id + ': ' + c.task
    : (c.kind === 'fanout' ? 'fan-out' : 'council ' + c.kind) + ' · stage ' + c.stage + ': ' + c.task;
  $('d-files').textContent = 'members: ' + c.members.map((m) => m.agent + (m.model ? ' / ' + m.model : '')
    + ' (' + m.role + ')').join(', ');
  $('d-cancel').hidden = r != null || ['ready', 'done', 'failed', 'needs_human', 'cancelled'].includes(c.status);
  $('d-continue').hidden = true;
}

// Lines wait for the next frame and go in together: reading the scroll
// position per line forced a layout of up to 2,000 lines per line (2,500 lines
// in a burst took the tab 20-40 s). At most MAX_LINES wait, so a hidden tab
// (no frames) stays bounded too.
let pending = [];
let flushQueued = false;

function logLine(text, kind) {
  pending.push({ text, kind });
  if (pending.length > MAX_LINES) pending.splice(0, pending.length - MAX_LINES);
  if (!flushQueued) {
    flushQueued = true;
    requestAnimationFrame(flushLog);
  }
}

// A new transcript: the previous one's lines, shown or waiting, go.
function clearLog() {
  $('d-log').replaceChildren();
  pending = [];
}

function flushLog() {
  flushQueued = false;
  if (!pending.length) return;
  const log = $('d-log');
  const follow = log.scrollTop + log.clientHeight >= log.scrollHeight - 4;
  const lines = document.createDocumentFragment();
  for (const l of pending) {
    const div = document.createElement('div');
    div.className = 'k-' + l.kind;
    div.textContent = l.text;
    lines.appendChild(div);
  }
  pending = [];
  log.appendChild(lines);
  for (let extra = log.childElementCount - MAX_LINES; extra > 0; extra--) log.firstElementChild.remove();
  // Stop following while the reader has scrolled back.
  if (follow) log.scrollTop = log.scrollHeight;
}

function closeSelected() {
  if (selected && selected.ctl) selected.ctl.abort();
}

function selectCouncil(repo, id) {
  closeSelected();
  selected = { id: keyOf(repo, id), repo, ctl: null, kind: 'council', council: id };
  $('detail').hidden = false;
  $('d-title').textContent = 'council ' + id;
  clearLog();
  $('d-msg').textContent = 'a council is a group of runs: select one of its runs for its transcript';
  queue();
}

function selectRun(repo, council, name) {
  closeSelected();
  selected = { id: keyOf(keyOf(repo, council), name), repo, ctl: null, kind: 'run', council, name };
  $('detail').hidden = false;
  $('d-title').textContent = council + '/' + name + (all ? ' · ' + repoName(repo) : '');
  clearLog();
  $('d-msg').textContent = '';
  selected.ctl = transcript('/api/councils/' + encodeURIComponent(council) + '/runs/'
    + encodeURIComponent(name) + '/events' + q(repo), 'run', () => {
    $('d-msg').textContent = 'this run has no transcript to show';
  });
  queue();
}

function select(repo, id) {
  closeSelected();
  selected = { id: keyOf(repo, id), repo, job: id, ctl: null, kind: 'job' };
  $('detail').hidden = false;
  $('d-title').textContent = id + (all ? ' · ' + repoName(repo) : '');
  clearLog();
  $('d-msg').textContent = '';
  $('d-prompt').value = '';
  selected.ctl = transcript('/api/jobs/' + encodeURIComponent(id) + '/events' + q(repo), 'job', (e) => {
    $('d-msg').textContent = 'the transcript stopped: ' + e.message;
  });
  queue();
}

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    headers: authed({ 'Content-Type': 'application/json' }),
    body: JSON.stringify(body || {}),
  });
  const text = await r.text();
  let data = null;
  try { data = JSON.parse(text); } catch (_) { /* a plain-text refusal */ }
  if (r.status === 401 && session) noSession('the session was refused');
  if (!r.ok) throw new Error(data && data.summary ? data.summary : text.trim() || r.statusText);
  return data;
}
async function cancelCouncil(repo, id) {
  if (!window.confirm('Cancel council ' + id + '? Every member run is stopped.')) return;
  $('d-msg').textContent = 'cancelling council ' + id + '…';
  try {
    const r = await post('/api/councils/' + encodeURIComponent(id) + '/cancel' + q(repo));
    $('d-msg').textContent = 'council ' + id + ': ' + r.stage;
  } catch (e) {
    $('d-msg').textContent = 'cancel failed: ' + e.message;
  }
}

async function cancelSelected() {
  if (selected && selected.kind !== 'job') return cancelCouncil(selected.repo, selected.council);
  const id = selected && selected.job;
  const repo = selected && selected.repo;
  if (!id || !window.confirm('Cancel job ' + id + '? The peer and its whole process tree are stopped.')) return;
  $('d-msg').textContent = 'cancelling ' + id + '…';
  try {
    const r = await post('/api/jobs/' + encodeURIComponent(id) + '/cancel' + q(repo));
    $('d-msg').textContent = 'job ' + id + ': ' + r.status;
  } catch (e) {
    $('d-msg').textContent = 'cancel failed: ' + e.message;
  }
}

async function continueSelected() {
  const id = selected && selected.job;
  const repo = selected && selected.repo;
  const prompt = $('d-prompt').value;
  if (!id || !prompt.trim()) return;
  $('d-msg').textContent = 'starting a follow-up of ' + id + '…';
  try {
    const r = await post('/api/jobs/' + encodeURIComponent(id) + '/continue' + q(repo), { prompt });
    select(repo, r.job_id);
    $('d-msg').textContent = 'started job ' + r.job_id;
  } catch (e) {
    $('d-msg').textContent = 'continue failed: ' + e.message;
  }
}

// The URL's #token, traded for a session; then the token leaves the address
// bar and the history. Whether this tab holds a session afterwards.
async function exchange() {
  const m = /(?:^#|&)token=([0-9a-f]+)/.exec(location.hash);
  if (!m) return session != null;
  try {
    saveSession((await post('/api/session', { token: m[1] })).session);
    return true;
  } catch (e) {
    noSession('the token was refused (was the server restarted?)');
    return false;
  } finally {
    history.replaceState(null, '', location.pathname);
  }
}

async function start() {
  $('d-cancel').addEventListener('click', cancelSelected);
  // The page's filter picks the usage panel's repository too; the panel's
  // own choice is free.
  $('repo-filter').addEventListener('change', () => {
    filter = $('repo-filter').value;
    $('u-repo').value = filter;
    showBenches();
    loadUsage().catch(() => {});
    queue();
  });
  $('u-repo').addEventListener('change', () => loadUsage().catch(() => {}));
  $('d-send').addEventListener('click', continueSelected);
  $('d-prompt').addEventListener('keydown', (e) => { if (e.key === 'Enter') continueSelected(); });
  $('d-close').addEventListener('click', () => {
    closeSelected();
    selected = null;
    $('detail').hidden = true;
    queue();
  });
  // The URL with its token pasted into a tab already showing this page
  // changes only the fragment: no reload, so the page trades it here.
  window.addEventListener('hashchange', async () => {
    if (await exchange() && !connected) {
      connected = true;
      connect();
      refreshUsage(0);
    }
  });
  // Without a token: a reload of this tab, whose sessionStorage kept the session.
  const hadToken = /(?:^#|&)token=/.test(location.hash);
  if (!hadToken) session = loadSession();
  if (!(await exchange())) {
    if (!hadToken) noSession('no session in this tab');
    return;
  }
  connected = true;
  connect();
  refreshUsage(0);
}

start();
