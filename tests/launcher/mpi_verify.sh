#!/usr/bin/env bash
# The engine's check over a trainer's own transport: the MPI example under
# mpirun agrees, and reports a conflict naming the rank, on every rank.
# Skipped (77) where mpirun is absent.
set -uo pipefail
example=$1
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
((failures == 0)) && echo "ok: verification over MPI on 3 ranks"
exit $failures
