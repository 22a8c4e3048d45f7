#!/usr/bin/env bash
# The rendezvous under strangers: a flood of idle connections, an oversized
# frame, and a squatter on rank 0's port. Each waits on events with generous
# deadlines; none asserts a duration beyond "ends well before the kill".
set -uo pipefail
rank_program=$1
cd "$(mktemp -d)"
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
export TUNELOCK_MASTER_ADDR=127.0.0.1

# Opens N idle connections to PORT once it listens, sends what SEND says to
# the last one, and holds them all for HOLD seconds.
strays() {  # strays PORT N HOLD [oversized]
  python3 - "$@" <<'PY' &
import socket, sys, time
port, n, hold = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
oversized = len(sys.argv) > 4
held, deadline = [], time.time() + 60
while len(held) < n and time.time() < deadline:
    s = socket.socket()
    try:
        s.connect(("127.0.0.1", port))
        held.append(s)
    except OSError:
        s.close()
        time.sleep(0.05)
if oversized and held:
    held[-1].sendall(b"TLBH" + (1 << 20).to_bytes(4, "little") + b"x" * 4096)
time.sleep(hold)
PY
}

# 1. A flood of idle strays on a rank 0 limited to 64 descriptors, and rank 1
#    never comes: rank 0 keeps its 4 s deadline (it used to spin at full CPU
#    long past it) and names rank 1, not a healthy rank, as missing.
port=$(free_port)
(ulimit -n 64
 TUNELOCK_MASTER_PORT=$port TUNELOCK_JOB_TOKEN=flood TUNELOCK_VERIFY_TIMEOUT=4 RANK=0 WORLD_SIZE=2 \
   timeout 60 "$rank_program" agree >flood.0 2>&1; echo $? >flood.code) &
rank0=$!
strays "$port" 200 20
stray_pid=$!
wait $rank0
kill $stray_pid 2>/dev/null; wait $stray_pid 2>/dev/null
[[ $(cat flood.code) != 124 ]] || fail "flood: rank 0 overran its deadline: $(cat flood.0)"
grep -q "rank(s) 1 never arrived within 4 s" flood.0 || fail "flood: rank 0: $(cat flood.0)"
grep -q "connection(s) that never said hello were dropped" flood.0 ||
  fail "flood: rank 0 should count the dropped strays: $(cat flood.0)"

# 2. The same flood, one stray announcing a 1 MiB frame, and then rank 1
#    arrives: the big frame is refused at its header, the oldest strays make
#    room, and the job verifies.
port=$(free_port)
(ulimit -n 64
 TUNELOCK_MASTER_PORT=$port TUNELOCK_JOB_TOKEN=room TUNELOCK_VERIFY_TIMEOUT=60 RANK=0 WORLD_SIZE=2 \
   timeout 120 "$rank_program" agree >room.0 2>&1) &
rank0=$!
strays "$port" 200 30 oversized
stray_pid=$!
for _ in $(seq 600); do grep -q "frame too large" room.0 && break; sleep 0.1; done
TUNELOCK_MASTER_PORT=$port TUNELOCK_JOB_TOKEN=room TUNELOCK_VERIFY_TIMEOUT=60 RANK=1 WORLD_SIZE=2 \
  timeout 120 "$rank_program" agree >room.1 2>&1
wait $rank0
kill $stray_pid 2>/dev/null; wait $stray_pid 2>/dev/null
grep -q "frame too large (1048576 bytes announced, at most 16384)" room.0 ||
  fail "oversized frame: $(cat room.0)"
grep -q "agreed" room.0 && grep -q "agreed" room.1 || fail "flood then rank 1: $(cat room.0 room.1)"

# 3. A squatter on rank 0's port answers with escape codes, a forged
#    "[rank 3]" line and 200 KB: rank 1 prints it escaped, on one line, cut.
port=$(free_port)
python3 - "$port" <<'PY' &
import socket, sys
listener = socket.socket()
listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
listener.bind(("127.0.0.1", int(sys.argv[1])))
listener.listen(1)
listener.settimeout(60)
peer, _ = listener.accept()
peer.settimeout(60)
peer.recv(65536)
text = b"\x1b[31m[rank 3] all ranks agree\n[rank 0] fine" + b"A" * 200000
peer.sendall(b"TLBF" + len(text).to_bytes(4, "little") + text)
peer.close()
PY
squatter=$!
sleep 0.5
TUNELOCK_MASTER_PORT=$port TUNELOCK_JOB_TOKEN=squat TUNELOCK_VERIFY_TIMEOUT=30 RANK=1 WORLD_SIZE=2 \
  timeout 60 "$rank_program" agree >squat.1 2>&1
wait $squatter
grep -qF '\x1b[31m[rank 3] all ranks agree\x0a[rank 0] fine' squat.1 ||
  fail "squatter text should be escaped: $(head -c 500 squat.1)"
grep -q $'\x1b' squat.1 && fail "squatter: a raw escape byte reached the output"
grep -q '^\[rank 0\] fine' squat.1 && fail "squatter: a forged line reached the output"
grep -q "more bytes not shown" squat.1 || fail "squatter: 200 KB should be cut"
(($(wc -c <squat.1) < 8000)) || fail "squatter: $(wc -c <squat.1) bytes of output"

# 4. A local job's UCX listens on loopback only: each rank names the device it
#    chose from the rendezvous address (UCX_NET_DEVICES, unless the user set it).
port=$(free_port)
for r in 0 1; do
  TUNELOCK_MASTER_PORT=$port TUNELOCK_JOB_TOKEN=lo TUNELOCK_VERIFY_TIMEOUT=60 TUNELOCK_LOG_LEVEL=debug \
    RANK=$r WORLD_SIZE=2 timeout 120 "$rank_program" agree >lo.$r 2>&1 &
done
wait
for r in 0 1; do
  grep -q "UCX uses network device lo (the rendezvous address's)" lo.$r && grep -q "agreed" lo.$r ||
    fail "rank $r should use loopback: $(head -c 600 lo.$r)"
done

((failures == 0)) && echo "ok: rendezvous hardening"
exit $failures
