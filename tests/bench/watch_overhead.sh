#!/usr/bin/env bash
# The watch's cost per kernel launch on a GPU machine: watch_overhead_bench
# (N empty-kernel launches) alternately without and under `tunelock watch`,
# three times each; prints both figures per round.
# usage: watch_overhead.sh TUNELOCK WATCH_OVERHEAD_BENCH [LAUNCHES]
set -u
tunelock=$1 bench=$2 launches=${3:-200000}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bench" 10 >/dev/null
if [ $? -eq 77 ]; then echo "watch_overhead: no GPU here; skipped"; exit 0; fi
for round in 1 2 3; do
  echo "round $round: without: $("$bench" "$launches")"
  echo "round $round: watched: $("$tunelock" watch --out "$out/w" -- "$bench" "$launches" 2>/dev/null)"
done
