// The demo's loop over GPU kernel families (arch sm<major><minor>), one
// device per local rank, on a stream of its own as a trainer would.
#include <cuda_runtime_api.h>

#include <cstdio>

#include "demo_support.hpp"
#include "gpu_families.hpp"
#include "gpu_kernels.hpp"
#include "tunelock/base/error.hpp"
#include "tunelock/cuda/cuda_backend.hpp"

namespace tunelock::demo {
namespace {

void check(cudaError_t status, const char* what) {
  if (status != cudaSuccess)
    throw Error(std::string(what) + ": " + cudaGetErrorName(status) + ": " +
                cudaGetErrorString(status));
}

// Device floats, freed with their owner.
class DeviceFloats {
 public:
  explicit DeviceFloats(std::size_t count) : count_(count) {
    check(cudaMalloc(reinterpret_cast<void**>(&data_), count * sizeof(float)), "cudaMalloc");
  }
  explicit DeviceFloats(const std::vector<float>& host) : DeviceFloats(host.size()) {
    check(cudaMemcpy(data_, host.data(), count_ * sizeof(float), cudaMemcpyHostToDevice),
          "cudaMemcpy");
  }
  ~DeviceFloats() { cudaFree(data_); }
  DeviceFloats(const DeviceFloats&) = delete;
  DeviceFloats& operator=(const DeviceFloats&) = delete;

  float* get() const { return data_; }
  std::vector<float> download(cudaStream_t stream) const {
    std::vector<float> out(count_);
    check(
        cudaMemcpyAsync(out.data(), data_, count_ * sizeof(float), cudaMemcpyDeviceToHost, stream),
        "cudaMemcpyAsync");
    check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
    return out;
  }

 private:
  float* data_ = nullptr;
  std::size_t count_;
};

class Stream {
 public:
  Stream() {
    check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~Stream() { cudaStreamDestroy(stream_); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  operator cudaStream_t() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

std::vector<float> transposed(const std::vector<float>& x, int rows, int cols) {
  std::vector<float> out(x.size());
  for (int i = 0; i < rows; ++i)
    for (int j = 0; j < cols; ++j)
      out[static_cast<std::size_t>(j) * rows + i] = x[static_cast<std::size_t>(i) * cols + j];
  return out;
}

}  // namespace

int run_cuda(const Options& options) {
  install_from_environment();
  Runtime& runtime = process_runtime();
  const int device = cuda::use_local_rank_device(process_environment());
  cuda::CudaBackend backend;
  std::printf("device %d: %s (%s)\n", device, backend.device().device_name.c_str(),
              backend.current_arch().c_str());
  launcher::Launcher launcher(backend, runtime);

  gpu::GemmFamily gemm(launcher, {"demo.gpu", "gemm_splitk"}, {"M", "N", "K"}, gpu::gemm_variants(),
                       gpu::gemm_hooks());
  gpu::RowSumFamily row_sum(launcher, {"demo.gpu", "row_sum"}, {"ROWS", "COLS"},
                            gpu::row_sum_variants(), gpu::row_sum_hooks());
  gpu::SgdFamily sgd(launcher, {"demo.gpu", "sgd_update"}, {"N"}, gpu::sgd_variants());
  if (!options.manifest.empty()) launcher.write_manifest(options.manifest);

  const int m = options.m ? options.m : 256, n = options.n ? options.n : 256,
            k = options.k ? options.k : 2048;
  const std::vector<float> host_x = pseudo_random(static_cast<std::size_t>(m) * k, 1);
  const DeviceFloats x(host_x), xt(transposed(host_x, m, k));
  const DeviceFloats w(pseudo_random(static_cast<std::size_t>(k) * n, 2));
  const DeviceFloats y(static_cast<std::size_t>(m) * n), grad(static_cast<std::size_t>(k) * n);
  const DeviceFloats sums(static_cast<std::size_t>(m));
  const DeviceFloats workspace(gpu::gemm_workspace_floats(std::max(m, k), n, gpu::kMaxSplit));
  const Stream stream;
  std::unique_ptr<Collective> group = make_group(runtime.policy()->verify_every > 0);

  print_start(runtime);
  for (int step = 1; step <= options.steps; ++step) {
    gemm({m, n, k}, {"f32", "f32"}, stream, x.get(), w.get(), y.get(), workspace.get(), m, n, k);
    row_sum({m, n}, {"f32"}, stream, y.get(), sums.get(), m, n);
    double loss = 0;
    for (float s : sums.download(stream)) loss += s;  // in row order: the same bits every run
    gemm({k, n, m}, {"f32", "f32"}, stream, xt.get(), y.get(), grad.get(), workspace.get(), k, n,
         m);
    sgd({k * n}, {"f32"}, stream, w.get(), grad.get(), 1e-4f, k * n);
    print_step(runtime, *group, step, loss);
  }
  const std::vector<float> trained = w.download(stream);
  print_end(runtime, trained.data(), trained.size() * sizeof(float));
  launcher.flush();
  return 0;
}

}  // namespace tunelock::demo
