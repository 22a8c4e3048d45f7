#include "driver_api.hpp"

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"

namespace tunelock::cuda::driver {
namespace {

template <typename Function>
void resolve(Function& out, const char* symbol) {
  void* address = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  // The first call also initialises the runtime (and the primary context).
  cuda::check(cudaFree(nullptr), "initialising CUDA");
  cuda::check(cudaGetDriverEntryPointByVersion(symbol, &address, 12000, cudaEnableDefault, &found),
              std::string("resolving the driver function ") + symbol);
  if (found != cudaDriverEntryPointSuccess || !address)
    throw Error(std::string("the CUDA driver has no ") + symbol + " (driver too old?)");
  out = reinterpret_cast<Function>(address);
}

Api resolve_all() {
  Api api{};
  resolve(api.module_load_data, "cuModuleLoadData");
  resolve(api.module_unload, "cuModuleUnload");
  resolve(api.module_get_function, "cuModuleGetFunction");
  resolve(api.launch_kernel, "cuLaunchKernel");
  resolve(api.func_set_attribute, "cuFuncSetAttribute");
  resolve(api.get_error_name, "cuGetErrorName");
  return api;
}

}  // namespace

const Api& api() {
  static const Api resolved = resolve_all();
  return resolved;
}

std::string error_name(CUresult result) {
  const char* name = nullptr;
  if (api().get_error_name(result, &name) != CUDA_SUCCESS || !name)
    return "CUresult " + std::to_string(static_cast<int>(result));
  return name;
}

void check(CUresult result, const std::string& what) {
  if (result != CUDA_SUCCESS) throw Error(what + ": " + error_name(result));
}

}  // namespace tunelock::cuda::driver
