#include "tunelock/launcher/tuner.hpp"

#include <algorithm>
#include <chrono>
#include <initializer_list>

#include "tunelock/error.hpp"
#include "tunelock/log.hpp"
#include "tunelock/median.hpp"

namespace tunelock::launcher {
namespace {

// Buffers as they were when saved; put_back restores them. One type for
// every "as before" the tuner needs: the protected outputs around timing,
// every audited buffer around a bits check, the inputs around a second input.
struct Snapshot {
  std::vector<std::pair<BufferRef, std::vector<std::byte>>> saved;

  Snapshot(Backend& backend, std::initializer_list<const std::vector<NamedBuffer>*> lists) {
    for (const auto* list : lists)
      for (const NamedBuffer& b : *list) saved.emplace_back(b.buffer, backend.save(b.buffer));
  }
  void put_back(Backend& backend) const {
    for (const auto& [buffer, bytes] : saved) backend.restore(buffer, bytes);
  }
  // Runs `body`, then puts the buffers back, also when it throws.
  template <typename Body>
  auto around(Backend& backend, Body&& body) const {
    try {
      auto result = body();
      put_back(backend);
      return result;
    } catch (...) {
      put_back(backend);
      throw;
    }
  }
};

// The buffers a candidate writes, as far as the call declared them.
std::vector<BufferRef> audited_buffers(const CallSite& site) {
  std::vector<BufferRef> out;
  for (const auto* list : {&site.reset_to_zero, &site.restore, &site.outputs})
    for (const NamedBuffer& b : *list) out.push_back(b.buffer);
  return out;
}

using Bits = std::vector<std::vector<std::byte>>;  // every audited buffer, in order

// One run of candidate `i` from the inputs `before` puts back; its outputs.
Bits run_and_save(Backend& backend, const CallSite& site, std::size_t i,
                  const std::function<void()>& before) {
  before();
  site.run(i);
  Bits bits;
  for (const BufferRef& b : audited_buffers(site)) bits.push_back(backend.save(b));
  return bits;
}

// Two runs of candidate `i` from identical inputs (`before` puts them
// back): the first run's outputs, or nullopt when any bit differs.
std::optional<Bits> repeated_bits(Backend& backend, const CallSite& site, std::size_t i,
                                  const std::function<void()>& before) {
  Bits first = run_and_save(backend, site, i, before);
  if (run_and_save(backend, site, i, before) != first) return std::nullopt;
  return first;
}

// Numbers candidates by their bits: the same number, the same outputs on
// every input compared. `bits[i]` empty: not classed.
std::vector<std::optional<int>> number_classes(const std::vector<std::optional<Bits>>& bits) {
  std::vector<std::optional<int>> out(bits.size());
  int next = 0;
  for (std::size_t i = 0; i < bits.size(); ++i) {
    if (!bits[i]) continue;
    for (std::size_t j = 0; j < i && !out[i]; ++j)
      if (out[j] && *bits[j] == *bits[i]) out[i] = out[j];
    if (!out[i]) out[i] = next++;
  }
  return out;
}

// The repeating candidates' outputs from the call's second input, appended
// to what they gave on its own: the call's inputs are put back after.
void add_second_input(Backend& backend, const CallSite& site, const std::function<void()>& before,
                      std::vector<std::optional<Bits>>& bits) {
  if (!site.second_input) return;
  const Snapshot inputs(backend, {&site.inputs});
  inputs.around(backend, [&] {
    site.second_input();
    for (std::size_t i = 0; i < bits.size(); ++i) {
      if (!bits[i]) continue;
      Bits second = run_and_save(backend, site, i, before);
      bits[i]->insert(bits[i]->end(), second.begin(), second.end());
    }
    return true;
  });
}

// The fastest candidate that ran; with an audit, the fastest that also
// repeated its bits, when one did.
std::optional<std::size_t> fastest(const TuningResult& result, bool audit) {
  std::optional<std::size_t> best;
  for (int pass = audit ? 0 : 1; pass < 2 && !best; ++pass) {
    for (std::size_t i = 0; i < result.median_ms.size(); ++i) {
      if (!result.median_ms[i] || (pass == 0 && result.nondeterministic[i])) continue;
      if (!best || *result.median_ms[i] < *result.median_ms[*best]) best = i;
    }
  }
  return best;
}

}  // namespace

std::optional<bool> repeats_its_bits(Backend& backend, const CallSite& site, std::size_t index) {
  if (audited_buffers(site).empty()) return std::nullopt;
  backend.synchronize();  // the call's inputs may still be in flight on the caller's stream
  const Snapshot snapshot(backend, {&site.reset_to_zero, &site.restore, &site.outputs});
  const std::function<void()> before = [&] {
    snapshot.put_back(backend);
    for (const NamedBuffer& b : site.reset_to_zero) backend.zero(b.buffer);
  };
  // The real launch follows on the call's own inputs, whatever happened here.
  return snapshot.around(backend,
                         [&] { return repeated_bits(backend, site, index, before).has_value(); });
}

TuningResult tune(Backend& backend, const CallSite& site, std::span<const Config> configs,
                  const TuningOptions& options, const std::string& kernel, const std::string& what,
                  Notices& notices, bool audit) {
  using Clock = std::chrono::steady_clock;
  const Snapshot snapshot(backend, {&site.reset_to_zero, &site.restore});
  const std::function<void()> before = [&] {
    snapshot.put_back(backend);
    for (const NamedBuffer& b : site.reset_to_zero) backend.zero(b.buffer);
  };
  const auto nothing = [] {};
  if (audit && audited_buffers(site).empty() && notices.first("unaudited|" + kernel)) {
    logger().warn(
        "{} declares no output buffers (reset_to_zero, restore or outputs hooks): the "
        "record-mode audit cannot compare its candidates' bits",
        kernel);
  }

  TuningResult result;
  result.nondeterministic.assign(configs.size(), false);
  std::vector<std::optional<Bits>> bits(configs.size());  // audited: each repeating candidate's
  std::string last_error;
  const auto start = Clock::now();
  auto last_progress = start;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    try {
      const auto samples = backend.time(
          before, [&] { site.run(i); }, nothing, options.warmup, std::max(options.repeats, 1));
      result.median_ms.push_back(median(samples));
      if (audit && !audited_buffers(site).empty() &&
          !(bits[i] = repeated_bits(backend, site, i, before))) {
        result.nondeterministic[i] = true;
        if (notices.first("nondeterministic|" + kernel + "|" + signature(configs[i]))) {
          logger().warn(
              "candidate {} ({}) of {} gave different bits in two runs on identical "
              "inputs: flagged as nondeterministic, never pinned",
              i, signature(configs[i]), what);
        }
      }
    } catch (const std::exception& e) {
      if (result.median_ms.size() == i) result.median_ms.push_back(std::nullopt);
      result.median_ms[i] = std::nullopt;
      last_error = e.what();
      if (notices.first("failed|" + kernel + "|" + signature(configs[i]))) {
        logger().warn("candidate {} ({}) of {} failed: {}; timed as infinite", i,
                      signature(configs[i]), what, e.what());
      }
    }
    const auto now = Clock::now();
    if (now - last_progress > std::chrono::seconds(2)) {  // long tuning: show it is alive
      logger().info("tuning {}: {}/{} candidates, {:.1f} s", what, i + 1, configs.size(),
                    std::chrono::duration<double>(now - start).count());
      last_progress = now;
    }
  }
  if (audit) {
    add_second_input(backend, site, before, bits);
    result.bit_class = number_classes(bits);
  }
  snapshot.put_back(backend);  // as before tuning: the real launch follows

  const std::optional<std::size_t> best = fastest(result, audit);
  if (!best) {
    throw Error("every candidate of " + what + " failed to run (" + std::to_string(configs.size()) +
                " tried); last error: " + last_error);
  }
  result.best = *best;
  return result;
}

}  // namespace tunelock::launcher
