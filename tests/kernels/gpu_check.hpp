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
#include "harness/storage.hpp"
#include "harness/verify.hpp"
#include "harness/verify_gpu.hpp"
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

// Elements of guard band before and after the output (256 bytes in fp32: keeps the output
// 16-byte aligned unless a case offsets it on purpose).
inline constexpr std::int64_t kGuardFloats = 64;

struct Placement {
  std::int64_t x_offset = 0;  // elements between the allocation's start and x (1 = misaligned)
  std::int64_t y_offset = 0;  // elements between the front guard band and y
};

struct KernelRun {
  std::vector<float> y;                       // M * ld_y elements as fp32, as the kernel left them
                                              // (the poison where never written)
  std::optional<std::string> guard_error;     // a write before or after the output
  std::optional<std::string> padding_error;   // a write into row padding
  std::optional<std::string> input_error;     // x changed
  std::optional<VerifyResult> device;         // verify_storage_output_device's verdict, every
                                              // row, when asked for (verify_on_device)
};

// Runs `launch` on x (fp32 values, already rounded to p.dtype; M * ld_x of them) stored in
// p.dtype, and returns what it left; throws on CUDA errors. For fp32 the storage conversions are
// the identity (harness/storage.hpp). verify_on_device: also check every row of the output on the
// device (harness/verify_gpu.hpp, storage_tolerance(p.dtype)), before x could be changed back.
template <class LaunchFn>
KernelRun run_launch(const Problem& p, const std::vector<float>& x, LaunchFn&& launch,
                     std::size_t workspace_bytes, const Placement& at = {},
                     bool verify_on_device = false) {
  const auto b = static_cast<std::size_t>(dtype_bytes(p.dtype));
  const std::vector<unsigned char> xs = to_storage(x, p.dtype);
  const auto y_span = static_cast<std::size_t>(p.M * p.ld_y);
  const auto front = static_cast<std::size_t>(kGuardFloats + at.y_offset);
  const std::size_t y_elems = front + y_span + static_cast<std::size_t>(kGuardFloats);

  DeviceBuffer dx(static_cast<std::size_t>(at.x_offset) * b + xs.size());
  DeviceBuffer dy(y_elems * b);
  DeviceBuffer dws(workspace_bytes);
  CudaStream stream;

  unsigned char* x_dev = dx.as<unsigned char>() + static_cast<std::size_t>(at.x_offset) * b;
  unsigned char* y_dev = dy.as<unsigned char>() + front * b;
  CUDA_CHECK(cudaMemcpyAsync(x_dev, xs.data(), xs.size(), cudaMemcpyHostToDevice, stream.get()));
  // The poison: the whole output allocation, guard bands and row padding included.
  CUDA_CHECK(cudaMemsetAsync(dy.get(), kPoisonByte, y_elems * b, stream.get()));

  Launch l;
  l.x = x_dev;
  l.y = y_dev;
  l.p = p;
  l.workspace = dws.get();
  l.stream = stream.get();
  launch(l);
  stream.sync();
  std::optional<VerifyResult> device;
  if (verify_on_device) device = verify_storage_output_device(p, x_dev, y_dev, stream.get());

  std::vector<unsigned char> all(y_elems * b);
  CUDA_CHECK(cudaMemcpy(all.data(), dy.get(), all.size(), cudaMemcpyDeviceToHost));
  std::vector<unsigned char> x_after(xs.size());
  CUDA_CHECK(cudaMemcpy(x_after.data(), x_dev, xs.size(), cudaMemcpyDeviceToHost));

  const std::vector<float> yf = from_storage(all, p.dtype);
  KernelRun r;
  r.y.assign(yf.begin() + static_cast<std::ptrdiff_t>(front),
             yf.begin() + static_cast<std::ptrdiff_t>(front + y_span));
  for (std::size_t i = 0; i < y_elems && !r.guard_error; ++i) {
    if (i >= front && i < front + y_span) continue;
    if (!is_poison(yf[i])) {
      const auto off = static_cast<long long>(i) - static_cast<long long>(front);
      r.guard_error = "guard band written at element offset " + std::to_string(off) +
                      " from y (the output spans 0.." + std::to_string(y_span) + ")";
    }
  }
  r.padding_error = check_padding_untouched(p, r.y);
  if (x_after != xs) r.input_error = "the kernel modified its input x";
  r.device = std::move(device);
  return r;
}

// The registry entry k on p (its own launcher and workspace).
inline KernelRun run_kernel(const KernelInfo& k, const Problem& p, const std::vector<float>& x,
                            const Placement& at = {}) {
  return run_launch(p, x, k.launch, k.workspace_bytes ? k.workspace_bytes(p) : 0, at);
}

}  // namespace smr::test
