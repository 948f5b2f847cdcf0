// my_softmax: a student's own kernel, the whole of it in one file -- the fixture of
// tests/lab/run-lab-fixture, which copies it into a scratch copy of src/kernels/lab/ and checks
// that a lab build lists it with no other edit. Copy it there yourself to start a kernel of your
// own (docs/lab/README.md, "Your own kernel"): rename the entry, then rebuild.
//
// The design: one block of 256 threads per row, three sweeps of the row -- the max, the sum of
// exponentials, the scaled store -- with the second and third reads of x served from the caches
// when the row fits there (the `fused` traffic model: x read once from DRAM, y written once).
#include <cmath>
#include <optional>
#include <string>

#include "kernels/common/reduce.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/registry.hpp"

namespace smr {
namespace {

constexpr int kThreads = 256;

__global__ void __launch_bounds__(kThreads)
    my_softmax_kernel(const float* __restrict__ x, std::int64_t ld_x, float* __restrict__ y,
                      std::int64_t ld_y, std::int64_t n) {
  const float* row = x + blockIdx.x * ld_x;
  float* out = y + blockIdx.x * ld_y;
  float m = -INFINITY;
  for (std::int64_t j = threadIdx.x; j < n; j += kThreads) m = fmaxf(m, row[j]);
  m = block_max<kThreads>(m);
  float s = 0.0f;
  for (std::int64_t j = threadIdx.x; j < n; j += kThreads) s += expf(row[j] - m);
  s = block_sum<kThreads>(s);
  for (std::int64_t j = threadIdx.x; j < n; j += kThreads) out[j] = expf(row[j] - m) / s;
}

void launch(const Launch& l) {
  my_softmax_kernel<<<static_cast<unsigned>(l.p.M), kThreads, 0, l.stream>>>(
      static_cast<const float*>(l.x), l.p.ld_x, static_cast<float*>(l.y), l.p.ld_y, l.p.N);
  CUDA_CHECK_LAUNCH();
}

std::optional<std::string> unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  return too_many_rows(p, "my_softmax");
}

KernelInfo my_softmax() {
  KernelInfo k;
  k.name = "my_softmax";
  k.description = "a student's kernel: one block per row, three sweeps of the row (tests/lab)";
  k.role = Role::lab;
  k.traffic = TrafficModel::fused;
  k.dtypes = {DType::f32};
  k.unsupported = unsupported;
  k.launch = launch;
  return k;
}

}  // namespace

SMR_REGISTER_KERNEL(my_softmax);

}  // namespace smr
