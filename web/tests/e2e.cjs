// End to end in headless Chromium (Debian's, driven by playwright-core): load
// the page, load tables and candidates, pick a kernel and key, check the
// decision text, load corrupt files and check the messages, save a
// screenshot. Usage: node e2e.cjs SITE_DIR SCREENSHOT TABLE... -- MANIFEST KERNEL KEY EXPECTED BLOCK
// (BLOCK: a block-size override that matches one of the kernel's candidates).
const http = require('http');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { chromium } = require('playwright-core');

const [site, screenshot, ...rest] = process.argv.slice(2);
const split = rest.indexOf('--');
const tables = rest.slice(0, split);
const [manifest, kernel, key, expected, block] = rest.slice(split + 1);

function serve(root) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
  const server = http.createServer((req, res) => {
    const file = path.join(root, path.normalize(decodeURIComponent(req.url.split('?')[0])).replace(/^\/+/, '') || 'index.html');
    if (!file.startsWith(root) || !fs.existsSync(file)) { res.writeHead(404); return res.end(); }
    res.writeHead(200, { 'Content-Type': types[path.extname(file)] || 'application/octet-stream' });
    fs.createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

function check(condition, what) {
  if (!condition) throw new Error(`FAIL: ${what}`);
  console.log(`ok: ${what}`);
}

(async () => {
  const server = await serve(path.resolve(site));
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--disable-quic', '--no-first-run'],
  });
  let failed = false;
  try {
    const page = await browser.newPage({ viewport: { width: 1200, height: 1400 } });
    const errors = [];
    page.on('pageerror', (e) => errors.push(String(e)));
    const start = Date.now();
    await page.goto(`http://127.0.0.1:${server.address().port}/index.html`);
    await page.waitForSelector('body[data-ready="true"]', { timeout: 10000 });
    await page.setInputFiles('#file-input', [...tables, manifest]);
    await page.fill('#kernel', kernel);
    await page.fill('#key', key);
    await page.waitForFunction(() => /^decision:/.test(document.querySelector('#decision').textContent), null, { timeout: 10000 });
    const firstDecisionMs = Date.now() - start;
    console.log(`first decision on screen ${firstDecisionMs} ms after navigation`);

    // The first table is selected explicitly: its decision is the expected one.
    const firstTableId = await page.$eval('#table-select', (s) => s.options[1].value);
    await page.selectOption('#table-select', firstTableId);
    const decision = await page.textContent('#decision');
    check(decision.includes(expected) && decision.includes('(table)'), `decision from the table: ${decision}`);
    check((await page.$$('#candidates tbody tr')).length >= 2, 'candidates ranked by cost');
    check((await page.textContent('#explanation')).includes('decides'), 'explanation lists what each rule found');

    await page.fill('#blocks', block);
    await page.selectOption('#table-select', '-1');
    check((await page.textContent('#decision')).includes('(block_sizes)'), 'block-size override without a table');
    await page.fill('#blocks', '');
    await page.check('#chaos');
    check((await page.textContent('#decision')).includes('chaos picks rank 0'), 'chaos shows each rank\'s pick');
    await page.uncheck('#chaos');

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tunelock-e2e-'));
    fs.writeFileSync(path.join(dir, 'corrupt.tlb'), Buffer.from('TLTBgarbage, not a table at all'));
    fs.writeFileSync(path.join(dir, 'truncated.json'), '{"arch": "sm90", "kernels": {"k": ');
    fs.writeFileSync(path.join(dir, 'empty.json'), '');
    await page.setInputFiles('#file-input', ['corrupt.tlb', 'truncated.json', 'empty.json'].map((f) => path.join(dir, f)));
    await page.waitForFunction(() => document.querySelectorAll('#messages .error').length >= 3, null, { timeout: 10000 });
    const messages = await page.textContent('#messages');
    console.log(`messages: ${messages}`);
    check(messages.includes('corrupt.tlb: not a binary tunelock table'), 'corrupt binary table message');
    check(messages.includes('truncated.json: not valid JSON'), 'truncated JSON message');
    check(messages.includes('empty.json: empty file'), 'empty file message');
    check((await page.textContent('#decision')).startsWith('decision:'), 'page still works after bad files');
    if (tables.length > 1) check((await page.textContent('#diff-out')).length > 0, 'diff of two tables shown');

    // Two ranks' records that disagree on one key, with timings, and their choice logs.
    // Rank 1 writes Megatron's current full form (nulls included), rank 0 the older one:
    // M=2 is one config in two forms, so only M=1 disagrees.
    const cfg = (m, w) => ({ kwargs: { BLOCK_M: m }, num_warps: w, num_stages: 3 });
    const full = (m, w) => ({ ...cfg(m, w), num_ctas: 1, maxnreg: null, ir_override: null });
    for (const [rank, form] of [[0, cfg], [1, full]]) {
      const winner = rank ? form(64, 4) : form(128, 8);
      fs.writeFileSync(path.join(dir, `rec.rank${rank}.json`), JSON.stringify({ sm90: { 'pkg.mm': { 'M=1': winner, 'M=2': form(64, 4) } } }));
      fs.writeFileSync(path.join(dir, `rec.rank${rank}.timings.json`), JSON.stringify({ format_version: 1, rank, device: {},
        timings: { sm90: { 'pkg.mm': { 'M=1': [{ signature: 'BLOCK_M=128;warps=8;stages=3', median_ms: 1.0 + rank / 10 },
                                               { signature: 'BLOCK_M=64;warps=4;stages=3', median_ms: 1.05 }] } } } }));
      fs.writeFileSync(path.join(dir, `log.rank${rank}.json`), JSON.stringify({ rank, entries: { 'sm90|pkg.mm|M=1': (rank ? 'B' : 'A') + ';pinned' } }));
    }
    await page.setInputFiles('#file-input', ['rec.rank0.json', 'rec.rank0.timings.json', 'rec.rank1.json', 'rec.rank1.timings.json',
                                             'log.rank0.json', 'log.rank1.json'].map((f) => path.join(dir, f)));
    await page.waitForFunction(() => /ranks chose differently/.test(document.querySelector('#report-out').textContent), null, { timeout: 10000 });
    check((await page.textContent('#report-out')).includes('sm90|pkg.mm|M=1'), 'disagreement report of the record files');
    check(!(await page.textContent('#report-out')).includes('sm90|pkg.mm|M=2'), "Megatron's full and older forms of one config agree");
    check((await page.$$('#plot circle')).length >= 4, 'timings plotted across ranks');
    check((await page.textContent('#logs-out')).includes("'A;pinned' on rank 0; 'B;pinned' on rank 1"), 'choice logs checked against each other');
    await page.selectOption('#table-select', firstTableId);
    check(errors.length === 0, `no page errors ${errors.join('; ')}`);
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`screenshot: ${screenshot}`);
  } catch (e) {
    console.log(e.message);
    failed = true;
  } finally {
    await browser.close();
    server.close();
  }
  process.exit(failed ? 1 : 0);
})();
