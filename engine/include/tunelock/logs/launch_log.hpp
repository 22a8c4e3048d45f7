// Every kernel launch of a watched program, per rank: what `tunelock watch`
// records (launcher/watch/, through CUPTI) and what `tunelock watch compare`,
// the page and the online check read. The run is a sequence of steps; a step
// is the ordered list of its launches, stored run-length encoded (a million
// launches of one kernel with one shape are one entry) with an XXH3 digest
// of the whole list, so two ranks or two runs are compared step by step
// without expanding anything that agrees.
//
// Files: `<prefix>.rank<N>.launches.json`, or its binary form
// `<prefix>.rank<N>.launches.tlln` (schemas/launch_log.fbs, with the
// checksum trailer every binary file carries).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace tunelock {

struct Dim3 {
  std::uint32_t x = 1, y = 1, z = 1;
  friend bool operator==(const Dim3&, const Dim3&) = default;
};

// One kernel, as the driver knows it: its symbol (mangled, as CUPTI names
// it; cuBLAS's and cuDNN's kernels included) and the module it came from
// (the XXH3 of the module's image where the watch saw it load, else empty).
struct WatchedKernel {
  std::string name;
  std::string module;
  friend bool operator==(const WatchedKernel&, const WatchedKernel&) = default;
};

// The shape of one launch. `cluster` is {0,0,0} where no cluster size was set.
struct LaunchShape {
  Dim3 grid, block;
  Dim3 cluster = {0, 0, 0};
  std::uint32_t shared_bytes = 0;  // dynamic shared memory
  bool in_graph = false;           // a kernel node of an instantiated CUDA graph
  friend bool operator==(const LaunchShape&, const LaunchShape&) = default;
};

// `count` consecutive launches of kernels[kernel] with one shape.
struct LaunchRun {
  std::uint32_t kernel = 0;  // index into LaunchLog::kernels
  LaunchShape shape;
  std::uint64_t count = 1;
  friend bool operator==(const LaunchRun&, const LaunchRun&) = default;
};

struct WatchStep {
  // 16 hex digits: XXH3-64 over the step's runs in order (each the kernel's
  // name and module, the shape and the count). Runs are always maximal (no
  // two neighbours equal), so one list of launches has one digest.
  std::string digest;
  std::uint64_t launches = 0;  // sum of the runs' counts
  std::vector<LaunchRun> runs;
  friend bool operator==(const WatchStep&, const WatchStep&) = default;
};

struct LaunchLog {
  std::string origin;  // for messages; not stored
  int rank = 0;
  std::string program;  // the command line watched, for people
  // Why nothing was observed, when nothing was (another CUPTI subscriber,
  // no GPU): a log with a note compares as unobserved, never as identical.
  std::string note;
  std::vector<WatchedKernel> kernels;  // in order of first launch
  std::vector<WatchStep> steps;

  std::uint64_t total_launches() const;
  friend bool operator==(const LaunchLog& a, const LaunchLog& b) {
    return a.rank == b.rank && a.program == b.program && a.note == b.note &&
           a.kernels == b.kernels && a.steps == b.steps;
  }
};

// "grid 128x1x1 block 256x1x1 smem 0", plus " cluster 2x1x1" and " graph"
// where they apply: how a launch's shape is shown everywhere.
std::string describe(const LaunchShape& shape);

// 16 lowercase hex digits: how launch logs write digests and module hashes.
std::string hex_digest(std::uint64_t value);

// Builds a LaunchLog as launches arrive. Not thread-safe: the watch
// serialises its callbacks. Each launch costs a comparison with the last
// run and an XXH3 update of a fixed-size record (the kernel's precomputed
// hash and the shape), never a string copy.
class LaunchRecorder {
 public:
  LaunchRecorder();
  // The index of the kernel (name, module), added on first sight.
  std::uint32_t kernel(std::string_view name, std::string_view module);
  void add(std::uint32_t kernel, const LaunchShape& shape);
  // Closes the current step (an empty step too: ranks step together).
  void step();
  // The digest of every launch since the previous call (16 hex digits, or
  // "none" when there was no launch): what the online check compares.
  std::string take_check_digest();
  // The log so far, the open step closed when it holds launches.
  LaunchLog log(int rank, std::string program, std::string note) const;
  std::uint64_t launches() const { return total_; }

 private:
  std::vector<WatchedKernel> kernels_;
  std::vector<std::uint64_t> kernel_hashes_;
  // kernel_hashes_ back to indices: a graph replay names its kernels on
  // every launch, so finding one must not scan the table.
  std::unordered_multimap<std::uint64_t, std::uint32_t> index_of_hash_;
  std::vector<WatchStep> steps_;
  WatchStep open_;
  std::uint64_t total_ = 0;
  std::uint64_t check_hash_ = 0;  // chained over each launch since the last check
  std::uint64_t check_launches_ = 0;
};

// `<prefix>.rank<N>.launches.json` / `.launches.tlln`.
std::filesystem::path launch_log_path(const std::filesystem::path& prefix, int rank, bool binary);

std::string launch_log_to_json(const LaunchLog& log);
std::string launch_log_to_binary(const LaunchLog& log);
// JSON or binary, told apart by the binary file identifier (TLLN). Throws
// Error naming `origin` and the path of anything malformed; the digests
// are recomputed and must match.
LaunchLog launch_log_from_bytes(std::string_view bytes, const std::string& origin);
LaunchLog load_launch_log(const std::filesystem::path& path);
// Writes atomically: JSON, or binary when the path ends in .tlln.
void write_launch_log(const LaunchLog& log, const std::filesystem::path& path);

}  // namespace tunelock
