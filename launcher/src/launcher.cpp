#include "tunelock/launcher/launcher.hpp"

#include <cstdlib>
#include <ctime>

#include "tunelock/io/files.hpp"
#include "tunelock/launcher/detail/family_core.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/records/record_store.hpp"

namespace tunelock::launcher {

Launcher::Launcher(Backend& backend, Runtime& runtime, TuningOptions options)
    : backend_(backend), runtime_(runtime), options_(options), arch_(backend.current_arch()) {
  Provenance device = backend_.device();
  // When a record run happened: merged tables take their recording time
  // from these files, never from the clock of the tool that merges.
  device.recorded_at = recording_timestamp();
  runtime_.set_device(std::move(device));
}

void Launcher::add(const FamilyCore* family) {
  std::lock_guard lock(mutex_);
  families_.insert(family);
}

void Launcher::remove(const FamilyCore* family) {
  std::lock_guard lock(mutex_);
  families_.erase(family);
}

nlohmann::json Launcher::manifest() const {
  nlohmann::json kernels = nlohmann::json::object();
  std::lock_guard lock(mutex_);
  for (const FamilyCore* family : families_) {
    nlohmann::json configs = nlohmann::json::array();
    for (const Config& c : family->configs()) configs.push_back(config_to_json(c));
    kernels[family->id().qualified()] = {{"key", family->key_args()}, {"configs", configs}};
  }
  return {{"kernels", kernels}};
}

void Launcher::write_manifest(const std::filesystem::path& path) const {
  write_file_atomically(path, manifest().dump(1) + "\n");
}

void Launcher::flush() const { runtime_.flush(choice_log_prefix_from_environment()); }

}  // namespace tunelock::launcher
