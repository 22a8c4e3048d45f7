#include "tunelock/launcher/host_backend.hpp"

#include <chrono>
#include <cstring>
#include <thread>

#include "tunelock/base/error.hpp"
#include "tunelock/base/version.hpp"

namespace tunelock::launcher {

Provenance HostBackend::device() const {
  Provenance device;
  device.device_name = "host CPU";
  device.sm_count = std::thread::hardware_concurrency();  // cores stand in for SMs
  device.tool_version = std::string(tool_version());
  return device;
}

std::vector<double> HostBackend::time(const std::function<void()>& before,
                                      const std::function<void()>& launch,
                                      const std::function<void()>& after, int warmup, int repeats) {
  using Clock = std::chrono::steady_clock;
  for (int i = 0; i < warmup; ++i) {
    before();
    launch();
    after();
  }
  std::vector<double> samples;
  samples.reserve(static_cast<std::size_t>(repeats));
  for (int i = 0; i < repeats; ++i) {
    before();
    const auto start = Clock::now();
    launch();
    samples.push_back(std::chrono::duration<double, std::milli>(Clock::now() - start).count());
    after();
  }
  return samples;
}

void HostBackend::zero(BufferRef buffer) { std::memset(buffer.data, 0, buffer.bytes); }

std::vector<std::byte> HostBackend::save(BufferRef buffer) {
  const auto* begin = static_cast<const std::byte*>(buffer.data);
  return std::vector<std::byte>(begin, begin + buffer.bytes);
}

void HostBackend::restore(BufferRef buffer, const std::vector<std::byte>& saved) {
  if (saved.size() != buffer.bytes) throw Error("restore: buffer size changed during tuning");
  std::memcpy(buffer.data, saved.data(), saved.size());
}

}  // namespace tunelock::launcher
