// The Launch logs panel: did the loaded ranks (or runs) launch the same
// kernels with the same shapes, step by step? Every log after the first
// loaded is compared with the first, by the engine's comparison that
// `tunelock watch compare` prints; the page only lays its answer out.
'use strict';

function refreshLaunches() {
  const logs = filesOf('launches');
  $('launches-logs').tBodies[0].replaceChildren(...logs.map((l) => {
    const tr = el('tr');
    for (const text of [l.name, l.summary.rank, l.summary.steps, l.summary.launches, l.summary.program])
      tr.appendChild(el('td', { textContent: String(text) }));
    return tr;
  }));
  $('launches-logs').hidden = !logs.length;
  $('launches-comparisons').replaceChildren();
  $('launches-text').textContent = '';
  $('launches-cli').hidden = true;
  if (logs.length < 2) {
    return setPanel('launches-verdict', logs.length
      ? 'Load a second launch log to compare: another rank of this run, or this rank of another run.'
      : 'Load launch logs (<prefix>.rank<N>.launches.json or .tlln, from tunelock watch) to see whether ranks launched alike.');
  }
  const result = call('compareLaunches', JSON.stringify(logs.map((l) => l.id)));
  if (result.error) return setPanel('launches-verdict', result.error, true);
  const differing = result.comparisons.filter((c) => !c.identical).length;
  setPanel('launches-verdict', result.identical
    ? `identical: all ${logs.length} logs launched the same kernels with the same shapes, step by step`
    : `not identical: ${differing} of ${result.comparisons.length} log(s) differ from ${logs[0].name}`, !result.identical);
  $('launches-comparisons').replaceChildren(...result.comparisons.map(comparisonBlock));
  $('launches-text').textContent = result.text;
  $('launches-cli').hidden = false;
}

// One log against the reference: its verdict, where it first parted, and the
// shapes of each kernel that only one side used.
function comparisonBlock(c) {
  const counts = `${c.steps[0]} vs ${c.steps[1]} steps, ${c.launches[0]} vs ${c.launches[1]} launches`;
  const verdict = c.unobserved ? `not comparable, nothing was observed (${c.unobserved})` : c.identical ? 'identical' : 'differ';
  const block = el('div', { className: `comparison${c.identical ? '' : ' differs'}` },
    el('h3', { textContent: `${c.reference} vs ${c.other}: ${verdict} (${counts})` }));
  block.dataset.other = c.other;
  if (c.first) {
    block.append(el('p', { className: 'first', textContent: `first difference: step ${c.first.step}, launch ${c.first.launch}` }));
    const table = el('table', { className: 'first-launch' },
      el('thead', {}, el('tr', {}, ...['log', 'kernel', 'shape', 'module'].map((h) => el('th', { textContent: h })))));
    const side = (name, launch) => el('tr', {}, ...[name, ...(launch
      ? [launch.kernel, launch.shape, launch.module ?? '']
      : ['(no launch: its launches ended here)', '', ''])].map((text) => el('td', { textContent: text })));
    table.append(el('tbody', {}, side(c.reference, c.first.reference), side(c.other, c.first.other)));
    block.append(table);
  }
  if (c.kernels.length) {
    const only = (name, shapes) => shapes.map((s) => el('li', { textContent: `only ${name}: ${s}` }));
    block.append(el('ul', { className: 'kernel-shapes' }, ...c.kernels.map((k) => el('li', {},
      el('span', { className: 'kernel-name', textContent: `kernel ${k.kernel}` }),
      el('ul', {}, ...only(c.reference, k.reference_only), ...only(c.other, k.other_only))))));
  }
  return block;
}
