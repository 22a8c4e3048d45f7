#!/usr/bin/env bash
# The engine's check over a trainer's own transport: the MPI example under
# mpirun agrees, and reports a conflict naming the rank, on every rank.
# A rank killed (SIGKILL) before, during or after a check's first message:
# MPI cannot leave a collective whose peer died, so mpirun must end the job
# at once, naming the rank, and no survivor may report a result.
# Skipped (77) where mpirun is absent.
set -uo pipefail
example=$1 killed_rank=$2
command -v mpirun >/dev/null || { echo "SKIP: mpirun not found (Debian: openmpi-bin)"; exit 77; }
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
mpi=(mpirun -n 3 --oversubscribe --bind-to none)
((EUID == 0)) && mpi+=(--allow-run-as-root)
# Loopback only, no network scanning; sm and self carry everything on one host.
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none \
  OMPI_MCA_oob_tcp_if_include=lo OMPI_MCA_plm_rsh_agent=false

out=$(timeout 120 "${mpi[@]}" "$example" 2>&1)
[[ $? == 0 && $(grep -c "agreed, 9 entries compared" <<<"$out") == 3 ]] || fail "agree: $out"
out=$(timeout 120 "${mpi[@]}" "$example" conflict 2>&1)
[[ $(grep -c "^mpi rank [012] of 3: DIFFER, 9 entries compared" <<<"$out") == 3 &&
   $(grep -c "^  host|example.ops.matmul|M=2: 'BLOCK_M=128;warps=8;stages=3;pinned' on ranks 0,2; 'BLOCK_M=64;warps=4;stages=3;pinned' on rank 1$" <<<"$out") -ge 3 ]] \
  || fail "conflict: $out"
for moment in before during after; do
  start=$SECONDS
  out=$(timeout 120 "${mpi[@]}" "$killed_rank" "$moment" 2>&1); code=$?
  took=$((SECONDS - start))
  [[ $code != 0 && $code != 124 && $took -lt 60 &&
     $(grep -c "^mpi rank [01]: the first check agreed" <<<"$out") == 2 &&
     $(grep -c "every check returned" <<<"$out") == 0 ]] &&
    grep -Eq "process rank 2 .*(signal 9|Killed)" <<<"$out" ||
    fail "killed $moment (exit $code after $took s): $out"
done
((failures == 0)) && echo "ok: verification over MPI on 3 ranks; a rank killed before, during and after a check ends the job naming it"
exit $failures
