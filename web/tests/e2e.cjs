// End to end in headless Chromium (Debian's, driven by playwright-core), as a
// first-time user: open the page, load files, read what it shows; never a
// step a user would not take. Every wait is on the page's own state
// (data-ready, data-loads, panel text) with deadlines that fit a cold,
// busy 2-core machine. Usage:
//   node e2e.cjs SITE_DIR SCREENSHOT TUNELOCK_CLI EXAMPLES_DIR TABLE... -- MANIFEST KERNEL KEY EXPECTED BLOCK
// (BLOCK: a block-size override that matches one of the kernel's candidates).
const http = require('http');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync } = require('child_process');
const { chromium } = require('playwright-core');

const [site, screenshot, cli, examples, ...rest] = process.argv.slice(2);
const split = rest.indexOf('--');
const tables = rest.slice(0, split);
const [manifest, kernel, key, expected, block] = rest.slice(split + 1);
const DEADLINE = 120000;  // a cold Chromium start beside 8 UCX processes on 2 cores

function serve(root) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
  const server = http.createServer((req, res) => {
    const file = path.join(root, path.normalize(decodeURIComponent(req.url.split('?')[0])).replace(/^\/+/, '') || 'index.html');
    if (!file.startsWith(root) || !fs.existsSync(file)) { res.writeHead(404); return res.end(); }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    // One script arrives late, as on a slow network: the page must still
    // start only once every script is in (the engine can be ready first).
    setTimeout(() => fs.createReadStream(file).pipe(res), file.endsWith('plot.js') ? 1500 : 0);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function check(condition, what) {
  if (!condition) throw new Error(`FAIL: ${what}`);
  console.log(`ok: ${what}`);
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tunelock-e2e-'));
const write = (name, content) => { fs.writeFileSync(path.join(dir, name), content); return path.join(dir, name); };
const text = (page, selector) => page.textContent(selector);

// Loads files through the file picker and waits for the page to say it took them.
async function load(page, files) {
  const before = Number(await page.evaluate(() => document.body.dataset.loads || 0));
  await page.setInputFiles('#file-input', files);
  await page.waitForFunction((n) => Number(document.body.dataset.loads || 0) > n, before);
}

async function openPage(browser, url, errors) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  page.setDefaultTimeout(DEADLINE);
  page.on('pageerror', (e) => errors.push(String(e)));
  // A script error before start-up fails at once, not after the deadline.
  const broken = new Promise((_, reject) => page.once('pageerror', (e) => reject(new Error(`page error before ready: ${e}`))));
  broken.catch(() => {});
  await page.goto(url, { timeout: DEADLINE });
  await Promise.race([page.waitForSelector('body[data-ready="true"]'), broken]);
  return page;
}

async function firstUse(page, start) {
  // Load the tables and manifest, and do nothing else.
  await load(page, [...tables, manifest]);
  const decision = await text(page, '#decision');
  console.log(`first decision on screen ${Date.now() - start} ms after navigation: ${decision}`);
  const selected = await page.$eval('#table-select', (s) => s.options[s.selectedIndex].textContent);
  check(!selected.startsWith('(none'), `a loaded table is selected: ${selected}`);
  check(!(await text(page, '#browse-list')).includes('Load a table'), 'Table contents lists the loaded table');
  check(decision.startsWith('decision:') && decision.includes('(table)'), 'first decision comes from the table');

  // The expected key of the first table, reached with the keyboard.
  await page.selectOption('#table-select', { index: 1 });
  const index = await page.$$eval('#browse-list button.key', (buttons, [k, names]) => buttons.findIndex((b) =>
    b.textContent === k && names.includes(b.parentNode.querySelector('.kernel-name').textContent)), [key, [kernel, kernel.split('.').pop()]]);
  check(index >= 0, 'the key is listed under its kernel in Table contents');
  const button = page.locator('#browse-list button.key').nth(index);
  await button.focus();
  await page.keyboard.press('Enter');
  const picked = await text(page, '#decision');
  check(picked.includes(expected) && picked.includes('(table)'), `a key picked with the keyboard decides: ${picked}`);
  check((await page.$$('#candidates tbody tr')).length >= 2, 'candidates ranked by cost');
  check((await text(page, '#explanation')).includes('decides'), 'explanation lists what each rule found');

  // The bare name shown in Table contents decides as the qualified one.
  await page.fill('#kernel', kernel.split('.').pop());
  const bare = await text(page, '#decision');
  check(bare.includes(expected) && bare.includes(`for ${kernel}`), `bare kernel name accepted: ${bare}`);
  await page.fill('#kernel', kernel);
  const offered = await page.$$eval('#key-list option', (options) => options.map((o) => o.value));
  check(offered.includes(key), `the key list offers the table's keys for ${kernel} (${offered.length} key(s))`);

  await page.fill('#key', 'no-such-key');
  check((await text(page, '#decision')).includes('(min_cost)') && (await text(page, '#warnings')).includes('may be slower'),
    'a min_cost decision carries the warning a run logs');
  await page.fill('#key', key);
  await page.fill('#blocks', block);
  await page.selectOption('#table-select', '-1');
  check((await text(page, '#decision')).includes('(block_sizes)'), 'block-size override without a table');
  await page.fill('#blocks', '');
  await page.check('#chaos');
  check((await text(page, '#decision')).includes('chaos picks rank 0'), 'chaos shows each rank\'s pick');
  await page.uncheck('#chaos');
  await page.selectOption('#table-select', { index: 1 });
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  check(width <= 1280, `page fits a 1280 px window with long keys (${width} px)`);
}

async function badFiles(page) {
  const before = (await page.$$('#loaded li')).length;
  await load(page, [write('corrupt.tlb', 'TLTBgarbage, not a table at all'), write('truncated.json', '{"arch": "sm90", "kernels": {"k": '),
    write('empty.json', ''), write('array.json', '[1, 2]')]);
  const messages = await text(page, '#messages');
  console.log(`messages: ${messages}`);
  check(messages.includes('corrupt.tlb: not a binary tunelock table'), 'corrupt binary table message');
  check(messages.includes('truncated.json: not valid JSON'), 'truncated JSON message');
  check(messages.includes('empty.json: empty file'), 'empty file message');
  check(messages.includes('array.json:') && !messages.includes(': :'), 'array.json message reads cleanly');
  check((await page.$$('#loaded li')).length === before, 'refused files are not listed as loaded');
  check((await text(page, '#decision')).startsWith('decision:'), 'page still works after bad files');
  const count = (await page.$$('#messages > div')).length;
  await page.click('#messages > div >> nth=0 >> button.dismiss');
  check((await page.$$('#messages > div')).length === count - 1, 'a message can be dismissed');
  await page.click('#dismiss-all');
  check((await page.$$('#messages > div')).length === 0, 'all messages can be dismissed');
}

// Two ranks' records (binary sidecars) that disagree on one key, loaded one rank at a time.
async function records(page) {
  const cfg = (m, w) => ({ kwargs: { BLOCK_M: m }, num_warps: w, num_stages: 3 });
  // Rank 1 writes Megatron's current full form (nulls included), rank 0 the
  // older one: M=2 is one config in two forms, so only M=1 disagrees.
  const full = (m, w) => ({ ...cfg(m, w), num_ctas: 1, maxnreg: null, ir_override: null });
  const files = [];
  for (const [rank, form, winner] of [[0, cfg, cfg(128, 8)], [1, full, full(64, 4)]]) {
    write(`rec.rank${rank}.json`, JSON.stringify({ sm90: { 'pkg.mm': { 'M=1': winner, 'M=2': form(64, 4) } } }));
    write(`t${rank}.json`, JSON.stringify({ format_version: 1, rank, device: {}, timings: { sm90: { 'pkg.mm': {
      'M=1': [{ signature: 'BLOCK_M=128;warps=8;stages=3', median_ms: 0.68 + rank / 100 }, { signature: 'BLOCK_M=64;warps=4;stages=3', median_ms: 0.75 }] } } } }));
    execFileSync(cli, ['timings', 'convert', path.join(dir, `t${rank}.json`), path.join(dir, `rec.rank${rank}.timings.tlrt`)]);
    files.push([path.join(dir, `rec.rank${rank}.json`), path.join(dir, `rec.rank${rank}.timings.tlrt`)]);
  }
  await load(page, files[0]);
  check((await text(page, '#messages')) === '', 'a binary timing sidecar (.tlrt) loads');
  check((await text(page, '#report-out')).includes('all ranks chose alike'), 'one rank alone: alike');
  await load(page, files[1]);
  const report = await text(page, '#report-out');
  check(report.includes('sm90|pkg.mm|M=1') && !report.includes('all ranks chose alike'), 'the rest of the run replaces the stale verdict');
  check(!report.includes('sm90|pkg.mm|M=2'), "Megatron's full and older forms of one config agree");
  check((await page.$$('#plot circle')).length >= 4, 'timings plotted across ranks');
  check((await page.$$eval('#plot text.rank-label', (t) => t.map((x) => x.textContent))).join(',') === '0,1', 'plot has rank labels');
  const lowest = await page.$$eval('#plot text.ms-label', (t) => Math.min(...t.map((x) => Number(x.textContent))));
  check(lowest > 0.6 && lowest < 0.68, `y axis fitted to the data, not from 0 (lowest label ${lowest} ms)`);
  const ys = await page.$$eval('#plot circle title', (ts) => ts.map((t) => Number(t.parentNode.getAttribute('cy'))));
  check(Math.max(...ys) - Math.min(...ys) > 100, 'points 0.68 ms and 0.75 ms apart are far apart');
  await load(page, [write('bad.timings.tlrt', Buffer.concat([Buffer.from([12, 0, 0, 0]), Buffer.from('TLRTgarbage bytes here')]))]);
  const message = await text(page, '#messages');
  check(message.includes('bad.timings.tlrt') && !message.includes('rec.rank'), `sidecar error names the sidecar: ${message}`);
  await page.click('#messages button.dismiss');
}

async function logs(page) {
  const log = (run, rank, value) => write(`${run}.rank${rank}.json`, JSON.stringify({ rank, entries: { 'sm90|pkg.mm|M=1': value + ';pinned' } }));
  log('a', 0, 'BLOCK_M=64;warps=4;stages=3');
  execFileSync(cli, ['log', 'convert', path.join(dir, 'a.rank0.json'), path.join(dir, 'a.rank0.tlcl')]);
  await load(page, [path.join(dir, 'a.rank0.tlcl'), log('a', 1, 'BLOCK_M=64;warps=4;stages=3')]);
  check((await text(page, '#messages')) === '', 'a binary choice log (.tlcl) loads');
  check((await text(page, '#logs-out')).includes('agreed'), 'one run\'s ranks agree');
  await load(page, [write('b.rank0.json', '{"rank": 0, "entries": {"k": 5}}')]);
  check((await text(page, '#messages')).includes('b.rank0.json'), 'a bad log is refused with its name');
  await page.click('#messages button.dismiss');
  check(!(await text(page, '#loaded')).includes('b.rank0.json'), 'the refused log is not listed');
  await load(page, [log('b', 0, 'BLOCK_M=128;warps=8;stages=3'), log('b', 1, 'BLOCK_M=64;warps=4;stages=3')]);
  const out = await text(page, '#logs-out');
  check(out.includes('run a:') && out.includes('run b:') && !out.includes('appears in two logs'), 'two runs\' logs grouped by run');
  check(out.includes("'BLOCK_M=128;warps=8;stages=3;pinned' on rank 0"), 'run b\'s ranks disagree');
  check(await page.isVisible('#compare'), 'run comparison offered for two runs');
  const compare = await text(page, '#compare-out');
  check(compare.includes('0 key(s) chosen alike') && compare.includes('B ran BLOCK_M=128;warps=8;stages=3 or BLOCK_M=64;warps=4;stages=3'), `run A against run B: ${compare}`);
  // Removing a run's log redraws the panel from what is left.
  await page.click('#loaded li:has-text("b.rank0.json") button.remove');
  check((await text(page, '#logs-out')).includes('run b:') && !(await text(page, '#logs-out')).includes('BLOCK_M=128'), 'a removed log leaves the verdict');
}

// A table's provenance on show, and audit runs' files: what the table costs today.
async function provenanceAndAudit(page) {
  await load(page, [write('merged.json', JSON.stringify({
    arch: 'sm90', kernels: { 'pkg.mm': { 'M=1': { kwargs: { BLOCK_M: 64 }, num_warps: 4, num_stages: 3 } } },
    triton: '3.6.0', provenance: { device_name: 'NVIDIA H200', sm_count: 132, ranks: 8, runs: 2, mixed: ['driver_version'] } }))]);
  await page.selectOption('#table-select', { label: await page.$eval('#table-select', (s) => [...s.options].find((o) => o.textContent.startsWith('merged.json')).textContent) });
  const shown = await text(page, '#provenance');
  check(shown.includes('NVIDIA H200 (132 SMs)') && shown.includes('8 rank(s) of 2 run(s)') && shown.includes('the records differed in driver_version'),
        `the selected table's provenance is shown: ${shown}`);
  // A batch-invariant table: its classes and the gate's verdict on show.
  const cfg = { kwargs: { BLOCK_M: 64 }, num_warps: 4, num_stages: 3 };
  await load(page, [write('invariant.json', JSON.stringify({ arch: 'sm90', kernels: { 'pkg.mm': { 'M=1|N=8': cfg, 'M=4|N=8': cfg } },
    invariance: { 'pkg.mm': { dim: 'M', variant: [], groups: { 'N=8': { class: ['BLOCK_M=64;warps=4;stages=3'], proven: [1, 2, 4], recorded: [1, 4] } } } } }))]);
  await page.selectOption('#table-select', { label: await page.$eval('#table-select', (s) => [...s.options].find((o) => o.textContent.startsWith('invariant.json')).textContent) });
  const classes = await text(page, '#provenance');
  check(classes.includes('pkg.mm [N=8] over M: class BLOCK_M=64;warps=4;stages=3; proven at 3 size(s), up to 4') && classes.includes('pkg.mm: proven'),
        `a batch-invariant table's classes and verdict are shown: ${classes}`);
  const audit = (rank, pinnedMs) => write(`run.rank${rank}.audit.json`, JSON.stringify({
    format_version: 1, rank, device: {}, entries: [{ arch: 'sm90', kernel: 'pkg.mm', key: 'M=1', pinned: 'P', reason: 'table',
      stale: false, repeats: true, equivalent_differs: [], calls: 5,
      candidates: [{ signature: 'P', median_ms: pinnedMs }, { signature: 'F', median_ms: 1.0 }] }] }));
  check((await text(page, '#audit-out')).startsWith('Load audit files'), 'the audit panel asks for audit files');
  await load(page, [audit(0, 1.2), audit(1, 1.2)]);
  const report = await text(page, '#audit-out');
  check(report.includes('regret 20.0% (over the limit); 10 call(s) on 2 rank(s)') && report.includes('The audit fails'),
        `two ranks' audit files: the entry's regret over the limit: ${report}`);
  await page.fill('#max-regret', '25');
  await page.waitForFunction(() => document.getElementById('audit-out').textContent.includes('The audit passes'));
  check(true, 'a higher limit passes the same audit');
  // A gate must not pass what it did not measure: a pinned config that no candidate timed.
  await load(page, [write('run.rank2.audit.json', JSON.stringify({
    format_version: 1, rank: 2, device: {}, entries: [{ arch: 'sm90', kernel: 'pkg.mm', key: 'M=2', pinned: 'P', reason: 'table',
      stale: false, repeats: true, equivalent_differs: [], calls: 5, candidates: [] }] }))]);
  await page.waitForFunction(() => document.getElementById('audit-out').textContent.includes('The audit fails'));
  const unmeasured = await text(page, '#audit-out');
  check(unmeasured.includes('regret unknown: the pinned config was not measured') && unmeasured.includes('never measured'),
        `an entry never measured fails the audit at any limit: ${unmeasured}`);
  await load(page, [write('broken.audit.json', '{"format_version": 1, "entries": [{"arch": "sm90"}]}')]);
  const message = await text(page, '#messages');
  check(message.includes('broken.audit.json: entries[0].kernel: missing'), `a bad audit file is refused by name and path: ${message}`);
  await page.click('#messages button.dismiss');
}

// Launch logs (tests/web/fixtures, written by the engine): two ranks alike,
// one binary; a third whose step 1 parts at launch 2; a changed file refused.
async function launchLogs(page) {
  const fixture = (name) => path.join(__dirname, '..', '..', 'tests', 'web', 'fixtures', name);
  check((await text(page, '#launches-verdict')).startsWith('Load launch logs'), 'the launch-log panel asks for launch logs');
  await load(page, [fixture('train.rank0.launches.json'), fixture('train.rank1.launches.tlln')]);
  check((await text(page, '#messages')) === '', 'a JSON and a binary launch log load');
  check((await text(page, '#launches-verdict')).startsWith('identical: all 2 logs'), 'two ranks that launched alike: identical');
  check((await page.$$('#launches-logs tbody tr')).length === 2, 'both launch logs listed');
  await load(page, [fixture('train.rank2.launches.json')]);
  check((await text(page, '#launches-verdict')).startsWith('not identical: 1 of 2 log(s) differ'), 'a rank that launched otherwise: not identical');
  const block = '#launches-comparisons .comparison[data-other="train.rank2.launches.json"]';
  check((await text(page, `${block} .first`)) === 'first difference: step 1, launch 2', 'the first divergent step and launch named');
  const rows = await page.$$eval(`${block} .first-launch tbody tr`, (trs) => trs.map((tr) => [...tr.cells].map((td) => td.textContent)));
  check(rows.length === 2 && rows.every((r) => r[1] === 'nvjet_tst_128x64_64x4_1x2_h_bz_TNT') &&
    rows[0][2].startsWith('grid 128x1x1') && rows[1][2].startsWith('grid 128x2x1'), `each side's kernel and shape: ${JSON.stringify(rows)}`);
  check((await text(page, `${block} .kernel-shapes`)).includes('only train.rank2.launches.json: grid 128x2x1 block 256x1x1 smem 49152'),
    'the shape only one side used');
  check((await text(page, '#launches-text')).includes('train.rank0.launches.json vs train.rank2.launches.json: differ'), 'the CLI\'s text beside it');
  await load(page, [fixture('corrupt.rank0.launches.json')]);
  const message = await text(page, '#messages');
  check(message.includes('corrupt.rank0.launches.json: steps[0].digest:'), `a changed launch log is refused by name and path: ${message}`);
  await page.click('#messages button.dismiss');
  check(!(await text(page, '#loaded')).includes('corrupt.rank0'), 'the refused launch log is not listed');
  await page.click('#loaded li:has-text("train.rank2.launches.json") button.remove');
  check((await text(page, '#launches-verdict')).startsWith('identical'), 'removing the differing rank leaves the others identical');
}

// "Try the example": every panel working, and the run preview as the CLI computes it.
async function example(page) {
  await page.click('#clear');
  check((await page.$$('#loaded li')).length === 0 && (await text(page, '#decision')).startsWith('Load'), 'Clear all empties the page');
  const before = Number(await page.evaluate(() => document.body.dataset.loads || 0));
  await page.click('#example');
  await page.waitForFunction((n) => Number(document.body.dataset.loads || 0) > n, before);
  check((await text(page, '#messages')) === '', 'the example loads without a message');
  check((await text(page, '#decision')).includes('(table)'), 'example: a decision from its table');
  const diffArchs = await page.evaluate(() => ['diff-a', 'diff-b'].map((id) => {
    const s = document.getElementById(id);
    return s.options[s.selectedIndex].textContent;
  }));
  check(diffArchs[0].startsWith('host-skewed-clocks.json (host)') && diffArchs[1].startsWith('host.json (host)'),
        `example: the diff compares two tables of one arch: ${diffArchs}`);
  check((await text(page, '#diff-out')).includes('changed: demo.ops.matmul_splitk'), 'example: the diff shows a changed entry, not every entry added');
  check((await text(page, '#audit-out')).includes('key(s) audited'), 'example: the audit panel reports the audit files');
  check((await text(page, '#launches-verdict')).startsWith('identical'), 'example: the launch-logs panel compares the two ranks');
  check((await page.$$('#plot circle')).length > 0, 'example: timings plotted');
  check((await text(page, '#logs-out')).includes('agreed'), 'example: choice logs checked');
  check((await text(page, '#compare-out')).includes('chosen alike'), 'example: two runs compared');
  const preview = await text(page, '#preview-out');
  const run = await page.$eval('#preview-run', (s) => s.value);
  const table = await page.$eval('#table-select', (s) => s.options[s.selectedIndex].textContent.split(' ')[0]);
  const logFiles = fs.readdirSync(path.join(examples, 'run')).filter((f) => f.startsWith(`${run}.rank`)).map((f) => path.join(examples, 'run', f));
  const tableFile = [path.join(examples, 'tables', table), path.join(examples, 'run', 'tables', table)].find(fs.existsSync);
  const cliResult = JSON.parse(execFileSync(cli, ['preview', ...logFiles, '--table', tableFile, '--candidates', path.join(examples, 'candidates.json'), '--json']));
  const s = cliResult.summary;
  check(s.keys > 0 && preview.startsWith(`${s.keys} logged key(s)`) && preview.includes(`${s.table} by the table's exact key`) &&
        preview.includes(`${s.min_cost} by the cheapest fallback`) && preview.includes(`${s.changes} choice(s) would change`),
        `run preview matches tunelock preview: ${preview}`);
  check((await page.$$('#preview-keys tbody tr')).length === s.keys, 'run preview lists every logged key');
  const width = await page.evaluate(() => document.documentElement.scrollWidth);
  check(width <= 1280, `page fits a 1280 px window with every panel filled (${width} px)`);
}

(async () => {
  const server = await serve(path.resolve(site));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', timeout: DEADLINE,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'],
  });
  let failed = false;
  const errors = [];
  try {
    const size = fs.readdirSync(site).reduce((sum, f) => sum + fs.statSync(path.join(site, f)).size, 0);
    // One file of engine (the wasm, base64) and the page: about 1 MB since
    // the engine reads batch-invariant tables; the budget keeps growth seen.
    check(size < 1.1 * 1024 * 1024, `the whole page is under 1.1 MB (${size} bytes)`);
    const start = Date.now();
    const page = await openPage(browser, `http://127.0.0.1:${server.address().port}/index.html`, errors);
    await firstUse(page, start);
    await badFiles(page);
    await records(page);
    await logs(page);
    await provenanceAndAudit(page);
    await launchLogs(page);
    await example(page);
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`screenshot: ${screenshot}`);
    // Offline: the same page straight from the disk.
    const offline = await openPage(browser, `file://${path.resolve(site)}/index.html`, errors);
    const before = Number(await offline.evaluate(() => document.body.dataset.loads || 0));
    await offline.click('#example');
    await offline.waitForFunction((n) => Number(document.body.dataset.loads || 0) > n, before);
    check((await text(offline, '#decision')).includes('(table)'), 'works from file:// with the example');
    check(errors.length === 0, `no page errors ${errors.join('; ')}`);
  } catch (e) {
    console.log(e.message);
    if (errors.length) console.log(`page errors: ${errors.join('; ')}`);
    failed = true;
  } finally {
    await browser.close();
    server.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
  process.exit(failed ? 1 : 0);
})();
