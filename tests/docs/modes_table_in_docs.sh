#!/usr/bin/env bash
# Each document that shows the modes' table shows the one `tunelock help
# modes --markdown` prints (decision/modes.cpp), whole and in order.
set -euo pipefail
tunelock=$1
shift
table=$("$tunelock" help modes --markdown)
failed=0
for page in "$@"; do
  python3 -c 'import sys; sys.exit(0 if sys.argv[2] in open(sys.argv[1]).read() else 1)' \
    "$page" "$table" ||
    { echo "FAIL: $page does not show the modes table of tunelock help modes --markdown"; failed=1; }
done
((failed == 0)) && echo "ok: $* show the modes table"
exit "$failed"
