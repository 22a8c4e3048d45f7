#!/usr/bin/env bash
# The real programs facing bad files and paths, as a shell sees them: one
# line naming the file, exit 2 (never 70, never a signal), nothing written,
# no wait on a FIFO; the demo trainer fails visibly when its choice log
# cannot be written at exit; TUNELOCK_LOG_LEVEL is honoured.
set -uo pipefail
tunelock=$1 demo=$2 examples=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
unset TUNELOCK_MODE TUNELOCK_RECORD TUNELOCK_CHAOS TUNELOCK_TABLE_PATH TUNELOCK_CHOICE_LOG \
  TUNELOCK_LOG_LEVEL RANK WORLD_SIZE
failures=0
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }

# expect CODE STDERR-PART DESCRIPTION -- COMMAND...: a bounded run (a hang is a failure).
expect() {
  local want=$1 part=$2 what=$3; shift 4
  timeout 20 "$@" >out.txt 2>err.txt; local code=$?
  if [[ $code != "$want" ]]; then
    fail "$what: exit $code, wanted $want (stderr: $(head -c 300 err.txt))"
  elif ! grep -qF -- "$part" err.txt; then
    fail "$what: stderr lacks '$part' (stderr: $(head -c 300 err.txt))"
  else
    echo "ok: $what"
  fi
}

cp "$examples/tables/sm90.json" good.json
"$tunelock" table convert good.json good.tlb >/dev/null || fail "convert good table"

mkfifo in.fifo out.fifo
expect 2 "in.fifo: is a FIFO, expected a file" "a FIFO input is refused, not waited on" -- \
  "$tunelock" table show in.fifo
expect 2 "out.fifo: is a FIFO, not a regular file; refusing to replace it" \
  "a FIFO output is refused" -- "$tunelock" table convert good.json out.fifo
[[ -p out.fifo ]] || fail "the FIFO output was replaced"

# A sparse 100 GB table (no disk used): refused at once, naming the file and
# the limit, instead of an allocator failure with no file named.
truncate -s 100G huge.json
expect 2 "huge.json: 107374182400 bytes; tunelock reads files of at most 4 GiB" \
  "a 100 GB file is refused by size" -- "$tunelock" table show huge.json
expect 2 "huge.json: 107374182400 bytes; tunelock reads files of at most 4 GiB" \
  "a 100 GB record is refused by size" -- "$tunelock" merge huge.json -o merged.json
rm -f huge.json

mkdir real && cp good.json real/t.json && ln -s real/t.json link.json
"$tunelock" table convert good.tlb link.json >/dev/null || fail "convert through a symlink"
[[ -L link.json ]] || fail "the symlinked output was replaced by a file"

# Nested 65,000 levels, as a table on the path and as a choice log.
python3 -c 'print("[" * 65000 + "]" * 65000)' >deep.json
expect 2 "deep.json: " "a 65,000-level JSON table is refused" -- "$tunelock" table show deep.json
expect 2 "nested deeper than 64 levels" "a 65,000-level choice log is refused" -- \
  "$tunelock" verify deep.json
mkdir deeptables && cp deep.json deeptables/host.json
expect 2 "nested deeper than 64 levels" "a deep table on the table path fails the trainer" -- \
  env TUNELOCK_MODE=pinned TUNELOCK_TABLE_PATH=deeptables "$demo"

printf '{"rank": 0, "entries": {"k": "a;pinned", "k": "b;pinned"}}' >dup.json
expect 2 "dup.json: entries.k: duplicate key" "a duplicate key in a choice log is refused" -- \
  "$tunelock" verify dup.json

# One flipped bit in the middle of a binary table.
python3 - <<'PY'
data = bytearray(open("good.tlb", "rb").read())
data[len(data) // 2] ^= 0x10
open("flip.tlb", "wb").write(data)
PY
expect 2 "flip.tlb: binary table fails its checksum" "a flipped bit in a .tlb is refused" -- \
  "$tunelock" table show flip.tlb

# A choice-log prefix ending in '/' names a folder, not a prefix: refused at
# start, naming the variable, before a hidden '.rank0.json' is written.
mkdir -p logdir
TUNELOCK_CHOICE_LOG=logdir/ timeout 60 "$demo" >/dev/null 2>err.txt; code=$?
if ((code == 0 || code >= 128)) || ! grep -q "TUNELOCK_CHOICE_LOG='logdir/' ends in '/'" err.txt; then
  fail "choice log prefix ending in '/': exit $code (stderr: $(head -c 300 err.txt))"
elif [[ -e logdir/.rank0.json ]]; then
  fail "choice log prefix ending in '/': a hidden logdir/.rank0.json was written"
else
  echo "ok: a choice-log prefix ending in '/' is refused with exit $code"
fi

# MASTER_PORT=65535: tunelock's rendezvous would be MASTER_PORT + 1. Said so.
MASTER_ADDR=127.0.0.1 MASTER_PORT=65535 RANK=0 WORLD_SIZE=2 TUNELOCK_MODE=pinned TUNELOCK_VERIFY_EVERY=1 \
  timeout 60 "$demo" >/dev/null 2>err.txt; code=$?
if ((code == 0 || code >= 128)) || ! grep -q "MASTER_PORT=65535: tunelock's rendezvous uses MASTER_PORT + 1" err.txt; then
  fail "MASTER_PORT=65535: exit $code (stderr: $(head -c 300 err.txt))"
else
  echo "ok: MASTER_PORT=65535 is refused saying why (exit $code)"
fi

# The trainer's exit-time writer cannot write its choice log: a clear error
# and a failing status, not a crash and not 0.
TUNELOCK_CHOICE_LOG=/proc/tunelock/log timeout 60 "$demo" >/dev/null 2>err.txt; code=$?
if ((code == 0 || code >= 128)); then
  fail "unwritable choice log: exit $code (stderr: $(head -c 300 err.txt))"
elif ! grep -q "/proc/tunelock/log" err.txt; then
  fail "unwritable choice log: no error naming it (stderr: $(head -c 300 err.txt))"
else
  echo "ok: an unwritable choice log fails the trainer with exit $code"
fi

# TUNELOCK_LOG_LEVEL: choosing without a table logs a warning; error hides it.
choose=(choose --candidates "$examples/candidates.json" --kernel demo.ops.softmax --key 'N=1|f32')
"$tunelock" "${choose[@]}" >/dev/null 2>default.txt
TUNELOCK_LOG_LEVEL=error "$tunelock" "${choose[@]}" >/dev/null 2>quiet.txt
grep -q "tunelock: warning: no tuned config" default.txt || fail "no warning to compare with"
grep -q "tunelock: warning" quiet.txt && fail "TUNELOCK_LOG_LEVEL=error still printed warnings"
TUNELOCK_LOG_LEVEL=loud "$tunelock" "${choose[@]}" >/dev/null 2>bad.txt && fail "an unknown level was accepted"
grep -q "TUNELOCK_LOG_LEVEL: invalid value 'loud'" bad.txt || fail "an unknown level was not named: $(cat bad.txt)"
((failures == 0)) && echo "ok: TUNELOCK_LOG_LEVEL honoured"
exit $failures
