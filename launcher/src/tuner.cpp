#include "tunelock/launcher/tuner.hpp"

#include <algorithm>
#include <chrono>

#include "tunelock/error.hpp"
#include "tunelock/log.hpp"

namespace tunelock::launcher {
namespace {

double median(std::vector<double> samples) {
  std::sort(samples.begin(), samples.end());
  const std::size_t n = samples.size();
  return n % 2 ? samples[n / 2] : (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

// Every protected buffer as it was before tuning.
struct Snapshot {
  std::vector<std::pair<BufferRef, std::vector<std::byte>>> saved;

  Snapshot(Backend& backend, const CallSite& site) {
    for (const auto* list : {&site.reset_to_zero, &site.restore})
      for (const NamedBuffer& b : *list) saved.emplace_back(b.buffer, backend.save(b.buffer));
  }
  void put_back(Backend& backend) const {
    for (const auto& [buffer, bytes] : saved) backend.restore(buffer, bytes);
  }
};

}  // namespace

TuningResult tune(Backend& backend, const CallSite& site, std::span<const Config> configs,
                  const TuningOptions& options, const std::string& kernel, const std::string& what,
                  Notices& notices) {
  using Clock = std::chrono::steady_clock;
  const Snapshot snapshot(backend, site);
  const auto before = [&] {
    snapshot.put_back(backend);
    for (const NamedBuffer& b : site.reset_to_zero) backend.zero(b.buffer);
  };
  const auto nothing = [] {};

  TuningResult result;
  std::string last_error;
  const auto start = Clock::now();
  auto last_progress = start;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    try {
      const auto samples = backend.time(
          before, [&] { site.run(i); }, nothing, options.warmup, std::max(options.repeats, 1));
      result.median_ms.push_back(median(samples));
    } catch (const std::exception& e) {
      result.median_ms.push_back(std::nullopt);
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
  snapshot.put_back(backend);  // as before tuning: the real launch follows

  std::optional<std::size_t> best;
  for (std::size_t i = 0; i < configs.size(); ++i) {
    if (result.median_ms[i] && (!best || *result.median_ms[i] < *result.median_ms[*best])) best = i;
  }
  if (!best) {
    throw Error("every candidate of " + what + " failed to run (" + std::to_string(configs.size()) +
                " tried); last error: " + last_error);
  }
  result.best = *best;
  return result;
}

}  // namespace tunelock::launcher
