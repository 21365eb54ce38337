// baton serve: the page. No build step, no inline script (the CSP forbids it).
// Everything that came from a job (its task, the peer's output) is inserted
// with textContent, never as HTML.
'use strict';

const MAX_LINES = 2000; // transcript lines kept in the page: memory stays flat
const jobs = new Map(); // id -> {view, at}: `at` is when the view arrived
let selected = null; // {id, es}
let renderQueued = false;

const $ = (id) => document.getElementById(id);
const GLYPH = { running: '●', stalled: '◐', success: '✓', failed: '✗', lost: '?', cancelled: '■',
  timeout: '⧗', corrupt: '!', error: '✗' };
const isLive = (s) => s === 'running' || s === 'stalled';
const group = (s) => s === 'running' ? 0
  : ['stalled', 'failed', 'lost', 'timeout', 'corrupt'].includes(s) ? 1 : 2;

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

// Times advance in the page: the server pushes a view only when it changes.
function elapsed(j) {
  const v = j.view;
  return isLive(v.status) ? v.elapsed_ms + (performance.now() - j.at) : v.elapsed_ms;
}
function age(j) {
  const v = j.view;
  if (v.last_activity_age_ms == null) return null;
  return v.last_activity_age_ms + (performance.now() - j.at);
}

function cell(tr, text, cls) {
  const td = document.createElement('td');
  td.textContent = text;
  if (cls) td.className = cls;
  tr.appendChild(td);
  return td;
}

function render() {
  renderQueued = false;
  const list = [...jobs.values()].sort((a, b) =>
    group(a.view.status) - group(b.view.status) || (a.view.job_id < b.view.job_id ? 1 : -1));
  const body = $('jobs');
  const rows = document.createDocumentFragment();
  let running = 0;
  for (const j of list) {
    const v = j.view;
    if (isLive(v.status)) running++;
    const tr = document.createElement('tr');
    tr.dataset.id = v.job_id;
    if (selected && selected.id === v.job_id) tr.className = 'selected';
    cell(tr, (GLYPH[v.status] || '·') + ' ' + v.status, 'status s-' + v.status);
    cell(tr, v.job_id);
    cell(tr, v.agent + (v.model ? ' / ' + v.model : ''));
    cell(tr, human(elapsed(j)), 'num t-elapsed');
    cell(tr, (v.doing || '').split('\n')[0], 'doing');
    cell(tr, String(v.files_changed.length), 'num');
    cell(tr, tokens(v.usage), 'num');
    const a = age(j);
    cell(tr, a == null ? '-' : human(a) + ' ago', 'num t-age');
    tr.addEventListener('click', () => select(v.job_id));
    rows.appendChild(tr);
  }
  body.replaceChildren(rows);
  $('empty').hidden = list.length > 0;
  $('counts').textContent = list.length + ' jobs, ' + running + ' running';
  if (selected) detailHead();
}

function queue() {
  if (!renderQueued) {
    renderQueued = true;
    requestAnimationFrame(render);
  }
}

// Only the clocks of running jobs move between pushes.
setInterval(() => {
  for (const tr of $('jobs').children) {
    const j = jobs.get(tr.dataset.id);
    if (!j || !isLive(j.view.status)) continue;
    tr.querySelector('.t-elapsed').textContent = human(elapsed(j));
    const a = age(j);
    if (a != null) tr.querySelector('.t-age').textContent = human(a) + ' ago';
  }
}, 1000);

function put(view) {
  jobs.set(view.job_id, { view, at: performance.now() });
}

function connect() {
  const es = new EventSource('/api/events');
  es.addEventListener('snapshot', (e) => {
    const snap = JSON.parse(e.data);
    jobs.clear();
    for (const v of snap.jobs) put(v);
    $('conn').textContent = 'live';
    $('conn').className = 'conn';
    queue();
  });
  es.addEventListener('job', (e) => {
    put(JSON.parse(e.data).job);
    queue();
  });
  es.addEventListener('gone', (e) => {
    jobs.delete(JSON.parse(e.data).job_id);
    queue();
  });
  es.onerror = () => {
    $('conn').textContent = 'disconnected — is `baton serve` still running? (reconnecting)';
    $('conn').className = 'conn bad';
  };
}

function detailHead() {
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

function select(id) {
  if (selected && selected.es) selected.es.close();
  selected = { id, es: null };
  $('detail').hidden = false;
  $('d-title').textContent = id;
  $('d-log').replaceChildren();
  pending = []; // the previous job's lines not yet shown
  $('d-msg').textContent = '';
  $('d-prompt').value = '';
  const es = new EventSource('/api/jobs/' + encodeURIComponent(id) + '/events');
  selected.es = es;
  es.addEventListener('line', (e) => {
    const l = JSON.parse(e.data);
    logLine(l.text, l.kind);
  });
  es.addEventListener('end', (e) => {
    es.close(); // else EventSource would reconnect and replay the transcript
    logLine('— job ended: ' + JSON.parse(e.data).status + ' —', 'end');
  });
  queue();
}

async function post(path, body) {
  const r = await fetch(path, {
    method: 'POST',
    credentials: 'same-origin',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body || {}),
  });
  const text = await r.text();
  let data = null;
  try { data = JSON.parse(text); } catch (_) { /* a plain-text refusal */ }
  if (!r.ok) throw new Error(data && data.summary ? data.summary : text.trim() || r.statusText);
  return data;
}

async function cancelSelected() {
  const id = selected && selected.id;
  if (!id || !window.confirm('Cancel job ' + id + '? The peer and its whole process tree are stopped.')) return;
  $('d-msg').textContent = 'cancelling ' + id + '…';
  try {
    const r = await post('/api/jobs/' + encodeURIComponent(id) + '/cancel');
    $('d-msg').textContent = 'job ' + id + ': ' + r.status;
  } catch (e) {
    $('d-msg').textContent = 'cancel failed: ' + e.message;
  }
}

async function continueSelected() {
  const id = selected && selected.id;
  const prompt = $('d-prompt').value;
  if (!id || !prompt.trim()) return;
  $('d-msg').textContent = 'starting a follow-up of ' + id + '…';
  try {
    const r = await post('/api/jobs/' + encodeURIComponent(id) + '/continue', { prompt });
    select(r.job_id);
    $('d-msg').textContent = 'started job ' + r.job_id;
  } catch (e) {
    $('d-msg').textContent = 'continue failed: ' + e.message;
  }
}

async function start() {
  $('d-cancel').addEventListener('click', cancelSelected);
  $('d-send').addEventListener('click', continueSelected);
  $('d-prompt').addEventListener('keydown', (e) => { if (e.key === 'Enter') continueSelected(); });
  $('d-close').addEventListener('click', () => {
    if (selected && selected.es) selected.es.close();
    selected = null;
    $('detail').hidden = true;
    queue();
  });
  const m = /(?:^#|&)token=([0-9a-f]+)/.exec(location.hash);
  if (m) {
    try {
      await post('/api/session', { token: m[1] });
    } catch (e) {
      $('conn').textContent = 'the token was refused: open the URL `baton serve` printed last';
      $('conn').className = 'conn bad';
      return;
    } finally {
      // The token leaves the address bar and the history either way.
      history.replaceState(null, '', location.pathname);
    }
  }
  connect();
}

start();
