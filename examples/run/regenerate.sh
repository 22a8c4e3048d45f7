#!/usr/bin/env bash
# Regenerates the example run the preview page's "Try the example" loads:
# tunelock-demo on 2 ranks in record mode (records, timing sidecars, choice
# logs), the table merged from those records, then a pinned run on that
# table with its own choice logs. Usage: examples/run/regenerate.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: regenerate.sh BUILD_DIR}
here=$(cd "$(dirname "$0")" && pwd)
tunelock="$build/cli/tunelock" demo="$build/launcher/demo/tunelock-demo"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG TUNELOCK_VERIFY
rm -f "$here"/*.rank*.json "$here"/tables/*.json
TUNELOCK_RECORD="$here/record" TUNELOCK_CHOICE_LOG="$here/record-log" "$tunelock" launch -n 2 -- "$demo" >/dev/null
"$tunelock" merge "$here"/record.rank0.json "$here"/record.rank1.json -o "$here/tables/host.json"
TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH="$here/tables" TUNELOCK_CHOICE_LOG="$here/pinned-log" \
  "$tunelock" launch -n 2 -- "$demo" >/dev/null
ls "$here"
