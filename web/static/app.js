// The preview page's files and wiring: reads files into the engine
// (WebAssembly) as raw bytes, lists them with a way to remove each, shows
// dismissible messages, and asks every panel to redraw from what is loaded
// now, so no verdict outlives the files it was made from. All rules run in
// the engine; the page only moves data and draws it.
'use strict';

const MAX_BYTES = 256 * 1024 * 1024;
// files: {id, kind, name, detail, summary?}; kinds (the engine's fileKind):
// table, manifest, record, timings, choice_log, audit, launches.
const state = { engine: null, files: [] };
const $ = (id) => document.getElementById(id);
const el = (tag, props = {}, ...children) => {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
};

function call(fn, ...args) {
  return JSON.parse(state.engine[fn](...args));
}

function message(text, kind = 'error') {
  const close = el('button', { className: 'dismiss', textContent: '×', title: 'Dismiss' });
  close.setAttribute('aria-label', 'Dismiss this message');
  const div = el('div', { className: kind }, el('span', { textContent: text }), close);
  close.addEventListener('click', () => { div.remove(); showDismissAll(); });
  $('messages').appendChild(div);
  showDismissAll();
}

function showDismissAll() {
  $('dismiss-all').hidden = $('messages').children.length < 2;
}

const filesOf = (kind) => state.files.filter((f) => f.kind === kind);

// One rank's file names by the engine's rule (parse_rank_file_name): a record and its
// sidecar share a stem; a choice log's run is the name before `.rank<N>`.
const recordPrefix = (name) => call('rankFileName', name).stem;
const runOf = (name) => call('rankFileName', name).run ?? '(logs not named <run>.rank<N>)';

const loaders = {
  table: (name, bytes) => {
    const t = call('loadTable', name, bytes);
    return t.error ? t : { ...t, detail: `${t.arch}, ${t.entries} entries${t.source ? ', ' + t.source : ''}` };
  },
  manifest: (name, bytes) => {
    const m = call('loadCandidates', name, bytes);
    return m.error ? m : { ...m, detail: `${Object.keys(m.kernels).length} kernel(s)` };
  },
  record: (name, bytes) => {
    const r = call('loadRecord', name, bytes);
    return r.error ? r : { ...r, detail: `${r.keys} key(s)` };
  },
  timings: (name, bytes) => {
    const t = call('loadTimings', name, bytes);
    return t.error ? t : { ...t, detail: `timing sidecar, rank ${t.rank}` };
  },
  audit: (name, bytes) => {
    const a = call('loadAudit', name, bytes);
    return a.error ? a : { ...a, detail: `audit run, rank ${a.rank}, ${a.entries} key(s)` };
  },
  launches: (name, bytes) => {
    const l = call('loadLaunches', name, bytes);
    return l.error ? l : { ...l, detail: `launch log, rank ${l.rank}, ${l.steps} step(s), ${l.launches} launch(es)` };
  },
  choice_log: (name, bytes) => {
    const l = call('loadLog', name, bytes);
    return l.error ? l : { ...l, detail: `rank ${l.rank}, ${l.entries} choices, run ${runOf(name)}` };
  },
};

async function loadFile(file) {
  if (file.size > MAX_BYTES)
    return message(`${file.name}: ${(file.size / 1048576).toFixed(0)} MB is more than this page previews (256 MB)`);
  const bytes = new Uint8Array(await file.arrayBuffer());
  // What the file is, as every face tells it (an empty or foreign file: why not).
  const detected = call('fileKind', file.name, bytes);
  if (detected.error || detected.problem) return message(detected.error || detected.problem);
  const kind = detected.kind;
  const loaded = loaders[kind](file.name, bytes);
  if (loaded.error) return message(loaded.error);
  // A file loaded again replaces its earlier copy; one manifest at a time.
  for (const old of state.files.filter((f) => f.name === file.name || (kind === 'manifest' && f.kind === 'manifest'))) remove(old, false);
  state.files.push({ id: loaded.id, kind, name: file.name, detail: loaded.detail, summary: loaded });
  if (kind === 'table') tableLoaded(loaded.id);
  if (kind === 'manifest') manifestLoaded(loaded);
}

