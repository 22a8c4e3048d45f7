#!/usr/bin/env bash
# Browser end-to-end test. Uses the Megatron fixture tables when ../shared is
# present, else the project's example table. Skips (exit 77) without the
# wasm build, Chromium or playwright-core, saying which.
set -euo pipefail
site=$1 source_dir=$2 shared=$3 artifact=$4 cli=$5
[[ -f $site/tunelock.js ]] || { echo "skipped: $site/tunelock.js is not built (cmake --preset wasm && cmake --build build/wasm)"; exit 77; }
[[ -x /usr/bin/chromium ]] || { echo "skipped: /usr/bin/chromium is not installed (apt-get install chromium)"; exit 77; }
[[ -d $source_dir/web/tests/node_modules/playwright-core ]] || { echo "skipped: playwright-core is not installed (npm install in web/tests)"; exit 77; }
if [[ -d $shared/megatron-tables ]]; then
  tables=("$shared/megatron-tables/sm100.json" "$shared/megatron-tables/sm103.json")
  manifest=$source_dir/tests/web/fixtures/megatron-candidates.json
  kernel=mamba_ssm.ops.triton.ssd_chunk_state._chunk_cumsum_bwd_kernel
  key='chunk_size=128|nheads=128|torch.float32|torch.float32|torch.bfloat16|torch.float32|torch.float32|torch.bfloat16|torch.float32|torch.float32'
  expected='BLOCK_SIZE_H=8;warps=4;stages=3' block='BLOCK_SIZE_H=2'
else
  echo "note: ../shared/fixtures is absent; using the project's example table"
  tables=("$source_dir/examples/tables/sm90.json")
  manifest=$source_dir/examples/candidates.json
  kernel=demo.ops.rmsnorm key='N=8192|bf16' expected='BLOCK_SIZE=1024;warps=8;stages=1' block='BLOCK_SIZE=512'
fi
mkdir -p "$(dirname "$artifact")"
cd "$source_dir/web/tests"
node e2e.cjs "$site" "$artifact" "$cli" "$source_dir/examples" "${tables[@]}" -- "$manifest" "$kernel" "$key" "$expected" "$block"
