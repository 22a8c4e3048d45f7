// The type-independent half of a kernel family: its identity, candidate
// configs, and the per-key cache of choices. KernelFamily<Args...> adds the
// typed launch; everything about *which* variant runs lives here.
//
// Internal (detail/): kernel_family.hpp needs it inline for the hot path,
// but it is not part of the API and may change between versions.
#pragma once

#include <array>
#include <atomic>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tunelock/launcher/detail/choice_cache.hpp"
#include "tunelock/launcher/tuner.hpp"
#include "tunelock/model/config.hpp"
#include "tunelock/model/kernel_id.hpp"
#include "tunelock/model/tuning_key.hpp"
#include "tunelock/runtime/runtime.hpp"

namespace tunelock::launcher {

class Launcher;

class FamilyCore {
 public:
  // Throws Error when there are no configs, or when a config repeats.
  // `nondeterministic`: per config, declared to change its own bits (empty:
  // none); the fallback rules never pick such a config.
  FamilyCore(Launcher& launcher, KernelId id, std::vector<std::string> key_args,
             std::vector<Config> configs, std::vector<bool> nondeterministic = {});
  ~FamilyCore();
  FamilyCore(const FamilyCore&) = delete;
  FamilyCore& operator=(const FamilyCore&) = delete;

  const KernelId& id() const { return id_; }
  const std::vector<std::string>& key_args() const { return key_args_; }
  const std::vector<Config>& configs() const { return configs_; }
  Backend& backend() const;

  static constexpr std::size_t kUndecided = ChoiceCache::kNone;

  // Hot path: the variant already chosen for this call's key on the calling
  // thread's arch under the current policy, or kUndecided. A lock-free
  // lookup, inline: every launch runs it.
  std::size_t cached(std::span<const KeyValue> values,
                     std::span<const std::string_view> dtypes) const {
    if (generation_.load(std::memory_order_acquire) != runtime_.generation())
      return kUndecided;  // a new policy: decide again
    return caches_[backend_.arch_slot()].find(values, dtypes);
  }

  // Miss path: decides once per key (other threads wait for the answer),
  // timing through `site` when the policy says to, and caches the result.
  std::size_t decide(std::span<const KeyValue> values, std::span<const std::string_view> dtypes,
                     const CallSite& site);

  // Number of (arch, key) pairs decided under the current policy.
  std::size_t cached_keys() const;

  // The identity of the variants' code, handed to every first call (see
  // KernelFamily::set_code_identity).
  void set_code_identity(std::string identity);

  // The key argument that counts the family's independent rows, handed to
  // every first call (see KernelFamily::Hooks::batch_dim).
  void set_batch_dim(std::string dim);

 private:
  // One new key: the engine's first-call driver, run on the backend.
  std::size_t choose(const std::string& arch, const std::string& key, const CallSite& site);
  // Audit mode's miss path: every call comes here, so each key's calls are counted.
  std::size_t decide_audited(std::span<const KeyValue> values,
                             std::span<const std::string_view> dtypes, const CallSite& site,
                             std::size_t slot);
  std::string tuning_key_text(std::span<const KeyValue> values,
                              std::span<const std::string_view> dtypes) const;

  Launcher& launcher_;
  const Runtime& runtime_;  // launcher_'s, kept here for the inline hot path
  Backend& backend_;        // likewise
  const KernelId id_;
  const std::string qualified_;
  const std::vector<std::string> key_args_;
  const std::vector<Config> configs_;
  std::vector<std::string> nondeterministic_;  // signatures of variants declared racy
  std::string code_identity_;                  // empty: not declared
  std::string batch_dim_;                      // empty: not declared

  // raw key -> variant, per arch slot of the backend
  std::array<ChoiceCache, Backend::kMaxArchSlots> caches_;
  std::atomic<std::uint64_t> generation_;  // runtime generation the cache belongs to
  std::mutex decide_mutex_;                // one decision (and cache write) at a time
  // Audit mode keeps its choices out of caches_ (so every call reaches
  // decide and is counted): raw key -> index into audited_.
  struct AuditedKey {
    std::size_t variant;
    std::optional<std::size_t> audit_id;  // empty when the key was not audited
  };
  std::array<ChoiceCache, Backend::kMaxArchSlots> audited_caches_;
  std::vector<AuditedKey> audited_;
  std::optional<std::size_t> last_audit_id_;  // set by choose for decide_audited
  bool last_provisional_ = false;             // set by choose: not to be cached
};

}  // namespace tunelock::launcher
