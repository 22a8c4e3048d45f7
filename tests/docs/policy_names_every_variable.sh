#!/usr/bin/env bash
# docs/policy.md names (in backticks) every variable `tunelock help
# environment` lists, which is every variable a run accepts.
set -euo pipefail
tunelock=$1 page=$2
[[ -f $page ]] || { echo "FAIL: $page does not exist"; exit 1; }
missing=0
while read -r name; do
  grep -qF "\`$name\`" "$page" || { echo "FAIL: $page does not name $name"; missing=1; }
done < <("$tunelock" help environment --names)
((missing == 0)) && echo "ok: $page names every variable"
exit "$missing"
