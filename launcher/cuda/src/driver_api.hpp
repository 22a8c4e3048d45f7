// The few CUDA driver functions loaded kernels need, resolved at run time
// through the runtime's entry points: nothing links libcuda, so programs
// start (and report "no GPU") on machines without a driver.
#pragma once

#include <cuda.h>

#include <string>

namespace tunelock::cuda::driver {

struct Api {
  decltype(&::cuModuleLoadData) module_load_data;
  decltype(&::cuModuleUnload) module_unload;
  decltype(&::cuModuleGetFunction) module_get_function;
  decltype(&::cuLaunchKernel) launch_kernel;
  decltype(&::cuFuncSetAttribute) func_set_attribute;
  decltype(&::cuGetErrorName) get_error_name;
};

// Resolved once; throws Error naming the symbol the driver lacks.
const Api& api();

// "CUDA_ERROR_INVALID_IMAGE"
std::string error_name(CUresult result);

// Throws Error("<what>: <name>") when `result` is an error.
void check(CUresult result, const std::string& what);

}  // namespace tunelock::cuda::driver
