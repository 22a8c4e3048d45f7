#include "tunelock/launcher/detail/family_core.hpp"

#include <set>

#include "backend_runner.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/launcher/launcher.hpp"
#include "tunelock/model/batch_rows.hpp"
#include "tunelock/runtime/first_call.hpp"

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
  // An audited plan counts every call against its key's entry, so its
  // choices stay out of the lock-free cache.
  if (counts_calls(plan_first_call(*launcher_.runtime().policy(), id_, configs_.size())))
    return decide_audited(values, dtypes, site, slot);
  ChoiceCache& cache = caches_[slot];
  if (const std::size_t hit = cache.find(values, dtypes); hit != ChoiceCache::kNone) return hit;
  last_provisional_ = false;
  const std::size_t index =
      choose(launcher_.backend().arch(slot), tuning_key_text(values, dtypes), site);
  // A provisional answer (consensus inside a graph capture) is asked again.
  if (!last_provisional_) cache.insert(values, dtypes, index);
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

void FamilyCore::set_code_identity(std::string identity) {
  std::lock_guard lock(decide_mutex_);  // first calls read it under this lock
  code_identity_ = std::move(identity);
}

void FamilyCore::set_batch_dim(std::string dim) {
  check_batch_dim_name(dim, "kernel family '" + qualified_ + "': batch_dim");
  std::lock_guard lock(decide_mutex_);
  batch_dim_ = std::move(dim);
}

// The story of one new key is the engine's (first_call.hpp); the family
// only runs what it asks for, on the backend, with this call's site.
std::size_t FamilyCore::choose(const std::string& arch, const std::string& key,
                               const CallSite& site) {
  FirstCallRequest request;
  request.arch = arch;
  request.kernel = id_;
  request.key = key;
  request.candidates = configs_;
  request.nondeterministic_variants = nondeterministic_;
  request.candidates_are = "variants";
  request.identity = code_identity_;
  request.batch_dim = batch_dim_;
  BackendRunner runner(launcher_.backend(), site, launcher_.tuning());
  const FirstCallOutcome outcome = run_first_call(launcher_.runtime(), request, runner);
  last_audit_id_ = outcome.audit_id;
  last_provisional_ = outcome.provisional;
  return outcome.launched;
}

}  // namespace tunelock::launcher
