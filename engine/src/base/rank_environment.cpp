#include "tunelock/base/rank_environment.hpp"

#include <array>
#include <limits>

#include "tunelock/base/error.hpp"

namespace tunelock {
namespace {

int parse_number(const std::string& name, const std::string& text, int min) {
  return static_cast<int>(parse_integer(name, text, min, std::numeric_limits<int>::max(),
                                        "an integer >= " + std::to_string(min)));
}

}  // namespace

RankInfo rank_from_environment(const Environment& env) {
  struct Source {
    const char* rank;
    const char* size;
  };
  static constexpr std::array<Source, 4> kSources{{{"RANK", "WORLD_SIZE"},
                                                   {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                                                   {"PMI_RANK", "PMI_SIZE"},
                                                   {"SLURM_PROCID", "SLURM_NTASKS"}}};
  for (const Source& source : kSources) {
    auto rank = env.find(source.rank);
    if (rank == env.end() || rank->second.empty()) {
      // A world of several ranks with no rank given: every process would
      // run as rank 0, write the same files and "agree" with itself.
      auto size = env.find(source.size);
      if (size != env.end() && !size->second.empty() &&
          parse_number(source.size, size->second, 1) > 1) {
        throw Error(std::string(source.size) + "=" + size->second + " is set but " + source.rank +
                    " is not; set both so each process knows which rank it is");
      }
      continue;
    }
    RankInfo info;
    info.source = source.rank;
    info.rank = parse_number(source.rank, rank->second, 0);
    auto size = env.find(source.size);
    if (size == env.end() || size->second.empty()) {
      throw Error(std::string(source.rank) + " is set but " + source.size +
                  " is not; set both so every rank knows the group's size");
    }
    info.world_size = parse_number(source.size, size->second, 1);
    if (info.rank >= info.world_size) {
      throw Error(std::string(source.rank) + "=" + rank->second + " is not below " + source.size +
                  "=" + std::to_string(info.world_size));
    }
    return info;
  }
  return RankInfo{};
}

}  // namespace tunelock
