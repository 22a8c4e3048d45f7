// Targets whose reader takes several files (a table and choice logs, a
// record and its sidecars, candidates and a table) read one input as
// parts, cut at each separator line: the seeds keep it, so the fuzzer
// mutates each file while the parts stay apart. A separator inside a
// binary part only cuts that part short, which a reader must refuse anyway.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tunelock::fuzzing {

inline constexpr std::string_view kPartSeparator = "\n--tunelock-fuzz-part--\n";

// The parts, in order; at most `most` (the last keeps any later
// separators). Each is a copy, aligned as a file read into memory is: the
// binary readers expect their buffer where an allocation puts it.
inline std::vector<std::string> split_parts(std::string_view bytes, std::size_t most) {
  std::vector<std::string> parts;
  while (parts.size() + 1 < most) {
    const std::size_t at = bytes.find(kPartSeparator);
    if (at == std::string_view::npos) break;
    parts.emplace_back(bytes.substr(0, at));
    bytes.remove_prefix(at + kPartSeparator.size());
  }
  parts.emplace_back(bytes);
  return parts;
}

inline std::string join_parts(const std::vector<std::string>& parts) {
  std::string out;
  for (std::size_t i = 0; i < parts.size(); ++i)
    out.append(i ? kPartSeparator : std::string_view()).append(parts[i]);
  return out;
}

}  // namespace tunelock::fuzzing
