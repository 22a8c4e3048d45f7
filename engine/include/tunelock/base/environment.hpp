// The process environment, in one place: the Environment type every reader
// takes (so tests pass their own), the TUNELOCK_* variables that are not
// policy fields, and the one integer and boolean parser every variable goes
// through, with one wording for a bad value: "<NAME>: invalid value '<text>';
// allowed: <what>". Used by the policy, the launch variables (rank, world
// size), the rendezvous (ports), the CUDA backend (local rank) and the log.
#pragma once

#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <string_view>

namespace tunelock {

using Environment = std::map<std::string, std::string, std::less<>>;

// The TUNELOCK_* variables that are not policy fields, named once: the
// launcher, `tunelock launch`, the runtime, the logger and the Python
// package spell them through these, and the policy reader accepts them.
namespace env_names {
inline constexpr std::string_view kMasterAddr = "TUNELOCK_MASTER_ADDR";
inline constexpr std::string_view kMasterPort = "TUNELOCK_MASTER_PORT";
inline constexpr std::string_view kJobToken = "TUNELOCK_JOB_TOKEN";
inline constexpr std::string_view kChoiceLog = "TUNELOCK_CHOICE_LOG";
inline constexpr std::string_view kLogLevel = "TUNELOCK_LOG_LEVEL";
inline constexpr std::string_view kLibrary = "TUNELOCK_LIBRARY";  // the Python package's
// `tunelock watch` (launcher/watch/): where launch logs go, the NVTX range
// that marks steps, binary logs, the watch library, and the online check.
inline constexpr std::string_view kWatchOut = "TUNELOCK_WATCH_OUT";
inline constexpr std::string_view kWatchStepNvtx = "TUNELOCK_WATCH_STEP_NVTX";
inline constexpr std::string_view kWatchBinary = "TUNELOCK_WATCH_BINARY";
inline constexpr std::string_view kWatchLibrary = "TUNELOCK_WATCH_LIBRARY";
inline constexpr std::string_view kWatchVerify = "TUNELOCK_WATCH_VERIFY";
// A folder `tunelock watch` makes for its command: a rank whose launch log
// cannot be written at exit leaves the reason there, so watch names it.
inline constexpr std::string_view kWatchReport = "TUNELOCK_WATCH_REPORT";
// How a program's process group verifies: auto, ucx, group (c_api.h).
inline constexpr std::string_view kVerifyTransport = "TUNELOCK_VERIFY_TRANSPORT";
// Where TUNELOCK_EQUIVALENT=timed keeps each machine's timed picks ("off": nowhere).
inline constexpr std::string_view kEquivalentCache = "TUNELOCK_EQUIVALENT_CACHE";
inline constexpr std::string_view kAll[] = {
    kMasterAddr,  kMasterPort,  kJobToken,        kChoiceLog,      kLogLevel,
    kLibrary,     kWatchOut,    kWatchStepNvtx,   kWatchBinary,    kWatchLibrary,
    kWatchVerify, kWatchReport, kVerifyTransport, kEquivalentCache};
// Read by the build and the Python front only (setup.py's build folder, the
// CLI that `python -m tunelock` runs): known, so a run never refuses them,
// and ignored by the runtime.
inline constexpr std::string_view kPythonBuildDir = "TUNELOCK_PYTHON_BUILD_DIR";
inline constexpr std::string_view kCli = "TUNELOCK_CLI";
inline constexpr std::string_view kSystemWheel = "TUNELOCK_SYSTEM_WHEEL";
inline constexpr std::string_view kBuildOnly[] = {kPythonBuildDir, kCli, kSystemWheel};
}  // namespace env_names

// The value of `name` in `env`, or "" when unset.
std::string env_value(const Environment& env, std::string_view name);

// A snapshot of this process's environment.
Environment process_environment();

// Throws Error("<name>: invalid value '<text>'; allowed: <allowed>").
[[noreturn]] void invalid_value(std::string_view name, std::string_view text,
                                std::string_view allowed);

// A decimal integer in [min, max] (surrounding blanks ignored); otherwise
// invalid_value with `allowed`, or "an integer from MIN to MAX" when empty.
std::int64_t parse_integer(std::string_view name, std::string_view text,
                           std::int64_t min = std::numeric_limits<std::int64_t>::min(),
                           std::int64_t max = std::numeric_limits<std::int64_t>::max(),
                           std::string_view allowed = {});

// 1/0, true/false, yes/no, on/off in any case (surrounding blanks ignored).
bool parse_boolean(std::string_view name, std::string_view text);

}  // namespace tunelock
