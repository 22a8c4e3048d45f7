// TUNELOCK_EQUIVALENT=timed's memory per machine: which of an entry's
// equivalent configs won on this machine's clock, so a second process on
// the same machine launches it without timing again. One small JSON file
// (TUNELOCK_EQUIVALENT_CACHE, default ~/.cache/tunelock/equivalents.json,
// `off` for none), keyed by GPU, driver, table digest and key, written
// atomically at flush. A file that is not such a cache (corrupt, foreign,
// newer) is named in a warning and never trusted nor overwritten.
#pragma once

#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <string>

namespace tunelock::detail {

class EquivalentCache {
 public:
  // `path` empty: no cache (every lookup misses, nothing is written).
  void open(std::filesystem::path path);

  // The pick stored under `key`, read from the file at the first lookup.
  std::optional<std::string> find(const std::string& key);
  void remember(const std::string& key, std::string signature);

  // Writes what this process learned, merged with what the file holds now
  // (another process may have written since); nothing when it learned
  // nothing or the file is not a cache. Warns (never throws) on a failure.
  void write();

  // The file's path from the environment: TUNELOCK_EQUIVALENT_CACHE, else
  // $XDG_CACHE_HOME/tunelock/equivalents.json, else
  // $HOME/.cache/tunelock/equivalents.json; empty for `off` or no home.
  static std::filesystem::path path_from_environment();

 private:
  // The file's picks; false (after one warning) when it exists and is not
  // a cache this tunelock reads.
  bool read_file_into(std::map<std::string, std::string>& picks);
  void load_once();

  std::mutex mutex_;
  std::filesystem::path path_;
  bool loaded_ = false;
  bool unreadable_ = false;
  std::map<std::string, std::string> picks_;    // the file's and this process's
  std::map<std::string, std::string> learned_;  // this process's, to write
};

// The key of one pick: what makes a clock's answer valid elsewhere.
std::string equivalent_cache_key(const std::string& device_name, const std::string& driver,
                                 const std::string& table_digest, const std::string& arch,
                                 const std::string& kernel, const std::string& key);

}  // namespace tunelock::detail
