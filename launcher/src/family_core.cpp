#include "tunelock/launcher/family_core.hpp"

#include <xxhash.h>

#include <cstring>
#include <set>

#include "tunelock/error.hpp"
#include "tunelock/launcher/launcher.hpp"
#include "tunelock/log.hpp"

namespace tunelock::launcher {
namespace {

// The cache key: the call's key values and dtypes as tagged bytes. Cheaper
// than the textual tuning key, which is only built on a miss.
void encode_raw_key(std::string& out, std::span<const KeyValue> values,
                    std::span<const std::string_view> dtypes) {
  out.clear();
  auto append_text = [&](char tag, std::string_view text) {
    const std::uint32_t size = static_cast<std::uint32_t>(text.size());
    out += tag;
    out.append(reinterpret_cast<const char*>(&size), sizeof size);
    out.append(text);
  };
  for (const KeyValue& value : values) {
    if (const auto* number = std::get_if<std::int64_t>(&value)) {
      out += 'i';
      out.append(reinterpret_cast<const char*>(number), sizeof *number);
    } else if (const auto* flag = std::get_if<bool>(&value)) {
      out += *flag ? 'T' : 'F';
    } else {
      append_text('s', std::get<std::string_view>(value));
    }
  }
  for (std::string_view dtype : dtypes) append_text('d', dtype);
}

}  // namespace

std::size_t FamilyCore::Hash::operator()(std::string_view s) const {
  return static_cast<std::size_t>(XXH3_64bits(s.data(), s.size()));
}

FamilyCore::FamilyCore(Launcher& launcher, KernelId id, std::vector<std::string> key_args,
                       std::vector<Config> configs)
    : launcher_(launcher),
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
  launcher_.add(this);
}

FamilyCore::~FamilyCore() { launcher_.remove(this); }

std::optional<std::size_t> FamilyCore::cached(std::span<const KeyValue> values,
                                              std::span<const std::string_view> dtypes) const {
  if (generation_.load(std::memory_order_acquire) != launcher_.runtime().generation())
    return std::nullopt;  // a new policy: decide again
  thread_local std::string raw;
  encode_raw_key(raw, values, dtypes);
  std::shared_lock lock(cache_mutex_);
  auto it = cache_.find(std::string_view(raw));
  if (it == cache_.end()) return std::nullopt;
  return it->second;
}

std::size_t FamilyCore::cached_keys() const {
  std::shared_lock lock(cache_mutex_);
  return cache_.size();
}

std::string FamilyCore::tuning_key_text(std::span<const KeyValue> values,
                                        std::span<const std::string_view> dtypes) const {
  if (values.size() != key_args_.size()) {
    throw Error("kernel '" + qualified_ + "' declares " + std::to_string(key_args_.size()) +
                " key argument(s) but a call passed " + std::to_string(values.size()) + " value(s)");
  }
  std::vector<KeyArg> args;
  for (std::size_t i = 0; i < values.size(); ++i) args.push_back(KeyArg{key_args_[i], values[i]});
  return tuning_key(args, dtypes);
}

std::size_t FamilyCore::decide(std::span<const KeyValue> values,
                               std::span<const std::string_view> dtypes, const CallSite& site) {
  std::lock_guard decide_lock(decide_mutex_);
  const std::uint64_t generation = launcher_.runtime().generation();
  std::string raw;
  encode_raw_key(raw, values, dtypes);
  {
    std::unique_lock lock(cache_mutex_);
    if (generation_.load(std::memory_order_relaxed) != generation) {
      cache_.clear();  // choices belong to the policy they were made under
      generation_.store(generation, std::memory_order_release);
    }
    if (auto it = cache_.find(std::string_view(raw)); it != cache_.end()) return it->second;
  }
  const std::size_t index = choose(tuning_key_text(values, dtypes), site);
  std::unique_lock lock(cache_mutex_);
  cache_.emplace(std::move(raw), index);
  return index;
}

// The story of one new key, as Megatron's interception tells it:
// single variant -> nothing to choose; in scope and pinned -> the rules,
// never timed; otherwise -> timed, logged when observed, recorded in record
// mode.
std::size_t FamilyCore::choose(const std::string& key, const CallSite& site) {
  Runtime& runtime = launcher_.runtime();
  const auto policy = runtime.policy();
  const Mode mode = policy->effective_mode();
  const bool observed = policy->observes(id_);
  const ChoiceOrigin origin = mode == Mode::pinned ? ChoiceOrigin::pinned : ChoiceOrigin::timed;

  if (configs_.size() == 1) {
    if (observed && policy->intercepts())
      runtime.log_choice(launcher_.arch(), id_, kWildcardKey, configs_[0], origin);
    return 0;
  }
  if (policy->enumerate) enumerate_once(!observed ? "UNPINNED" : mode == Mode::pinned ? "PINNED" : "TIMED");

  if (observed && mode == Mode::pinned)
    return runtime.pinned_choice(launcher_.arch(), id_, key, configs_).index;

  const std::string what = qualified_ + " [" + key + "]";
  const TuningResult tuned =
      tune(launcher_.backend(), site, configs_, launcher_.tuning(), what, process_notices());
  if (observed && policy->intercepts())
    runtime.log_choice(launcher_.arch(), id_, key, configs_[tuned.best], ChoiceOrigin::timed);
  if (observed && mode == Mode::record) {
    std::vector<CandidateTiming> timings;
    for (std::size_t i = 0; i < configs_.size(); ++i) timings.push_back({configs_[i], tuned.median_ms[i]});
    runtime.records().add(launcher_.arch(), qualified_, key, configs_[tuned.best], std::move(timings));
  }
  return tuned.best;
}

void FamilyCore::enumerate_once(std::string_view state) {
  if (!process_notices().first("enumerate|" + qualified_)) return;
  logger().info("{} {} ({} variants)", state, qualified_, configs_.size());
}

}  // namespace tunelock::launcher
