#include "tunelock/cuda/cuda_backend.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include "cuda_check.hpp"
#include "tunelock/base/version.hpp"

namespace tunelock::cuda {
namespace {

std::string version_text(int version) {  // 12040 -> "12.4"
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// Makes `device` current for the scope, and puts the previous one back.
class DeviceScope {
 public:
  explicit DeviceScope(int device) {
    check(cudaGetDevice(&previous_), "cudaGetDevice");
    if (device != previous_) check(cudaSetDevice(device), "cudaSetDevice");
  }
  ~DeviceScope() { cudaSetDevice(previous_); }
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace

std::optional<std::string> unavailable_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess) return "cudaGetDeviceCount: " + describe(status);
  if (count == 0) return std::string("cudaGetDeviceCount: no CUDA device");
  return std::nullopt;
}

int use_local_rank_device(const Environment& env) {
  int local_rank = 0;
  for (const char* name : {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "SLURM_LOCALID"}) {
    const auto found = env.find(name);
    if (found == env.end()) continue;
    local_rank = static_cast<int>(
        parse_integer(name, found->second, 0, std::numeric_limits<int>::max(), "an integer >= 0"));
    break;
  }
  if (auto reason = unavailable_reason()) throw Error("no usable CUDA GPU (" + *reason + ")");
  int count = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  const int device = local_rank % count;
  check(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")");
  return device;
}

CudaBackend::CudaBackend() {
  if (auto reason = unavailable_reason()) throw Error("no usable CUDA GPU (" + *reason + ")");
  int count = 0, driver = 0, runtime = 0;
  check(cudaGetDeviceCount(&count), "cudaGetDeviceCount");
  check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  for (int d = 0; d < count; ++d) {
    cudaDeviceProp props{};
    check(cudaGetDeviceProperties(&props, d), "cudaGetDeviceProperties(" + std::to_string(d) + ")");
    const std::string arch = "sm" + std::to_string(props.major) + std::to_string(props.minor);
    auto known = std::find(slot_archs_.begin(), slot_archs_.end(), arch);
    if (known == slot_archs_.end()) {
      if (slot_archs_.size() == kMaxArchSlots)
        throw Error("this process sees GPUs of more than " + std::to_string(kMaxArchSlots) +
                    " architectures; set CUDA_VISIBLE_DEVICES to fewer");
      known = slot_archs_.insert(slot_archs_.end(), arch);
    }
    Device device;
    device.slot = static_cast<std::size_t>(known - slot_archs_.begin());
    device.provenance.device_name = props.name;
    device.provenance.sm_count = props.multiProcessorCount;
    device.provenance.driver_version = version_text(driver);
    device.provenance.cuda_version = version_text(runtime);
    device.provenance.tool_version = std::string(tool_version());
    device.l2_bytes = static_cast<std::size_t>(props.l2CacheSize);
    devices_.push_back(std::move(device));
  }
}

CudaBackend::~CudaBackend() {
  for (std::size_t d = 0; d < devices_.size(); ++d) {
    const Timing* timing = devices_[d].timing.get();
    if (!timing) continue;
    cudaSetDevice(static_cast<int>(d));
    cudaStreamSynchronize(timing->stream);
    cudaFree(timing->flush);
    cudaEventDestroy(timing->start);
    cudaEventDestroy(timing->stop);
    cudaStreamDestroy(timing->stream);
  }
}

int CudaBackend::current_device() const {
  int device = 0;
  check(cudaGetDevice(&device), "cudaGetDevice");
  return device;
}

std::size_t CudaBackend::arch_slot() const {
  if (slot_archs_.size() == 1) return 0;  // one GPU type: no need to ask which device
  int device = 0;
  cudaGetDevice(&device);  // hot path: a thread-local read in the runtime
  return devices_[static_cast<std::size_t>(device)].slot;
}

std::string CudaBackend::arch(std::size_t slot) const { return slot_archs_.at(slot); }

Provenance CudaBackend::device() const {
  return devices_.at(static_cast<std::size_t>(current_device())).provenance;
}

CudaBackend::Timing& CudaBackend::timing_for(int device) {
  std::lock_guard lock(timing_mutex_);
  Device& d = devices_.at(static_cast<std::size_t>(device));
  if (d.timing) return *d.timing;
  const DeviceScope scope(device);
  auto timing = std::make_unique<Timing>();
  check(cudaStreamCreateWithFlags(&timing->stream, cudaStreamNonBlocking), "cudaStreamCreate");
  check(cudaEventCreate(&timing->start), "cudaEventCreate");
  check(cudaEventCreate(&timing->stop), "cudaEventCreate");
  timing->flush_bytes = std::max<std::size_t>(2 * d.l2_bytes, 1 << 20);
  check(cudaMalloc(&timing->flush, timing->flush_bytes), "cudaMalloc (L2 flush buffer)");
  d.timing = std::move(timing);
  return *d.timing;
}

void* CudaBackend::timing_stream() { return timing_for(current_device()).stream; }

bool CudaBackend::capturing(void* stream) const {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  const cudaError_t asked = cudaStreamIsCapturing(static_cast<cudaStream_t>(stream), &status);
  // The legacy default stream cannot be asked while another stream
  // captures in global mode: a capture is under way all the same.
  if (asked == cudaErrorStreamCaptureImplicit) {
    cudaGetLastError();
    return true;
  }
  check(asked, "cudaStreamIsCapturing");
  return status != cudaStreamCaptureStatusNone;  // active, or invalidated by an error
}

std::vector<double> CudaBackend::time(const std::function<void()>& before,
                                      const std::function<void()>& launch,
                                      const std::function<void()>& after, int warmup, int repeats) {
  Timing& t = timing_for(current_device());
  check(cudaDeviceSynchronize(), "before timing: cudaDeviceSynchronize");
  const auto launch_checked = [&] {
    launch();
    check(cudaGetLastError(), "launch");  // <<<>>> reports bad configurations here
  };
  for (int i = 0; i < warmup; ++i) {
    before();
    launch_checked();
    check(cudaStreamSynchronize(t.stream), "warm-up run");
    after();
  }
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    before();
    check(cudaMemsetAsync(t.flush, i & 0xff, t.flush_bytes, t.stream), "L2 flush");
    check(cudaEventRecord(t.start, t.stream), "cudaEventRecord");
    launch_checked();
    check(cudaEventRecord(t.stop, t.stream), "cudaEventRecord");
    check(cudaEventSynchronize(t.stop), "timed run");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, t.start, t.stop), "cudaEventElapsedTime");
    samples.push_back(ms);
    after();
  }
  return samples;
}

