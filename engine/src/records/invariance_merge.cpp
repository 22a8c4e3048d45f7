#include "tunelock/records/invariance_merge.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "tunelock/base/error.hpp"
#include "tunelock/base/median.hpp"
#include "tunelock/model/batch_rows.hpp"

namespace tunelock {
namespace {

constexpr double kUntimed = std::numeric_limits<double>::infinity();

// One key's audit on one record: which class each invariant config fell
// into, and the sizes compared.
struct KeyAudit {
  const RecordFile* record = nullptr;
  std::string key;
  std::map<std::string, int> class_of;  // signature -> class on this record and key
  std::vector<std::int64_t> sizes;
};

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out;
}

// The median over the ranks' medians of each config at one key.
std::map<std::string, double> aggregated_timings(const std::vector<RecordFile>& records,
                                                 const RecordKey& key) {
  std::map<std::string, std::vector<double>> all;
  for (const RecordFile& record : records) {
    const auto timed = record.timings.find(key);
    if (timed == record.timings.end()) continue;
    std::map<std::string, std::vector<double>> own;
    for (const CandidateTiming& c : timed->second)
      if (c.median_ms) own[c.signature].push_back(*c.median_ms);
    for (auto& [signature, list] : own) {
      std::sort(list.begin(), list.end());
      all[signature].push_back(median_of_sorted(list));
    }
  }
  std::map<std::string, double> out;
  for (auto& [signature, list] : all) {
    std::sort(list.begin(), list.end());
    out[signature] = median_of_sorted(list);
  }
  return out;
}

struct Group {
  std::map<std::int64_t, std::string> key_at;  // recorded size -> the key's text
  std::vector<KeyAudit> audits;
};

class KernelMerge {
 public:
  KernelMerge(const std::vector<RecordFile>& records, const std::string& arch,
              const std::string& kernel, const std::set<std::string>& flagged)
      : records_(records), arch_(arch), kernel_(kernel), flagged_(flagged) {}

  KernelInvariance merge(InMemoryTable& table) {
    read_audits();
    KernelInvariance out{dim_, {}, {variant_.begin(), variant_.end()}};
    for (auto& [group_key, group] : groups_) out.groups[group_key] = merge_group(group, table);
    return out;
  }

 private:
  void read_audits() {
    for (const RecordFile& record : records_) {
      for (const auto& [key, candidates] : record.timings) {
        if (key.arch != arch_ || key.kernel != kernel_) continue;
        KeyAudit audit{&record, key.key, {}, {}};
        for (const CandidateTiming& c : candidates) {
          if (!c.rows) continue;
          note_dim(c.rows->dim, record, key.key);
          if (audit.sizes.empty()) audit.sizes = c.rows->sizes;
          if (c.rows->variant_at) variant_.insert(c.signature);
          if (c.rows->row_class) audit.class_of[c.signature] = *c.rows->row_class;
        }
        if (dim_.empty()) continue;  // no audit seen yet for this kernel
        const std::optional<std::int64_t> size = batch_size_of(key.key, dim_);
        if (!size)
          throw Error(record.origin + ": " + kernel_ + " [" + key.key + "]: its key has no " +
                      dim_ + "=<size>, the batch dim its invariance audits name");
        Group& group = groups_[group_key_of(key.key, dim_)];
        group.key_at[*size] = key.key;
        if (!audit.sizes.empty()) group.audits.push_back(std::move(audit));
      }
    }
    // Keys read before the first audit named the dim join their groups now.
    if (!dim_.empty()) {
      for (const RecordFile& record : records_)
        for (const auto& [key, candidates] : record.timings)
          if (key.arch == arch_ && key.kernel == kernel_)
            if (const std::optional<std::int64_t> size = batch_size_of(key.key, dim_))
              groups_[group_key_of(key.key, dim_)].key_at[*size] = key.key;
    }
  }

  void note_dim(const std::string& dim, const RecordFile& record, const std::string& key) {
    if (dim_.empty()) {
      dim_ = dim;
      dim_origin_ = record.origin;
    } else if (dim != dim_) {
      throw Error("contradictory batch dims for " + kernel_ + ": " + dim_origin_ + " audits " +
                  dim_ + ", " + record.origin + " audits " + dim + " [" + key + "]");
    }
  }

  bool excluded(const std::string& signature) const {
    return variant_.count(signature) || flagged_.count(signature);
  }

  // Configs are one class when every audit of the group that classed any
  // of them classed them all, and together. One audit that sees two
  // configs' rows apart keeps them apart everywhere: a difference was seen,
  // while the same bits at a few rows may be chance (a one-row RMSNorm
  // often rounds two reduction orders to the same bits, where a thousand
  // rows do not). Each class is filed under its smallest signature.
  std::map<std::string, std::vector<std::string>> classes_of(const Group& group) const {
    std::map<std::string, std::vector<int>> seen_as;  // signature -> class per audit, -1 absent
    for (std::size_t i = 0; i < group.audits.size(); ++i)
      for (const auto& [signature, number] : group.audits[i].class_of) {
        if (excluded(signature)) continue;
        std::vector<int>& pattern = seen_as[signature];
        pattern.resize(group.audits.size(), -1);
        pattern[i] = number;
      }
    std::map<std::vector<int>, std::vector<std::string>> by_pattern;
    for (const auto& [signature, pattern] : seen_as) by_pattern[pattern].push_back(signature);
    std::map<std::string, std::vector<std::string>> out;
    for (auto& [pattern, members] : by_pattern) out[members.front()] = std::move(members);
    return out;
  }

