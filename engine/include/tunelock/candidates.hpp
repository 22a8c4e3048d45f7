// Candidate manifests: the kernel families a program registers,
//   {"kernels": {qualified: {"key": [arg names], "configs": [config, ...]}}}
// or, for one kernel, just {"configs": [config, ...]}. Tools accept them
// wherever candidates are needed.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/config.hpp"

namespace tunelock {

struct KernelCandidates {
  std::vector<std::string> key_args;
  std::vector<Config> configs;
};

struct CandidateManifest {
  // Keyed by qualified name; a single-kernel file has one entry with an empty name.
  std::map<std::string, KernelCandidates, std::less<>> kernels;
  bool single_kernel = false;

  // The candidates of `qualified`; a single-kernel file answers for any
  // name. Throws Error listing the known kernels when it is not there.
  const KernelCandidates& find(std::string_view qualified, const std::string& origin) const;
};

CandidateManifest candidates_from_json(std::string_view text, const std::string& origin);

}  // namespace tunelock
