// main() for every test executable, compiled once. An executable that needs a GPU links
// need_gpu.cpp's object built with SMR_TESTS_NEED_GPU=1: without a CUDA device it prints why and
// exits with kSkipReturnCode, which ctest reports as "Skipped" -- never as passed.
#if SMR_CATCH_MAJOR >= 3
#include <catch2/catch_session.hpp>
#else
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>
#endif

#include <cstdio>

#include <cuda_runtime_api.h>

#include "catch.hpp"

namespace smr::test {
extern const bool kTestsNeedGpu;  // need_gpu.cpp, one object per kind of executable

bool gpu_available() {
  int count = 0;
  return cudaGetDeviceCount(&count) == cudaSuccess && count > 0;
}
}  // namespace smr::test

int main(int argc, char* argv[]) {
  if (smr::test::kTestsNeedGpu && !smr::test::gpu_available()) {
    std::printf("SKIPPED: no CUDA device on this machine; these GPU tests run on a GPU machine\n");
    return smr::test::kSkipReturnCode;
  }
  return Catch::Session().run(argc, argv);
}
