// Load time, peak memory and lookup rate of a 1,000,000-entry table, as JSON
// and as binary (.tlb), beside Python's json.load of the same JSON file (the
// yardstick for "reads JSON as fast as anything a user has"). Each load runs
// in a fresh child process so its peak resident memory is its own.
// Usage: table_load_bench [kernels keys_per_kernel]; without arguments, three
// shapes of 1,000,000 entries: 10, 100 and 10,000 keys per kernel.
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>

#include "tunelock/io/files.hpp"
#include "tunelock/tables/table_binary.hpp"
#include "tunelock/tables/table_files.hpp"
#include "tunelock/tables/table_json.hpp"

using namespace tunelock;
using Clock = std::chrono::steady_clock;

namespace {

std::unique_ptr<InMemoryTable> generate(int kernels, int keys) {
  std::vector<Config> configs;
  for (std::int64_t m : {32, 64, 128, 256})
    for (int warps : {4, 8})
      configs.push_back(make_config({{"BLOCK_M", m}, {"BLOCK_N", 64}, {"BLOCK_K", 32}}, warps, 3));
  auto table = std::make_unique<InMemoryTable>("sm90");
  for (int k = 0; k < kernels; ++k)
    for (int s = 0; s < keys; ++s)
      table->set("pkg.ops._kernel_" + std::to_string(k),
                 "M=" + std::to_string(s) + "|N=4096|torch.bfloat16",
                 TableEntry{configs[static_cast<std::size_t>((k * 7 + s) % 8)]});
  return table;
}

struct Measure {
  double load_ms = 0;
  double lookups_per_s = 0;
  long peak_kib = 0;
};

// This process's peak resident memory (VmHWM), which exec resets: ru_maxrss
// of a forked child would also count the pages it shared with its parent.
long peak_kib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);)
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  return -1;
}

// In a fresh process (exec'd, so none of the generator's memory is counted):
// load, then time lookups of random existing keys; report through fd 3.
int child_main(const char* file, int kernels, int keys) {
  {
    Measure m;
    const auto start = Clock::now();
    const auto table = load_table_file(std::filesystem::path(file));
    m.load_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    const std::vector<Config> candidates{
        make_config({{"BLOCK_K", 32}, {"BLOCK_M", 256}, {"BLOCK_N", 64}}, 8, 3)};
    std::mt19937 random(42);
    std::vector<std::pair<std::string, std::string>> probes;
    for (int i = 0; i < 100'000; ++i) {
      const int k = static_cast<int>(random() % static_cast<unsigned>(kernels));
      const int s = static_cast<int>(random() % static_cast<unsigned>(keys));
      probes.emplace_back("pkg.ops._kernel_" + std::to_string(k),
                          "M=" + std::to_string(s) + "|N=4096|torch.bfloat16");
    }
    std::size_t hits = 0;
    const auto lookup_start = Clock::now();
    for (const auto& [kernel, key] : probes) hits += table->match(kernel, key, candidates).present;
    const double seconds = std::chrono::duration<double>(Clock::now() - lookup_start).count();
    m.lookups_per_s = hits == probes.size() ? probes.size() / seconds : -1;
    m.peak_kib = peak_kib();
    if (write(3, &m, sizeof m) != sizeof m) return 1;
  }
  return 0;
}

Measure measure(const std::filesystem::path& file, int kernels, int keys) {
  int fds[2];
  if (pipe(fds) != 0) std::perror("pipe");
  const pid_t child = fork();
  if (child == 0) {
    close(fds[0]);
    dup2(fds[1], 3);
    const std::string k = std::to_string(kernels), s = std::to_string(keys);
    execl("/proc/self/exe", "table_load_bench", "--child", file.c_str(), k.c_str(), s.c_str(),
          nullptr);
    _exit(127);
  }
  close(fds[1]);
  Measure m;
  if (read(fds[0], &m, sizeof m) != sizeof m) std::fprintf(stderr, "child failed\n");
  close(fds[0]);
  int status = 0;
  waitpid(child, &status, 0);
  return m;
}

// Python's json.load of `file` in a fresh interpreter: {ms, peak MiB}, or
// {-1, -1} where python3 is missing.
std::pair<double, double> python_json_load(const std::filesystem::path& file) {
  const std::string command =
      "python3 -c 'import json, resource, sys, time; t = time.perf_counter(); "
      "json.load(open(sys.argv[1])); "
      "print((time.perf_counter() - t) * 1e3, "
      "resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)' " +
      file.string() + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  double ms = -1, mib = -1;
  if (pipe) {
    if (std::fscanf(pipe, "%lf %lf", &ms, &mib) != 2) ms = mib = -1;
    pclose(pipe);
  }
  return {ms, mib};
}

void run_shape(int kernels, int keys) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("tunelock-bench-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  {
    const auto table = generate(kernels, keys);
    write_file_atomically(dir / "sm90.json", table_to_json(*table));
    write_file_atomically(dir / "sm90.tlb", table_to_binary(*table));
  }
  ::sync();  // the files' writeback would otherwise compete with the first load
  std::printf("table: %d kernels x %d keys = %d entries; JSON %.1f MB, binary %.1f MB\n", kernels,
              keys, kernels * keys, std::filesystem::file_size(dir / "sm90.json") / 1e6,
              std::filesystem::file_size(dir / "sm90.tlb") / 1e6);
  const Measure json = measure(dir / "sm90.json", kernels, keys);
  const Measure binary = measure(dir / "sm90.tlb", kernels, keys);
  std::printf("%-8s %12s %14s %16s\n", "format", "load ms", "peak RSS MiB", "lookups/s");
  std::printf("%-8s %12.1f %14.1f %16.3g\n", "json", json.load_ms, json.peak_kib / 1024.0,
              json.lookups_per_s);
  std::printf("%-8s %12.1f %14.1f %16.3g\n", "binary", binary.load_ms, binary.peak_kib / 1024.0,
              binary.lookups_per_s);
  const auto [python_ms, python_mib] = python_json_load(dir / "sm90.json");
  if (python_ms >= 0)
    std::printf("%-8s %12.1f %14.1f %16s\n", "python", python_ms, python_mib, "(json.load only)");
  std::printf("binary loads %.1fx faster than JSON", json.load_ms / binary.load_ms);
  if (python_ms >= 0)
    std::printf("; JSON loads %.2fx faster than json.load", python_ms / json.load_ms);
  std::printf("\n\n");
  std::filesystem::remove_all(dir);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 5 && std::string(argv[1]) == "--child")
    return child_main(argv[2], std::atoi(argv[3]), std::atoi(argv[4]));
  if (argc > 2) {
    run_shape(std::atoi(argv[1]), std::atoi(argv[2]));
    return 0;
  }
  for (const int keys : {10, 100, 10'000}) run_shape(1'000'000 / keys, keys);
}
