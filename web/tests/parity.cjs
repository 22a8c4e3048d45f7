// Parity: every case decided natively (web_parity_native) is decided again by
// the wasm build under Node; indices, reasons, signatures, errors and log
// digests must be identical. Then decisions per second on the same corpus.
// Usage: node parity.cjs TUNELOCK_JS CASES_JSON
const fs = require('fs');
const [modulePath, casesPath] = process.argv.slice(2);
const createTunelock = require(modulePath);

createTunelock({ printErr: () => {} }).then((tunelock) => {
  const cases = JSON.parse(fs.readFileSync(casesPath, 'utf8'));
  let mismatches = 0;
  const reasons = {};
  for (const c of cases) {
    const got = JSON.parse(tunelock.decideCase(JSON.stringify(c)));
    const want = c.expected;
    const same = ['index', 'reason', 'signature', 'error', 'digest']
      .every((field) => JSON.stringify(got[field]) === JSON.stringify(want[field]));
    reasons[want.reason || 'error'] = (reasons[want.reason || 'error'] || 0) + 1;
    if (!same && mismatches++ < 5) {
      console.log(`case ${c.id}: native ${JSON.stringify(want)}\n        wasm   ${JSON.stringify(got)}`);
    }
  }
  console.log(`parity: ${cases.length - mismatches}/${cases.length} cases identical; outcomes ${JSON.stringify(reasons)}`);
  const rate = tunelock.decisionsPerSecond(JSON.stringify(cases), 200);
  console.log(`wasm: ${rate.toPrecision(3)} decisions/s`);
  if (cases.length < 1000) {
    console.log('FAIL: fewer than 1000 cases');
    process.exit(1);
  }
  process.exit(mismatches === 0 ? 0 : 1);
});
