// Measures what a first-time user waits for, from file:// (no server): the
// engine ready, and the first decision on screen after "Try the example",
// both in ms since navigation (performance.now()); and the page's size.
// Usage: node first_decision.cjs SITE_DIR [RUNS]
const fs = require('fs');
const path = require('path');
const { chromium } = require('playwright-core');

const site = path.resolve(process.argv[2]);
const runs = Number(process.argv[3] || 5);

(async () => {
  const size = fs.readdirSync(site).reduce((sum, f) => sum + fs.statSync(path.join(site, f)).size, 0);
  console.log(`page: ${size} bytes (${(size / 1048576).toFixed(3)} MiB) in ${fs.readdirSync(site).length} files`);
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium', timeout: 120000,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
           '--disable-component-update', '--disable-sync', '--no-first-run'],
  });
  for (let run = 0; run < runs; ++run) {
    const page = await browser.newPage();
    page.setDefaultTimeout(120000);
    await page.goto(`file://${site}/index.html`);
    await page.waitForSelector('body[data-ready="true"]');
    const ready = await page.evaluate(() => performance.now());
    await page.click('#example');
    await page.waitForFunction(() => /^decision:/.test(document.querySelector('#decision').textContent));
    const decided = await page.evaluate(() => performance.now());
    console.log(`run ${run + 1}: engine ready ${ready.toFixed(0)} ms, first decision ${decided.toFixed(0)} ms after navigation`);
    await page.close();
  }
  await browser.close();
})();
