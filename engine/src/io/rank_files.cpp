#include "tunelock/io/rank_files.hpp"

#include <algorithm>
#include <iterator>
#include <string>

namespace tunelock {
std::filesystem::path rank_file(const std::filesystem::path& prefix, int rank,
                                std::string_view ending) {
  return std::filesystem::path(prefix.string() + ".rank" + std::to_string(rank) +
                               std::string(ending));
}

RankFileName parse_rank_file_name(std::string_view name) {
  RankFileName out;
  std::string_view stem = name;
  bool sidecar = false;
  for (std::string_view ending : rank_file_endings::kSidecars) {
    if (stem.ends_with(ending)) {
      stem.remove_suffix(ending.size());
      sidecar = true;
      break;
    }
  }
  if (!sidecar) {
    for (std::string_view ending :
         {rank_file_endings::kLaunches, rank_file_endings::kBinaryLaunches,
          rank_file_endings::kAudit, rank_file_endings::kRecord,
          rank_file_endings::kBinaryChoiceLog}) {
      if (stem.ends_with(ending)) {
        stem.remove_suffix(ending.size());
        break;
      }
    }
  }
  out.stem = std::string(stem);
  // `<run>.rank<N>`: Megatron's records carry their rank only in the name.
  const auto at = stem.rfind(".rank");
  if (at == std::string_view::npos || stem.size() == name.size()) return out;
  const std::string_view digits = stem.substr(at + 5);
  if (digits.empty() || digits.size() > 9 ||
      digits.find_first_not_of("0123456789") != std::string_view::npos)
    return out;
  out.run = std::string(stem.substr(0, at));
  out.rank = std::stoi(std::string(digits));
  return out;
}

bool is_timings_sidecar_name(std::string_view name) {
  return std::any_of(std::begin(rank_file_endings::kSidecars),
                     std::end(rank_file_endings::kSidecars),
                     [&](std::string_view ending) { return name.ends_with(ending); });
}

}  // namespace tunelock
