#!/usr/bin/env bash
# A Python user's view: `pip install --no-build-isolation --no-index .` from
# the clone into a fresh venv builds the engine's C ABI library and the CLI
# (setup.py, CMake) and installs the package with both inside it; then the
# Python suite runs against the installed package (not the build tree), and
# `python -m tunelock` runs the CLI's offline commands.
#
#   pip_install.sh SOURCE_DIR [PYTHON] [JOBS]
#
# Exit 77 (skipped) where the interpreter has no venv/ensurepip or pytest.
# The venv is a fresh one, as a user makes it (`python3 -m venv v`): no
# system site-packages and no 'wheel' package, which setup.py then finds in
# the system's python3-wheel. Nothing is downloaded. Only after the install
# does the venv see the system's packages (pytest, and torch where
# installed), behind its own, for the suite.
set -euo pipefail
source_dir=$(cd "$1" && pwd)
python=${2:-/usr/bin/python3}
jobs=${3:-2}

skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

"$python" -c "import venv, ensurepip" 2>/dev/null || skip "$python has no venv/ensurepip (Debian: apt-get install python3-venv)"
"$python" -c "import pytest" 2>/dev/null || skip "$python has no pytest (Debian: apt-get install python3-pytest)"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
venv=$scratch/venv
"$python" -m venv "$venv" >"$scratch/venv.log" 2>&1 \
  || { tail -20 "$scratch/venv.log"; skip "cannot create a venv with pip"; }
"$venv/bin/python" -m pip --version >/dev/null 2>&1 || skip "the venv has no pip"
"$venv/bin/python" -c "import setuptools" 2>/dev/null \
  || skip "no setuptools for a build without isolation (Debian: apt-get install python3-pip)"

# Nothing from the build tree or the environment may stand in for the
# installed package: no PYTHONPATH, no library or CLI override, no user site.
unset PYTHONPATH PYTHONHOME TUNELOCK_LIBRARY TUNELOCK_CLI
export PYTHONNOUSERSITE=1 PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1
# The CMake and setuptools builds go to the scratch folder, not the clone.
export TUNELOCK_PYTHON_BUILD_DIR=$scratch/build CMAKE_BUILD_PARALLEL_LEVEL=$jobs

started=$(date +%s)
if ! "$venv/bin/python" -m pip install --no-build-isolation --no-index "$source_dir" \
     >"$scratch/pip.log" 2>&1; then
  tail -60 "$scratch/pip.log"; fail "pip install --no-build-isolation --no-index $source_dir"
fi
echo "ok: pip install built and installed the package in a fresh venv in $(( $(date +%s) - started )) s"
# The suite's own needs (pytest, torch) from the system, after the venv's packages.
"$python" -c 'import site; print("\n".join(site.getsitepackages()))' \
  >"$("$venv/bin/python" -c 'import site; print(site.getsitepackages()[0])')/system-packages.pth"
# That build is the plain Release build a user gets (no preset, -O3, GCC's
# false -O3 warnings not errors): install.plain_release_configure checks the
# configure, this is where it compiles.
grep -q '^TUNELOCK_WARNINGS_AS_ERRORS:BOOL=OFF$' "$scratch/build/cmake/CMakeCache.txt" \
  || fail "pip's build made warnings errors"
grep -q -- '-O3' "$scratch/build/cmake/compile_commands.json" || fail "pip's build is not optimised (-O3)"
if grep -q -- '-Werror' "$scratch/build/cmake/compile_commands.json"; then
  fail "-Werror in pip's compile commands"
fi

# From outside the clone, so neither the sources nor the build tree are on the path.
cd "$scratch"
package=$("$venv/bin/python" -c "import os, tunelock; print(os.path.dirname(tunelock.__file__))")
case $package in
  "$venv"/*) ;;
  *) fail "tunelock was imported from $package, not from the venv $venv" ;;
esac
for file in __init__.py __main__.py py.typed libtunelock_c.so bin/tunelock; do
  [[ -e $package/$file ]] || fail "the installed package has no $file"
done
[[ -x $package/bin/tunelock ]] || fail "the installed CLI is not executable"

# The version comes from one place: project(tunelock VERSION x.y.z).
version=$(sed -nE 's/^project\(tunelock VERSION ([0-9.]+).*/\1/p' "$source_dir/CMakeLists.txt")
[[ -n $version ]] || fail "no project version in $source_dir/CMakeLists.txt"
installed=$("$venv/bin/python" -c "import importlib.metadata as m; print(m.version('tunelock'))")
[[ $installed == "$version" ]] || fail "installed distribution version $installed, CMake project $version"
engine=$("$venv/bin/python" -c "import tunelock; print(tunelock.version())")
[[ $engine == "$version" ]] || fail "tunelock.version() is $engine, CMake project $version"

out=$("$venv/bin/python" -m tunelock --version) || fail "python -m tunelock --version exited $?"
[[ $out == "tunelock $version" ]] || fail "python -m tunelock --version printed '$out'"
out=$("$venv/bin/python" -m tunelock table show "$source_dir/examples/tables/sm90.json") \
  || fail "python -m tunelock table show exited $?"
grep -q '^arch: *sm90$' <<<"$out" || fail "table show printed no arch: $out"
grep -q '^rmsnorm \[N=8192|bf16\] -> BLOCK_SIZE=1024;warps=8;stages=1$' <<<"$out" \
  || fail "table show printed no rmsnorm entry: $out"
out=$("$venv/bin/python" -m tunelock launch -n 2 -- sh -c 'echo "rank $RANK"') \
  || fail "python -m tunelock launch exited $?"
[[ $(grep -cE '^\[rank ([01])\] rank \1$' <<<"$out") == 2 ]] || fail "python -m tunelock launch printed '$out'"
# pip's console script: the same CLI, on the venv's PATH.
out=$("$venv/bin/tunelock" --version) || fail "the tunelock console script exited $?"
[[ $out == "tunelock $version" ]] || fail "the tunelock console script printed '$out'"
echo "ok: python -m tunelock and the tunelock console script run the installed CLI (--version, table show, launch)"

# The Python suite against the installed package, in two halves side by
# side: most of its time is ranks waiting on each other's deadlines, not
# CPU, and this test has the machine to itself.
tests=$source_dir/python/tests
slow=("$tests/test_killed_ranks.py" "$tests/test_consensus.py")
"$venv/bin/python" -m pytest -q -p no:cacheprovider "${slow[@]}" >"$scratch/pytest-a.log" 2>&1 &
first=$!
"$venv/bin/python" -m pytest -q -p no:cacheprovider "${slow[@]/#/--ignore=}" "$tests" \
  >"$scratch/pytest-b.log" 2>&1 &
second=$!
failed=0
wait "$first" || { cat "$scratch/pytest-a.log"; failed=1; }
wait "$second" || { cat "$scratch/pytest-b.log"; failed=1; }
tail -n1 "$scratch/pytest-a.log" "$scratch/pytest-b.log"
((failed == 0)) || fail "the Python tests against the installed package"
echo "ok: the Python tests pass against the package installed in a fresh venv"
