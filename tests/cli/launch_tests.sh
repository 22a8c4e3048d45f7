#!/usr/bin/env bash
# `tunelock launch`: rank variables, output prefixes, grace period, exit codes.
set -uo pipefail
tunelock=$1
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

out=$("$tunelock" launch -n 3 -- sh -c 'echo "r=$RANK w=$WORLD_SIZE port=$TUNELOCK_MASTER_PORT token=${#TUNELOCK_JOB_TOKEN}"' 2>&1)
code=$?
[[ $code == 0 ]] || fail "success exit code $code"
for r in 0 1 2; do
  grep -q "^\[rank $r\] r=$r w=3 port=[0-9]* token=32$" <<<"$out" || fail "rank $r line missing: $out"
done
ports=$(grep -o 'port=[0-9]*' <<<"$out" | sort -u | wc -l)
[[ $ports == 1 ]] || fail "ranks got different ports"

# Rank 1 fails at once; the others would sleep 60 s: stopped after the grace period.
start=$(date +%s)
out=$("$tunelock" launch -n 3 --grace 1 -- sh -c 'if [ "$RANK" = 1 ]; then echo boom >&2; exit 7; fi; sleep 60' 2>&1)
code=$?
elapsed=$(( $(date +%s) - start ))
[[ $code == 7 ]] || fail "first non-zero exit code: got $code"
(( elapsed < 20 )) || fail "others not stopped after the grace period (${elapsed}s)"
grep -q "^\[rank 1\] boom$" <<<"$out" || fail "stderr not forwarded with prefix: $out"
grep -q "rank 1 exited with 7" <<<"$out" || fail "no failure notice: $out"

# The others finish within the grace period: their own exit codes do not mask the first.
out=$("$tunelock" launch -n 2 --grace 5 -- sh -c 'if [ "$RANK" = 0 ]; then exit 3; fi; sleep 0.3; exit 4' 2>&1)
[[ $? == 3 ]] || fail "exit code is not the first non-zero one"

# SIGTERM to the launcher reaches the ranks (they run in their own process groups).
marker="tunelock-launch-test-$$"
"$tunelock" launch -n 2 -- bash -c "exec -a $marker sleep 60" >/dev/null 2>&1 &
launcher=$!
sleep 1
kill -TERM $launcher
start=$(date +%s)
wait $launcher
code=$?
(( $(date +%s) - start < 10 )) || fail "launcher did not stop promptly on SIGTERM"
[[ $code == 143 ]] || fail "SIGTERM exit code: got $code, wanted 143"
sleep 0.5
pgrep -f "$marker" >/dev/null && fail "ranks still running after the launcher was terminated"

# SIGKILL to the launcher cannot be passed on: the ranks still die with it.
marker="tunelock-launch-kill-test-$$"
# (the marker travels in the environment, so only the ranks carry it in argv)
MARKER=$marker "$tunelock" launch -n 3 -- bash -c 'exec -a "$MARKER" sleep 60' >/dev/null 2>&1 &
launcher=$!
for _ in $(seq 50); do [[ $(pgrep -fc "$marker") == 3 ]] && break; sleep 0.1; done
[[ $(pgrep -fc "$marker") == 3 ]] || fail "SIGKILL test: the 3 ranks did not start"
kill -KILL $launcher
wait $launcher 2>/dev/null
for _ in $(seq 50); do pgrep -f "$marker" >/dev/null || break; sleep 0.1; done
if pgrep -f "$marker" >/dev/null; then
  fail "ranks still running 5 s after the launcher was killed with SIGKILL"
  kill -KILL $(pgrep -f "$marker") 2>/dev/null
fi

"$tunelock" launch -n 2 -- /nonexistent/program >/dev/null 2>&1
[[ $? == 127 ]] || fail "missing program should exit 127"
"$tunelock" launch -n 0 -- true >/dev/null 2>&1
[[ $? == 2 ]] || fail "-n 0 should be bad input"
exit $failures
