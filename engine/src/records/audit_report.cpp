#include "tunelock/records/audit_report.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "tunelock/base/error.hpp"
#include "tunelock/base/median.hpp"

namespace tunelock {
namespace {

using Key = std::tuple<std::string, std::string, std::string>;  // arch, kernel, key

struct Gathered {
  AuditRow row;
  std::map<std::string, std::vector<double>> ms;  // signature -> each rank's median
  std::set<std::string> pinned, differs;          // what each rank pinned / saw differ
  std::set<std::string> racy;                     // flagged by some rank's bits audit
};

std::optional<double> median_of(const std::map<std::string, std::vector<double>>& ms,
                                const std::string& sig) {
  const auto it = ms.find(sig);
  if (it == ms.end() || it->second.empty()) return std::nullopt;
  return median(it->second);
}

}  // namespace

AuditReport audit_report(const std::vector<AuditFile>& files, double max_regret_pct) {
  std::map<int, const AuditFile*> by_rank;
  for (const AuditFile& f : files) {
    if (f.rank < 0) continue;
    if (auto [it, fresh] = by_rank.emplace(f.rank, &f); !fresh)
      throw Error(it->second->origin + " and " + f.origin + " are both rank " +
                  std::to_string(f.rank) + "; give one audit file per rank");
  }
  std::map<Key, Gathered> keys;
  for (const AuditFile& f : files) {
    for (const AuditEntry& e : f.entries) {
      Gathered& g = keys[{e.arch, e.kernel, e.key}];
      g.row.arch = e.arch, g.row.kernel = e.kernel, g.row.key = e.key;
      g.row.reason = e.reason;
      g.pinned.insert(e.pinned);
      g.row.stale = g.row.stale || e.stale;
      g.row.bits_changed = g.row.bits_changed || e.repeats == false;
      g.differs.insert(e.equivalent_differs.begin(), e.equivalent_differs.end());
      g.row.calls += e.calls;
      ++g.row.ranks;
      for (const AuditedCandidate& c : e.candidates) {
        if (c.median_ms) g.ms[c.signature].push_back(*c.median_ms);
        if (c.nondeterministic) g.racy.insert(c.signature);
      }
    }
  }
  AuditReport report;
  report.max_regret_pct = max_regret_pct;
  double weighted_pinned = 0, weighted_fastest = 0;
  for (auto& [key, g] : keys) {
    AuditRow& row = g.row;
    // Every rank launched the same config (verify makes sure); if not, the
    // files name several and the report says so.
    row.pinned = *g.pinned.begin();
    for (auto it = std::next(g.pinned.begin()); it != g.pinned.end(); ++it)
      row.pinned += " | " + *it;
    row.equivalent_differs.assign(g.differs.begin(), g.differs.end());
    row.pinned_ms = g.pinned.size() == 1 ? median_of(g.ms, row.pinned) : std::nullopt;
    for (const auto& [sig, samples] : g.ms) {
      if (g.racy.count(sig)) continue;  // a config that changes its own bits is no option
      const double ms = median(samples);
      if (!row.fastest_ms || ms < *row.fastest_ms) row.fastest = sig, row.fastest_ms = ms;
    }
    if (row.pinned_ms && row.fastest_ms && *row.fastest_ms > 0) {
      row.regret_pct = 100.0 * (*row.pinned_ms / *row.fastest_ms - 1);
      const double weight = static_cast<double>(std::max<std::int64_t>(row.calls, 1));
      weighted_pinned += weight * *row.pinned_ms;
      weighted_fastest += weight * *row.fastest_ms;
    }
    if (row.regret_pct && *row.regret_pct > max_regret_pct) ++report.over_regret;
    if (!row.regret_pct) ++report.unmeasured;
    if (row.bits_changed || !row.equivalent_differs.empty()) ++report.bits_problems;
    report.rows.push_back(std::move(row));
  }
  if (weighted_fastest > 0)
    report.total_regret_pct = 100.0 * (weighted_pinned / weighted_fastest - 1);
  return report;
}

std::string audit_report_text(const AuditReport& report) {
  std::string out;
  auto ms = [](const std::optional<double>& v) {
    return v ? fmt::format("{:.4g} ms", *v) : std::string("not run");
  };
  for (const AuditRow& r : report.rows) {
    out += fmt::format("{}|{}|{}\n  pinned {} ({}): {}; fastest {}: {}", r.arch, r.kernel, r.key,
                       r.pinned, r.reason, ms(r.pinned_ms), r.fastest.empty() ? "-" : r.fastest,
                       ms(r.fastest_ms));
    if (r.regret_pct) {
      out += fmt::format("; regret {:.1f}%{}", *r.regret_pct,
                         *r.regret_pct > report.max_regret_pct ? " (over the limit)" : "");
    }
    out += fmt::format("; {} call(s) on {} rank(s)\n", r.calls, r.ranks);
    if (!r.regret_pct) {
      out += !r.pinned_ms ? "  regret unknown: the pinned config was not measured\n"
                          : "  regret unknown: no candidate whose bits repeat was measured\n";
    }
    if (r.stale)
      out += "  stale: the table's entry names no live candidate; a fallback rule chose\n";
    if (r.bits_changed)
      out += "  bits changed: the pinned config gave different bits in two runs of itself\n";
    for (const std::string& sig : r.equivalent_differs)
      out += "  equivalent config " + sig + " gave other bits than the pinned config\n";
  }
  out += fmt::format("{} key(s) audited", report.rows.size());
  if (report.total_regret_pct)
    out += fmt::format("; table regret weighted by calls: {:.1f}%", *report.total_regret_pct);
  out += fmt::format("; {} over the {:g}% limit; {} with changed bits; {} with regret unknown\n",
                     report.over_regret, report.max_regret_pct, report.bits_problems,
                     report.unmeasured);
  return out;
}

nlohmann::json audit_report_json(const AuditReport& report) {
  using nlohmann::json;
  auto opt = [](const std::optional<double>& v) { return v ? json(*v) : json(nullptr); };
  json rows = json::array();
  for (const AuditRow& r : report.rows) {
    rows.push_back({{"arch", r.arch},
                    {"kernel", r.kernel},
                    {"key", r.key},
                    {"pinned", r.pinned},
                    {"reason", r.reason},
                    {"pinned_ms", opt(r.pinned_ms)},
                    {"fastest", r.fastest},
                    {"fastest_ms", opt(r.fastest_ms)},
                    {"regret_pct", opt(r.regret_pct)},
                    {"stale", r.stale},
                    {"bits_changed", r.bits_changed},
                    {"equivalent_differs", r.equivalent_differs},
                    {"calls", r.calls},
                    {"ranks", r.ranks}});
  }
  return {{"rows", std::move(rows)},
          {"max_regret_pct", report.max_regret_pct},
          {"total_regret_pct", opt(report.total_regret_pct)},
          {"over_regret", report.over_regret},
          {"bits_problems", report.bits_problems},
          {"unmeasured", report.unmeasured},
          {"exit_code", report.exit_code()}};
}

}  // namespace tunelock
