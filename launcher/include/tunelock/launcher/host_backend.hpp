// The host backend: variants are C++ functions, timed with a steady clock,
// arch tag `host`. Record -> merge -> pin works on any CPU.
#pragma once

#include "tunelock/launcher/backend.hpp"

namespace tunelock::launcher {

class HostBackend final : public Backend {
 public:
  std::string arch(std::size_t) const override { return "host"; }
  Provenance device() const override;
  std::vector<double> time(const std::function<void()>& before, const std::function<void()>& launch,
                           const std::function<void()>& after, int warmup, int repeats) override;
  void zero(BufferRef buffer) override;
  std::vector<std::byte> save(BufferRef buffer) override;
  void restore(BufferRef buffer, const std::vector<std::byte>& saved) override;
};

}  // namespace tunelock::launcher
