// The Decision, Table contents and Diff panels: one pinned decision as the
// engine makes it (with its reason, each rule's finding and the warning a
// run would log), the selected table's keys to pick from, and two tables'
// differences.
'use strict';

const selectedTable = () => filesOf('table').find((t) => t.id === Number($('table-select').value));
const manifest = () => filesOf('manifest')[0];

// A table just loaded is what the user wants to see decide.
function tableLoaded(id) {
  state.selectTable = id;
}

function manifestLoaded(m) {
  fillList('kernel-list', Object.keys(m.kernels));
}

function fillList(id, values) {
  $(id).replaceChildren(...values.map((v) => el('option', { value: v })));
}

function refreshTables() {
  const tables = filesOf('table');
  const option = (t) => el('option', { value: t.id, textContent: `${t.name} (${t.summary.arch})` });
  let lost = false;  // the selected table was removed
  for (const id of ['table-select', 'diff-a', 'diff-b']) {
    const select = $(id);
    const keep = select.value;
    const options = tables.map(option);
    if (id === 'table-select') options.unshift(el('option', { value: -1, textContent: '(none: rules without a table)' }));
    select.replaceChildren(...options);
    if ([...select.options].some((o) => o.value === keep)) select.value = keep;
    else if (id === 'table-select') lost = true;
  }
  // A table just loaded is selected; so is the last one left when the selected one goes.
  if (state.selectTable !== undefined) $('table-select').value = state.selectTable;
  else if (lost && tables.length) $('table-select').value = tables[tables.length - 1].id;
  delete state.selectTable;
  // Two tables of one arch, where there are: tables of two archs share no
  // keys, so every entry would show as added or removed.
  if (tables.length > 1 && $('diff-a').value === $('diff-b').value) {
    const last = tables[tables.length - 1];
    const partner = tables.slice(0, -1).reverse().find((t) => t.summary.arch === last.summary.arch);
    $('diff-a').value = (partner || tables[0]).id;
    $('diff-b').value = last.id;
  }
  fillList('kernel-list', manifest() ? Object.keys(manifest().summary.kernels) : []);
  refreshBrowse();
  refreshKeys();
  refreshDiff();
}

// The manifest's qualified name for a table's (maybe bare) kernel name, as
// the engine's lookups match them; null without a manifest or a match.
function manifestKernel(tableKernel) {
  return manifest() ? call('manifestKernel', manifest().id, tableKernel).kernel ?? null : null;
}

// With a table and a manifest and nothing typed yet, decide the table's
// first key whose kernel the manifest has: the first decision a new user
// sees comes from their table.
function suggestDecision() {
  const table = selectedTable();
  if (!table || !manifest() || $('key').value) return;
  for (const [kernel, keys] of Object.entries(table.summary.kernels)) {
    const key = keys.find((k) => k !== '*');
    const qualified = key && manifestKernel(kernel);
    if (qualified) {
      $('kernel').value = qualified;
      $('key').value = key;
      return refreshKeys();
    }
  }
}

function refreshBrowse() {
  const table = selectedTable();
  const list = $('browse-list');
  $('provenance').replaceChildren(...(table ? table.summary.provenance : []).map(([label, value]) =>
    el('div', {}, el('dt', { textContent: label }), el('dd', { textContent: value }))));
  if (!table) return list.replaceChildren('Load a table to browse its kernels and keys.');
  const items = [];
  for (const [kernel, keys] of Object.entries(table.summary.kernels).slice(0, 500)) {
    const buttons = keys.slice(0, 200).map((key) => {
      const button = el('button', { className: 'key', textContent: key, title: `Decide ${kernel} [${key}]` });
      button.addEventListener('click', () => {
        $('kernel').value = manifestKernel(kernel) ?? kernel;
        $('key').value = key;
        refreshKeys();
        decide();
      });
      return button;
    });
    const more = keys.length > 200 ? [el('span', { textContent: `… ${keys.length - 200} more keys` })] : [];
    items.push(el('div', { className: 'kernel' }, el('div', { className: 'kernel-name', textContent: kernel }), ...buttons, ...more));
  }
  list.replaceChildren(...items);
}

