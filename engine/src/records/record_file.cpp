#include "tunelock/records/record_file.hpp"

#include <algorithm>
#include <iterator>

#include <nlohmann/json.hpp>

#include "records/record_layout.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/files.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/model/config_json.hpp"
#include "tunelock/records/timings_sidecar.hpp"

namespace tunelock {
std::string to_string(const RecordKey& key) { return key.arch + "|" + key.kernel + "|" + key.key; }

RecordFile record_from_json(std::string_view text, const std::string& origin) {
  require_file_kind(origin, text, FileKind::record,
                    "merge and report read the record files a recording run writes "
                    "(TUNELOCK_MODE=record TUNELOCK_RECORD=PREFIX: PREFIX.rank<N>.json)");
  const nlohmann::json root = parse_json(text, origin);
  RecordFile record;
  record.origin = origin;
  const std::string_view filename = std::string_view(origin).substr(origin.rfind('/') + 1);
  const RankFileName named = parse_rank_file_name(filename);
  record.run = named.run.empty() ? named.stem : named.run;
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
  // A sidecar, when there is one, says its rank for itself.
  const std::string filename = path.filename().string();
  if (filename.ends_with(".json")) record.rank = parse_rank_file_name(filename).rank;
  std::string stem = path.string();
  if (!stem.ends_with(".json")) return record;
  stem.resize(stem.size() - 5);
  for (std::string_view ending : rank_file_endings::kSidecars) {
    const std::string sidecar = stem + std::string(ending);
    std::error_code ec;
    if (std::filesystem::exists(sidecar, ec)) {
      add_timings(record, read_file(sidecar), sidecar);
      record.sidecar = sidecar;
      break;
    }
  }
  return record;
}

void refuse_output_among_inputs(const std::filesystem::path& output,
                                const std::vector<RecordFile>& records) {
  std::error_code ec;
  if (!std::filesystem::exists(output, ec)) return;  // a new file is nobody's input
  for (const RecordFile& record : records) {
    for (const std::string& input : {record.origin, record.sidecar}) {
      if (input.empty() || !std::filesystem::equivalent(output, input, ec)) continue;
      throw Error(
          output.string() + ": the output is one of the merge's inputs (" +
          (input == record.sidecar ? "the timing sidecar of " + record.origin : "a record file") +
          "); writing the table there would replace a rank's vote. Name another output");
    }
  }
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

std::vector<std::filesystem::path> expand_record_arguments(const std::vector<std::string>& args) {
  namespace fs = std::filesystem;
  std::vector<fs::path> out;
  for (const std::string& arg : args) {
    if (arg.starts_with("@")) {
      const std::string list = arg.substr(1);
      const std::string text = read_file(list);
      std::size_t start = 0;
      while (start < text.size()) {
        std::size_t end = text.find('\n', start);
        if (end == std::string::npos) end = text.size();
        std::string line = text.substr(start, end - start);
        while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
        if (!line.empty() && !is_timings_sidecar_name(line)) out.emplace_back(line);
        start = end + 1;
      }
      continue;
    }
    std::error_code ec;
    if (!fs::is_directory(arg, ec)) {
      if (!is_timings_sidecar_name(arg)) out.emplace_back(arg);
      continue;
    }
    std::vector<fs::path> found;
    for (const fs::directory_entry& entry : fs::directory_iterator(arg)) {
      const std::string name = entry.path().filename().string();
      if (entry.is_regular_file() && name.ends_with(".json") && !is_timings_sidecar_name(name) &&
          parse_rank_file_name(name).rank >= 0)
        found.push_back(entry.path());
    }
    if (found.empty())
      throw Error(arg + ": a directory with no record files (<run>.rank<N>.json) in it");
    std::sort(found.begin(), found.end());
    out.insert(out.end(), found.begin(), found.end());
  }
  return out;
}

}  // namespace tunelock