function remove(file, redraw = true) {
  state.engine.unload(file.id);
  state.files = state.files.filter((f) => f !== file);
  if (redraw) refreshAll();
}

function clearAll() {
  for (const file of [...state.files]) remove(file, false);
  $('messages').replaceChildren();
  showDismissAll();
  for (const id of ['kernel', 'key', 'blocks']) $(id).value = '';
  refreshAll();
}

function listLoaded() {
  $('loaded').replaceChildren(...state.files.map((file) => {
    const button = el('button', { className: 'remove', textContent: 'remove', title: `Remove ${file.name}` });
    button.addEventListener('click', () => remove(file));
    return el('li', {}, `${file.kind.replace('_', ' ')}: ${file.name} — ${file.detail} `, button);
  }));
  $('clear').disabled = state.files.length === 0;
}

// Every panel, from the files loaded now.
function refreshAll() {
  listLoaded();
  refreshTables();
  refreshReport();
  refreshAudit();
  refreshLogs();
  refreshRunPreview();
  refreshLaunches();
  suggestDecision();
  decide();
}

async function loadAll(files) {
  for (const file of files) {
    try {
      await loadFile(file);
    } catch (e) {
      message(`${file.name}: ${e.message || e}`);
    }
  }
  refreshAll();
  // The page's own signal that a batch of files is in: tests wait on it.
  document.body.dataset.loads = String(Number(document.body.dataset.loads || 0) + 1);
  document.dispatchEvent(new CustomEvent('tunelock:loaded'));
}

// The project's example files, embedded by the build (examples.js), so the
// example works from file:// too.
function loadExample() {
  const files = (window.TUNELOCK_EXAMPLE || []).map((f) => new File([f.text], f.name));
  if (!files.length) return message('this build has no example files');
  clearAll();
  loadAll(files);
}

function wire() {
  const drop = $('drop');
  drop.addEventListener('dragover', (e) => { e.preventDefault(); drop.classList.add('over'); });
  drop.addEventListener('dragleave', () => drop.classList.remove('over'));
  drop.addEventListener('drop', (e) => {
    e.preventDefault();
    drop.classList.remove('over');
    loadAll(e.dataTransfer.files);
  });
  // The picker is a label around a hidden input: open it from the keyboard too.
  document.querySelector('.pick').addEventListener('keydown', (e) => {
    if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); $('file-input').click(); }
  });
  $('file-input').addEventListener('change', (e) => { loadAll([...e.target.files]); e.target.value = ''; });
  $('example').addEventListener('click', loadExample);
  $('clear').addEventListener('click', clearAll);
  $('dismiss-all').addEventListener('click', () => { $('messages').replaceChildren(); showDismissAll(); });
  for (const id of ['kernel', 'key', 'on-miss', 'chaos', 'rank', 'world']) $(id).addEventListener('input', () => { refreshKeys(); decide(); });
  $('blocks').addEventListener('input', () => { decide(); refreshRunPreview(); });
  $('table-select').addEventListener('change', () => { refreshBrowse(); refreshKeys(); decide(); refreshRunPreview(); });
  for (const id of ['diff-a', 'diff-b']) $(id).addEventListener('change', refreshDiff);
  $('plot-key').addEventListener('change', drawPlot);
  for (const id of ['run-a', 'run-b']) $(id).addEventListener('change', refreshCompare);
  $('preview-run').addEventListener('change', refreshRunPreview);
  $('max-regret').addEventListener('input', refreshAudit);
}

createTunelock({ printErr: () => {} }).then((engine) => {
  state.engine = engine;
  wire();
  refreshAll();
  document.body.dataset.ready = 'true';
});
