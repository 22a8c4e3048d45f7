// What the launcher needs from a device: an arch tag, the device's
// provenance, a timer, and buffer operations for tuning hooks. The host
// backend runs C++ functions on the CPU so CI without a GPU exercises the
// whole call path; the CUDA backend does the same with events and kernels.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tunelock/table.hpp"

namespace tunelock::launcher {

// A region of memory a kernel writes: host memory for the host backend,
// device memory for CUDA.
struct BufferRef {
  void* data = nullptr;
  std::size_t bytes = 0;
};

struct NamedBuffer {
  std::string name;
  BufferRef buffer;
};

class Backend {
 public:
  virtual ~Backend() = default;

  // "host", or "sm<major><minor>" for a GPU. Tables are per arch.
  virtual std::string arch() const = 0;

  // The device, for table provenance checks and record sidecars.
  virtual Provenance device() const = 0;

  // Milliseconds of each of `repeats` runs of `launch`, after `warmup`
  // untimed runs. `before` and `after` run around every run, untimed (they
  // reset outputs). Throws whatever `launch` throws.
  virtual std::vector<double> time(const std::function<void()>& before,
                                   const std::function<void()>& launch,
                                   const std::function<void()>& after, int warmup, int repeats) = 0;

  // Buffer operations for reset-to-zero and restore hooks.
  virtual void zero(BufferRef buffer) = 0;
  virtual std::vector<std::byte> save(BufferRef buffer) = 0;
  virtual void restore(BufferRef buffer, const std::vector<std::byte>& saved) = 0;
};

}  // namespace tunelock::launcher