function refreshKeys() {
  const table = selectedTable();
  if (!table) return fillList('key-list', []);
  // Under the typed name and every name a lookup tries for it (the engine's rule).
  const keys = call('tableKeys', table.id, $('kernel').value);
  fillList('key-list', keys.error ? [] : keys);
}

function policy(rank) {
  return JSON.stringify({ on_miss: $('on-miss').value, block_sizes: $('blocks').value, chaos: $('chaos').checked, rank });
}

function decide() {
  const out = $('decision');
  for (const id of ['explanation', 'stale', 'warnings']) $(id).replaceChildren();
  $('candidates').tBodies[0].replaceChildren();
  out.classList.remove('error');
  if (!manifest() || !$('kernel').value) {
    out.textContent = 'Load a candidate manifest (or try the example), then type or pick a kernel and key.';
    return;
  }
  const tableId = Number($('table-select').value);
  const rank = Number($('rank').value) || 0;
  const ask = (r) => call('decide', tableId, manifest().id, $('kernel').value, $('key').value, policy(r));
  const result = ask(rank);
  if (result.error) {
    out.classList.add('error');
    out.textContent = result.error;
    return;
  }
  const named = result.kernel !== $('kernel').value ? ` for ${result.kernel}` : '';
  out.textContent = `decision: candidate ${result.index} ${result.signature} (${result.reason})${named}`;
  if ($('chaos').checked) {
    const world = Math.min(Math.max(Number($('world').value) || 1, 1), 64);
    const picks = [];
    for (let r = 0; r < world; ++r) picks.push(`rank ${r}: ${ask(r).index}`);
    out.textContent += ` — chaos picks ${picks.join(', ')}`;
  }
  $('warnings').replaceChildren(...result.warnings.map((w) => el('div', { className: 'warning', textContent: `warning: ${w}` })));
  const equivalent = (result.equivalent ?? []).map((sig) =>
    `equivalent (same bits by the record's audit; TUNELOCK_EQUIVALENT=timed may launch it): ${sig}`);
  $('explanation').replaceChildren(...[...result.explanation, ...equivalent].map((line) => el('li', { textContent: line })));
  $('candidates').tBodies[0].replaceChildren(...result.candidates.map((c) => {
    const tr = el('tr', { className: c.chosen ? 'chosen' : '' });
    for (const text of [c.index, c.signature, `${c.cost[0]}, ${c.cost[1]}`]) tr.appendChild(el('td', { textContent: text }));
    return tr;
  }));
  $('stale').replaceChildren(...result.stale.map((s) => el('div',
    { className: 'stale', textContent: `stale table entry ${s.kernel} [${s.key}] → ${s.signature}: no live candidate has it, skipped` })));
}

function refreshDiff() {
  if (filesOf('table').length < 2) return ($('diff-out').textContent = 'Load two tables to see what changed between them.');
  const result = call('diffTables', Number($('diff-a').value), Number($('diff-b').value));
  if (result.error) return ($('diff-out').textContent = result.error);
  const lines = [];
  if (result.arch) lines.push(`arch: ${result.arch[0]} -> ${result.arch[1]}`);
  for (const r of result.added) lines.push(`added:   ${r.kernel} [${r.key}] ${r.after}`);
  for (const r of result.removed) lines.push(`removed: ${r.kernel} [${r.key}] ${r.before}`);
  for (const r of result.changed) lines.push(`changed: ${r.kernel} [${r.key}] ${r.before} -> ${r.after}` +
    (r.same_config ? `  (same config, launches alike; only ${r.changed_fields.join(', ')} changed)` : ''));
  for (const f of result.nondeterministic || []) lines.push(`nondeterministic: ${f.kernel}` +
    f.added.map((s) => ` +${s}`).join('') + f.removed.map((s) => ` -${s}`).join('') +
    (f.pinned_now_flagged.length ? `  (the second table skips what the first pins at ${f.pinned_now_flagged.map((k) => `[${k}]`).join(' ')}: they launch different configs)` : ''));
  for (const i of result.identities || []) lines.push(`identity: ${i.kernel} ${i.before || '(none)'} -> ${i.after || '(none)'}`);
  $('diff-out').textContent = lines.length ? lines.join('\n') : 'identical entries';
}
