// The bindings the page asks for rules it must not spell itself, under Node:
// fileKind (what a dropped file is: the kind every file the page's tests
// load was given before), and the qualified-then-bare name rule
// (manifestKernel, tableKeys), and launch logs loaded and compared
// (loadLaunches, compareLaunches). Usage:
//   node bindings.cjs TUNELOCK_JS SOURCE_DIR [SHARED_FIXTURES_DIR]
const fs = require('fs');
const path = require('path');
const [modulePath, source, shared] = process.argv.slice(2);
const createTunelock = require(path.resolve(modulePath));

let failures = 0;
function check(condition, what) {
  if (!condition) failures++;
  console.log(`${condition ? 'ok' : 'FAIL'}: ${what}`);
}

const bytes = (text) => (typeof text === 'string' ? new TextEncoder().encode(text) : new Uint8Array(text));
const example = (name) => new Uint8Array(fs.readFileSync(path.join(source, 'examples', name)));

createTunelock({ printErr: () => {} }).then((engine) => {
  const call = (fn, ...args) => JSON.parse(engine[fn](...args));
  const kindOf = (name, data) => call('fileKind', name, data);

  // The example the page embeds, and the files its browser test drops.
  const expected = {
    'candidates.json': 'manifest', 'tables/sm90.json': 'table', 'run/tables/host.json': 'table',
    'run/record.rank0.json': 'record', 'run/record.rank0.timings.json': 'timings',
    'run/record-log.rank0.json': 'choice_log', 'run/pinned-log.rank1.json': 'choice_log',
  };
  for (const [name, kind] of Object.entries(expected)) {
    const got = kindOf(name, example(name));
    check(got.kind === kind && got.encoding === 'json', `${name} is a JSON ${kind} (${JSON.stringify(got)})`);
  }
  const manifest = fs.readFileSync(path.join(source, 'tests/web/fixtures/megatron-candidates.json'));
  check(kindOf('megatron-candidates.json', bytes(manifest)).kind === 'manifest', "Megatron's candidates are a manifest");
  if (shared && fs.existsSync(path.join(shared, 'megatron-tables'))) {
    for (const arch of ['sm100', 'sm103']) {
      const got = kindOf(`${arch}.json`, bytes(fs.readFileSync(path.join(shared, 'megatron-tables', `${arch}.json`))));
      check(got.kind === 'table', `Megatron's ${arch}.json is a table`);
    }
  } else {
    console.log('note: ../shared/fixtures is absent; Megatron\'s tables are not checked');
  }
  const identified = (id) => bytes(Buffer.concat([Buffer.from([12, 0, 0, 0]), Buffer.from(`${id}garbage bytes here`)]));
  check(kindOf('bad.timings.tlrt', identified('TLRT')).encoding === 'binary', 'a damaged .tlrt is a binary sidecar');
  check(kindOf('t.json', identified('TLTB')).kind === 'table', 'a binary table under a JSON name is a table');
  check(kindOf('a.rank0.tlcl', identified('TLCL')).kind === 'choice_log', 'a .tlcl is a choice log');
  check(kindOf('corrupt.tlb', bytes('TLTBgarbage, not a table at all')).kind === 'table', 'a damaged .tlb is a table');
  check(kindOf('truncated.json', bytes('{"arch": "sm90", "kernels": {"k": ')).kind === 'table', 'a cut table is a table');
  check(kindOf('b.rank0.json', bytes('{"rank": 0, "entries": {"k": 5}}')).kind === 'choice_log', 'a bad log is a log');
  const empty = kindOf('empty.json', bytes(''));
  check(empty.kind === 'unknown' && empty.problem.startsWith('empty.json: empty file'), `empty: ${empty.problem}`);
  const array = kindOf('array.json', bytes('[1, 2]'));
  check(array.kind === 'unknown' && array.problem.startsWith('array.json: not a tunelock file') && !array.problem.includes(': :'),
    `array: ${array.problem}`);
  const garbage = kindOf('x.bin', bytes([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3, 4]));
  check(garbage.kind === 'unknown' && garbage.problem.startsWith('x.bin: not a tunelock file'), `garbage: ${garbage.problem}`);

  const binary = call('loadTable', 'sm90.json', identified('TLTB'));
  check(binary.error && binary.error.includes('sm90.json: '), `loadTable reads by the bytes: ${binary.error}`);
  const wrong = call('loadTable', 'm.json', bytes('{"configs": [{"num_warps": 4}]}'));
  check(wrong.error && wrong.error.includes('not a table'), `loadTable refuses another kind: ${wrong.error}`);

  // The name rule: a table's bare names are the manifest's qualified ones.
  const m = call('loadCandidates', 'candidates.json', bytes(JSON.stringify({ kernels: {
    'pkg.ops.mm': { configs: [{ num_warps: 4 }] }, 'mm': { configs: [{ num_warps: 4 }] },
    'pkg.ops.norm': { configs: [{ num_warps: 4 }] }, 'other.norm': { configs: [{ num_warps: 4 }] } } })));
  const named = (kernel) => call('manifestKernel', m.id, kernel).kernel;
  check(named('pkg.ops.mm') === 'pkg.ops.mm', 'a qualified name is itself');
  check(named('mm') === 'mm', 'an exact name wins over a bare one');
  check(named('norm') === 'other.norm', 'a bare name shared by two kernels: the manifest\'s first');
  check(named('ops.norm') === null && named('nope') === null, 'a name no kernel is filed under: null');
  check(call('manifestKernel', 9999, 'mm').error !== undefined, 'a manifest no longer loaded: an error');

  const cfg = { kwargs: { BLOCK_M: 64 }, num_warps: 4, num_stages: 3 };
  const t = call('loadTable', 'sm90.json', bytes(JSON.stringify({ arch: 'sm90', kernels: {
    'pkg.mm': { 'M=2': cfg }, 'mm': { 'M=1': cfg, 'M=2': cfg } } })));
  const keys = (kernel) => JSON.stringify(call('tableKeys', t.id, kernel));
  // A table that knows its kernels' code shows it beside the provenance.
  const known = call('loadTable', 'sm90.json', bytes(JSON.stringify({ arch: 'sm90',
    kernels: { 'pkg.mm': { 'M=2': cfg } }, identities: { 'pkg.mm': 'triton:abc' } })));
  check(JSON.stringify(known.provenance).includes('["identity","pkg.mm triton:abc"]'),
        `the summary lists the identity: ${JSON.stringify(known.provenance)}`);
  // A batch-invariant table shows each group's class and the gate's verdict.
  const invariant = call('loadTable', 'sm90.json', bytes(JSON.stringify({ arch: 'sm90',
    kernels: { 'pkg.mm': { 'M=1|N=8': cfg, 'M=4|N=8': cfg } },
    invariance: { 'pkg.mm': { dim: 'M', variant: ['BLOCK_M=16;warps=4;stages=3'],
      groups: { 'N=8': { class: ['BLOCK_M=64;warps=4;stages=3'], proven: [1, 2, 4], recorded: [1, 4] } } } } })));
  const shownInvariance = JSON.stringify(invariant.provenance);
  check(shownInvariance.includes('["invariance","pkg.mm [N=8] over M: class BLOCK_M=64;warps=4;stages=3; proven at 3 size(s), up to 4"]') &&
        shownInvariance.includes('["invariance","pkg.mm BLOCK_M=16;warps=4;stages=3 is batch-variant, never pinned"]') &&
        shownInvariance.includes('["invariance gate","pkg.mm: proven"]'),
        `the summary lists the classes and the verdict: ${shownInvariance}`);
  check(invariant.invariance.passes === true && invariant.invariance.kernels[0].verdict === 'proven',
        `the gate as tunelock table invariance --json gives it: ${JSON.stringify(invariant.invariance)}`);
  check(t.invariance.passes === false && !JSON.stringify(t.provenance).includes('invariance'),
        'a plain table: no invariance lines, and the gate does not pass');
  check(keys('pkg.mm') === '["M=2","M=1"]', `qualified keys first, then the bare name's: ${keys('pkg.mm')}`);
  check(keys('mm') === '["M=1","M=2"]', 'a bare name: its own keys');
  check(keys('other.mm') === '["M=1","M=2"]', 'another module\'s kernel: the bare entries');
  check(keys('pkg') === '[]' && keys('') === '[]', 'no entries: no keys');

  // One rank's file names: a record and its sidecar share a stem; a log's run.
  const named_file = (name) => call('rankFileName', name);
  const stems = ['run/rec.rank3.json', 'run/rec.rank3.timings.json', 'run/rec.rank3.timings.tlrt'].map((n) => named_file(n).stem);
  check(stems.every((s) => s === 'run/rec.rank3'), `a record and its sidecars share a stem: ${stems}`);
  check(named_file('run/rec.rank3.json').run === 'run/rec' && named_file('run/rec.rank3.json').rank === 3, 'a record names its run and rank');
  check(named_file('pinned.rank1.tlcl').run === 'pinned' && named_file('pinned.rank1.tlcl').rank === 1, 'a binary log names its run');
  check(named_file('log.json').run === null && named_file('log.json').rank === null, 'no .rank<N>: no run');
  check(named_file('a.rankX.json').run === null && named_file('a.rank1.txt').run === null, 'not the form: no run');

  // Launch logs, compared as `tunelock watch compare` compares them. The
  // fixtures were written once by the engine's LaunchRecorder: three steps of
  // four GEMMs and a norm; rank 1 in binary; rank 2's third GEMM of step 1 has
  // another grid; corrupt.rank0 is rank 0 with a count changed after writing.
  const fixture = (name) => new Uint8Array(fs.readFileSync(path.join(source, 'tests/web/fixtures', name)));
  const launchLog = (name) => call('loadLaunches', name, fixture(name));
  for (const [name, encoding] of [['train.rank0.launches.json', 'json'], ['train.rank1.launches.tlln', 'binary']]) {
    const got = kindOf(name, fixture(name));
    check(got.kind === 'launches' && got.encoding === encoding, `${name} is a ${encoding} launch log (${JSON.stringify(got)})`);
  }
  const [r0, r1, r2] = ['train.rank0.launches.json', 'train.rank1.launches.tlln', 'train.rank2.launches.json'].map(launchLog);
  check(r1.rank === 1 && r1.steps === 3 && r1.launches === 15 && r1.program === 'python train.py --steps 3',
    `a launch log's summary: ${JSON.stringify(r1)}`);
  const compared = (...logs) => call('compareLaunches', JSON.stringify(logs.map((l) => l.id)));
  const alike = compared(r0, r1);
  check(alike.identical && alike.exit_code === 0 && alike.comparisons[0].first === null &&
    alike.text.startsWith('train.rank0.launches.json vs train.rank1.launches.tlln: identical'), `JSON and binary ranks launched alike: ${alike.text}`);
  const apart = compared(r0, r1, r2);
  const [, diverged] = apart.comparisons;
  check(!apart.identical && apart.exit_code === 1 && apart.comparisons[0].identical && !diverged.identical,
    'one rank of three differs: not identical, exit code 1');
  check(diverged.first.step === 1 && diverged.first.launch === 2 && diverged.first.reference.kernel === 'nvjet_tst_128x64_64x4_1x2_h_bz_TNT' &&
    diverged.first.reference.shape.startsWith('grid 128x1x1') && diverged.first.other.shape.startsWith('grid 128x2x1'),
    `the first divergent step, launch, kernel and shapes: ${JSON.stringify(diverged.first)}`);
  check(diverged.kernels.length === 1 && diverged.kernels[0].reference_only.length === 0 &&
    diverged.kernels[0].other_only[0] === 'grid 128x2x1 block 256x1x1 smem 49152', 'the shape only rank 2 used');
  check(apart.text.includes('first difference: step 1, launch 2'), 'the text names the step and launch as the CLI prints them');
  const corrupt = launchLog('corrupt.rank0.launches.json');
  check(corrupt.error && corrupt.error.startsWith('corrupt.rank0.launches.json: steps[0].digest:'), `a changed log is refused by name and path: ${corrupt.error}`);
  check(compared(r0).error.includes('two launch logs or more'), 'one log alone: nothing to compare');
  engine.unload(r2.id);
  check(compared(r0, r2).error === 'that launch log is no longer loaded', 'an unloaded log: an error');

  console.log(failures ? `${failures} check(s) failed` : 'all binding checks passed');
  process.exit(failures ? 1 : 0);
});
