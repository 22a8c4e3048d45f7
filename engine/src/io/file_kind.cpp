#include "tunelock/io/file_kind.hpp"

#include <flatbuffers/flatbuffers.h>

#include <algorithm>
#include <array>
#include <optional>

#include "tunelock/base/error.hpp"
#include "tunelock/fb/choice_log_generated.h"
#include "tunelock/fb/launch_log_generated.h"
#include "tunelock/fb/record_timings_generated.h"
#include "tunelock/fb/table_generated.h"
#include "tunelock/io/rank_files.hpp"

namespace tunelock {
namespace {

using nlohmann::json;

constexpr std::string_view kExpected =
    "expected a table (.tlb, or JSON with \"arch\" and \"kernels\"), a candidate manifest (JSON "
    "with \"configs\" or \"kernels\"), a record file (JSON {arch: {kernel: {key: config}}}), a "
    "timing sidecar (.timings.tlrt, or JSON with \"timings\"), a choice log (.tlcl, or JSON "
    "with \"rank\" and \"entries\"), an audit file (.audit.json) or a launch log (.launches.tlln, "
    "or JSON with \"steps\")";

DetectedFile found(FileKind kind, FileEncoding encoding) { return {kind, encoding, {}}; }

DetectedFile unknown_file(std::string_view name, const std::string& why) {
  return {FileKind::unknown, FileEncoding::json,
          std::string(name) + ": " + why + "; " + std::string(kExpected)};
}

// The binary forms, by the file identifier FlatBuffers stores at byte 4.
std::optional<FileKind> binary_kind(std::string_view bytes) {
  if (bytes.size() < 8) return std::nullopt;
  const std::array<std::pair<const char*, FileKind>, 4> identifiers{{
      {fb::TunedTableIdentifier(), FileKind::table},
      {fb::RecordTimingsIdentifier(), FileKind::timings},
      {fb::ChoiceLogIdentifier(), FileKind::choice_log},
      {fb::LaunchLogIdentifier(), FileKind::launches},
  }};
  for (const auto& [identifier, kind] : identifiers) {
    if (flatbuffers::BufferHasIdentifier(bytes.data(), identifier)) return kind;
  }
  return std::nullopt;
}

// What the name alone says, for bytes that cannot tell: a damaged binary
// file, or a sidecar whose JSON lacks its members. Those readers then name
// what is wrong.
std::optional<DetectedFile> kind_by_name(std::string_view name) {
  if (name.ends_with(".tlb")) return found(FileKind::table, FileEncoding::binary);
  if (name.ends_with(".tlrt")) return found(FileKind::timings, FileEncoding::binary);
  if (name.ends_with(".tlcl")) return found(FileKind::choice_log, FileEncoding::binary);
  if (is_timings_sidecar_name(name)) return found(FileKind::timings, FileEncoding::json);
  if (name.ends_with(".audit.json")) return found(FileKind::audit, FileEncoding::json);
  if (name.ends_with(".launches.tlln")) return found(FileKind::launches, FileEncoding::binary);
  if (name.ends_with(".launches.json")) return found(FileKind::launches, FileEncoding::json);
  return std::nullopt;
}

// Members some format holds as an object: a member of that name is no
// record's architecture.
bool is_batch_size(std::string_view key) {
  return !key.empty() && key.size() <= 18 && key.front() != '0' &&
         std::all_of(key.begin(), key.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool is_format_member(std::string_view key) {
  return key == "arch" || key == "kernels" || key == "packages" || key == "provenance" ||
         key == "device" || key == "timings" || key == "entries";
}

// A streaming scan (nlohmann's SAX interface) of the top-level members,
// which stops at the first that tells the kind:
//   "entries" -> choice log (an object) or audit file (a list); "timings" -> timing sidecar;
//   "steps" -> launch log (its "kernels" is a list, which alone says only: not a valid table);
//   "configs" -> manifest (one kernel's candidates); "kernels" -> a manifest when its first kernel
//   holds a list ("key", "configs"), a table when it holds an object (a key's config) or nothing;
//   an object under a name no format uses, before any member that is not an object -> a record
//   ({arch: ...}).
// What is seen before the JSON ends or breaks is kept as evidence.
class TopLevelScan {
 public:
  using number_integer_t = json::number_integer_t;
  using number_unsigned_t = json::number_unsigned_t;
  using number_float_t = json::number_float_t;
  using string_t = json::string_t;
  using binary_t = json::binary_t;

  std::optional<FileKind> kind;         // decided
  bool root_is_object = false;          // the root is an object (so far)
  std::string root_type;                // the root's JSON type when it is not an object
  bool saw_table_member = false;        // "kernels" or "arch": a table, at the least
  bool saw_kernel_list = false;         // "kernels" as a list: a launch log or a bad table
  bool only_objects = true;             // every top-level member so far is an object
  std::optional<std::size_t> error_at;  // the byte where the JSON broke

  bool null() { return value(Type::scalar, "null"); }
  bool boolean(bool) { return value(Type::scalar, "boolean"); }
  bool number_integer(number_integer_t) { return value(Type::scalar, "number"); }
  bool number_unsigned(number_unsigned_t) { return value(Type::scalar, "number"); }
  bool number_float(number_float_t, const string_t&) { return value(Type::scalar, "number"); }
  bool string(string_t&) { return value(Type::scalar, "string"); }
  bool binary(binary_t&) { return value(Type::scalar, "binary"); }

  bool start_object(std::size_t) {
    if (!value(Type::object, "object")) return false;
    ++depth_;
    return true;
  }
  bool start_array(std::size_t) {
    if (!value(Type::array, "array")) return false;
    ++depth_;
    return true;
  }
  bool end_array() {
    --depth_;
    return true;
  }
  bool end_object() {
    // The first kernel under "kernels" ended with no member: an empty
    // table kernel (a manifest's kernel needs its "configs").
    if (depth_ == 3 && member_ == "kernels" && !saw_kernel_list) return decide(FileKind::table);
    --depth_;
    return true;
  }
  bool key(string_t& name) {
    if (depth_ == 1) member_ = name;
    return true;
  }
  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception&) {
    error_at = position;
    return false;
  }

 private:
  enum class Type { scalar, object, array };

  bool decide(FileKind found_kind) {
    kind = found_kind;
    return false;  // stops the scan
  }

  // A value at the current depth (before a container's own depth begins).
  bool value(Type type, const char* type_name) {
    if (depth_ == 0) {
      root_is_object = type == Type::object;
      if (!root_is_object) {
        root_type = type_name;
        return false;
      }
      return true;
    }
    if (depth_ == 1) return top_level_member(type);
    // A table's or manifest's "kernels" is an object; a list is read to its
    // end (a launch log's "steps" come after it).
    if (member_ == "kernels" && saw_kernel_list) return true;
    if (member_ == "kernels" && depth_ == 2) {
      // The first kernel: an object (a table's keys or a manifest's lists), else a bad table.
      return type == Type::object || decide(FileKind::table);
    }
    if (member_ == "kernels" && depth_ == 3) {
      // A member of the first kernel: a manifest's "key" and "configs" are
      // lists, a table's key maps to a config object. Anything else says
      // nothing; the kernel's end does (end_object).
      if (type == Type::array) return decide(FileKind::manifest);
      if (type == Type::object) return decide(FileKind::table);
    }
    return true;
  }

  bool top_level_member(Type type) {
    if (member_ == "entries")
      return decide(type == Type::array ? FileKind::audit : FileKind::choice_log);
    if (member_ == "timings") return decide(FileKind::timings);
    if (member_ == "steps") return decide(FileKind::launches);
    if (member_ == "configs") return decide(FileKind::manifest);
    // A batch size mapped to a config: a fused-MoE config file (an arch tag,
    // a record's top-level name, is never a number).
    if (type == Type::object && is_batch_size(member_)) return decide(FileKind::moe_configs);
    // "kernels" as a list: a launch log's (until its "steps" tell) or a
    // malformed table's, which the table reader then names.
    if (member_ == "kernels" && type == Type::array)
      saw_kernel_list = true;
    else if (member_ == "kernels" || member_ == "arch")
      saw_table_member = true;
    if (type == Type::object && only_objects && !is_format_member(member_))
      return decide(FileKind::record);
    if (type != Type::object) only_objects = false;
    return true;
  }

  int depth_ = 0;
  std::string member_;  // the current top-level member
};

bool blank(std::string_view bytes) {
  return bytes.find_first_not_of(" \t\r\n") == std::string_view::npos;
}

}  // namespace

DetectedFile detect_file_kind(std::string_view name, std::string_view bytes) {
  if (const auto kind = binary_kind(bytes)) return found(*kind, FileEncoding::binary);
  TopLevelScan scan;
  const bool empty = blank(bytes);
  if (!empty) json::sax_parse(bytes.begin(), bytes.end(), &scan);
  if (scan.kind) return found(*scan.kind, FileEncoding::json);
  // Not decided: a table's members before the JSON ended or broke, then the
  // name, then what the whole (valid) JSON was.
  if (scan.saw_table_member) return found(FileKind::table, FileEncoding::json);
  if (auto by_name = kind_by_name(name)) return *by_name;
  if (scan.saw_kernel_list) return found(FileKind::table, FileEncoding::json);
  if (empty) return unknown_file(name, "empty file");
  if (scan.error_at) {
    return unknown_file(
        name, "not a tunelock file: not valid JSON (at byte " + std::to_string(*scan.error_at) +
                  ") and no binary file identifier (TLTB, TLRT, TLCL or TLLN at byte 4)");
  }
  if (!scan.root_is_object) {
    return unknown_file(name, "not a tunelock file: the JSON is " +
                                  std::string(scan.root_type == "array" ? "an " : "a ") +
                                  scan.root_type + ", not an object");
  }
  // A valid object of objects only (or none): a record file, maybe empty.
  if (scan.only_objects) return found(FileKind::record, FileEncoding::json);
  return unknown_file(name,
                      "not a tunelock file: a JSON object with none of the members that tell a "
                      "kind (\"kernels\", \"configs\", \"timings\", \"entries\")");
}

std::string_view to_string(FileKind kind) {
  switch (kind) {
    case FileKind::table:
      return "table";
    case FileKind::manifest:
      return "manifest";
    case FileKind::record:
      return "record";
    case FileKind::timings:
      return "timings";
    case FileKind::choice_log:
      return "choice_log";
    case FileKind::audit:
      return "audit";
    case FileKind::launches:
      return "launches";
    case FileKind::moe_configs:
      return "moe_configs";
    case FileKind::unknown:
      break;
  }
  return "unknown";
}

std::string_view to_string(FileEncoding encoding) {
  return encoding == FileEncoding::binary ? "binary" : "json";
}

std::string describe(const DetectedFile& file) {
  std::string_view what = "file of no tunelock kind";
  switch (file.kind) {
    case FileKind::table:
      what = "table";
      break;
    case FileKind::manifest:
      what = "candidate manifest";
      break;
    case FileKind::record:
      what = "record file";
      break;
    case FileKind::timings:
      what = "timing sidecar";
      break;
    case FileKind::choice_log:
      what = "choice log";
      break;
    case FileKind::audit:
      what = "audit file";
      break;
    case FileKind::launches:
      what = "launch log";
      break;
    case FileKind::moe_configs:
      what = "fused-MoE config file";
      break;
    case FileKind::unknown:
      return std::string(what);
  }
  return std::string(file.encoding == FileEncoding::binary ? "binary " : "JSON ") +
         std::string(what);
}

json detected_file_to_json(const DetectedFile& file) {
  if (file.kind == FileKind::unknown)
    return {{"kind", "unknown"}, {"encoding", nullptr}, {"problem", file.problem}};
  return {{"kind", to_string(file.kind)}, {"encoding", to_string(file.encoding)}};
}

void require_file_kind(const std::string& origin, std::string_view bytes, FileKind expected,
                       std::string_view readers) {
  const DetectedFile found = detect_file_kind(origin, bytes);
  if (found.kind == FileKind::unknown || found.kind == expected) return;
  throw Error(origin + " is a " + describe(found) + ", not a " +
              describe(DetectedFile{expected, FileEncoding::json, {}}).substr(5) + ": " +
              std::string(readers));
}

}  // namespace tunelock
