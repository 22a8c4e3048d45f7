// `tunelock watch -- CMD` runs CMD with every kernel launch recorded per
// rank (the CUDA driver loads libtunelock_watch.so through
// CUDA_INJECTION64_PATH; CMD is not changed); `tunelock watch compare`
// names where ranks or runs launched differently.
#include <dlfcn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "commands.hpp"
#include "run_command.hpp"
#include "tunelock/base/environment.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/rank_files.hpp"
#include "tunelock/logs/launch_compare.hpp"

namespace tunelock::cli {
namespace {

namespace fs = std::filesystem;

struct WatchOptions {
  std::string out = "tunelock-watch";
  std::string step_nvtx;
  bool binary = false;
  std::vector<std::string> command;
  std::vector<std::string> logs;  // compare
  bool json = false;
};

constexpr const char* kLibraryName = "libtunelock_watch.so";

// The watch library: TUNELOCK_WATCH_LIBRARY, else beside this program as
// each layout puts it (an install's lib/, the Python package, the build tree).
fs::path watch_library(const Environment& env) {
  if (std::string given = env_value(env, env_names::kWatchLibrary); !given.empty()) {
    if (!fs::is_regular_file(given))
      throw Error(std::string(env_names::kWatchLibrary) + ": no such file: " + given);
    return fs::absolute(given);
  }
  std::error_code ec;
  const fs::path program = fs::read_symlink("/proc/self/exe", ec);
  const fs::path here = ec ? fs::current_path() : program.parent_path();
  for (const fs::path& candidate :
       {here / ".." / "lib" / kLibraryName, here / ".." / kLibraryName, here / kLibraryName,
        here / ".." / "launcher" / "watch" / kLibraryName}) {
    if (fs::is_regular_file(candidate)) return fs::canonical(candidate);
  }
  throw Error(std::string(kLibraryName) +
              " not found beside this tunelock (it is built where the CUDA toolkit's CUPTI is "
              "installed); set " +
              std::string(env_names::kWatchLibrary) + " to its path");
}

// A library that is not the watch library (any other .so given by
// TUNELOCK_WATCH_LIBRARY) would run the whole command and write no log:
// it must load and export the watch's entry points.
void check_watch_library(const fs::path& library) {
  void* handle = ::dlopen(library.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle)
    throw Error("cannot load the watch library " + library.string() + ": " + ::dlerror() +
                " (is CUPTI on LD_LIBRARY_PATH?)");
  const bool watch =
      ::dlsym(handle, "InitializeInjection") && ::dlsym(handle, "tunelock_watch_start");
  ::dlclose(handle);
  if (!watch)
    throw Error(library.string() + " is not the tunelock watch library (" + kLibraryName +
                " exports InitializeInjection and tunelock_watch_start); check " +
                std::string(env_names::kWatchLibrary));
}

// The launch logs go beside `prefix`: its folder must exist and take files
// before the command runs, or a long run's log is lost at its end.
void check_out_prefix(const std::string& prefix) {
  const fs::path folder = fs::absolute(prefix).parent_path();
  std::error_code ec;
  if (!fs::is_directory(folder, ec))
    throw Error("watch --out " + prefix + ": no such directory " + folder.string() +
                " (create it first)");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw Error("watch --out " + prefix + ": cannot write into " + folder.string() + ": " +
                std::strerror(errno));
}

// The CUPTI library the watch library loads: NVTX hands range pushes to
// CUPTI only where NVTX_INJECTION64_PATH names it.
std::string cupti_library_of(const fs::path& watch) {
  void* handle = ::dlopen(watch.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!handle)
    throw Error("cannot load " + watch.string() + ": " + ::dlerror() +
                " (is CUPTI on LD_LIBRARY_PATH?)");
  Dl_info info{};
  void* subscribe = ::dlsym(handle, "cuptiSubscribe");
  std::string path =
      subscribe && ::dladdr(subscribe, &info) && info.dli_fname ? info.dli_fname : "";
  ::dlclose(handle);
  if (path.empty()) throw Error("cannot find the CUPTI library " + watch.string() + " uses");
  return path;
}

// The launch logs `prefix` names that exist now, by rank.
std::vector<fs::path> logs_written(const std::string& prefix) {
  const fs::path base = fs::absolute(prefix);
  const fs::path folder = base.parent_path();
  std::set<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const RankFileName name = parse_rank_file_name(entry.path().filename().string());
    const std::string file = entry.path().filename().string();
    if (name.rank >= 0 && folder / name.run == base &&
        (file.ends_with(rank_file_endings::kLaunches) ||
         file.ends_with(rank_file_endings::kBinaryLaunches)))
      found.insert(entry.path());
  }
  return {found.begin(), found.end()};
}

// A folder of the command's own, where a rank whose launch log cannot be
// written at exit leaves the reason (TUNELOCK_WATCH_REPORT); removed when
// the command ends.
class ReportFolder {
 public:
  ReportFolder() {
    std::string pattern = (fs::temp_directory_path() / "tunelock-watch-XXXXXX").string();
    if (!::mkdtemp(pattern.data()))
      throw Error("watch: cannot make a folder under " + fs::temp_directory_path().string() + ": " +
                  std::strerror(errno));
    path_ = pattern;
  }
  ~ReportFolder() {
    std::error_code ec;
    fs::remove_all(path_, ec);
  }
  ReportFolder(const ReportFolder&) = delete;
  ReportFolder& operator=(const ReportFolder&) = delete;
  const fs::path& path() const { return path_; }

