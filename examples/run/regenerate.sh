#!/usr/bin/env bash
# Regenerates the example run the preview page's "Try the example" loads:
# tunelock-demo on 2 ranks in record mode (records, timing sidecars, choice
# logs), the table merged from those records, then a pinned run on that
# table with its own choice logs, an audit run of that table (audit files),
# and a second table of the same arch recorded with skewed clocks (each
# rank's clock favours another matmul tiling), for the page's diff.
# The launch logs (demo-cuda.rank*.launches.json) come from
# `tunelock launch -n 2 -- tunelock watch --out demo-cuda -- tunelock-demo
# --backend cuda --steps 3` on an H200; they are remade only where a GPU and
# the watch library are. Usage: examples/run/regenerate.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: regenerate.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tunelock="$build/cli/tunelock" demo="$build/launcher/demo/tunelock-demo"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG TUNELOCK_VERIFY
rm -f "$here"/record*.rank*.json "$here"/pinned-log.rank*.json "$here"/audit.rank*.json \
  "$here"/tables/*.json "$here"/host-skewed-clocks.json
TUNELOCK_RECORD="$here/record" TUNELOCK_CHOICE_LOG="$here/record-log" "$tunelock" launch -n 2 -- "$demo" >/dev/null
"$tunelock" merge "$here"/record.rank0.json "$here"/record.rank1.json -o "$here/tables/host.json"
TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH="$here/tables" TUNELOCK_CHOICE_LOG="$here/pinned-log" \
  "$tunelock" launch -n 2 -- "$demo" >/dev/null
TUNELOCK_MODE=audit TUNELOCK_TABLE_PATH="$here/tables" TUNELOCK_RECORD="$here/audit" \
  "$tunelock" launch -n 2 -- "$demo" >/dev/null
skewed=$(mktemp -d)
TUNELOCK_RECORD="$skewed/record" "$tunelock" launch -n 2 -- "$demo" --skew-timings >/dev/null
"$tunelock" merge "$skewed"/record.rank0.json "$skewed"/record.rank1.json -o "$skewed/host.json"
mv "$skewed/host.json" "$here/host-skewed-clocks.json" && rm -rf "$skewed"
if nvidia-smi >/dev/null 2>&1 && [[ -f $build/launcher/watch/libtunelock_watch.so ]]; then
  (cd "$here" && "$tunelock" launch -n 2 -- "$tunelock" watch --out demo-cuda -- "$demo" --backend cuda \
    --steps 3 >/dev/null)
fi
ls "$here"
