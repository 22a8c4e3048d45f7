// Candidate manifests: the kernel families a program registers,
//   {"kernels": {qualified: {"key": [arg names], "configs": [config, ...]}}}
// or, for one kernel, just {"configs": [config, ...]}. Tools accept them
// wherever candidates are needed.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/model/config.hpp"

namespace tunelock {

struct KernelCandidates {
  std::vector<std::string> key_args;
  std::vector<Config> configs;
};

struct CandidateManifest {
  // Keyed by qualified name; a single-kernel file has one entry with an empty name.
  std::map<std::string, KernelCandidates, std::less<>> kernels;
  bool single_kernel = false;

  // The manifest's name for `name`: the name itself when listed, else the
  // one listed kernel whose bare name (after the last '.') is `name`, so the
  // bare names tables use can be typed. A single-kernel file answers any
  // name as it is. Throws Error listing the known kernels when none is
  // found, or the candidates when a bare name is ambiguous.
  std::string resolve(std::string_view name, const std::string& origin) const;

  // The candidates of `name` (as resolve() finds it).
  const KernelCandidates& find(std::string_view name, const std::string& origin) const;
};

CandidateManifest candidates_from_json(std::string_view text, const std::string& origin);

// Throws Error starting with `origin` when `key` does not begin with the
// kernel's declared key arguments, in order, as NAME=value parts separated
// by '|' ('M=1,N=2' names one argument, not two). Nothing is checked when
// the manifest declares no key arguments, or for the wildcard '*'.
void check_key_names(const KernelCandidates& kernel, std::string_view key,
                     const std::string& origin);

}  // namespace tunelock
