#!/usr/bin/env bash
# Verification across real processes on loopback, for 2, 4 and 8 ranks.
set -uo pipefail
tunelock=$1 rank_program=$2 demo=$3
cd "$(mktemp -d)"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

run() {  # run N SCENARIO -> sets out and code
  out=$("$tunelock" launch -n "$1" --grace 2 -- "$rank_program" "$2" 2>&1); code=$?
}
count() { grep -c "$1" <<<"$out"; }

for n in 2 4 8; do
  run "$n" agree
  [[ $code == 0 && $(count "agreed, $((n * 10)) then 0 entries compared") == "$n" ]] || fail "agree n=$n: $out"
  run "$n" conflict
  others=$(seq -s, 0 $((n - 1)) | sed 's/^0,1,/0,/; s/^0,1$/0/')
  [[ $code == 0 && $(count ": DIFFER 1 conflict(s)") == "$n" && \
     $(count "host|t.ops.mm|M=1: 'BLOCK_M=128;warps=8;stages=3;pinned' on ranks\\? $others; 'BLOCK_M=64;warps=4;stages=3;pinned' on rank 1$") -ge "$n" ]] \
    || fail "conflict n=$n: $out"
  run "$n" disjoint
  [[ $code == 0 && $(count ": agreed") == "$n" ]] || fail "disjoint n=$n: $out"
  run "$n" strict
  # Every rank raises, pointing to the one report the lowest rank logs.
  [[ $code == 3 && $(count "raised: verify_strict: autotune choices differ") == "$n" ]] || fail "strict n=$n: $out"
  [[ $(count "which may change floating-point results") == 1 ]] || fail "strict n=$n: the report is not printed once: $out"
  run "$n" die
  survivors=$((n - 1))
  [[ $code != 0 && $(count "failed after [0-9.]* s: verify: lost rank(s) $((n - 1))") == "$survivors" ]] \
    || fail "die n=$n: $out"
  # SIGKILL while the others wait inside a check: each names the lost rank
  # (rather than timing out after 20 s), and launch reports the signal.
  run "$n" killed
  [[ $code != 0 && $(count "failed after [0-9.]* s: verify: lost rank(s) $((n - 1))") == "$survivors" && \
     $(count "rank $((n - 1)) exited with 137") == 1 ]] || fail "killed n=$n: $out"
  # SIGKILL after its partial went up the tree, while the others wait for
  # the verdict, and once a check is over: each survivor names it.
  for moment in during after; do
    run "$n" killed_$moment
    [[ $code != 0 && $(count "failed after [0-9.]* s: verify: lost rank(s) $((n - 1))") == "$survivors" && \
       $(count "rank $((n - 1)) exited with 137") == 1 ]] || fail "killed_$moment n=$n: $out"
  done
  echo "ok: $n ranks"
done
# Consensus: a rank killed while the others wait in a check that carries
# timings is named by each survivor, after all had switched to the winner.
run 4 consensus_killed
[[ $code != 0 && $(count "launched the winner after the first check; failed after [0-9.]* s: verify: lost rank(s) 3") == 3 ]] \
  || fail "consensus_killed: $out"
run 4 subgroups
[[ $(count "group even of 2 agreed") == 2 && $(count "group odd of 2 DIFFER") == 2 ]] || fail "subgroups: $out"
# The odd group's report names world ranks 1 and 3, not group ranks 0 and 1.
[[ $(count "M=1: 'BLOCK_M=128;warps=8;stages=3;pinned' on rank 3; 'BLOCK_M=64;warps=4;stages=3;pinned' on rank 1") -ge 2 ]] \
  || fail "subgroup report should name world ranks: $out"

# A rank that never comes: ranks 0 and 1 of 3 start, and a stranger sends
# garbage to the rendezvous port meanwhile. Both ranks fail naming rank 2.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
export TUNELOCK_MASTER_ADDR=127.0.0.1 TUNELOCK_MASTER_PORT=$port TUNELOCK_JOB_TOKEN=never TUNELOCK_VERIFY_TIMEOUT=3
(RANK=0 WORLD_SIZE=3 "$rank_program" agree >never.0 2>&1 &
 RANK=1 WORLD_SIZE=3 "$rank_program" agree >never.1 2>&1 &
 sleep 0.5; (exec 3<>/dev/tcp/127.0.0.1/$port && printf 'GET / HTTP/1.0\r\n\r\n' >&3) 2>/dev/null; wait)
