#include "tunelock/logs/table_coverage.hpp"

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "tunelock/base/error.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/class_entry.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/model/kernel_id.hpp"

namespace tunelock {
namespace {

// What the table says of one logged choice.
struct Told {
  bool answered = false;
  std::string stale_entry;  // an entry that named none of what ran
  // A copy: the bare name is a view into tell's own KernelId, gone when it
  // returns.
  std::string filed_under;
};

Told tell(const Table& table, const std::string& qualified, const std::string& key,
          const std::string& launched, bool pinned) {
  const KernelId kernel = KernelId::parse(qualified);
  Told out;
  for (std::string_view name : table_names(kernel, qualified)) {
    if (!table.has_kernel(name)) continue;
    if (out.filed_under.empty()) out.filed_under = name;
    for (std::string_view k : {std::string_view(key), kWildcardKey}) {
      const std::optional<TableEntry> entry = table.entry(name, k);
      if (!entry) continue;
      // A timed choice won on a clock: any entry would have answered it.
      if (!pinned || signature(entry->config) == launched) {
        out.answered = true;
        out.filed_under = name;
        return out;
      }
      if (out.stale_entry.empty()) out.stale_entry = signature(entry->config);
    }
  }
  return out;
}

}  // namespace

std::string_view to_string(CoverageGap gap) {
  switch (gap) {
    case CoverageGap::fallback:
      return "fallback";
    case CoverageGap::stale:
      return "stale";
    case CoverageGap::identity:
      return "identity";
  }
  return "?";
}

CoverageReport table_coverage(const Table& table, const std::vector<ChoiceLogFile>& logs,
                              const std::vector<std::string>& origins) {
  CoverageReport report;
  report.arch = std::string(table.arch());
  report.logs = logs.size();
  std::set<std::string> other_archs;
  std::map<std::tuple<std::string, std::string, CoverageGap>, CoverageMiss> misses;
  std::set<std::pair<std::string, std::string>> needed;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const ChoiceLogFile& log = logs[i];
    const std::string origin = i < origins.size() ? origins[i] : "log " + std::to_string(i);
    for (const auto& [entry_key, value] : log.entries) {
      const ChoiceLogKey parsed = parse_choice_log_key(entry_key, origin);
      if (parsed.arch != report.arch) {
        if (parsed.arch != "consensus" && parsed.arch != "watch" && parsed.arch != kClassEntryArch)
          other_archs.insert(parsed.arch);
        continue;
      }
      if (parsed.key == kWildcardKey) continue;  // one candidate: nothing to choose
      needed.insert({parsed.kernel, parsed.key});
      const std::string launched = logged_signature(value);
      const bool pinned = value.size() > launched.size() &&
                          std::string_view(value).substr(launched.size()) == ";pinned";
      const Told told = tell(table, parsed.kernel, parsed.key, launched, pinned);
      CoverageMiss miss{parsed.kernel, parsed.key, CoverageGap::fallback, launched, {}, {}, {}, {}};
      if (!told.answered) {
        miss.gap = told.stale_entry.empty() ? CoverageGap::fallback : CoverageGap::stale;
        miss.entry = told.stale_entry;
      } else {
        const std::string_view filed = table.identity(told.filed_under);
        const auto ran = log.identities.find(parsed.arch + "|" + parsed.kernel);
        if (filed.empty() || ran == log.identities.end() || ran->second == filed) continue;
        miss.gap = CoverageGap::identity;
        miss.table_identity = std::string(filed);
        miss.run_identity = ran->second;
      }
      CoverageMiss& kept =
          misses.try_emplace({miss.kernel, miss.key, miss.gap}, std::move(miss)).first->second;
      kept.ranks.push_back(log.rank);
    }
  }
  if (needed.empty() && !logs.empty()) {
    std::string found;
    for (const std::string& a : other_archs) found += (found.empty() ? "" : ", ") + a;
    throw Error("table coverage: the logs hold no choices for " + report.arch +
                (found.empty() ? std::string(" (they hold none at all)")
                               : " (they hold " + found + "): pass that arch's table"));
  }
  report.needed = needed.size();
  std::set<std::pair<std::string, std::string>> missed;
  for (auto& [where, miss] : misses) {
    std::sort(miss.ranks.begin(), miss.ranks.end());
    miss.ranks.erase(std::unique(miss.ranks.begin(), miss.ranks.end()), miss.ranks.end());
    missed.insert({miss.kernel, miss.key});
    report.misses.push_back(std::move(miss));
  }
  report.answered = report.needed - missed.size();
  return report;
}

std::string coverage_text(const CoverageReport& report) {
  std::string out = "table coverage (" + report.arch + "): " + std::to_string(report.needed) +
                    " key(s) needed by " + std::to_string(report.logs) + " log(s), " +
                    std::to_string(report.answered) + " answered by an entry, " +
                    std::to_string(report.needed - report.answered) + " not\n";
  std::string kernel;
  for (const CoverageMiss& m : report.misses) {
    if (m.kernel != kernel) out += (kernel = m.kernel) + "\n";
    std::string ranks;
    for (int r : m.ranks) ranks += (ranks.empty() ? "" : ",") + std::to_string(r);
    out += "  [" + m.key + "] ";
    switch (m.gap) {
      case CoverageGap::fallback:
        out += "no entry: fell back to block sizes or the cheapest (launched " + m.launched + ")";
        break;
      case CoverageGap::stale:
        out += "stale: the entry names " + m.entry + ", no live candidate; launched " + m.launched;
        break;
      case CoverageGap::identity:
        out += "identity mismatch: the entry was timed on " + m.table_identity +
               ", the run's code is " + m.run_identity;
        break;
    }
    out += " (rank " + ranks + ")\n";
  }
  if (!report.misses.empty())
    out += "record the missing keys (TUNELOCK_MODE=record, then tunelock merge) to cover them\n";
  return out;
}

nlohmann::json coverage_json(const CoverageReport& report) {
  nlohmann::json misses = nlohmann::json::array();
  for (const CoverageMiss& m : report.misses) {
    nlohmann::json item = {{"kernel", m.kernel},
                           {"key", m.key},
                           {"gap", std::string(to_string(m.gap))},
                           {"launched", m.launched},
                           {"ranks", m.ranks}};
    if (!m.entry.empty()) item["entry"] = m.entry;
    if (m.gap == CoverageGap::identity) {
      item["table_identity"] = m.table_identity;
      item["run_identity"] = m.run_identity;
    }
    misses.push_back(std::move(item));
  }
  return {{"arch", report.arch},         {"logs", report.logs}, {"needed", report.needed},
          {"answered", report.answered}, {"misses", misses},    {"covered", report.misses.empty()}};
}

}  // namespace tunelock
