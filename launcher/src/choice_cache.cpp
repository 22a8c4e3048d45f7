#include "tunelock/launcher/detail/choice_cache.hpp"

// Inlined: hashing a short key is a few instructions, a library call is more.
#ifndef XXH_INLINE_ALL
#define XXH_INLINE_ALL
#endif
#include <xxhash.h>

namespace tunelock::launcher {
namespace {

// A call's key hashed from its values in place, each item seeded with the
// hash so far and its kind, rather than hashing the RawKey's bytes: those
// were just written, and reading them back as words stalls. Collisions
// only cost a comparison; RawKey::same_key decides.
std::uint64_t key_hash(std::span<const KeyValue> values, std::span<const std::string_view> dtypes) {
  std::uint64_t hash = 0;
  for (const KeyValue& value : values) {
    if (const auto* number = std::get_if<std::int64_t>(&value))
      hash = XXH3_64bits_withSeed(number, sizeof *number, hash + 'i');
    else if (const auto* flag = std::get_if<bool>(&value))
      hash = XXH3_64bits_withSeed(nullptr, 0, hash + (*flag ? 'T' : 'F'));
    else
      hash = XXH3_64bits_withSeed(std::get<std::string_view>(value).data(),
                                  std::get<std::string_view>(value).size(), hash + 's');
  }
  for (std::string_view dtype : dtypes)
    hash = XXH3_64bits_withSeed(dtype.data(), dtype.size(), hash + 'd');
  return hash;
}

}  // namespace

ChoiceCache::Slots::Slots(std::size_t capacity)
    : mask(capacity - 1), slots(new std::atomic<const Entry*>[capacity]) {
  for (std::size_t i = 0; i < capacity; ++i) slots[i].store(nullptr, std::memory_order_relaxed);
}

ChoiceCache::ChoiceCache() {
  tables_.push_back(std::make_unique<Slots>(16));
  current_.store(tables_.back().get(), std::memory_order_release);
}

ChoiceCache::~ChoiceCache() = default;

std::size_t ChoiceCache::find_hashed(std::span<const KeyValue> values,
                                     std::span<const std::string_view> dtypes) const {
  const std::uint64_t hash = key_hash(values, dtypes);
  const Slots* table = current_.load(std::memory_order_acquire);
  for (std::size_t i = hash & table->mask;; i = (i + 1) & table->mask) {
    const Entry* entry = table->slots[i].load(std::memory_order_acquire);
    if (!entry) return kNone;
    if (entry->hash == hash && RawKey::same_key(entry->raw, values, dtypes)) {
      last_hit_.store(entry, std::memory_order_release);
      return entry->variant;
    }
  }
}

void ChoiceCache::place(Slots& table, const Entry* entry) {
  std::size_t i = entry->hash & table.mask;
  while (table.slots[i].load(std::memory_order_relaxed)) i = (i + 1) & table.mask;
  table.slots[i].store(entry, std::memory_order_release);
}

void ChoiceCache::insert(std::span<const KeyValue> values, std::span<const std::string_view> dtypes,
                         std::size_t variant) {
  entries_.push_back(std::make_unique<Entry>(Entry{std::string(RawKey(values, dtypes).bytes()),
                                                   key_hash(values, dtypes), variant,
                                                   epoch_.load(std::memory_order_relaxed)}));
  const Entry* entry = entries_.back().get();
  const Slots* table = current_.load(std::memory_order_relaxed);
  const std::size_t count = count_.load(std::memory_order_relaxed) + 1;
  if (count * 2 > table->mask + 1) {  // keep the load under one half: probes stay short
    auto grown = std::make_unique<Slots>((table->mask + 1) * 2);
    for (std::size_t i = 0; i <= table->mask; ++i)
      if (const Entry* old = table->slots[i].load(std::memory_order_relaxed)) place(*grown, old);
    place(*grown, entry);
    current_.store(grown.get(), std::memory_order_release);
    tables_.push_back(std::move(grown));
  } else {
    place(*tables_.back(), entry);
  }
  count_.store(count, std::memory_order_relaxed);
}

void ChoiceCache::clear() {
  epoch_.fetch_add(1, std::memory_order_acq_rel);  // the last hit belongs to the old policy
  last_hit_.store(nullptr, std::memory_order_release);
  tables_.push_back(std::make_unique<Slots>(16));
  current_.store(tables_.back().get(), std::memory_order_release);
  count_.store(0, std::memory_order_relaxed);
}

}  // namespace tunelock::launcher
