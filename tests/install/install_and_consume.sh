#!/usr/bin/env bash
# Installs the build into a scratch prefix, builds the consumer project with
# find_package(tunelock), runs it, and checks the installed tree and the
# choice log the consumer wrote at exit.
set -euo pipefail
build=$1 consumer=$2 generator=${3:-Ninja}
cxx_flags=${4:-} linker_flags=${5:-}  # the build's own (sanitizer presets need them)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

cmake --install "$build" --prefix "$scratch/prefix" >/dev/null || { echo "FAIL: install"; exit 1; }
for path in bin/tunelock include/tunelock/runtime/runtime.hpp include/tunelock/decision/selection.hpp \
            include/tunelock/launcher/kernel_family.hpp lib/libtunelock_launcher.a \
            lib/cmake/tunelock/tunelockConfig.cmake share/tunelock/tables; do
  [[ -e $scratch/prefix/$path ]] || { echo "FAIL: $path is not installed"; exit 1; }
done

quiet() { local log; log=$("$@" 2>&1) || { echo "$log"; echo "FAIL: $*"; exit 1; }; }
quiet cmake -S "$consumer" -B "$scratch/build" -G "$generator" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
  -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_EXE_LINKER_FLAGS="$linker_flags"
quiet cmake --build "$scratch/build"

out=$(TUNELOCK_MODE=pinned TUNELOCK_CHOICE_LOG="$scratch/log" "$scratch/build/consumer" 2>/dev/null)
echo "consumer printed: $out"
# Pinned without a table: the cheapest of each list, through engine and launcher alike.
[[ $out == "BLOCK_M=32;warps=4;stages=2 min_cost ran BLOCK=64 "* ]] || { echo "FAIL: unexpected choice"; exit 1; }
digest=${out##* }
grep -q '"host|consumer.ops.matmul|M=64": "BLOCK_M=32;warps=4;stages=2;pinned"' "$scratch/log.rank0.json" \
  || { echo "FAIL: choice log not written at exit"; cat "$scratch/log.rank0.json"; exit 1; }
grep -q '"host|consumer.ops.scale|N=1024|f32": "BLOCK=64;warps=4;stages=2;pinned"' "$scratch/log.rank0.json" \
  || { echo "FAIL: the launcher's choice is not in the log"; cat "$scratch/log.rank0.json"; exit 1; }

# Where UCX was built, its collective is exported too, with its headers.
if [[ -e $build/launcher/libtunelock_ucx.a ]]; then
  [[ -e $scratch/prefix/include/tunelock/launcher/ucx_collective.hpp ]] || { echo "FAIL: UCX headers"; exit 1; }
  grep -q 'tunelock::ucx' "$scratch/prefix/lib/cmake/tunelock/tunelock_ucx_targets.cmake" \
    || { echo "FAIL: tunelock::ucx is not exported"; exit 1; }
fi
grep -q "\"digest\": \"$digest\"" "$scratch/log.rank0.json" || { echo "FAIL: digest differs"; exit 1; }

# Where CUDA was built, tunelock::cuda is exported with its headers.
if [[ -e $build/launcher/cuda/libtunelock_cuda.a ]]; then
  [[ -e $scratch/prefix/include/tunelock/cuda/cuda_backend.hpp ]] || { echo "FAIL: CUDA headers"; exit 1; }
  grep -q 'tunelock::cuda' "$scratch/prefix/lib/cmake/tunelock/tunelock_cuda_targets.cmake" \
    || { echo "FAIL: tunelock::cuda is not exported"; exit 1; }
fi

# Components: a consumer that asks for the engine alone configures, builds
# and runs on a machine with neither UCX nor the CUDA toolkit (both hidden
# from find_package here); asking for every component there fails clearly.
no_gpu_stack=(-DCMAKE_DISABLE_FIND_PACKAGE_ucx=ON -DCMAKE_DISABLE_FIND_PACKAGE_CUDAToolkit=ON)
quiet cmake -S "$consumer/../engine_consumer" -B "$scratch/engine-build" -G "$generator" \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" "${no_gpu_stack[@]}" \
  -DCMAKE_CXX_FLAGS="$cxx_flags" -DCMAKE_EXE_LINKER_FLAGS="$linker_flags"
quiet cmake --build "$scratch/engine-build"
engine_out=$(TUNELOCK_MODE=pinned "$scratch/engine-build/engine_consumer" 2>/dev/null)
[[ $engine_out == "BLOCK_M=32;warps=4;stages=2 min_cost" ]] || { echo "FAIL: engine consumer: $engine_out"; exit 1; }
if grep -q 'tunelock::ucx\|tunelock::cuda' "$scratch"/prefix/lib/cmake/tunelock/tunelock_*_targets.cmake; then
  if cmake -S "$consumer" -B "$scratch/all-build" -G "$generator" -DCMAKE_PREFIX_PATH="$scratch/prefix" \
       "${no_gpu_stack[@]}" >"$scratch/all.log" 2>&1; then
    echo "FAIL: every component configured without UCX/CUDA"; exit 1
  fi
fi
miss=$(cmake -S "$consumer/../engine_consumer" -B "$scratch/watch-build" -G "$generator" \
  -DCMAKE_PREFIX_PATH="$scratch/prefix" -DENGINE_CONSUMER_COMPONENTS="engine;watch" 2>&1) &&
  { echo "FAIL: the watch component was found"; exit 1; }
grep -q "tunelock component 'watch' is not part of this installation" <<<"$miss" ||
  { echo "$miss"; echo "FAIL: no clear message for a missing component"; exit 1; }

# The installed Python package loads its library and decides as the C++ consumer did.
site=$(echo "$scratch"/prefix/lib*/python3/dist-packages)
py_out=$(cd / && PYTHONPATH="$site" python3 -c '
import tunelock
tunelock.install(mode="pinned")
configs = [{"kwargs": {"BLOCK_M": 64}, "num_warps": 4, "num_stages": 2},
           {"kwargs": {"BLOCK_M": 32}, "num_warps": 4, "num_stages": 2}]
launched = tunelock.first_call("host", "consumer.ops", "matmul", "M=64", configs, 2,
                               tunelock.NothingToRun()).launched
print(tunelock.signature(configs[launched]))')
[[ $py_out == "BLOCK_M=32;warps=4;stages=2" ]] || { echo "FAIL: installed Python package: $py_out"; exit 1; }

# The installed CLI works from the prefix.
"$scratch/prefix/bin/tunelock" policy --json >/dev/null
echo "ok: installed tree builds and runs a find_package(tunelock) consumer"
