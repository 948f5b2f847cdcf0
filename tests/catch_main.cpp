// main() for every test executable. Executables that need a GPU are built with
// SMR_TESTS_NEED_GPU: without a CUDA device they print why and exit with kSkipReturnCode,
// which ctest reports as "Skipped" -- never as passed.
#if SMR_CATCH_MAJOR >= 3
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdio>

#include <cuda_runtime_api.h>

#include "catch.hpp"

#ifndef SMR_TESTS_NEED_GPU
#define SMR_TESTS_NEED_GPU 0
#endif

namespace smr::test {
bool gpu_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}
}  // namespace smr::test

int main(int argc, char* argv[]) {
  if (SMR_TESTS_NEED_GPU && !smr::test::gpu_available()) {
    std::printf("SKIPPED: no CUDA device on this machine; these GPU tests run on a GPU machine\n");
    return smr::test::kSkipReturnCode;
  }
  return Catch::Session().run(argc, argv);
}
