#include "tunelock/base/variables.hpp"

#include <array>

namespace tunelock {
namespace {

constexpr std::string_view kBlockPattern = "TUNELOCK_BLOCK_<NAME>";

constexpr std::array<VariableInfo, 37> kVariables{{
    // The policy (runtime/policy.hpp): what is chosen, and how.
    {"TUNELOCK_MODE", "policy",
     "auto, pinned, record, audit or consensus: how a kernel's first call per key decides",
     "record where TUNELOCK_RECORD is set; pinned under TUNELOCK_DETERMINISTIC; else auto"},
    {"TUNELOCK_MODULES", "policy", "comma-separated kernel name prefixes in scope", "every kernel"},
    {"TUNELOCK_CONFIG_INVARIANT", "policy",
     "comma-separated kernels whose config does not change their numerics (left to the autotuner)",
     "none"},
    {"TUNELOCK_TABLE_PATH", "policy",
     "':'-separated table directories (~ expands), searched before the installed tables", "none"},
    {"TUNELOCK_RECORD", "policy",
     "record file prefix: <prefix>.rank<N>.json and its timings (~ expands; a trailing / is an "
     "error)",
     "none"},
    {"TUNELOCK_ON_MISS", "policy", "min_cost (the cheapest candidate) or error (exit code 3)",
     "min_cost"},
    {kBlockPattern, "policy", "block-size override BLOCK_<NAME>, an integer", "none"},
    {"TUNELOCK_DETERMINISTIC", "policy", "deterministic mode (implies pinned)", "off"},
    {"TUNELOCK_CHAOS", "policy", "rank-dependent choices: a positive control for the checks",
     "off"},
    {"TUNELOCK_ENUMERATE", "policy", "report each kernel family once", "off"},
    {"TUNELOCK_NONDETERMINISTIC", "policy",
     "configs declared to change their own bits, KERNEL@SIGNATURE joined by '|'", "none"},
    {"TUNELOCK_BATCH_INVARIANT", "policy",
     "tune kernels that declare a batch dim so each row's bits hold at every batch size", "off"},
    {"TUNELOCK_CHECK_BITS", "policy",
     "the first pinned call per key runs its config twice and compares the bits", "on"},
    {"TUNELOCK_EQUIVALENT", "policy",
     "off, or timed: time an entry's equivalent configs (same bits) once per key and machine",
     "off"},
    {"TUNELOCK_EQUIVALENT_CACHE", "policy",
     "where TUNELOCK_EQUIVALENT=timed keeps this machine's timed picks; off for nowhere",
     "$XDG_CACHE_HOME/tunelock/equivalents.json, else ~/.cache/tunelock/equivalents.json"},
    {"TUNELOCK_PROVENANCE", "policy",
     "a table recorded on another machine: warn, strict (an error) or ignore", "warn"},
    {"TUNELOCK_IDENTITY", "policy",
     "a kernel whose code is not what its entries were timed on: warn, strict or ignore", "warn"},
    // Verification across ranks.
    {"TUNELOCK_VERIFY_EVERY", "verify", "verify the ranks' choices every N steps (0: off)", "0"},
    {"TUNELOCK_VERIFY", "verify", "older name of TUNELOCK_VERIFY_EVERY, still read", "0"},
    {"TUNELOCK_VERIFY_STRICT", "verify", "a conflict raises on every rank", "off"},
    {"TUNELOCK_VERIFY_TIMEOUT", "verify", "seconds to wait for peers", "1800"},
    {"TUNELOCK_VERIFY_TRANSPORT", "verify",
     "how a process group verifies: ucx, group (its own all-reduce) or auto",
     "auto: ucx where built, else group"},
    // How ranks meet.
    {"TUNELOCK_MASTER_ADDR", "ranks", "host of the ranks' rendezvous (with TUNELOCK_MASTER_PORT)",
     "MASTER_ADDR; tunelock launch sets both"},
    {"TUNELOCK_MASTER_PORT", "ranks", "port of the ranks' rendezvous", "MASTER_PORT + 1"},
    {"TUNELOCK_JOB_TOKEN", "ranks", "what ranks of one job share, so another job's are refused",
     "SLURM_JOB_ID, else TORCHELASTIC_RUN_ID"},
    // Files and messages.
    {"TUNELOCK_CHOICE_LOG", "files",
     "choice log prefix: each rank writes <prefix>.rank<N>.json with its digest at exit", "none"},
    {"TUNELOCK_LOG_LEVEL", "files", "trace, debug, info, warn, error, critical or off", "info"},
    // tunelock watch (set by `tunelock watch`; a program rarely sets them).
    {"TUNELOCK_WATCH_OUT", "watch", "launch log prefix: <prefix>.rank<N>.launches.json",
     "set by tunelock watch --out"},
    {"TUNELOCK_WATCH_STEP_NVTX", "watch", "an NVTX range name whose pushes start steps",
     "set by tunelock watch --step-nvtx"},
    {"TUNELOCK_WATCH_BINARY", "watch", "write launch logs as .launches.tlln", "off"},
    {"TUNELOCK_WATCH_LIBRARY", "watch", "the watch library tunelock watch injects",
     "libtunelock_watch.so beside the tunelock program"},
    {"TUNELOCK_WATCH_VERIFY", "watch",
     "each verification also compares the digest of the launches since the last one", "off"},
    {"TUNELOCK_WATCH_REPORT", "watch",
     "a folder where a rank whose launch log cannot be written leaves the reason",
     "set by tunelock watch"},
    // The Python package and its build.
    {"TUNELOCK_LIBRARY", "build", "the engine library the Python package loads",
     "the one the package carries"},
    {"TUNELOCK_CLI", "build", "the tunelock program `python -m tunelock` runs",
     "the one the package carries"},
    {"TUNELOCK_PYTHON_BUILD_DIR", "build",
     "pip install's build folder (read by setup.py only; ignored at run time)", "build/python"},
    {"TUNELOCK_SYSTEM_WHEEL", "build",
     "where setup.py looks for the system's 'wheel' package when its Python has none "
     "(':'-separated; read by setup.py only)",
     "/usr/lib/python3/dist-packages:/usr/share/python-wheels"},
}};

}  // namespace

std::span<const VariableInfo> documented_variables() { return kVariables; }

const VariableInfo* find_variable(std::string_view name) {
  for (const VariableInfo& v : kVariables)
    if (v.name == name) return &v;
  if (name.starts_with("TUNELOCK_BLOCK_") &&
      name.size() > std::string_view("TUNELOCK_BLOCK_").size())
    for (const VariableInfo& v : kVariables)
      if (v.name == kBlockPattern) return &v;
  return nullptr;
}

}  // namespace tunelock
