#include "kernels/cuda_check.hpp"

#include <cstdio>

namespace smr {

void throw_cuda_error(cudaError_t code, const char* call, const char* file, int line) {
  throw CudaError(code, std::string(file) + ":" + std::to_string(line) + ": " + call + ": " +
                            cudaGetErrorName(code) + " (" + cudaGetErrorString(code) + ")");
}

void report_cuda_error(cudaError_t code, const char* call, const char* file, int line) noexcept {
  std::fprintf(stderr, "%s:%d: %s: %s (%s)\n", file, line, call, cudaGetErrorName(code),
               cudaGetErrorString(code));
}

}  // namespace smr
