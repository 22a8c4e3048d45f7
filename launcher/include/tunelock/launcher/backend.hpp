// What the launcher needs from a device: an arch tag, the device's
// provenance, a timer, and buffer operations for tuning hooks. The host
// backend runs C++ functions on the CPU so CI without a GPU exercises the
// whole call path; the CUDA backend does the same with events and kernels.
// Streams are opaque handles here (a CUDA stream to the CUDA backend): the
// launcher never needs to know what a stream is, only which one to time on.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "tunelock/tables/table.hpp"

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

  // Tables are per arch, and one process may drive GPUs of two archs. Each
  // arch the backend can launch on gets a small slot number; the launcher
  // keeps one choice cache per slot. The host backend has one slot.
  static constexpr std::size_t kMaxArchSlots = 4;

  // The slot of the device the calling thread launches on (its current
  // device). On the hot path: must be cheap. REQUIRES: < kMaxArchSlots.
  virtual std::size_t arch_slot() const { return 0; }

  // "host", or "sm<major><minor>" for the GPUs of `slot`.
  virtual std::string arch(std::size_t slot) const = 0;
  std::string current_arch() const { return arch(arch_slot()); }

  // The device, for table provenance checks and timing sidecars.
  virtual Provenance device() const = 0;

  // Milliseconds of each of `repeats` runs of `launch`, after `warmup`
  // untimed runs. `before` and `after` run around every run, untimed (they
  // reset outputs). Throws whatever `launch` throws.
  virtual std::vector<double> time(const std::function<void()>& before,
                                   const std::function<void()>& launch,
                                   const std::function<void()>& after, int warmup, int repeats) = 0;

  // The stream timing runs go to, so tuning never queues work on the
  // caller's stream; null for backends without streams.
  virtual void* timing_stream() { return nullptr; }

  // Whether `stream` is being captured into a CUDA graph: a first call
  // there must not be timed (nothing runs during capture).
  virtual bool capturing(void* stream) const {
    (void)stream;
    return false;
  }

  // Waits until work already queued on the device (any stream) is done, so
  // a check outside timing reads a call's inputs only once they are ready.
  virtual void synchronize() {}

  // Buffer operations for reset-to-zero and restore hooks, and for the
  // record-mode audit that compares a candidate's outputs across two runs.
  virtual void zero(BufferRef buffer) = 0;
  virtual std::vector<std::byte> save(BufferRef buffer) = 0;
  virtual void restore(BufferRef buffer, const std::vector<std::byte>& saved) = 0;
};

}  // namespace tunelock::launcher
