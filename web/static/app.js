// The preview page: reads files into the engine (WebAssembly) and shows what
// it decides. All rules run in the engine; this file only moves data and
// draws it. Every engine call returns JSON, with {"error": ...} on bad input.
'use strict';

const MAX_BYTES = 256 * 1024 * 1024;
const state = { engine: null, tables: [], manifest: null, records: {}, timings: {}, logs: [] };
const $ = (id) => document.getElementById(id);

function message(text) {
  const div = document.createElement('div');
  div.className = 'error';
  div.textContent = text;
  $('messages').appendChild(div);
}

function call(fn, ...args) {
  const result = JSON.parse(state.engine[fn](...args));
  return result;
}

function listLoaded(kind, name, detail) {
  const li = document.createElement('li');
  li.textContent = `${kind}: ${name} — ${detail}`;
  $('loaded').appendChild(li);
}

// What a file is, from its name and first bytes (never a full parse here).
function classify(name, head) {
  if (/\.tlb$/.test(name)) return 'table';
  if (/\.timings\.(json|tlrt)$/.test(name)) return 'timings';
  if (/\.tlcl$/.test(name)) return 'log';
  if (/"entries"/.test(head) && /"rank"/.test(head)) return 'log';
  if (/"configs"/.test(head)) return 'manifest';
  if (/"arch"/.test(head) || /\.json$/.test(name) === false) return 'table';
  return 'record';
}

function recordPrefix(name) {
  return name.replace(/\.timings\.(json|tlrt)$/, '').replace(/\.json$/, '');
}

async function loadFile(file) {
  if (file.size > MAX_BYTES) {
    message(`${file.name}: ${(file.size / 1048576).toFixed(0)} MB is more than this page previews (256 MB)`);
    return;
  }
  const bytes = new Uint8Array(await file.arrayBuffer());
  if (bytes.length === 0) {
    message(`${file.name}: empty file`);
    return;
  }
  const head = new TextDecoder().decode(bytes.subarray(0, 65536));
  const kind = classify(file.name, head);
  if (kind === 'table') {
    const table = call('loadTable', file.name, bytes);
    if (table.error) return message(table.error);
    state.tables.push({ id: table.id, name: file.name, summary: table });
    listLoaded('table', file.name, `${table.arch}, ${table.entries} entries${table.source ? ', ' + table.source : ''}`);
    refreshTables();
  } else if (kind === 'manifest') {
    const manifest = call('loadCandidates', file.name, bytes);
    if (manifest.error) return message(manifest.error);
    if (state.manifest) state.engine.unload(state.manifest.id);
    state.manifest = manifest;
    listLoaded('candidates', file.name, `${Object.keys(manifest.kernels).length} kernel(s)`);
    fillList('kernel-list', Object.keys(manifest.kernels));
    const first = Object.keys(manifest.kernels)[0];
    if (!$('kernel').value && first) $('kernel').value = first;
  } else if (kind === 'timings') {
    state.timings[recordPrefix(file.name)] = new TextDecoder('latin1').decode(bytes);
    listLoaded('timings', file.name, 'timing sidecar');
    refreshReport();
  } else if (kind === 'log') {
    state.logs.push({ name: file.name, text: new TextDecoder('latin1').decode(bytes) });
    listLoaded('choice log', file.name, '');
    refreshLogs();
  } else {
    state.records[recordPrefix(file.name)] = { name: file.name, text: new TextDecoder().decode(bytes) };
    listLoaded('record', file.name, '');
    refreshReport();
  }
  decide();
}

function fillList(id, values) {
  $(id).replaceChildren(...values.map((v) => Object.assign(document.createElement('option'), { value: v })));
}

function selectedTable() {
  return state.tables.find((t) => t.id === Number($('table-select').value));
}

function refreshTables() {
  for (const id of ['table-select', 'diff-a', 'diff-b']) {
    const select = $(id);
    const keep = select.value;
    const options = state.tables.map((t) => Object.assign(document.createElement('option'),
      { value: t.id, textContent: `${t.name} (${t.summary.arch})` }));
    if (id === 'table-select') options.unshift(Object.assign(document.createElement('option'), { value: -1, textContent: '(none: rules without a table)' }));
    select.replaceChildren(...options);
    if (keep && [...select.options].some((o) => o.value === keep)) select.value = keep;
    else if (id === 'table-select' && state.tables.length) select.value = state.tables[state.tables.length - 1].id;
  }
  if (state.tables.length > 1) $('diff-b').value = state.tables[state.tables.length - 1].id;
  refreshBrowse();
  refreshKeys();
  refreshDiff();
}