  // Each rank's reason, in rank-file order.
  std::vector<std::string> reasons() const {
    std::set<fs::path> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(path_, ec)) files.insert(entry.path());
    std::vector<std::string> out;
    for (const fs::path& file : files) {
      std::ifstream in(file);
      std::stringstream text;
      text << in.rdbuf();
      std::string reason = text.str();
      while (!reason.empty() && reason.back() == '\n') reason.pop_back();
      if (!reason.empty()) out.push_back(reason);
    }
    return out;
  }

 private:
  fs::path path_;
};

// The exit status when a launch log could not be written, as a trainer's
// choice log that cannot be written (tunelock help exit-codes).
constexpr int kExitLogUnwritten = 74;

// Runs the command with the injection set; its exit status is ours, unless
// it succeeded and a launch log could not be written.
int watch(const WatchOptions& options, Streams& streams) {
  check_out_prefix(options.out);
  const fs::path library = watch_library(streams.env);
  check_watch_library(library);
  const std::string cupti = options.step_nvtx.empty() ? "" : cupti_library_of(library);
  // Logs of an earlier run under the same prefix would be read as this one's.
  for (const fs::path& old : logs_written(options.out)) fs::remove(old);
  const ReportFolder report;
  const pid_t pid = ::fork();
  if (pid < 0) throw Error(std::string("watch: cannot start the command: ") + std::strerror(errno));
  if (pid == 0) {
    ::setenv("CUDA_INJECTION64_PATH", library.c_str(), 1);
    ::setenv(std::string(env_names::kWatchOut).c_str(), fs::absolute(options.out).c_str(), 1);
    ::setenv(std::string(env_names::kWatchReport).c_str(), report.path().c_str(), 1);
    if (options.binary) ::setenv(std::string(env_names::kWatchBinary).c_str(), "1", 1);
    if (!options.step_nvtx.empty()) {
      ::setenv(std::string(env_names::kWatchStepNvtx).c_str(), options.step_nvtx.c_str(), 1);
      ::setenv("NVTX_INJECTION64_PATH", cupti.c_str(), 1);
    }
    exec_command(options.command, "watch");
  }
  // The terminal's Ctrl-C reaches the command; we wait for it to finish.
  auto previous = ::signal(SIGINT, SIG_IGN);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ::signal(SIGINT, previous);
  const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  const std::vector<fs::path> logs = logs_written(options.out);
  const std::vector<std::string> unwritten = report.reasons();
  for (const std::string& reason : unwritten)
    streams.err << "tunelock watch: a launch log was not written: " << reason << "\n";
  if (!unwritten.empty() && logs.empty()) return code ? code : kExitLogUnwritten;
  if (logs.empty()) {
    streams.err << "tunelock watch: no launch log was written under " << options.out
                << " (the command never initialised CUDA, or exited without running its exit "
                   "handlers)\n";
  } else {
    streams.err << "tunelock watch: " << logs.size() << " launch log(s): ";
    for (std::size_t i = 0; i < logs.size(); ++i)
      streams.err << (i ? ", " : "") << logs[i].filename().string();
    streams.err << "\n";
  }
  return unwritten.empty() || code ? code : kExitLogUnwritten;
}

int compare(const WatchOptions& options, Streams& streams) {
  std::vector<LaunchLog> logs;
  for (const std::string& path : options.logs) logs.push_back(load_launch_log(path));
  const std::vector<LaunchComparison> result = compare_launch_logs(logs);
  if (options.json)
    streams.out << launch_comparisons_to_json(result).dump(1) << "\n";
  else
    streams.out << launch_comparisons_to_text(result);
  return launch_comparison_exit_code(result) ? kExitDifferent : kExitOk;
}

}  // namespace

Command add_watch_command(CLI::App& app) {
  auto options = std::make_shared<WatchOptions>();
  CLI::App* cmd = app.add_subcommand(
      "watch",
      "Run a command with every kernel launch recorded per rank (<out>.rank<N>.launches.json); "
      "`watch compare` names where ranks or runs differ");
  cmd->add_option("--out", options->out, "Prefix of the launch logs (default tunelock-watch)");
  cmd->add_option("--step-nvtx", options->step_nvtx,
                  "An NVTX range the program pushes once per step: each push starts a step");
  cmd->add_flag("--binary", options->binary, "Write the binary form (.launches.tlln)");
  cmd->add_option("command", options->command, "The command and its arguments, after --");

  CLI::App* compare_cmd = cmd->add_subcommand(
      "compare",
      "Where launch logs differ: ranks of one run, or one rank of two runs (exit 1 "
      "when they differ)");
  compare_cmd
      ->add_option("LOGS", options->logs,
                   "Launch logs; each after the first is compared "
                   "with the first")
      ->required()
      ->expected(2, -1);
  compare_cmd->add_flag("--json", options->json, "Print the comparison as JSON");

  return {cmd, [options, compare_cmd](Streams& streams) {
            if (compare_cmd->parsed()) return compare(*options, streams);
            if (options->command.empty())
              throw Error("watch: no command given (tunelock watch [--out PREFIX] -- CMD ...)");
            return watch(*options, streams);
          }};
}

}  // namespace tunelock::cli
