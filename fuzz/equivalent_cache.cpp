// The per-machine equivalents cache (TUNELOCK_EQUIVALENT_CACHE): the input
// is the file's contents. The cache never throws: a file it cannot read is
// named in one warning and left as it is, so what is checked is that
// warning (it names the file), and that a file it reads and rewrites reads
// back with the picks it wrote.
#include <unistd.h>

#include <spdlog/sinks/base_sink.h>
#include <cstdlib>
#include <filesystem>
#include <mutex>

#include "fuzz_target.hpp"
#include "runtime/equivalent_cache.hpp"
#include "tunelock/base/log.hpp"
#include "tunelock/io/files.hpp"

namespace {

// Keeps the warnings of one input, instead of printing them.
class Warnings final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  std::string text;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    text.append(msg.payload.data(), msg.payload.size()).append("\n");
  }
  void flush_() override {}
};

std::shared_ptr<Warnings> warnings() {
  static const std::shared_ptr<Warnings> sink = [] {
    auto made = std::make_shared<Warnings>();
    tunelock::logger().sinks().clear();
    tunelock::logger().sinks().push_back(made);
    return made;
  }();
  return sink;
}

// One folder per fuzzing process (in memory where the machine has
// /dev/shm: a file is written per input), removed at exit.
struct CacheFolder {
  std::filesystem::path path;
  CacheFolder() {
    std::error_code ec;
    const std::filesystem::path shm = "/dev/shm";
    path = (std::filesystem::is_directory(shm, ec) ? shm : std::filesystem::temp_directory_path()) /
           ("tunelock-fuzz-" + std::to_string(getpid()));
  }
  ~CacheFolder() {
    std::error_code ec;
    std::filesystem::remove_all(path, ec);
  }
};

const std::filesystem::path& cache_file() {
  static const CacheFolder folder;
  static const std::filesystem::path path = folder.path / "equivalents.json";
  return path;
}

}  // namespace

void read_input(std::string_view bytes, const std::string&) {
  using tunelock::detail::EquivalentCache;
  const std::filesystem::path& path = cache_file();
  std::filesystem::create_directories(path.parent_path());
  tunelock::write_file_atomically(path, bytes);
  const std::shared_ptr<Warnings> said = warnings();
  said->text.clear();
  EquivalentCache cache;
  cache.open(path);
  const std::string key = tunelock::detail::equivalent_cache_key(
      "NVIDIA H200", "550.54", "0123456789abcdef", "sm90", "pkg.mm", "M=1");
  (void)cache.find(key);
  const bool refused = !said->text.empty();
  if (refused && said->text.find(path.string()) == std::string::npos) std::abort();
  cache.remember(key, "BLOCK=64;warps=4;stages=3");
  cache.write();
  if (refused) return;  // left as it is
  // Read and rewritten: a fresh reader finds the pick without a word.
  EquivalentCache again;
  again.open(path);
  const auto pick = again.find(key);
  if (!said->text.empty() || pick != "BLOCK=64;warps=4;stages=3") std::abort();
}
