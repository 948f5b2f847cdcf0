// One throwing CUDA_CHECK for every CUDA runtime call, carrying file, line and the call's text,
// and a non-throwing CUDA_CHECK_NOTHROW for destructors.
#pragma once

#include <stdexcept>
#include <string>

#include <cuda_runtime_api.h>

namespace smr {

struct CudaError : std::runtime_error {
  cudaError_t code;
  CudaError(cudaError_t c, const std::string& what) : std::runtime_error(what), code(c) {}
};

[[noreturn]] void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line);
void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept;

}  // namespace smr

#define CUDA_CHECK(call)                                                          \
  do {                                                                            \
    cudaError_t smr_status_ = (call);                                             \
    if (smr_status_ != cudaSuccess)                                               \
      ::smr::throw_cuda_error(smr_status_, #call, __FILE__, __LINE__);            \
  } while (0)

#define CUDA_CHECK_NOTHROW(call)                                                  \
  do {                                                                            \
    cudaError_t smr_status_ = (call);                                             \
    if (smr_status_ != cudaSuccess)                                               \
      ::smr::report_cuda_error(smr_status_, #call, __FILE__, __LINE__);           \
  } while (0)

// After every kernel launch: launch-configuration errors surface here, not at the next sync.
#define CUDA_CHECK_LAUNCH() CUDA_CHECK(cudaGetLastError())
