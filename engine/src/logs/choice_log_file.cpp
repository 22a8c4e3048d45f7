#include "tunelock/logs/choice_log_file.hpp"

#include <flatbuffers/flatbuffers.h>

#include <nlohmann/json.hpp>

#include "io/checksum_trailer.hpp"
#include "io/json_checks.hpp"
#include "io/sealed_file.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/fb/choice_log_generated.h"
#include "tunelock/io/file_kind.hpp"
#include "tunelock/io/json_reader.hpp"
#include "tunelock/io/rank_files.hpp"
#include "tunelock/logs/choice_log.hpp"

namespace tunelock {
namespace {

using namespace json_checks;
using nlohmann::json;

// The JSON form stays at 1; the binary form is 2 since it carries a
// checksum trailer (checksum_trailer.hpp).
constexpr std::uint32_t kFormatVersion = 1;
constexpr std::uint32_t kBinaryFormatVersion = 2;
constexpr std::string_view kReconvert =
    "re-create it from the run's JSON choice log, which every reader also accepts";
// Ranks are process indices; the same bound as every other rank field.

std::string entry_text(const flatbuffers::String* s, const std::string& where) {
  require_utf8({s->c_str(), s->size()}, where);
  return s->str();
}

ChoiceLogFile from_binary(std::string_view bytes, const std::string& origin) {
  const fb::ChoiceLog* log = &detail::open_sealed<fb::ChoiceLog>(
      bytes, origin,
      {"binary choice log", fb::ChoiceLogIdentifier(), kBinaryFormatVersion, kReconvert});
  if (log->rank() > kMaxRank)
    throw Error(origin + ": rank: " + std::to_string(log->rank()) +
                " is out of range; allowed 0 to " + std::to_string(kMaxRank));
  ChoiceLogFile out;
  out.rank = static_cast<int>(log->rank());
  if (!log->digest()) throw Error(origin + ": digest: missing");
  out.digest = entry_text(log->digest(), origin + ": digest");
  if (log->entries()) {
    for (flatbuffers::uoffset_t i = 0; i < log->entries()->size(); ++i) {
      const fb::LoggedChoice* e = log->entries()->Get(i);
      const std::string where = origin + ": entries[" + std::to_string(i) + "]";
      std::string key = entry_text(e->key(), where + ".key");
      if (!out.entries.emplace(key, entry_text(e->value(), where + ".value")).second)
        throw Error(where + ": entry '" + key + "' appears twice");
    }
  }
  if (log->identities()) {
    for (flatbuffers::uoffset_t i = 0; i < log->identities()->size(); ++i) {
      const fb::LoggedChoice* e = log->identities()->Get(i);
      const std::string where = origin + ": identities[" + std::to_string(i) + "]";
      std::string key = entry_text(e->key(), where + ".key");
      if (!out.identities.emplace(key, entry_text(e->value(), where + ".value")).second)
        throw Error(where + ": kernel '" + key + "' appears twice");
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
  out.rank = static_cast<int>(require_int(*rank, where + "rank", 0, kMaxRank));
  const json* entries = find_member(root, "entries");
  if (!entries) throw Error(where + "entries: missing");
  require_object(*entries, where + "entries");
  for (const auto& [key, value] : entries->items())
    out.entries.emplace(key, require_string(value, where + "entries[\"" + key + "\"]"));
  if (const json* digest = find_member(root, "digest"))
    out.digest = require_string(*digest, where + "digest");
  if (const json* identities = find_member(root, "identities")) {
    require_object(*identities, where + "identities");
    for (const auto& [kernel, identity] : identities->items())
      out.identities.emplace(kernel,
                             require_string(identity, where + "identities[\"" + kernel + "\"]"));
  }
  return out;
}

// A stored digest that differs from the entries means the file changed
// after it was written: its entries are not what the run chose.
void check_digest(const ChoiceLogFile& log, const std::string& origin) {
  if (log.digest.empty()) return;
  const std::string computed = choice_digest(log.entries);
  if (log.digest != computed)
    throw Error(origin + ": digest: stored " + log.digest + " does not match its entries (" +
                computed + "); the file was changed after it was written");
}

}  // namespace

ChoiceLogFile choice_log_from_bytes(std::string_view bytes, const std::string& origin) {
  require_file_kind(origin, bytes, FileKind::choice_log,
                    "verify, digest, preview and log convert read the choice logs a run writes "
                    "(TUNELOCK_CHOICE_LOG=PREFIX: PREFIX.rank<N>.json)");
  const bool binary = bytes.size() >= 8 &&
                      flatbuffers::BufferHasIdentifier(bytes.data(), fb::ChoiceLogIdentifier());
  ChoiceLogFile log = binary ? from_binary(bytes, origin) : from_json(bytes, origin);
  check_digest(log, origin);
  return log;
}

std::string choice_log_to_json(const ChoiceLogFile& log) {
  json out = {{"format_version", kFormatVersion},
              {"rank", log.rank},
              {"digest", choice_digest(log.entries)},
              {"entries", log.entries}};
  if (!log.identities.empty()) out["identities"] = log.identities;  // absent: as before
  return out.dump(1) + "\n";
}

std::string choice_log_to_binary(const ChoiceLogFile& log) {
  flatbuffers::FlatBufferBuilder b(256);
  std::vector<flatbuffers::Offset<fb::LoggedChoice>> entries;
  for (const auto& [key, value] : log.entries)
    entries.push_back(fb::CreateLoggedChoice(b, b.CreateString(key), b.CreateString(value)));
  std::vector<flatbuffers::Offset<fb::LoggedChoice>> identities;
  for (const auto& [kernel, identity] : log.identities)
    identities.push_back(
        fb::CreateLoggedChoice(b, b.CreateString(kernel), b.CreateString(identity)));
  const auto digest = b.CreateString(choice_digest(log.entries));
  const auto vector = b.CreateVector(entries);
  const auto identities_vector = identities.empty() ? 0 : b.CreateVector(identities);
  fb::FinishChoiceLogBuffer(
      b, fb::CreateChoiceLog(b, kBinaryFormatVersion, static_cast<std::uint32_t>(log.rank), digest,
                             vector, identities_vector));
  return checksum_trailer::seal(
      std::string_view(reinterpret_cast<const char*>(b.GetBufferPointer()), b.GetSize()));
}

}  // namespace tunelock
