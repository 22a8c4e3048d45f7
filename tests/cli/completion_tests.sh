#!/usr/bin/env bash
# The bash completion script the build writes beside the program, driven as
# bash drives it: what a user gets when pressing Tab after each line.
set -euo pipefail
script=$(realpath "$1")
fail() { echo "FAIL: $*"; exit 1; }
source "$script"
complete -p tunelock | grep -q -- "-F _tunelock" || fail "the script does not register _tunelock"

# complete WORDS...: COMPREPLY for the last word (the one being typed).
complete_words() {
  COMP_WORDS=("$@")
  COMP_CWORD=$((${#COMP_WORDS[@]} - 1))
  COMPREPLY=()
  _tunelock
  printf '%s\n' "${COMPREPLY[@]}"
}
[[ $(complete_words tunelock ta) == table ]] || fail "'tunelock ta' does not complete to table"
[[ $(complete_words tunelock table s) == show ]] || fail "'tunelock table s' is not show"
complete_words tunelock table '' | grep -qx coverage || fail "table's subcommands lack coverage"
[[ $(complete_words tunelock merge --ou) == --output ]] || fail "merge --ou is not --output"
complete_words tunelock watch compare --j | grep -qx -- --json || fail "watch compare lacks --json"
# A leaf command's argument is a file.
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
touch "$work/rec.rank0.json"
[[ $(complete_words tunelock merge "$work/rec") == "$work/rec.rank0.json" ]] ||
  fail "merge's argument does not complete to a file"
# After -- comes a command of its own.
complete_words tunelock launch -n 2 -- ech | grep -qx echo || fail "launch -- does not complete commands"
[[ -z $(complete_words tunelock nosuch --ou) ]] || fail "an unknown command completes flags"
# Values: modes, on-miss rules and help topics, as the parser takes them.
[[ $(complete_words tunelock policy --mode pi) == pinned ]] || fail "policy --mode pi is not pinned"
complete_words tunelock policy --mode '' | grep -qx consensus || fail "--mode does not offer consensus"
[[ $(complete_words tunelock choose --on-miss e) == error ]] || fail "--on-miss e is not error"
[[ $(complete_words tunelock help mo) == modes ]] || fail "help mo is not modes"
complete_words tunelock help '' | grep -qx fallback || fail "help does not offer fallback"
echo "ok: bash completes commands, subcommands, flags, values, files and the command after --"
