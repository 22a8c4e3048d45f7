// CUDA status codes as exceptions: what failed, the error's name and text.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "tunelock/base/error.hpp"

namespace tunelock::cuda {

inline std::string describe(cudaError_t status) {
  return std::string(cudaGetErrorName(status)) + ": " + cudaGetErrorString(status);
}

// Throws Error("<what>: <cudaErrorName>: <text>") when `status` is an error.
inline void check(cudaError_t status, const std::string& what) {
  if (status != cudaSuccess) throw Error(what + ": " + describe(status));
}

}  // namespace tunelock::cuda
