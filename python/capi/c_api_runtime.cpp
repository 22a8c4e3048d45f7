// The process runtime through the C ABI: policy, choices, the choice log,
// records and verification, as the C++ launcher uses them.
#include <vector>

#include "c_api_support.hpp"
#include "tunelock/base/version.hpp"
#include "tunelock/c_api.h"
#include "tunelock/decision/call_plan.hpp"
#include "tunelock/decision/policy_sources.hpp"
#include "tunelock/model/tuning_key.hpp"
#include "tunelock/runtime/runtime.hpp"
#include "tunelock/tables/provenance_json.hpp"

using namespace tunelock;
using namespace tunelock::c_api;
using nlohmann::json;

namespace {

Policy resolve(const char* pairs_json, int over_environment) {
  const Environment env = process_environment();
  if (!pairs_json) return policy_from_environment(env);
  const json pairs = json_of(pairs_json, "policy key/values");
  if (!pairs.is_object()) throw Error("policy key/values: expected a JSON object");
  std::vector<std::pair<std::string, std::string>> values;
  for (const auto& [key, value] : pairs.items()) {
    if (!value.is_string())
      throw Error("policy key '" + key + "': expected a string value, got " + value.dump());
    values.emplace_back(key, value.get<std::string>());
  }
  return policy_from_key_values(values, over_environment ? policy_from_environment(env) : Policy{});
}

}  // namespace

extern "C" {

const char* tunelock_version(void) {
  static const std::string version(tool_version());
  return version.c_str();
}

const char* tunelock_last_error(void) { return last_error.c_str(); }

void tunelock_free(char* text) { std::free(text); }

int tunelock_policy_resolve(const char* pairs_json, int over_environment, char** policy_json) {
  return guarded(
      [&] { put(policy_json, policy_to_json(resolve(pairs_json, over_environment)).dump()); });
}

int tunelock_install(const char* pairs_json, int over_environment, char** policy_json) {
  return guarded([&] {
    const Policy policy = resolve(pairs_json, over_environment);
    install_into_process(policy);
    if (policy_json) put(policy_json, policy_to_json(policy).dump());
  });
}

int tunelock_installed_policy(char** policy_json) {
  return guarded([&] { put(policy_json, policy_to_json(*process_runtime().policy()).dump()); });
}

int tunelock_observes(const char* module, const char* name, int* observed) {
  return guarded([&] {
    const KernelId id{text_of(module, "module"), text_of(name, "name")};
    *observed = process_runtime().policy()->observes(id) ? 1 : 0;
  });
}

int tunelock_tuning_key(const char* args_json, const char* dtypes_json, char** key) {
  return guarded([&] {
    const json args = json_of(args_json, "key arguments");
    const json dtypes = json_of(dtypes_json, "dtypes");
    if (!args.is_array() || !dtypes.is_array())
      throw Error("tuning key: expected JSON arrays of [name, value] pairs and of dtypes");
    std::vector<std::string> texts;  // owns the strings the views below point at
    texts.reserve(args.size() * 2 + dtypes.size());
    std::vector<KeyArg> key_args;
    for (const json& pair : args) {
      if (!pair.is_array() || pair.size() != 2 || !pair[0].is_string())
        throw Error("tuning key: each key argument must be [name, value], got " + pair.dump());
      texts.push_back(pair[0].get<std::string>());
      const std::string_view arg_name = texts.back();
      const json& value = pair[1];
      if (value.is_boolean()) {
        key_args.push_back({arg_name, value.get<bool>()});
      } else if (value.is_number_integer()) {
        key_args.push_back({arg_name, value.get<std::int64_t>()});
      } else if (value.is_string()) {
        texts.push_back(value.get<std::string>());
        key_args.push_back({arg_name, std::string_view(texts.back())});
      } else {
        throw Error("tuning key: argument '" + texts.back() +
                    "' must be an integer, a boolean or a string, got " + value.dump());
      }
    }
    std::vector<std::string_view> dtype_views;
    for (const json& d : dtypes) {
      if (!d.is_string()) throw Error("tuning key: dtypes must be strings, got " + d.dump());
      texts.push_back(d.get<std::string>());
      dtype_views.push_back(texts.back());
    }
    put(key, tuning_key(key_args, dtype_views));
  });
}

int tunelock_signature(const char* config_json, char** out) {
  return guarded(
      [&] { put(out, signature(config_from_json(json_of(config_json, "config"), "config"))); });
}

int tunelock_autotune_configs(const char* configs_json, char** kept_json) {
  return guarded([&] {
    const std::vector<Config> configs = configs_of(configs_json);
    const std::vector<Config> kept = autotune_configs(configs, *process_runtime().policy());
    json indices = json::array();
    for (const Config& c : kept)
      indices.push_back(std::find(configs.begin(), configs.end(), c) - configs.begin());
    put(kept_json, indices.dump());
  });
}

int tunelock_count_audited_call(int64_t id, int64_t calls) {
  return guarded([&] {
    if (id < 0 || calls < 0) throw Error("count_audited_call: id and calls must be 0 or more");
    process_runtime().count_audited_call(static_cast<std::size_t>(id), calls);
  });
}

int tunelock_set_device(const char* device_json) {
  return guarded([&] {
    Provenance device = device_from_json(json_of(device_json, "device"), "device");
    device.tool_version = std::string(tool_version());
    // When the recording happened: merged tables take their time from the
    // records, never from the clock of the tool that merges.
    if (device.recorded_at.empty()) device.recorded_at = recording_timestamp();
    process_runtime().set_device(std::move(device));
  });
}

int tunelock_choice_log(char** entries_json) {
  return guarded(
      [&] { put(entries_json, json(process_runtime().choice_log().snapshot()).dump()); });
}

int tunelock_choice_digest(char** digest) {
  return guarded([&] { put(digest, process_runtime().choice_digest()); });
}

int tunelock_choice_generation(uint64_t* generation) {
  return guarded([&] {
    if (!generation) throw Error("choice_generation: no place to write the generation");
    *generation = process_runtime().generation();
  });
}

int tunelock_flush(const char* choice_log_prefix) {
  return guarded([&] {
    process_runtime().flush(choice_log_prefix ? std::filesystem::path(choice_log_prefix)
                                              : choice_log_prefix_from_environment());
  });
}

}  // extern "C"