  InvariantGroup merge_group(Group& group, InMemoryTable& table) {
    std::vector<std::int64_t> recorded;
    std::map<std::int64_t, std::map<std::string, double>> timings;  // size -> signature -> ms
    for (const auto& [size, key] : group.key_at) {
      recorded.push_back(size);
      timings[size] = aggregated_timings(records_, {arch_, kernel_, key});
    }
    const std::vector<std::string> chosen =
        choose_class(classes_of(group), recorded, timings, group);
    std::vector<std::int64_t> proven;
    for (const KeyAudit& audit : group.audits) {
      // Proven where the chosen class's rows were compared: the audit
      // classed one of its configs.
      const bool classed = std::any_of(chosen.begin(), chosen.end(), [&](const std::string& sig) {
        return audit.class_of.count(sig) > 0;
      });
      if (classed) proven.insert(proven.end(), audit.sizes.begin(), audit.sizes.end());
    }
    std::sort(proven.begin(), proven.end());
    proven.erase(std::unique(proven.begin(), proven.end()), proven.end());
    for (const auto& [size, key] : group.key_at) pin(table, key, chosen, timings[size]);
    return {chosen, proven, recorded};
  }

  // The class with the best geometric mean, over the recorded sizes, of its
  // fastest member's time against the fastest invariant config's there.
  // Only a class with a member timed at every recorded size can pin them
  // all; ties go to the smallest signature.
  std::vector<std::string> choose_class(
      const std::map<std::string, std::vector<std::string>>& classes,
      const std::vector<std::int64_t>& recorded,
      std::map<std::int64_t, std::map<std::string, double>>& timings, const Group& group) {
    std::map<std::int64_t, double> best_at;
    for (std::int64_t size : recorded) {
      double best = kUntimed;
      for (const auto& [root, members] : classes)
        for (const std::string& sig : members) best = std::min(best, time_at(timings[size], sig));
      best_at[size] = best;
    }
    const std::vector<std::string>* chosen = nullptr;
    double chosen_score = kUntimed;
    for (const auto& [root, members] : classes) {
      double log_sum = 0;
      bool everywhere = true;
      for (std::int64_t size : recorded) {
        double fastest = kUntimed;
        for (const std::string& sig : members)
          fastest = std::min(fastest, time_at(timings[size], sig));
        if (fastest == kUntimed) {
          everywhere = false;
          break;
        }
        // A zero timing (a clock too coarse) counts as even with the best.
        log_sum += best_at[size] > 0 ? std::log(fastest / best_at[size]) : 0.0;
      }
      if (!everywhere) continue;
      const double score = log_sum / static_cast<double>(recorded.size());
      if (!chosen || score < chosen_score - 1e-12) {
        chosen = &members;
        chosen_score = score;
      }
    }
    if (!chosen) {
      std::string sizes;
      for (std::int64_t size : recorded)
        sizes += (sizes.empty() ? "" : ", ") + std::to_string(size);
      throw Error("no invariance class of " + kernel_ + " [" +
                  (group.key_at.empty() ? std::string() : group.key_at.begin()->second) +
                  " ...] was timed at every recorded size (" + sizes +
                  "); batch-variant or flagged: " + joined({variant_.begin(), variant_.end()}) +
                  ". Record every size under TUNELOCK_BATCH_INVARIANT=1 with the same configs");
    }
    return *chosen;
  }

  static double time_at(const std::map<std::string, double>& timings, const std::string& sig) {
    const auto it = timings.find(sig);
    return it == timings.end() ? kUntimed : it->second;
  }

  // The class's fastest config at this key, ties to the smallest signature;
  // its equivalents narrowed to the class.
  void pin(InMemoryTable& table, const std::string& key, const std::vector<std::string>& members,
           const std::map<std::string, double>& timings) {
    const std::string* best = nullptr;
    for (const std::string& sig : members)
      if (!best || time_at(timings, sig) < time_at(timings, *best)) best = &sig;
    const std::string where = arch_ + "|" + kernel_ + "|" + key;
    TableEntry entry{config_from_signature(*best, where + ": class config")};
    if (const std::optional<TableEntry> voted = table.entry(kernel_, key)) {
      for (const Config& c : voted->equivalent)
        if (c != entry.config && std::binary_search(members.begin(), members.end(), signature(c)))
          entry.equivalent.push_back(c);
      if (!entry.equivalent.empty()) entry.faster_equivalents = 0;
    }
    table.set(kernel_, key, std::move(entry));
  }

  const std::vector<RecordFile>& records_;
  const std::string& arch_;
  const std::string& kernel_;
  const std::set<std::string>& flagged_;
  std::string dim_, dim_origin_;
  std::set<std::string> variant_;
  std::map<std::string, Group> groups_;
};

}  // namespace

void apply_batch_invariance(const std::vector<RecordFile>& records, const std::string& arch,
                            const std::map<std::string, std::set<std::string>>& flagged,
                            InMemoryTable& table) {
  std::set<std::string> audited, recorded_invariant;
  for (const RecordFile& record : records) {
    for (const auto& [key, candidates] : record.timings) {
      if (key.arch != arch) continue;
      if (record.batch_invariant) recorded_invariant.insert(key.kernel);
      for (const CandidateTiming& c : candidates)
        if (c.rows) audited.insert(key.kernel);
    }
  }
  if (audited.empty() && recorded_invariant.empty()) return;
  static const std::set<std::string> kNone;
  BatchInvariance invariance;
  for (const std::string& kernel : audited) {
    const auto found = flagged.find(kernel);
    invariance[kernel] =
        KernelMerge(records, arch, kernel, found == flagged.end() ? kNone : found->second)
            .merge(table);
  }
  // Recorded under batch invariance with no audit: the kernel declares no
  // batch dim (a reduction over its whole input has no rows to compare).
  for (const std::string& kernel : recorded_invariant)
    invariance.try_emplace(kernel, KernelInvariance{});
  table.set_invariance(std::move(invariance));
}

}  // namespace tunelock
