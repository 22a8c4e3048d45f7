// Variants that are not compiled into the program: kernels loaded from a
// cubin, fatbin or PTX image through the CUDA driver API, including
// Triton's compiled kernels (a `.cubin` and its metadata `.json`, as
// Triton's cache keeps them). A loaded kernel is launched by function
// name with a grid, threads per block, dynamic shared bytes and parameters;
// Triton's kernels also take two scratch pointers after the user's
// arguments (global scratch, profile scratch), which the launch appends.
//
// The driver is reached through the runtime's entry points, so programs
// link no libcuda and still start on a machine without a GPU driver.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace tunelock::cuda {

// How to launch one function of a loaded module.
struct LaunchSpec {
  std::string function;       // the kernel's symbol name in the image
  unsigned threads = 128;     // threads per block (Triton: num_warps x 32)
  unsigned shared_bytes = 0;  // dynamic shared memory per block
  // Triton's calling convention: after the user's arguments, a pointer to
  // global scratch and one to profile scratch. Each is `bytes` per program
  // (grid block), allocated on the launch's stream; null when 0.
  bool scratch_arguments = false;
  std::size_t global_scratch_bytes = 0, global_scratch_align = 1;
  std::size_t profile_scratch_bytes = 0, profile_scratch_align = 1;
};

// Triton's metadata JSON (`name`, `num_warps`, `shared`, `num_ctas`,
// `global_scratch_size`/`_align`, `profile_scratch_size`/`_align`) as a
// launch. Throws Error naming `origin` and the field: a missing or bad
// field, or num_ctas > 1 (cluster launches are not supported).
LaunchSpec triton_launch_spec(std::string_view metadata_json, const std::string& origin);

// A cubin, fatbin or PTX image loaded into the current device's context.
// REQUIRES: launches of its kernels happen on that device.
class LoadedModule {
 public:
  // Throws Error naming the file (or `origin`) and the driver's error.
  static std::shared_ptr<LoadedModule> load_file(const std::filesystem::path& path);
  static std::shared_ptr<LoadedModule> load_image(std::string image, std::string origin);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;

  // Throws Error naming the module and the function when it is absent.
  CUfunction function(const std::string& name) const;
  const std::string& origin() const { return origin_; }
  // "image:<hash>": the image's code as a launch log names it
  // (image_identity), for KernelFamily::set_code_identity.
  const std::string& identity() const { return identity_; }

 private:
  LoadedModule(CUmodule module, std::string origin, std::string identity);
  CUmodule module_;
  std::string origin_;
  std::string identity_;
};

struct Grid {
  unsigned x = 1, y = 1, z = 1;
};

class LoadedKernel {
 public:
  // Throws Error when the module lacks the function. A block that needs
  // more shared memory than the device allows is not an error here: its
  // launches fail, so tuning counts it as infinitely slow.
  LoadedKernel(std::shared_ptr<const LoadedModule> module, LaunchSpec spec);

  // A Triton kernel from its cache files: `<hash>/<name>.cubin` and
  // `<hash>/<name>.json`.
  static LoadedKernel from_triton(const std::filesystem::path& cubin,
                                  const std::filesystem::path& metadata);

  // `params` point at each argument's value, in order (CUDA's
  // kernelParams). Throws Error naming the kernel and the CUDA error.
  void launch(cudaStream_t stream, Grid grid, std::vector<void*> params) const;

  // The same with the arguments themselves: kernel(stream, grid, x, y, n).
  template <typename... T>
  void operator()(cudaStream_t stream, Grid grid, const T&... args) const {
    launch(stream, grid, {const_cast<void*>(static_cast<const void*>(&args))...});
  }

  const LaunchSpec& spec() const { return spec_; }
  // Its module's code identity (LoadedModule::identity).
  const std::string& identity() const { return module_->identity(); }

 private:
  std::shared_ptr<const LoadedModule> module_;
  LaunchSpec spec_;
  CUfunction function_;
  std::string unlaunchable_;  // why every launch fails, when it does
};

}  // namespace tunelock::cuda
