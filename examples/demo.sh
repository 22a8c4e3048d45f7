#!/usr/bin/env bash
# `make demo`: what tunelock decides for each kernel call in demo-calls.tsv,
# from the example table and candidate manifest, with the reason for each.
set -euo pipefail
build=${1:?usage: demo.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tunelock="$build/cli/tunelock"

echo "== pinned decisions on sm90 from examples/tables/sm90.json =="
while IFS=$'\t' read -r kernel key what; do
  [[ -z $kernel || $kernel == \#* ]] && continue
  "$tunelock" choose --candidates "$here/candidates.json" --table "$here/tables" --arch sm90 \
    --kernel "$kernel" --key "$key"
  echo "    ^ $what"
done <"$here/demo-calls.tsv"

echo
echo "== block-size override BLOCK_SIZE=2048 beats the cheapest =="
"$tunelock" choose --candidates "$here/candidates.json" --table "$here/tables" --arch sm90 \
  --kernel demo.ops.softmax --key 'N=4096|f32' --block BLOCK_SIZE=2048

echo
echo "== chaos positive control: ranks 0..3 choose differently on purpose =="
for rank in 0 1 2 3; do
  printf 'rank %s: ' "$rank"
  "$tunelock" choose --candidates "$here/candidates.json" --kernel demo.ops.matmul \
    --key 'M=4096|N=4096|K=1024|bf16|bf16' --chaos --rank "$rank" --json
done