for r in 0 1; do
  grep -q "rank(s) 2 never arrived within 3 s" never.$r || fail "never-came rank $r: $(cat never.$r)"
done
rm -f never.0 never.1

# A rank killed during the rendezvous, after its hello, while rank 0 waits
# for rank 2: rank 0 names it at once instead of waiting out the 60 s.
(TUNELOCK_JOB_TOKEN=killed TUNELOCK_VERIFY_TIMEOUT=60 TUNELOCK_LOG_LEVEL=debug RANK=0 WORLD_SIZE=3 \
   "$rank_program" agree >killed.0 2>&1 &
 TUNELOCK_JOB_TOKEN=killed TUNELOCK_VERIFY_TIMEOUT=60 RANK=1 WORLD_SIZE=3 "$rank_program" agree >killed.1 2>&1 &
 victim=$!
 for _ in $(seq 600); do grep -q "rank 1 said hello" killed.0 && break; sleep 0.1; done
 kill -9 $victim; wait $victim 2>/dev/null
 wait)
grep -q "rank(s) 1 said hello and then closed the connection" killed.0 ||
  fail "killed in rendezvous: $(cat killed.0)"
rm -f killed.0 killed.1

# A rank with another job's token and one with another WORLD_SIZE: each is
# told exactly that, and rank 0 names both instead of "never arrived" alone.
(TUNELOCK_JOB_TOKEN=right RANK=0 WORLD_SIZE=3 "$rank_program" agree >mismatch.0 2>&1 &
 sleep 0.3
 TUNELOCK_JOB_TOKEN=wrong RANK=1 WORLD_SIZE=3 "$rank_program" agree >mismatch.1 2>&1 &
 TUNELOCK_JOB_TOKEN=right RANK=2 WORLD_SIZE=4 "$rank_program" agree >mismatch.2 2>&1 &
 wait)
grep -q "is another job's: the job token differs" mismatch.1 || fail "wrong token: $(cat mismatch.1)"
grep -q "has WORLD_SIZE=3 but this rank has WORLD_SIZE=4" mismatch.2 || fail "wrong world size: $(cat mismatch.2)"
grep -q "never arrived within 3 s; refused meanwhile: " mismatch.0 &&
  grep -q "a hello from rank 1 with another job token" mismatch.0 &&
  grep -q "rank 2 has WORLD_SIZE=4 (this job has 3)" mismatch.0 || fail "rank 0 on mismatches: $(cat mismatch.0)"
rm -f mismatch.0 mismatch.1 mismatch.2

# A second job on the same port: its rank 0 cannot listen, and says why.
TUNELOCK_JOB_TOKEN=first TUNELOCK_VERIFY_TIMEOUT=60 RANK=0 WORLD_SIZE=2 "$rank_program" agree \
  >first.out 2>&1 &
first=$!
# Until the first job's rank 0 listens (it drops this empty connection).
for _ in $(seq 600); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
TUNELOCK_JOB_TOKEN=second RANK=0 WORLD_SIZE=2 "$rank_program" agree >second.out 2>&1
grep -q "another job holds this port" second.out || fail "second job on the port: $(cat second.out)"
kill $first 2>/dev/null; wait $first 2>/dev/null
unset TUNELOCK_MASTER_ADDR TUNELOCK_MASTER_PORT TUNELOCK_JOB_TOKEN TUNELOCK_VERIFY_TIMEOUT

# The demo across 4 ranks: pinned with verification agrees and digests match.
out=$(TUNELOCK_MODE=pinned TUNELOCK_VERIFY=1 "$tunelock" launch -n 4 -- "$demo" 2>&1); code=$?
digests=$(grep -o 'digest [0-9a-f]*' <<<"$out" | sort -u | wc -l)
[[ $code == 0 && $(count "choices agree across ranks") -ge 4 && $digests == 1 ]] || fail "demo pinned: $out"
# Chaos with strict verification: every rank reports the conflict and fails.
out=$(TUNELOCK_MODE=pinned TUNELOCK_CHAOS=1 TUNELOCK_VERIFY=1 TUNELOCK_VERIFY_STRICT=1 "$tunelock" launch -n 4 --grace 5 -- "$demo" 2>&1); code=$?
[[ $code != 0 && $(count "differ across ranks") -ge 4 ]] || fail "demo chaos: $out"
exit $failures
