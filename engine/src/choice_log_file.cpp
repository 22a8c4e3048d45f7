#include "tunelock/choice_log_file.hpp"

#include <flatbuffers/flatbuffers.h>

#include <nlohmann/json.hpp>

#include "json_checks.hpp"
#include "tunelock/choice_log.hpp"
#include "tunelock/error.hpp"
#include "tunelock/fb/choice_log_generated.h"
#include "tunelock/json_config.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

constexpr std::uint32_t kFormatVersion = 1;

ChoiceLogFile from_binary(std::string_view bytes, const std::string& origin) {
  const auto* data = reinterpret_cast<const std::uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier(data, bytes.size(), 64, 1u << 31);
  if (!fb::VerifyChoiceLogBuffer(verifier))
    throw Error(origin + ": corrupt binary choice log (the FlatBuffers verifier rejected it)");
  const fb::ChoiceLog* log = fb::GetChoiceLog(data);
  if (log->format_version() > kFormatVersion)
    throw Error(origin + ": format_version " + std::to_string(log->format_version()) +
                " is newer than this tunelock supports (1)");
  ChoiceLogFile out;
  out.rank = static_cast<int>(log->rank());
  if (log->digest()) out.digest = log->digest()->str();
  if (log->entries()) {
    for (const fb::LoggedChoice* e : *log->entries()) {
      if (!out.entries.emplace(e->key()->str(), e->value()->str()).second)
        throw Error(origin + ": entry '" + e->key()->str() + "' appears twice");
    }
  }
  return out;
}

ChoiceLogFile from_json(std::string_view text, const std::string& origin) {
  const json root = parse_json(text, origin);
  const std::string where = origin + ": ";
  require_object(root, origin);
  if (const json* version = find_member(root, "format_version")) {
    if (require_int(*version, where + "format_version", 1) > kFormatVersion)
      throw Error(where + "format_version " + version->dump() +
                  " is newer than this tunelock supports (1)");
  }
  ChoiceLogFile out;
  const json* rank = find_member(root, "rank");
  if (!rank) throw Error(where + "rank: missing");
  out.rank = static_cast<int>(require_int(*rank, where + "rank", 0, 1 << 30));
  const json* entries = find_member(root, "entries");
  if (!entries) throw Error(where + "entries: missing");
  require_object(*entries, where + "entries");
  for (const auto& [key, value] : entries->items())
    out.entries.emplace(key, require_string(value, where + "entries[\"" + key + "\"]"));
  if (const json* digest = find_member(root, "digest"))
    out.digest = require_string(*digest, where + "digest");
  return out;
}

}  // namespace

ChoiceLogFile choice_log_from_bytes(std::string_view bytes, const std::string& origin) {
  if (bytes.size() >= 8 &&
      flatbuffers::BufferHasIdentifier(bytes.data(), fb::ChoiceLogIdentifier()))
    return from_binary(bytes, origin);
  return from_json(bytes, origin);
}

std::string choice_log_to_json(const ChoiceLogFile& log) {
  const json out = {{"format_version", kFormatVersion},
                    {"rank", log.rank},
                    {"digest", choice_digest(log.entries)},
                    {"entries", log.entries}};
  return out.dump(1) + "\n";
}

std::string choice_log_to_binary(const ChoiceLogFile& log) {
  flatbuffers::FlatBufferBuilder b(256);
  std::vector<flatbuffers::Offset<fb::LoggedChoice>> entries;
  for (const auto& [key, value] : log.entries)
    entries.push_back(fb::CreateLoggedChoice(b, b.CreateString(key), b.CreateString(value)));
  const auto digest = b.CreateString(choice_digest(log.entries));
  const auto vector = b.CreateVector(entries);
  fb::FinishChoiceLogBuffer(
      b,
      fb::CreateChoiceLog(b, kFormatVersion, static_cast<std::uint32_t>(log.rank), digest, vector));
  return std::string(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize());
}

}  // namespace tunelock