// The manifest's qualified name for a table's (maybe bare) kernel name.
function manifestKernel(tableKernel) {
  if (!state.manifest) return tableKernel;
  const names = Object.keys(state.manifest.kernels);
  return names.find((n) => n === tableKernel) || names.find((n) => n.split('.').pop() === tableKernel) || tableKernel;
}

function refreshBrowse() {
  const table = selectedTable();
  const list = $('browse-list');
  if (!table) return list.replaceChildren(document.createTextNode('Load a table to browse its kernels and keys.'));
  const items = [];
  for (const [kernel, keys] of Object.entries(table.summary.kernels).slice(0, 500)) {
    const div = document.createElement('div');
    div.append(`${kernel}: `);
    for (const key of keys.slice(0, 50)) {
      const a = Object.assign(document.createElement('a'), { textContent: key });
      a.addEventListener('click', () => {
        $('kernel').value = manifestKernel(kernel);
        $('key').value = key;
        decide();
      });
      div.append(a, ' ');
    }
    items.push(div);
  }
  list.replaceChildren(...items);
}

function refreshKeys() {
  const table = selectedTable();
  if (!table) return fillList('key-list', []);
  const kernel = $('kernel').value;
  const bare = kernel.split('.').pop();
  const keys = [...(table.summary.kernels[kernel] || []), ...(table.summary.kernels[bare] || [])];
  fillList('key-list', [...new Set(keys)]);
}

function policy(rank) {
  return JSON.stringify({ on_miss: $('on-miss').value, block_sizes: $('blocks').value,
                          chaos: $('chaos').checked, rank });
}

function decide() {
  const out = $('decision');
  if (!state.manifest || !$('kernel').value) return;
  const tableId = Number($('table-select').value);
  const rank = Number($('rank').value) || 0;
  const result = call('decide', tableId, state.manifest.id, $('kernel').value, $('key').value, policy(rank));
  out.classList.toggle('error', Boolean(result.error));
  $('candidates').tBodies[0].replaceChildren();
  $('explanation').replaceChildren();
  $('stale').replaceChildren();
  if (result.error) {
    out.textContent = result.error;
    return;
  }
  out.textContent = `decision: candidate ${result.index} ${result.signature} (${result.reason})`;
  if ($('chaos').checked) {
    const world = Math.min(Math.max(Number($('world').value) || 1, 1), 64);
    const picks = [];
    for (let r = 0; r < world; ++r) picks.push(`rank ${r}: ${JSON.parse(state.engine.decide(tableId, state.manifest.id, $('kernel').value, $('key').value, policy(r))).index}`);
    out.textContent += ` — chaos picks ${picks.join(', ')}`;
  }
  $('explanation').replaceChildren(...result.explanation.map((line) => Object.assign(document.createElement('li'), { textContent: line })));
  $('candidates').tBodies[0].replaceChildren(...result.candidates.map((c) => {
    const tr = document.createElement('tr');
    if (c.chosen) tr.className = 'chosen';
    for (const text of [c.index, c.signature, `${c.cost[0]}, ${c.cost[1]}`]) tr.appendChild(Object.assign(document.createElement('td'), { textContent: text }));
    return tr;
  }));
  $('stale').replaceChildren(...result.stale.map((s) => Object.assign(document.createElement('div'),
    { className: 'stale', textContent: `stale table entry ${s.kernel} [${s.key}] → ${s.signature}: no live candidate has it, skipped` })));
}

function refreshDiff() {
  if (state.tables.length < 2) return;
  const result = call('diffTables', Number($('diff-a').value), Number($('diff-b').value));
  if (result.error) return ($('diff-out').textContent = result.error);
  const lines = [];
  if (result.arch) lines.push(`arch: ${result.arch[0]} -> ${result.arch[1]}`);
  for (const r of result.added) lines.push(`added:   ${r.kernel} [${r.key}] ${r.after}`);
  for (const r of result.removed) lines.push(`removed: ${r.kernel} [${r.key}] ${r.before}`);
  for (const r of result.changed) lines.push(`changed: ${r.kernel} [${r.key}] ${r.before} -> ${r.after}`);
  $('diff-out').textContent = lines.length ? lines.join('\n') : 'identical entries';
}

