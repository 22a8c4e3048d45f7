#include "tunelock/launcher/detail/family_core.hpp"

#include <algorithm>
#include <set>

#include "tunelock/call_plan.hpp"
#include "tunelock/error.hpp"
#include "tunelock/launcher/launcher.hpp"
#include "tunelock/log.hpp"

namespace tunelock::launcher {

FamilyCore::FamilyCore(Launcher& launcher, KernelId id, std::vector<std::string> key_args,
                       std::vector<Config> configs, std::vector<bool> nondeterministic)
    : launcher_(launcher),
      runtime_(launcher.runtime()),
      backend_(launcher.backend()),
      id_(std::move(id)),
      qualified_(id_.qualified()),
      key_args_(std::move(key_args)),
      configs_(std::move(configs)),
      generation_(launcher.runtime().generation()) {
  if (configs_.empty()) throw Error("kernel family '" + qualified_ + "' has no variants");
  std::set<std::string> signatures;
  for (const Config& c : configs_) {
    if (!signatures.insert(signature(c)).second)
      throw Error("kernel family '" + qualified_ + "' lists config " + signature(c) + " twice");
  }
  for (std::size_t i = 0; i < nondeterministic.size() && i < configs_.size(); ++i)
    if (nondeterministic[i]) nondeterministic_.push_back(signature(configs_[i]));
  launcher_.add(this);
}

FamilyCore::~FamilyCore() { launcher_.remove(this); }

Backend& FamilyCore::backend() const { return launcher_.backend(); }

std::size_t FamilyCore::cached_keys() const {
  std::size_t count = 0;
  for (const ChoiceCache& cache : caches_) count += cache.size();
  return count;
}

std::string FamilyCore::tuning_key_text(std::span<const KeyValue> values,
                                        std::span<const std::string_view> dtypes) const {
  if (values.size() != key_args_.size()) {
    throw Error("kernel '" + qualified_ + "' declares " + std::to_string(key_args_.size()) +
                " key argument(s) but a call passed " + std::to_string(values.size()) +
                " value(s)");
  }
  std::vector<KeyArg> args;
  for (std::size_t i = 0; i < values.size(); ++i) args.push_back(KeyArg{key_args_[i], values[i]});
  return tuning_key(args, dtypes);
}

std::size_t FamilyCore::decide(std::span<const KeyValue> values,
                               std::span<const std::string_view> dtypes, const CallSite& site) {
  std::lock_guard decide_lock(decide_mutex_);
  const std::uint64_t generation = launcher_.runtime().generation();
  if (generation_.load(std::memory_order_relaxed) != generation) {
    // Choices belong to the policy they were made under. A launch racing
    // with a policy change may still use the old choice once; install a
    // policy at start-up, before kernels run.
    for (ChoiceCache& cache : caches_) cache.clear();
    for (ChoiceCache& cache : audited_caches_) cache.clear();
    audited_.clear();
    generation_.store(generation, std::memory_order_release);
  }
  const std::size_t slot = launcher_.backend().arch_slot();
  if (launcher_.runtime().policy()->effective_mode() == Mode::audit)
    return decide_audited(values, dtypes, site, slot);
  ChoiceCache& cache = caches_[slot];
  if (const std::size_t hit = cache.find(values, dtypes); hit != ChoiceCache::kNone) return hit;
  const std::size_t index =
      choose(launcher_.backend().arch(slot), tuning_key_text(values, dtypes), site);
  cache.insert(values, dtypes, index);
  return index;
}

std::size_t FamilyCore::decide_audited(std::span<const KeyValue> values,
                                       std::span<const std::string_view> dtypes,
                                       const CallSite& site, std::size_t slot) {
  ChoiceCache& cache = audited_caches_[slot];
  std::size_t at = cache.find(values, dtypes);
  if (at == ChoiceCache::kNone) {
    last_audit_id_.reset();
    const std::size_t variant =
        choose(launcher_.backend().arch(slot), tuning_key_text(values, dtypes), site);
    at = audited_.size();
    audited_.push_back({variant, last_audit_id_});
    cache.insert(values, dtypes, at);
  }
  if (audited_[at].audit_id) launcher_.runtime().count_audited_call(*audited_[at].audit_id);
  return audited_[at].variant;
}

// The story of one new key, as the engine's call plan tells it
// (call_plan.hpp): single variant -> nothing to choose; pinned -> the
// rules, never timed, then the pinned config's bits checked once (audit:
// then every candidate timed); otherwise -> timed (never inside a graph
// capture), logged when observed, recorded and audited in record mode.
std::size_t FamilyCore::choose(const std::string& arch, const std::string& key,
                               const CallSite& site) {
  Runtime& runtime = launcher_.runtime();
  const auto policy = runtime.policy();
  const FirstCall plan = plan_first_call(*policy, id_, configs_.size());
  const ChoiceOrigin origin = policy->pins() ? ChoiceOrigin::pinned : ChoiceOrigin::timed;

  if (plan == FirstCall::single_logged)
    runtime.log_choice(arch, id_, kWildcardKey, configs_[0], origin);
  if (plan == FirstCall::single || plan == FirstCall::single_logged) return 0;
  if (policy->enumerate) enumerate_once(enumerate_state(plan));

  if (plan == FirstCall::pinned || plan == FirstCall::audited)
    return choose_pinned(arch, key, site, *policy, plan == FirstCall::audited);

  const Mode mode = policy->effective_mode();
  if (site.capturing) {
    throw Error("kernel family '" + qualified_ + "' [" + key + "] on " + arch +
                ": its first call for this key is inside a CUDA graph capture, and the " +
                std::string(to_string(mode)) +
                " policy would time its candidates, which cannot run during a capture; warm up "
                "(call it once for this key) before capturing, or capture under pinned");
  }
  return choose_timed(arch, key, site, plan != FirstCall::untouched,
                      plan == FirstCall::timed_recorded);
}

// The rules' choice, then, once per key, its bits: two runs on identical
// inputs compared. The check only reports; it never changes the choice,
// since a rank's own observation must not split the ranks. Nothing runs
// inside a graph capture, so a captured first call goes unchecked.
std::size_t FamilyCore::choose_pinned(const std::string& arch, const std::string& key,
                                      const CallSite& site, const Policy& policy, bool audited) {
  Runtime& runtime = launcher_.runtime();
  const Choice choice =
      runtime.pinned_choice(arch, id_, key, configs_, /*log=*/true, nondeterministic_);
  std::size_t launched = choice.index;
  std::optional<bool> repeats;
  std::vector<std::size_t> members;
  if (policy.equivalent == Equivalent::timed && !policy.chaos && !site.capturing)
    members = runtime.equivalent_candidates(arch, id_, key, configs_, choice);
  if (!members.empty()) {
    launched = fastest_equivalent(key, site, policy, choice.index, members);
  } else if (policy.check_bits && !site.capturing) {
    repeats = repeats_its_bits(launcher_.backend(), site, choice.index);
    runtime.note_bits_check(id_, key, configs_[choice.index], repeats);
  }
  // The audit only watches: what launches is what plain pinned launches.
  if (audited && !site.capturing)
    last_audit_id_ = audit_key(arch, key, site, choice, launched, repeats);
  return launched;
}

std::size_t FamilyCore::audit_key(const std::string& arch, const std::string& key,
                                  const CallSite& site, const Choice& choice, std::size_t launched,
                                  std::optional<bool> repeats) {
  // Timed as record mode times (outputs put back), with its bits audit:
  // two runs per candidate, then bit classes. The engine files the result.
  const TuningResult tuned =
      tune(launcher_.backend(), site, configs_, launcher_.tuning(), qualified_,
           qualified_ + " [" + key + "]", launcher_.runtime().notices(), /*audit=*/true);
  std::vector<CandidateTiming> timings;
  for (std::size_t i = 0; i < configs_.size(); ++i)
    timings.push_back({signature(configs_[i]), tuned.median_ms[i], tuned.nondeterministic[i],
                       i < tuned.bit_class.size() ? tuned.bit_class[i] : std::nullopt});
  return launcher_.runtime().audit_key(arch, id_, key, configs_, choice, launched, timings,
                                       repeats);
}

// TUNELOCK_EQUIVALENT=timed: the entry's config and its equivalents (same
// bits by the record's audit) timed as `auto` times, the fastest launched
// from then on. The log already names the entry's config, so digests and
// verification are those of plain pinned. A member that fails to run (timed
// as infinite) or fails the bits check is dropped; the entry's own config
// is the last resort, checked as plain pinned checks it.
std::size_t FamilyCore::fastest_equivalent(const std::string& key, const CallSite& site,
                                           const Policy& policy, std::size_t entry,
                                           const std::vector<std::size_t>& members) {
  std::vector<std::size_t> order{entry};
  order.insert(order.end(), members.begin(), members.end());
  std::vector<Config> subset;
  for (std::size_t i : order) subset.push_back(configs_[i]);
  CallSite timed = site;
  timed.run = [&site, &order](std::size_t j) { site.run(order[j]); };
  const TuningResult tuned =
      tune(launcher_.backend(), timed, subset, launcher_.tuning(), qualified_,
           qualified_ + " [" + key + "]", launcher_.runtime().notices());
  std::vector<std::size_t> by_time;  // positions in `order`, fastest first, failures left out
  for (std::size_t j = 0; j < order.size(); ++j)
    if (tuned.median_ms[j]) by_time.push_back(j);
  std::stable_sort(by_time.begin(), by_time.end(), [&](std::size_t a, std::size_t b) {
    return *tuned.median_ms[a] < *tuned.median_ms[b];
  });
  for (std::size_t j : by_time) {
    const std::size_t index = order[j];
    if (index == entry) break;  // the entry itself: checked below as plain pinned
    if (!policy.check_bits || repeats_its_bits(launcher_.backend(), site, index) != false)
      return index;
    if (launcher_.runtime().notices().first("equivalent-dropped|" + qualified_ + "|" +
                                            signature(configs_[index]))) {
      logger().warn(
          "equivalent config {} of {} [{}] gave different bits in two runs: dropped, "
          "never launched in place of the entry's config",
          signature(configs_[index]), qualified_, key);
    }
  }
  if (policy.check_bits)
    launcher_.runtime().note_bits_check(id_, key, configs_[entry],
                                        repeats_its_bits(launcher_.backend(), site, entry));
  return entry;
}

std::size_t FamilyCore::choose_timed(const std::string& arch, const std::string& key,
                                     const CallSite& site, bool logged, bool recorded) {
  Runtime& runtime = launcher_.runtime();
  const std::string what = qualified_ + " [" + key + "]";
  const TuningResult tuned = tune(launcher_.backend(), site, configs_, launcher_.tuning(),
                                  qualified_, what, runtime.notices(), /*audit=*/recorded);
  if (logged) runtime.log_choice(arch, id_, key, configs_[tuned.best], ChoiceOrigin::timed);
  if (recorded) {
    std::vector<CandidateTiming> timings;
    for (std::size_t i = 0; i < configs_.size(); ++i)
      timings.push_back({signature(configs_[i]), tuned.median_ms[i], tuned.nondeterministic[i],
                         i < tuned.bit_class.size() ? tuned.bit_class[i] : std::nullopt});
    runtime.record(arch, qualified_, key, configs_[tuned.best], std::move(timings));
  }
  return tuned.best;
}

void FamilyCore::enumerate_once(std::string_view state) {
  if (!launcher_.runtime().notices().first("enumerate|" + qualified_)) return;
  logger().info("{} {} ({} variants)", state, qualified_, configs_.size());
}

}  // namespace tunelock::launcher
