#include "tunelock/records/merge_report.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace tunelock {
namespace {

void append_votes(std::string& out, const KeyVerdict& v) {
  for (const Vote& vote : v.votes) {
    out += fmt::format("  {} vote(s): {}", vote.count, vote.signature);
    if (!vote.timings_ms.empty()) {
      out += fmt::format("  timed {:.4g}..{:.4g} ms, median {:.4g} ms over {} rank(s)",
                         vote.timings_ms.front(), vote.timings_ms.back(), aggregated_ms(vote),
                         vote.timings_ms.size());
    }
    out += "\n";
  }
  for (const std::string& sig : v.nondeterministic)
    out +=
        "  nondeterministic (bits changed between two runs of itself), never pinned: " + sig + "\n";
  for (const std::string& sig : v.equivalent)
    out += "  equivalent to the kept config (same bits on every rank that ran both): " + sig + "\n";
}

void append_decision(std::string& out, const KeyVerdict& v) {
  if (v.votes.empty()) {
    out += "  -> every winner was nondeterministic: left out of the table\n";
    return;
  }
  out += fmt::format("  -> kept {} ({})", v.votes[0].signature, to_string(v.decided_by));
  if (v.votes.size() > 1) {
    const double best = aggregated_ms(v.votes[0]), runner = aggregated_ms(v.votes[1]);
    if (best != kNoTiming && runner != kNoTiming && std::min(best, runner) > 0) {
      out += fmt::format("; the two best medians differ by {:.1f}%",
                         100.0 * std::abs(runner - best) / std::min(best, runner));
    }
  }
  out += "\n";
  if (!v.ties.empty()) {
    out += "  within noise (each no slower than the best's slowest rank):";
    for (const std::string& sig : v.ties) out += " " + sig;
    out += "\n";
  }
  if (v.voters > 1)
    out += fmt::format(
        "  flip risk {}/{}: {} of the {} voting ranks, each dropped alone, would "
        "change the kept config\n",
        v.flips, v.voters, v.flips, v.voters);
}

}  // namespace

nlohmann::json verdict_to_json(const KeyVerdict& verdict) {
  nlohmann::json votes = nlohmann::json::array();
  for (const Vote& vote : verdict.votes)
    votes.push_back(
        {{"signature", vote.signature}, {"votes", vote.count}, {"timings_ms", vote.timings_ms}});
  const auto& [arch, kernel, key] = verdict.key;
  return {{"arch", arch},
          {"kernel", kernel},
          {"key", key},
          {"winners", votes},
          {"nondeterministic", verdict.nondeterministic},
          {"kept",
           verdict.votes.empty() ? nlohmann::json() : nlohmann::json(verdict.votes[0].signature)},
          {"decided_by", to_string(verdict.decided_by)},
          {"equivalent", verdict.equivalent},
          {"ties", verdict.ties},
          {"flip_risk", {{"flips", verdict.flips}, {"voters", verdict.voters}}}};
}

std::string disagreement_report(const std::vector<KeyVerdict>& disagreements) {
  std::vector<const KeyVerdict*> differing, flagged_only, equivalent_only;
  for (const KeyVerdict& v : disagreements)
    (v.votes.size() > 1            ? differing
     : !v.nondeterministic.empty() ? flagged_only
                                   : equivalent_only)
        .push_back(&v);
  std::string out;
  auto section = [&](std::string_view what, const std::vector<const KeyVerdict*>& verdicts) {
    if (verdicts.empty()) return;
    out += fmt::format("{} key(s) {}:\n", verdicts.size(), what);
    for (const KeyVerdict* v : verdicts) {
      out += to_string(v->key) + "\n";
      append_votes(out, *v);
      append_decision(out, *v);
    }
  };
  section("where ranks chose differently", differing);
  section("with nondeterministic candidates", flagged_only);
  section("whose kept config has equivalent configs", equivalent_only);
  return out;
}

}  // namespace tunelock
