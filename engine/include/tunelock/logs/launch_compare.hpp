// Where two launch logs part: ranks of one run (which should launch alike)
// or one rank of two runs. The one statement of that comparison for the
// CLI (`tunelock watch compare`), the page and Python.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "tunelock/logs/launch_log.hpp"

namespace tunelock {

// One launch, resolved: the kernel's name and module with its shape.
struct ResolvedLaunch {
  WatchedKernel kernel;
  LaunchShape shape;
};

// The first launch where the two sides differ. A side that ran out of
// launches (a shorter step, or fewer steps) has no launch there.
struct LaunchDivergence {
  std::size_t step = 0;
  std::uint64_t launch = 0;  // index within the step
  std::optional<ResolvedLaunch> reference, other;
};

// A kernel whose set of shapes differs between the sides, over the whole
// log: each side's shapes (described) that the other side never used. A
// kernel one side never launched has all its shapes on the other side.
struct KernelShapes {
  std::string kernel;
  std::vector<std::string> reference_only, other_only;
};

struct LaunchComparison {
  std::string reference, other;  // the logs' origins
  std::size_t reference_steps = 0, other_steps = 0;
  std::uint64_t reference_launches = 0, other_launches = 0;
  // A side's note, when it observed nothing: never identical then.
  std::string unobserved;
  std::optional<LaunchDivergence> first;  // empty when the launches agree
  std::vector<KernelShapes> kernels;      // sorted by kernel name

  bool identical() const { return !first && unobserved.empty(); }
};

// Every log after the first against the first. Needs two logs or more
// (Error otherwise).
std::vector<LaunchComparison> compare_launch_logs(const std::vector<LaunchLog>& logs);

// Text for people (a block per comparison) and JSON for tools:
// {"identical": bool, "comparisons": [...]}.
std::string launch_comparisons_to_text(const std::vector<LaunchComparison>& comparisons);
nlohmann::json launch_comparisons_to_json(const std::vector<LaunchComparison>& comparisons);
// 0 when every comparison is identical, 1 otherwise.
int launch_comparison_exit_code(const std::vector<LaunchComparison>& comparisons);

}  // namespace tunelock
