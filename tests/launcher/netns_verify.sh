#!/usr/bin/env bash
# Verification across hosts: three network namespaces joined by veth pairs to
# a bridge-free star (namespace a in the middle), one or two ranks in each,
# UCX over TCP only. The addresses live only inside namespaces this script
# makes (10.231.N.0/24) and are removed with them on any exit. Skipped (77)
# where namespaces cannot be made (not root, no iproute2, no CAP_NET_ADMIN).
set -uo pipefail
rank_program=$1
suffix="tl$$$RANDOM"
a="$suffix-a" b="$suffix-b" c="$suffix-c"
work=$(mktemp -d)

cleanup() {
  for ns in "$a" "$b" "$c"; do ip netns del "$ns" 2>/dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT INT TERM

skip() { echo "SKIP: $*"; exit 77; }
command -v ip >/dev/null || skip "iproute2 is not installed"
((EUID == 0)) || skip "network namespaces need root"
ip netns add "$a" 2>/dev/null || skip "cannot create a network namespace here"
ip netns add "$b" && ip netns add "$c" || skip "cannot create a second network namespace"

# Links a-b on 10.231.1.0/24 and a-c on 10.231.2.0/24; b and c reach each
# other through a (forwarding on).
declare -A devices  # namespace -> its veth names, for UCX_NET_DEVICES (never lo)
link() {  # link NS_X NS_Y NET: veth between them, .1 in X and .2 in Y
  local x=$1 y=$2 net=$3
  local vx="v$net$RANDOM" vy="w$net$RANDOM"
  devices[$x]+="${devices[$x]:+,}$vx" devices[$y]+="${devices[$y]:+,}$vy"
  ip link add "$vx" netns "$x" type veth peer name "$vy" netns "$y" || return 1
  ip -n "$x" addr add "10.231.$net.1/24" dev "$vx" && ip -n "$x" link set "$vx" up &&
    ip -n "$y" addr add "10.231.$net.2/24" dev "$vy" && ip -n "$y" link set "$vy" up
}
for ns in "$a" "$b" "$c"; do ip -n "$ns" link set lo up; done
link "$a" "$b" 1 && link "$a" "$c" 2 || skip "cannot create veth pairs"
# UCX uses only links that are up and running: wait for each veth's carrier.
for ns in "$a" "$b" "$c"; do
  for dev in ${devices[$ns]//,/ }; do
    for _ in $(seq 100); do
      ip -n "$ns" link show dev "$dev" | grep -q "state UP" && break
      sleep 0.1
    done
    ip -n "$ns" link show dev "$dev" | grep -q "state UP" || skip "veth $dev in $ns never came up"
  done
done
ip netns exec "$a" sysctl -qw net.ipv4.ip_forward=1
ip -n "$b" route add 10.231.2.0/24 via 10.231.1.1
ip -n "$c" route add 10.231.1.0/24 via 10.231.2.1

failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# run_ranks SCENARIO [torchrun]: ranks 0,1 in a, 2 in b, 3 in c; results in
# $work/out.N. With "torchrun", only what torchrun sets on each node
# (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT, TORCHELASTIC_RUN_ID): tunelock
# meets at MASTER_PORT + 1, as it does under torchrun, srun or mpirun.
run_ranks() {
  local port=$((20000 + RANDOM % 20000))
  local env=(env RANK= WORLD_SIZE=4 TUNELOCK_MASTER_ADDR=10.231.1.1 TUNELOCK_MASTER_PORT=$port
             TUNELOCK_JOB_TOKEN="$suffix" TUNELOCK_VERIFY_TIMEOUT=30 UCX_TLS=tcp,self)
  if [[ ${2:-} == torchrun ]]; then
    env=(env RANK= WORLD_SIZE=4 MASTER_ADDR=10.231.1.1 MASTER_PORT=$((port - 1))
         TORCHELASTIC_RUN_ID="$suffix" TUNELOCK_VERIFY_TIMEOUT=30 UCX_TLS=tcp,self)
  fi
  local placement=("$a" "$a" "$b" "$c") pids=()
  for r in 0 1 2 3; do
    env[1]="RANK=$r"
    ip netns exec "${placement[$r]}" "${env[@]}" UCX_NET_DEVICES="${devices[${placement[$r]}]}" \
      "$rank_program" "$1" >"$work/out.$r" 2>&1 &
    pids+=($!)
  done
  for pid in "${pids[@]}"; do wait "$pid"; done
}

run_ranks agree
for r in 0 1 2 3; do
  grep -q "rank $r: agreed, 40 then 0 entries compared" "$work/out.$r" ||
    fail "agree across namespaces, rank $r: $(cat "$work/out.$r")"
done
run_ranks agree torchrun
for r in 0 1 2 3; do
  grep -q "rank $r: agreed, 40 then 0 entries compared" "$work/out.$r" ||
    fail "agree with torchrun's variables only, rank $r: $(cat "$work/out.$r")"
done
run_ranks conflict
for r in 0 1 2 3; do
  grep -q "^rank $r: DIFFER 1 conflict(s)" "$work/out.$r" &&
    grep -q "^  host|t.ops.mm|M=1: 'BLOCK_M=128;warps=8;stages=3;pinned' on ranks 0,2,3; 'BLOCK_M=64;warps=4;stages=3;pinned' on rank 1$" \
      "$work/out.$r" || fail "conflict across namespaces, rank $r: $(cat "$work/out.$r")"
done
((failures == 0)) && echo "ok: 4 ranks in 3 network namespaces agree (with tunelock's rendezvous variables or torchrun's alone) and report conflicts over UCX/TCP"
exit $failures
