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

# torchrun's variables too, so init_process_group works: PyTorch's rendezvous
# on a port of its own, beside tunelock's; a caller's own MASTER_* are kept.
out=$(env -u MASTER_ADDR -u MASTER_PORT "$tunelock" launch -n 2 -- sh -c \
  'echo "$MASTER_ADDR $MASTER_PORT $TUNELOCK_MASTER_PORT $LOCAL_RANK $LOCAL_WORLD_SIZE"' 2>&1)
for r in 0 1; do
  grep -Eq "^\[rank $r\] 127\.0\.0\.1 [0-9]+ [0-9]+ $r 2$" <<<"$out" || fail "torchrun variables, rank $r: $out"
done
read -r torch_port tunelock_port < <(sed -nE 's/^\[rank 0\] [^ ]+ ([0-9]+) ([0-9]+) .*/\1 \2/p' <<<"$out")
[[ -n $torch_port && $torch_port != "$tunelock_port" ]] || fail "MASTER_PORT shares tunelock's port: $out"
out=$(MASTER_ADDR=10.1.2.3 MASTER_PORT=29500 "$tunelock" launch -n 1 -- sh -c 'echo "$MASTER_ADDR:$MASTER_PORT"' 2>&1)
grep -q "^\[rank 0\] 10.1.2.3:29500$" <<<"$out" || fail "a caller's MASTER_ADDR/PORT not kept: $out"
# A PyTorch program under tunelock launch (where torch is installed).
if python3 -c 'import torch.distributed' 2>/dev/null; then
  out=$("$tunelock" launch -n 2 -- python3 -c 'import torch.distributed as d; d.init_process_group("gloo"); print("gloo", d.get_rank(), d.get_world_size()); d.destroy_process_group()' 2>&1)
  for r in 0 1; do grep -q "^\[rank $r\] gloo $r 2$" <<<"$out" || fail "torch gloo, rank $r: $out"; done
else
  echo "note: torch not installed; init_process_group under launch not run"
fi

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
