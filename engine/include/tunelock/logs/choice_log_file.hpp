// A rank's choice log on disk, for offline checks on any machine: the JSON
// dump `{"rank": N, "entries": {...}, "digest": "..."}` a run writes at
// exit (TUNELOCK_CHOICE_LOG), or its binary form (schemas/choice_log.fbs).
#pragma once

#include <map>
#include <string>
#include <string_view>

namespace tunelock {

struct ChoiceLogFile {
  int rank = 0;
  std::map<std::string, std::string> entries;  // arch|qualified|key -> signature;origin
  std::string digest;                          // as stored; empty when absent
  // arch|qualified -> the identity of the code the kernel ran (kernels that
  // declare one): what `tunelock table coverage` compares with a table. Not
  // part of the digest: ranks agree on choices, not on what was declared.
  std::map<std::string, std::string> identities = {};

  friend bool operator==(const ChoiceLogFile&, const ChoiceLogFile&) = default;
};

// JSON or binary, told apart by the binary file identifier. Throws Error
// naming `origin` and the problem.
ChoiceLogFile choice_log_from_bytes(std::string_view bytes, const std::string& origin);

// Both writers store the digest of the entries (recomputed, never copied).
std::string choice_log_to_json(const ChoiceLogFile& log);
std::string choice_log_to_binary(const ChoiceLogFile& log);

}  // namespace tunelock
