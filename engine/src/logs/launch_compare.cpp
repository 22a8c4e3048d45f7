#include "tunelock/logs/launch_compare.hpp"

#include <algorithm>
#include <map>
#include <set>

#include "tunelock/base/error.hpp"

namespace tunelock {
namespace {

using nlohmann::json;

bool same_launch(const LaunchLog& a, const LaunchRun& x, const LaunchLog& b, const LaunchRun& y) {
  return x.shape == y.shape && a.kernels[x.kernel] == b.kernels[y.kernel];
}

ResolvedLaunch resolve(const LaunchLog& log, const LaunchRun& run) {
  return {log.kernels[run.kernel], run.shape};
}

// The first launch where two steps differ, walking both run lists in step:
// agreeing runs are skipped whole, so a million equal launches cost one
// comparison.
std::optional<LaunchDivergence> first_difference_in(const LaunchLog& a, const WatchStep& x,
                                                    const LaunchLog& b, const WatchStep& y,
                                                    std::size_t step) {
  std::size_t i = 0, j = 0;
  std::uint64_t used_i = 0, used_j = 0;  // launches already consumed of runs i and j
  std::uint64_t at = 0;
  while (i < x.runs.size() && j < y.runs.size()) {
    const LaunchRun& r = x.runs[i];
    const LaunchRun& s = y.runs[j];
    if (!same_launch(a, r, b, s)) return LaunchDivergence{step, at, resolve(a, r), resolve(b, s)};
    const std::uint64_t both = std::min(r.count - used_i, s.count - used_j);
    at += both;
    used_i += both;
    used_j += both;
    if (used_i == r.count) ++i, used_i = 0;
    if (used_j == s.count) ++j, used_j = 0;
  }
  if (i == x.runs.size() && j == y.runs.size()) return std::nullopt;
  LaunchDivergence d{step, at, std::nullopt, std::nullopt};
  if (i < x.runs.size()) d.reference = resolve(a, x.runs[i]);
  if (j < y.runs.size()) d.other = resolve(b, y.runs[j]);
  return d;
}

std::optional<LaunchDivergence> first_difference(const LaunchLog& a, const LaunchLog& b) {
  const std::size_t common = std::min(a.steps.size(), b.steps.size());
  for (std::size_t s = 0; s < common; ++s) {
    // Equal digests of equal kernel tables mean equal launches; otherwise walk.
    if (auto d = first_difference_in(a, a.steps[s], b, b.steps[s], s)) return d;
  }
  if (a.steps.size() == b.steps.size()) return std::nullopt;
  LaunchDivergence d{common, 0, std::nullopt, std::nullopt};
  const LaunchLog& longer = a.steps.size() > b.steps.size() ? a : b;
  const WatchStep& extra = longer.steps[common];
  if (!extra.runs.empty()) {
    (&longer == &a ? d.reference : d.other) = resolve(longer, extra.runs.front());
  }
  return d;
}

std::map<std::string, std::set<std::string>> shapes_by_kernel(const LaunchLog& log) {
  std::map<std::string, std::set<std::string>> out;
  for (const WatchStep& step : log.steps)
    for (const LaunchRun& run : step.runs)
      out[log.kernels[run.kernel].name].insert(describe(run.shape));
  return out;
}

std::vector<KernelShapes> kernel_differences(const LaunchLog& a, const LaunchLog& b) {
  const auto x = shapes_by_kernel(a);
  const auto y = shapes_by_kernel(b);
  std::set<std::string> names;
  for (const auto& [name, _] : x) names.insert(name);
  for (const auto& [name, _] : y) names.insert(name);
  static const std::set<std::string> none;
  std::vector<KernelShapes> out;
  for (const std::string& name : names) {
    const auto fx = x.find(name);
    const auto fy = y.find(name);
    const auto& sx = fx == x.end() ? none : fx->second;
    const auto& sy = fy == y.end() ? none : fy->second;
    KernelShapes k{name, {}, {}};
    std::set_difference(sx.begin(), sx.end(), sy.begin(), sy.end(),
                        std::back_inserter(k.reference_only));
    std::set_difference(sy.begin(), sy.end(), sx.begin(), sx.end(),
                        std::back_inserter(k.other_only));
    if (!k.reference_only.empty() || !k.other_only.empty()) out.push_back(std::move(k));
  }
  return out;
}

json launch_to_json(const std::optional<ResolvedLaunch>& launch) {
  if (!launch) return nullptr;
  json out = {{"kernel", launch->kernel.name}, {"shape", describe(launch->shape)}};
  if (!launch->kernel.module.empty()) out["module"] = launch->kernel.module;
  return out;
}

std::string launch_text(const std::optional<ResolvedLaunch>& launch) {
  if (!launch) return "(no launch: its launches ended here)";
  std::string text = launch->kernel.name + " " + describe(launch->shape);
  if (!launch->kernel.module.empty()) text += " module " + launch->kernel.module;
  return text;
}

}  // namespace

std::vector<LaunchComparison> compare_launch_logs(const std::vector<LaunchLog>& logs) {
  if (logs.size() < 2)
    throw Error(
        "compare needs two launch logs or more (ranks of one run, or one rank of two runs)");
  std::vector<LaunchComparison> out;
  const LaunchLog& reference = logs.front();
  for (std::size_t i = 1; i < logs.size(); ++i) {
    const LaunchLog& other = logs[i];
    LaunchComparison c;
    c.reference = reference.origin;
    c.other = other.origin;
    c.reference_steps = reference.steps.size();
    c.other_steps = other.steps.size();
    c.reference_launches = reference.total_launches();
    c.other_launches = other.total_launches();
    if (!reference.note.empty())
      c.unobserved = reference.origin + ": " + reference.note;
    else if (!other.note.empty())
      c.unobserved = other.origin + ": " + other.note;
    c.first = first_difference(reference, other);
    if (c.first) c.kernels = kernel_differences(reference, other);
    out.push_back(std::move(c));
  }
  return out;
}

std::string launch_comparisons_to_text(const std::vector<LaunchComparison>& comparisons) {
  std::string text;
  for (const LaunchComparison& c : comparisons) {
    const std::string counts = " (" + std::to_string(c.reference_steps) + " vs " +
                               std::to_string(c.other_steps) + " steps, " +
                               std::to_string(c.reference_launches) + " vs " +
                               std::to_string(c.other_launches) + " launches)";
    if (!c.unobserved.empty()) {
      text += c.reference + " vs " + c.other + ": not comparable, nothing was observed (" +
              c.unobserved + ")\n";
      continue;
    }
    if (!c.first) {
      text += c.reference + " vs " + c.other + ": identical" + counts + "\n";
      continue;
    }
    text += c.reference + " vs " + c.other + ": differ" + counts + "\n";
    text += "  first difference: step " + std::to_string(c.first->step) + ", launch " +
            std::to_string(c.first->launch) + "\n";
    text += "    " + c.reference + ": " + launch_text(c.first->reference) + "\n";
    text += "    " + c.other + ": " + launch_text(c.first->other) + "\n";
    for (const KernelShapes& k : c.kernels) {
      text += "  kernel " + k.kernel + "\n";
      for (const std::string& shape : k.reference_only)
        text += "    only " + c.reference + ": " + shape + "\n";
      for (const std::string& shape : k.other_only)
        text += "    only " + c.other + ": " + shape + "\n";
    }
  }
  return text;
}

json launch_comparisons_to_json(const std::vector<LaunchComparison>& comparisons) {
  json items = json::array();
  for (const LaunchComparison& c : comparisons) {
    json item = {{"reference", c.reference},
                 {"other", c.other},
                 {"identical", c.identical()},
                 {"steps", {c.reference_steps, c.other_steps}},
                 {"launches", {c.reference_launches, c.other_launches}},
                 {"unobserved", c.unobserved.empty() ? json(nullptr) : json(c.unobserved)},
                 {"first", nullptr}};
    if (c.first)
      item["first"] = {{"step", c.first->step},
                       {"launch", c.first->launch},
                       {"reference", launch_to_json(c.first->reference)},
                       {"other", launch_to_json(c.first->other)}};
    json kernels = json::array();
    for (const KernelShapes& k : c.kernels)
      kernels.push_back({{"kernel", k.kernel},
                         {"reference_only", k.reference_only},
                         {"other_only", k.other_only}});
    item["kernels"] = std::move(kernels);
    items.push_back(std::move(item));
  }
  return {{"identical", launch_comparison_exit_code(comparisons) == 0}, {"comparisons", items}};
}

int launch_comparison_exit_code(const std::vector<LaunchComparison>& comparisons) {
  return std::all_of(comparisons.begin(), comparisons.end(),
                     [](const LaunchComparison& c) { return c.identical(); })
             ? 0
             : 1;
}

}  // namespace tunelock