void CudaBackend::synchronize() {
  check(cudaDeviceSynchronize(), "before the first pinned call's bits check");
}

void CudaBackend::zero(launcher::BufferRef buffer) {
  Timing& t = timing_for(current_device());
  check(cudaMemsetAsync(buffer.data, 0, buffer.bytes, t.stream), "zeroing a tuned output");
  check(cudaStreamSynchronize(t.stream), "zeroing a tuned output");
}

std::vector<std::byte> CudaBackend::save(launcher::BufferRef buffer) {
  Timing& t = timing_for(current_device());
  std::vector<std::byte> out(buffer.bytes);
  check(cudaMemcpyAsync(out.data(), buffer.data, buffer.bytes, cudaMemcpyDefault, t.stream),
        "saving a tuned output");
  check(cudaStreamSynchronize(t.stream), "saving a tuned output");
  return out;
}

void CudaBackend::restore(launcher::BufferRef buffer, const std::vector<std::byte>& saved) {
  if (saved.size() != buffer.bytes) throw Error("restore: buffer size changed during tuning");
  Timing& t = timing_for(current_device());
  check(cudaMemcpyAsync(buffer.data, saved.data(), saved.size(), cudaMemcpyDefault, t.stream),
        "restoring a tuned output");
  check(cudaStreamSynchronize(t.stream), "restoring a tuned output");
}

}  // namespace tunelock::cuda
