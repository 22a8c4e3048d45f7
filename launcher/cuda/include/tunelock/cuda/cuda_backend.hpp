// The CUDA backend: kernel families run on NVIDIA GPUs under the policy.
// Arch tags are `sm<major><minor>` of the device a call launches on (the
// calling thread's current device), so a process that drives two GPU types
// keeps a choice cache and a table per type. Timing runs go to a private
// stream per device, measured with CUDA events, with the L2 cache flushed
// before every timed repeat; real calls launch on the caller's stream.
//
// This library is the only code of the project that includes CUDA headers.
#pragma once

#include <cuda_runtime_api.h>

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "tunelock/base/environment.hpp"
#include "tunelock/launcher/backend.hpp"

namespace tunelock::cuda {

// Why this process cannot use a GPU ("cudaGetDeviceCount: cudaErrorNoDevice:
// no CUDA-capable device is detected"), or nullopt when it can.
std::optional<std::string> unavailable_reason();

// One device per rank on a host: makes device (local rank mod device count)
// current for the calling thread and returns it. The local rank comes from
// LOCAL_RANK (torchrun, tunelock launch), OMPI_COMM_WORLD_LOCAL_RANK or
// SLURM_LOCALID, 0 when none is set. Throws Error naming a bad variable, or
// the CUDA error when there is no usable GPU.
int use_local_rank_device(const Environment& env);

class CudaBackend final : public launcher::Backend {
 public:
  // Sees every device of the process; creates nothing on them until a
  // timing run needs its stream. Throws Error naming the CUDA error when
  // there is no usable GPU (the host backend still works then).
  CudaBackend();
  ~CudaBackend() override;
  CudaBackend(const CudaBackend&) = delete;
  CudaBackend& operator=(const CudaBackend&) = delete;

  std::size_t arch_slot() const override;
  std::string arch(std::size_t slot) const override;

  // The current device: name, SM count, driver and runtime versions.
  Provenance device() const override;

  // Synchronises the device first (inputs may come from any stream; tuning
  // is rare and never runs inside a graph capture), then times `launch` on
  // the private stream. A launch error (too much shared memory, a bad grid)
  // is thrown, so the tuner counts that candidate as infinitely slow.
  std::vector<double> time(const std::function<void()>& before, const std::function<void()>& launch,
                           const std::function<void()>& after, int warmup, int repeats) override;
  void* timing_stream() override;
  bool capturing(void* stream) const override;

  // Device (or any UVA) memory; on the private stream, complete on return.
  void synchronize() override;
  void zero(launcher::BufferRef buffer) override;
  std::vector<std::byte> save(launcher::BufferRef buffer) override;
  void restore(launcher::BufferRef buffer, const std::vector<std::byte>& saved) override;

  int device_count() const { return static_cast<int>(devices_.size()); }

 private:
  // What timing needs on one device, made on first use.
  struct Timing {
    cudaStream_t stream = nullptr;
    cudaEvent_t start = nullptr, stop = nullptr;
    void* flush = nullptr;  // larger than L2: a memset of it evicts the cache
    std::size_t flush_bytes = 0;
  };
  struct Device {
    std::size_t slot = 0;
    Provenance provenance;
    std::size_t l2_bytes = 0;
    std::unique_ptr<Timing> timing;
  };

  int current_device() const;
  Timing& timing_for(int device);

  std::vector<Device> devices_;
  std::vector<std::string> slot_archs_;  // slot -> "sm90"
  std::mutex timing_mutex_;              // guards lazy Timing creation
};

}  // namespace tunelock::cuda
