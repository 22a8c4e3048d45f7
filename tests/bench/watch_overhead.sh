#!/usr/bin/env bash
# The watch's cost per kernel launch on a GPU machine: watch_overhead_bench
# (the host's time to issue N empty-kernel launches) alternately without and
# under `tunelock watch`, ROUNDS times each; prints every figure, then the
# medians and their difference.
# usage: watch_overhead.sh TUNELOCK WATCH_OVERHEAD_BENCH [LAUNCHES] [ROUNDS]
set -u
tunelock=$1 bench=$2 launches=${3:-200000} rounds=${4:-7}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
"$bench" 10 >/dev/null
if [ $? -eq 77 ]; then echo "watch_overhead: no GPU here; skipped"; exit 0; fi
for round in $(seq "$rounds"); do
  "$bench" "$launches" | awk '{print $1}' >>"$out/without"
  "$tunelock" watch --out "$out/w" -- "$bench" "$launches" 2>/dev/null | awk '{print $1}' >>"$out/watched"
done
median() { sort -g "$1" | awk '{v[NR]=$1} END {print (NR % 2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
echo "without (ns per launch): $(tr '\n' ' ' <"$out/without")"
echo "watched (ns per launch): $(tr '\n' ' ' <"$out/watched")"
a=$(median "$out/without") b=$(median "$out/watched")
echo "median without $a ns, watched $b ns: the watch adds $(awk -v a="$a" -v b="$b" 'BEGIN{printf "%.0f", b-a}') ns per launch"
