#!/usr/bin/env bash
# The installed program's exit codes and streams, as a shell script sees them.
set -uo pipefail
tunelock=$1 examples=$2
failures=0
expect() {  # expect CODE DESCRIPTION STREAM PATTERN -- COMMAND...
  # STREAM (stdout or stderr) must match the extended regex PATTERN: the
  # code alone would pass a command that fails for another reason.
  local want=$1 what=$2 stream=$3 pattern=$4; shift 5
  local out err code
  out=$("$@" 2>/tmp/tunelock-exit-codes.$$) ; code=$?
  err=$(cat /tmp/tunelock-exit-codes.$$)
  local seen=$out
  [[ $stream == stderr ]] && seen=$err
  if [[ $code != "$want" ]]; then
    echo "FAIL: $what: exit $code, wanted $want (stderr: $err)"; failures=$((failures + 1))
  elif ! grep -Eq -- "$pattern" <<<"$seen"; then
    echo "FAIL: $what: $stream does not match '$pattern': $seen"; failures=$((failures + 1))
  else
    echo "ok: $what (exit $code)"
  fi
}
expect 2 "an unknown TUNELOCK_LOG_LEVEL is refused where the policy is read" stderr \
  "TUNELOCK_LOG_LEVEL: invalid value 'loud'; allowed: trace, debug, info, warn, error, critical, off" \
  -- env TUNELOCK_LOG_LEVEL=loud "$tunelock" policy
expect 0 "and said, in the same words, by a command that reads no policy" stderr \
  "TUNELOCK_LOG_LEVEL: invalid value 'loud'; allowed: .* \\(info used\\)" \
  -- env TUNELOCK_LOG_LEVEL=loud "$tunelock" table show "$examples/tables/sm90.json"
base=(choose --candidates "$examples/candidates.json" --kernel demo.ops.softmax --key 'N=1|f32')
expect 0 "decision" stdout '"reason":"min_cost"' -- "$tunelock" "${base[@]}" --json
expect 3 "on_miss=error miss" stderr "no tuned config for kernel 'demo.ops.softmax' key 'N=1\\|f32'" \
  -- "$tunelock" "${base[@]}" --on-miss error
expect 2 "missing candidates file" stderr '/nonexistent: no such file' \
  -- "$tunelock" choose --candidates /nonexistent --kernel k --key x
expect 2 "unknown flag" stderr '^tunelock: ' -- "$tunelock" choose --frobnicate
expect 2 "invalid variable" stderr "TUNELOCK_MODE: invalid value 'fast'" \
  -- env TUNELOCK_MODE=fast "$tunelock" policy
expect 0 "help" stdout 'Usage: tunelock' -- "$tunelock" --help
# stdout carries only the JSON object, even when a warning is logged.
json=$("$tunelock" "${base[@]}" --json 2>/dev/null)
if [[ $json != '{"index":1,"signature":"BLOCK_SIZE=1024;warps=8;stages=2","reason":"min_cost"}' ]]; then
  echo "FAIL: stdout was: $json"; failures=$((failures + 1))
fi
rm -f /tmp/tunelock-exit-codes.$$
exit $failures
