// Each candidate's median time on each rank for one key, as an SVG scatter
// with rank labels and a y axis fitted to the data (points 0.68 ms and
// 0.75 ms apart must not overlap). Built as DOM nodes: text comes from files.
'use strict';

const SVG = 'http://www.w3.org/2000/svg';
const svgEl = (tag, attrs, text) => {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
  if (text !== undefined) node.textContent = text;
  return node;
};

function drawPlot() {
  const series = state.plot && state.plot[$('plot-key').value];
  if (!series) return $('plot').replaceChildren();
  const colors = ['#1f77b4', '#d62728', '#2ca02c', '#ff7f0e', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
  const points = Object.values(series).flat();
  const ranks = [...new Set(points.map((p) => p[0]))].sort((a, b) => a - b);
  const low = Math.min(...points.map((p) => p[1])), high = Math.max(...points.map((p) => p[1]));
  const pad = (high - low) * 0.1 || Math.max(high * 0.05, 1e-6);
  const y0 = Math.max(0, low - pad), y1 = high + pad;
  const names = Object.keys(series);
  const W = 640, H = 260, L = 70, B = 34, T = 10;
  const x = (rank) => L + 20 + (ranks.indexOf(rank) / Math.max(1, ranks.length - 1)) * (W - L - 50);
  const y = (ms) => H - B - ((ms - y0) / (y1 - y0)) * (H - B - T);
  const svg = svgEl('svg', { width: W, height: H + 20 * names.length, role: 'img' });
  svg.append(svgEl('line', { x1: L, y1: H - B, x2: W - 10, y2: H - B, stroke: '#888' }),
             svgEl('line', { x1: L, y1: T, x2: L, y2: H - B, stroke: '#888' }),
             svgEl('text', { x: W / 2, y: H - 4, 'font-size': 11 }, 'rank'),
             svgEl('text', { x: 4, y: T + 4, 'font-size': 11 }, 'ms'));
  for (const rank of ranks) svg.append(svgEl('text', { x: x(rank) - 3, y: H - B + 14, 'font-size': 11, class: 'rank-label' }, String(rank)));
  for (let i = 0; i <= 4; ++i) {
    const ms = y0 + ((y1 - y0) * i) / 4;
    svg.append(svgEl('text', { x: L - 4, y: y(ms) + 4, 'font-size': 10, 'text-anchor': 'end', class: 'ms-label' }, ms.toPrecision(3)),
               svgEl('line', { x1: L, y1: y(ms), x2: W - 10, y2: y(ms), stroke: '#eee' }));
  }
  names.forEach((signature, i) => {
    const color = colors[i % colors.length];
    // Candidates side by side at each rank, so equal times stay visible.
    const dx = (i - (names.length - 1) / 2) * 6;
    for (const [rank, ms] of series[signature]) {
      const dot = svgEl('circle', { cx: x(rank) + dx, cy: y(ms), r: 4, fill: color });
      dot.append(svgEl('title', {}, `${signature} on rank ${rank}: ${ms} ms`));
      svg.append(dot);
    }
    svg.append(svgEl('circle', { cx: L, cy: H + 10 + 20 * i, r: 4, fill: color }),
               svgEl('text', { x: L + 10, y: H + 14 + 20 * i, 'font-size': 11 }, signature));
  });
  $('plot').replaceChildren(svg);
}
