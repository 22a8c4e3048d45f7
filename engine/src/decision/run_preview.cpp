#include "tunelock/decision/run_preview.hpp"

#include <set>
#include <sstream>

#include "tunelock/base/error.hpp"
#include "tunelock/base/notices.hpp"
#include "tunelock/decision/decision.hpp"
#include "tunelock/decision/selection.hpp"
#include "tunelock/logs/choice_log.hpp"
#include "tunelock/logs/class_entry.hpp"
#include "tunelock/model/kernel_id.hpp"

namespace tunelock {
namespace {

void decide_pinned(PreviewedKey& row, const RunPreviewRules& rules, Notices& notices,
                   RunPreview& out) {
  std::string qualified;
  const KernelCandidates* candidates = nullptr;
  try {
    qualified = rules.manifest->resolve(row.kernel, "candidates");
    candidates = &rules.manifest->find(qualified, "candidates");
  } catch (const Error& e) {
    row.problem = e.what();
    ++out.summary.undecided;
    return;
  }
  const Table* table = rules.table && rules.table->arch() == row.arch ? rules.table : nullptr;
  DecisionRequest request;
  request.arch = row.arch;
  request.kernel = KernelId::parse(qualified);
  request.key = row.key;
  request.candidates = candidates->configs;
  request.table = table;
  request.block_sizes = rules.block_sizes;
  request.notices = &notices;  // each warning once per preview
  request.details = false;
  Decision decision = make_decision(request);
  row.explanation = std::move(decision.explanation);
  out.warnings.insert(out.warnings.end(), decision.warnings.begin(), decision.warnings.end());
  const Choice choice = decision.choice;
  row.pinned = signature(candidates->configs[choice.index]);
  row.reason = std::string(to_string(choice.reason));
  switch (choice.reason) {
    case Reason::table:
      ++out.summary.table;
      break;
    case Reason::table_wildcard:
      ++out.summary.table_wildcard;
      break;
    case Reason::block_sizes:
      ++out.summary.block_sizes;
      break;
    default:
      ++out.summary.min_cost;
  }
  row.changes = row.ran.size() != 1 || row.ran.begin()->first != row.pinned;
  out.summary.changes += row.changes;
}

}  // namespace

RunPreview preview_run(std::span<const ChoiceLogFile> logs, const RunPreviewRules& rules) {
  if (!rules.manifest) throw Error("preview: a candidate manifest is needed");
  std::map<std::string, PreviewedKey> rows;  // by logged entry, so sorted
  std::set<int> ranks;
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const std::string origin =
        "log " + std::to_string(i + 1) + " (rank " + std::to_string(logs[i].rank) + ")";
    if (!ranks.insert(logs[i].rank).second)
      throw Error(origin + ": rank " + std::to_string(logs[i].rank) +
                  " appears in two logs of one run");
    for (const auto& [entry, value] : logs[i].entries) {
      // A class entry stands for every size of a group: no key to decide.
      if (entry.starts_with(std::string(kClassEntryArch) + "|")) continue;
      auto [it, added] = rows.try_emplace(entry);
      if (added) {
        const ChoiceLogKey parts = parse_choice_log_key(entry, origin);
        it->second.arch = parts.arch;
        it->second.kernel = parts.kernel;
        it->second.key = parts.key;
      }
      it->second.ran[logged_signature(value)].push_back(logs[i].rank);
    }
  }
  RunPreview out;
  Notices notices;  // the preview warns through its result, not the log
  for (auto& [entry, row] : rows) {
    decide_pinned(row, rules, notices, out);
    out.keys.push_back(std::move(row));
  }
  out.summary.keys = out.keys.size();
  return out;
}

nlohmann::json run_preview_to_json(const RunPreview& preview) {
  nlohmann::json keys = nlohmann::json::array();
  for (const PreviewedKey& row : preview.keys) {
    nlohmann::json ran = nlohmann::json::array();
    for (const auto& [signature, ranks] : row.ran)
      ran.push_back({{"signature", signature}, {"ranks", ranks}});
    keys.push_back({{"arch", row.arch},
                    {"kernel", row.kernel},
                    {"key", row.key},
                    {"ran", ran},
                    {"pinned", row.pinned},
                    {"reason", row.reason},
                    {"problem", row.problem},
                    {"explanation", row.explanation},
                    {"changes", row.changes}});
  }
  const RunPreviewSummary& s = preview.summary;
  return {{"keys", keys},
          {"summary",
           {{"keys", s.keys},
            {"table", s.table},
            {"table*", s.table_wildcard},
            {"block_sizes", s.block_sizes},
            {"min_cost", s.min_cost},
            {"undecided", s.undecided},
            {"changes", s.changes}}},
          {"warnings", preview.warnings}};
}

std::string run_preview_report(const RunPreview& preview, bool every_key) {
  std::ostringstream out;
  for (const PreviewedKey& row : preview.keys) {
    if (!every_key && !row.changes && row.problem.empty()) continue;
    out << (row.changes ? "changes " : "same    ") << row.arch << "|" << row.kernel << "|"
        << row.key << "\n";
    for (const auto& [signature, ranks] : row.ran) {
      out << "    ran    " << signature << " on rank";
      for (int rank : ranks) out << " " << rank;
      out << "\n";
    }
    if (row.problem.empty())
      out << "    pinned " << row.pinned << " (" << row.reason << ")\n";
    else
      out << "    pinned cannot decide: " << row.problem << "\n";
  }
  const RunPreviewSummary& s = preview.summary;
  out << s.keys << " logged key(s): " << s.table << " by the table's exact key, "
      << s.table_wildcard << " by '*', " << s.block_sizes << " by block sizes, " << s.min_cost
      << " by the cheapest fallback, " << s.undecided << " not in the manifest; " << s.changes
      << " choice(s) would change under pinned\n";
  return out.str();
}

}  // namespace tunelock
