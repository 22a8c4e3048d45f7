// The Record runs, Choice logs and Run preview panels. Each redraws from the
// files loaded now (never keeps a verdict of files since removed or refused):
// where ranks' record files disagreed and each candidate's timings, whether
// each run's ranks chose alike, run A against run B, and what pinned with the
// selected table would choose for every key a run logged.
'use strict';

function setPanel(id, text, isError = false) {
  $(id).textContent = text;
  $(id).classList.toggle('error', isError);
}

function refreshReport() {
  const records = filesOf('record');
  const sidecars = filesOf('timings');
  state.plot = null;
  const lonely = sidecars.filter((t) => !records.some((r) => recordPrefix(r.name) === recordPrefix(t.name)));
  const note = lonely.length ? `\n(timings without their record file: ${lonely.map((t) => t.name).join(', ')})` : '';
  if (!records.length) {
    setPanel('report-out', 'Load record files (with their timing sidecars) to see where ranks disagreed.' + note);
    return fillPlotKeys({});
  }
  const pairs = records.map((r) => ({ record: r.id, timings: (sidecars.find((t) => recordPrefix(t.name) === recordPrefix(r.name)) || {}).id ?? null }));
  const result = call('report', JSON.stringify(pairs));
  if (result.error) {
    setPanel('report-out', result.error, true);
    return fillPlotKeys({});
  }
  const verdict = result.text || `all ranks chose alike for every key (${records.length} record file(s))`;
  setPanel('report-out', verdict + note);
  state.plot = result.timings;
  fillPlotKeys(result.timings, result.disagreements.filter((d) => d.winners.length > 1).map((d) => `${d.arch}|${d.kernel}|${d.key}`));
}

// What the loaded audit runs say the table costs today (tunelock table audit).
function refreshAudit() {
  const files = filesOf('audit');
  if (!files.length) return setPanel('audit-out', 'Load audit files (<prefix>.rank<N>.audit.json, from TUNELOCK_MODE=audit) to see what the table costs today.');
  const limit = Number($('max-regret').value);
  const result = call('auditReport', JSON.stringify(files.map((f) => f.id)), Number.isFinite(limit) ? limit : -1);
  if (result.error) return setPanel('audit-out', result.error, true);
  setPanel('audit-out', result.text + (result.exit_code ? '\nThe audit fails: an entry costs more than the limit, its bits changed, or its pinned config was never measured.' : '\nThe audit passes.'), result.exit_code !== 0);
}

function fillPlotKeys(timings, disagreeing = []) {
  const keys = Object.keys(timings);
  const keep = $('plot-key').value;
  $('plot-key').replaceChildren(...keys.map((k) => el('option', { value: k, textContent: k })));
  const pick = keys.includes(keep) ? keep : disagreeing.find((k) => keys.includes(k));
  if (pick) $('plot-key').value = pick;
  drawPlot();
}

// Choice logs grouped by run (`<run>.rank<N>.json|.tlcl`), in load order.
function runs() {
  const groups = new Map();
  for (const log of filesOf('choice_log')) {
    const run = runOf(log.name);
    if (!groups.has(run)) groups.set(run, []);
    groups.get(run).push(log);
  }
  return groups;
}

function fillRunSelect(id, names, fallback) {
  const select = $(id);
  const keep = select.value;
  select.replaceChildren(...names.map((n) => el('option', { value: n, textContent: n })));
  if (names.includes(keep)) select.value = keep;
  else if (names.length) select.value = names[Math.min(fallback, names.length - 1)];
}

function refreshLogs() {
  const groups = runs();
  if (!groups.size) {
    setPanel('logs-out', 'Load several ranks\' choice logs to check them against each other.');
  } else {
    const lines = [];
    let failed = false;
    for (const [run, logs] of groups) {
      const result = call('verifyLogs', JSON.stringify(logs.map((l) => l.id)));
      if (result.error) {
        failed = true;
        lines.push(`run ${run}: ${result.error}`);
        continue;
      }
      lines.push(`run ${run}:`);
      for (const r of result.ranks) lines.push(`  rank ${r.rank} (${r.name}): ${r.entries} choices, digest ${r.digest}`);
      lines.push(result.agreed ? `  agreed: every key chosen alike on all ${result.ranks.length} rank(s) that saw it` : result.report.replace(/^/gm, '  '));
    }
    setPanel('logs-out', lines.join('\n'), failed);
  }
  const names = [...groups.keys()];
  $('compare').hidden = names.length < 2;
  fillRunSelect('run-a', names, 0);
  fillRunSelect('run-b', names, 1);
  // Comparing a run with itself says nothing: B is another run whenever there is one.
  if ($('run-a').value === $('run-b').value && names.length > 1) $('run-b').value = names.find((n) => n !== $('run-a').value);
  fillRunSelect('preview-run', names, 0);
  refreshCompare();
}

function refreshCompare() {
  const groups = runs();
  if (groups.size < 2) return setPanel('compare-out', '');
  const ids = (run) => JSON.stringify((groups.get(run) || []).map((l) => l.id));
  const a = $('run-a').value, b = $('run-b').value;
  const result = call('compareRuns', ids(a), ids(b));
  if (result.error) return setPanel('compare-out', result.error, true);
  const ran = (set) => (set.length ? set.join(' or ') : 'nothing (key not seen)');
  const lines = [`${result.same} key(s) chosen alike in ${a} and ${b}; ${result.differences.length} differ`];
  for (const d of result.differences) lines.push(`${d.entry}\n    A ran ${ran(d.a)}\n    B ran ${ran(d.b)}`);
  setPanel('compare-out', lines.join('\n'), false);
}

function refreshRunPreview() {
  const body = $('preview-keys').tBodies[0];
  body.replaceChildren();
  $('preview-warnings').replaceChildren();
  const logs = runs().get($('preview-run').value);
  if (!logs || !manifest())
    return setPanel('preview-out', 'Load a run\'s choice logs (any mode), a candidate manifest and a table to see what pinned would choose for every key the run logged.');
  const result = call('previewRun', JSON.stringify(logs.map((l) => l.id)), Number($('table-select').value), manifest().id,
    JSON.stringify({ block_sizes: $('blocks').value }));
  if (result.error) return setPanel('preview-out', result.error, true);
  const s = result.summary;
  const table = selectedTable();
  setPanel('preview-out', `${s.keys} logged key(s) under ${table ? table.name : 'no table'}: ${s.table} by the table's exact key, ` +
    `${s['table*']} by '*', ${s.block_sizes} by block sizes, ${s.min_cost} by the cheapest fallback` +
    `${s.undecided ? `, ${s.undecided} not in the manifest` : ''}; ${s.changes} choice(s) would change under pinned`);
  $('preview-warnings').replaceChildren(...result.warnings.map((w) => el('div', { className: 'warning', textContent: `warning: ${w}` })));
  // Changes first: they are what a switch to pinned would alter.
  const rows = [...result.keys].sort((x, y) => Number(y.changes) - Number(x.changes)).slice(0, 1000);
  body.replaceChildren(...rows.map((k) => {
    const tr = el('tr', { className: k.changes ? 'changes' : '' });
    const ran = k.ran.map((r) => `${r.signature} (rank ${r.ranks.join(', ')})`).join('; ');
    const pinned = k.problem ? k.problem : `${k.pinned} (${k.reason})`;
    for (const text of [`${k.arch}|${k.kernel}|${k.key}`, ran, pinned, k.changes ? 'changes' : 'same'])
      tr.appendChild(el('td', { textContent: text }));
    tr.title = k.explanation.join('\n');
    return tr;
  }));
}
