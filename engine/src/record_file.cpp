#include "tunelock/record_file.hpp"

#include <nlohmann/json.hpp>

#include "record_layout.hpp"
#include "tunelock/error.hpp"
#include "tunelock/files.hpp"
#include "tunelock/json_config.hpp"
#include "tunelock/timings_sidecar.hpp"

namespace tunelock {
namespace {

// `<prefix>.rank<N>.json` -> N, or -1: Megatron's records carry their rank
// only in the name.
int rank_in_name(const std::filesystem::path& path) {
  const std::string name = path.filename().string();
  const auto at = name.rfind(".rank");
  if (at == std::string::npos || !name.ends_with(".json")) return -1;
  const std::string digits = name.substr(at + 5, name.size() - 5 - (at + 5));
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string::npos)
    return -1;
  return std::stoi(digits);
}

}  // namespace

std::string to_string(const RecordKey& key) { return key.arch + "|" + key.kernel + "|" + key.key; }

RecordFile record_from_json(std::string_view text, const std::string& origin) {
  const nlohmann::json root = parse_json(text, origin);
  RecordFile record;
  record.origin = origin;
  record_layout::walk_three_levels(
      root, origin + ": ",
      [&](const std::string& arch, const std::string& qualified, const std::string& key,
          const nlohmann::json& value, const std::string& where) {
        record.winners[{arch, qualified, key}] = config_from_json(value, where);
      });
  return record;
}

RecordFile load_record_file(const std::filesystem::path& path) {
  RecordFile record = record_from_json(read_file(path), path.string());
  record.rank = rank_in_name(path);  // a sidecar, when there is one, says for itself
  std::string stem = path.string();
  if (!stem.ends_with(".json")) return record;
  stem.resize(stem.size() - 5);
  for (const char* extension : {".timings.json", ".timings.tlrt"}) {
    const std::string sidecar = stem + extension;
    std::error_code ec;
    if (std::filesystem::exists(sidecar, ec)) {
      add_timings(record, read_file(sidecar), sidecar);
      break;
    }
  }
  return record;
}

std::vector<RecordFile> load_record_files(const std::vector<std::filesystem::path>& paths) {
  std::vector<RecordFile> out;
  for (std::size_t i = 0; i < paths.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      std::error_code ec;
      if (std::filesystem::equivalent(paths[i], paths[j], ec))
        throw Error(paths[i].string() + ": the same file as " + paths[j].string() +
                    "; each record file is one rank's vote");
    }
    out.push_back(load_record_file(paths[i]));
  }
  return out;
}

}  // namespace tunelock
