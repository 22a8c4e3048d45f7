// torch.compile's choices as the engine meets them: configs that carry an
// algorithm (an ATen call or a template's name).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "tunelock/model/config.hpp"

namespace tunelock::testing {

inline Config with_algorithm(Config config, std::string algorithm) {
  config.algorithm = std::move(algorithm);
  return config;
}

// An mm decision as Inductor offers it: ATen first, then two tiles of one
// template.
inline std::vector<Config> mm_choices() {
  return {with_algorithm(make_config({}, 0, 0), "aten_mm"),
          with_algorithm(make_config({{"BLOCK_M", 64}, {"BLOCK_N", 64}, {"BLOCK_K", 32}}, 4, 3),
                         "triton_mm"),
          with_algorithm(make_config({{"BLOCK_M", 128}, {"BLOCK_N", 64}, {"BLOCK_K", 32}}, 8, 3),
                         "triton_mm")};
}

}  // namespace tunelock::testing