function refreshReport() {
  const files = Object.entries(state.records).map(([prefix, r]) => ({ name: r.name, record: r.text, timings: state.timings[prefix] ?? null }));
  if (!files.length) return;
  const result = call('report', JSON.stringify(files));
  if (result.error) return message(result.error);
  $('report-out').textContent = result.text || 'all ranks chose alike for every key';
  state.plot = result.timings;
  const keys = Object.keys(result.timings);
  $('plot-key').replaceChildren(...keys.map((k) => Object.assign(document.createElement('option'), { value: k, textContent: k })));
  const disagreeing = result.disagreements.map((d) => d.key).find((k) => keys.includes(k));
  if (disagreeing) $('plot-key').value = disagreeing;
  drawPlot();
}

// Each candidate's median time on each rank for one key, as an SVG scatter.
function drawPlot() {
  const series = state.plot && state.plot[$('plot-key').value];
  if (!series) return $('plot').replaceChildren();
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  const points = Object.values(series).flat();
  const maxRank = Math.max(1, ...points.map((p) => p[0]));
  const maxMs = Math.max(...points.map((p) => p[1])) * 1.1 || 1;
  const W = 640, H = 260, L = 60, B = 30;
  const x = (r) => L + (r / maxRank) * (W - L - 20);
  const y = (ms) => H - B - (ms / maxMs) * (H - B - 10);
  let svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H + 20 * Object.keys(series).length}">`;
  svg += `<line x1="${L}" y1="${H - B}" x2="${W - 10}" y2="${H - B}" stroke="#888"/><line x1="${L}" y1="10" x2="${L}" y2="${H - B}" stroke="#888"/>`;
  svg += `<text x="${W / 2}" y="${H - 5}" font-size="11">rank</text><text x="4" y="20" font-size="11">${maxMs.toPrecision(3)} ms</text><text x="4" y="${H - B}" font-size="11">0</text>`;
  Object.entries(series).forEach(([signature, samples], i) => {
    const color = colors[i % colors.length];
    for (const [rank, ms] of samples) svg += `<circle cx="${x(rank)}" cy="${y(ms)}" r="4" fill="${color}"><title>rank ${rank}: ${ms} ms</title></circle>`;
    svg += `<circle cx="${L}" cy="${H + 10 + 20 * i}" r="4" fill="${color}"/><text x="${L + 10}" y="${H + 14 + 20 * i}" font-size="11"></text>`;
  });
  $('plot').innerHTML = svg;
  // Legend text set as text content: signatures come from files.
  const texts = $('plot').querySelectorAll('text');
  Object.keys(series).forEach((signature, i) => { texts[3 + i].textContent = signature; });
}

function refreshLogs() {
  if (!state.logs.length) return;
  const result = call('verifyLogs', JSON.stringify(state.logs));
  if (result.error) return message(result.error);
  const lines = result.ranks.map((r) => `rank ${r.rank} (${r.name}): ${r.entries} choices, digest ${r.digest}`);
  lines.push(result.agreed ? 'agreed: every key chosen alike on every rank that saw it' : result.report);
  $('logs-out').textContent = lines.join('\n');
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
  $('file-input').addEventListener('change', (e) => loadAll(e.target.files));
  for (const id of ['kernel', 'key', 'on-miss', 'blocks', 'chaos', 'rank', 'world']) $(id).addEventListener('input', () => { refreshKeys(); decide(); });
  $('table-select').addEventListener('change', () => { refreshBrowse(); refreshKeys(); decide(); });
  for (const id of ['diff-a', 'diff-b']) $(id).addEventListener('change', refreshDiff);
  $('plot-key').addEventListener('change', drawPlot);
}

async function loadAll(files) {
  for (const file of files) {
    try {
      await loadFile(file);
    } catch (e) {
      message(`${file.name}: ${e.message || e}`);
    }
  }
  document.body.dataset.loaded = String(Number(document.body.dataset.loaded || 0) + files.length);
}

createTunelock({ printErr: () => {} }).then((engine) => {
  state.engine = engine;
  wire();
  document.body.dataset.ready = 'true';
});
