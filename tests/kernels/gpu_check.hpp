// Running one registry kernel on one problem the way every GPU test does: input uploaded (at an
// optional misaligning offset), output poisoned with NaN and surrounded by guard bands, launch,
// download, and every check that the harness's verification does not do by itself (guards,
// row padding, the input left unmodified). Shared by test_lab_kernels.cpp and
// test_production.cpp: one executable, inline functions.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "harness/device.hpp"
#include "harness/verify.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/registry.hpp"

namespace smr::test {

// Base seed of the random inputs: SMR_TEST_SEED when set, else a fixed default (CI reproducible).
// Every case derives its own seed from it; failures print both.
inline std::uint64_t base_seed() {
  if (const char* s = std::getenv("SMR_TEST_SEED")) return std::strtoull(s, nullptr, 0);
  return 20261201;
}

inline std::uint64_t case_seed(std::uint64_t base, std::uint64_t case_index) {
  std::uint64_t z = base + 0x9E3779B97F4A7C15ull * (case_index + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Floats of guard band before and after the output (256 bytes: keeps the output 16-byte aligned
// unless a case offsets it on purpose).
inline constexpr std::int64_t kGuardFloats = 64;

struct Placement {
  std::int64_t x_offset = 0;  // floats between the allocation's start and x (1 = misaligned)
  std::int64_t y_offset = 0;  // floats between the front guard band and y
};

struct KernelRun {
  std::vector<float> y;                       // M * ld_y floats, as the kernel left them
  std::optional<std::string> guard_error;     // a write before or after the output
  std::optional<std::string> padding_error;   // a write into row padding
  std::optional<std::string> input_error;     // x changed
};

// Runs k on x (host, M * ld_x floats) and returns what it left; throws on CUDA errors.
inline KernelRun run_kernel(const KernelInfo& k, const Problem& p, const std::vector<float>& x,
                            const Placement& at = {}) {
  const auto x_floats = static_cast<std::size_t>(at.x_offset + p.M * p.ld_x);
  const auto y_span = static_cast<std::size_t>(p.M * p.ld_y);
  const auto front = static_cast<std::size_t>(kGuardFloats + at.y_offset);
  const std::size_t y_floats = front + y_span + static_cast<std::size_t>(kGuardFloats);

  DeviceBuffer dx(x_floats * sizeof(float));
  DeviceBuffer dy(y_floats * sizeof(float));
  const std::size_t ws = k.workspace_bytes ? k.workspace_bytes(p) : 0;
  DeviceBuffer dws(ws);
  CudaStream stream;

  float* x_dev = dx.as<float>() + at.x_offset;
  float* y_dev = dy.as<float>() + front;
  CUDA_CHECK(cudaMemcpyAsync(x_dev, x.data(), x.size() * sizeof(float), cudaMemcpyHostToDevice,
                             stream.get()));
  // The poison: the whole output allocation, guard bands and row padding included.
  CUDA_CHECK(cudaMemsetAsync(dy.get(), kPoisonByte, y_floats * sizeof(float), stream.get()));

  Launch l;
  l.x = x_dev;
  l.y = y_dev;
  l.p = p;
  l.workspace = dws.get();
  l.stream = stream.get();
  k.launch(l);
  stream.sync();

  std::vector<float> all(y_floats);
  CUDA_CHECK(cudaMemcpy(all.data(), dy.get(), y_floats * sizeof(float), cudaMemcpyDeviceToHost));
  std::vector<float> x_after(x.size());
  CUDA_CHECK(cudaMemcpy(x_after.data(), x_dev, x.size() * sizeof(float), cudaMemcpyDeviceToHost));

  KernelRun r;
  r.y.assign(all.begin() + static_cast<std::ptrdiff_t>(front),
             all.begin() + static_cast<std::ptrdiff_t>(front + y_span));
  for (std::size_t i = 0; i < y_floats && !r.guard_error; ++i) {
    if (i >= front && i < front + y_span) continue;
    if (!is_poison(all[i])) {
      const auto off = static_cast<long long>(i) - static_cast<long long>(front);
      r.guard_error = "guard band written at float offset " + std::to_string(off) +
                      " from y (the output spans 0.." + std::to_string(y_span) + ")";
    }
  }
  r.padding_error = check_padding_untouched(p, r.y);
  if (std::memcmp(x_after.data(), x.data(), x.size() * sizeof(float)) != 0)
    r.input_error = "the kernel modified its input x";
  return r;
}

}  // namespace smr::test
