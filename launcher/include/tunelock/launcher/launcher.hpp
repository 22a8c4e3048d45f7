// The launcher: where a policy meets kernel calls. It owns nothing but the
// wiring: the backend that runs and times kernels, the runtime that holds
// the policy and logs, tuning options, and the registry of kernel families
// (for the candidate manifest).
#pragma once

#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include <nlohmann/json.hpp>

#include "tunelock/launcher/backend.hpp"
#include "tunelock/launcher/tuner.hpp"
#include "tunelock/runtime/runtime.hpp"

namespace tunelock::launcher {

class FamilyCore;

class Launcher {
 public:
  // REQUIRES: backend and runtime outlive the launcher and its families.
  explicit Launcher(Backend& backend, Runtime& runtime = process_runtime(),
                    TuningOptions options = {});

  Backend& backend() const { return backend_; }
  Runtime& runtime() const { return runtime_; }
  // The arch of the device current when the launcher was made.
  const std::string& arch() const { return arch_; }
  const TuningOptions& tuning() const { return options_; }

  // The candidate manifest of every registered family:
  // {"kernels": {qualified: {"key": [...], "configs": [...]}}}.
  nlohmann::json manifest() const;
  void write_manifest(const std::filesystem::path& path) const;

  // Writes records (record mode) and, when TUNELOCK_CHOICE_LOG is set, the
  // choice log, now. The process runtime also does this at exit.
  void flush() const;

 private:
  // Families register themselves for the manifest, and only they.
  friend class FamilyCore;
  void add(const FamilyCore* family);
  void remove(const FamilyCore* family);

  Backend& backend_;
  Runtime& runtime_;
  const TuningOptions options_;
  const std::string arch_;
  mutable std::mutex mutex_;
  std::set<const FamilyCore*> families_;
};

}  // namespace tunelock::launcher
