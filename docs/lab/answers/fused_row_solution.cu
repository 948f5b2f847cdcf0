// fused_starter, the reference solution of lab exercise 03 (docs/lab/03-fuse-it.md).
//
// The instructor's answer key: src/kernels/lab/fused_row_starter.cu with its five TODOs done.
// Built in place of the starter, under the same registry name `fused_starter`, by
//   cmake -S . -B build/lab-solution -G Ninja -DCMAKE_BUILD_TYPE=Release
//         -DSMR_BUILD_LAB=ON -DSMR_LAB_SOLUTION=ON          (one command line)
//   cmake --build build/lab-solution --target smr_lab_starter_tests softmax-bench
//   build/lab-solution/tests/kernels/smr_lab_starter_tests     passes
// `diff src/kernels/lab/fused_row_starter.cu docs/lab/answers/fused_row_solution.cu` is exactly
// the student's work. The worked reasoning is in 03-fuse-it.md of this folder.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/fused_row.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/reduce.cuh"
#include "kernels/softmax_math.cuh"

namespace smr {
namespace {

// Register slot i of this thread holds element i * kThreads + threadIdx.x of the row.
template <int kThreads>
__device__ __forceinline__ int element_index(int i) {
  return i * kThreads + static_cast<int>(threadIdx.x);
}

// 1: the masked load. -inf past the row's end is the sentinel that does double duty: it never
// wins the max, and exp(-inf - m) = 0 adds nothing to the sum, so the reductions need no mask.
template <int kThreads, int kPerThread>
__device__ __forceinline__ void load_tile(const float* row, int n, float (&v)[kPerThread]) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int j = element_index<kThreads>(i);
    v[i] = j < n ? row[j] : -INFINITY;
  }
}

// 2: the thread's max. A thread whose every slot is past N returns -inf (block_max ignores it).
template <int kPerThread>
__device__ __forceinline__ float thread_max(const float (&v)[kPerThread]) {
  float m = v[0];
#pragma unroll
  for (int i = 1; i < kPerThread; ++i) m = fmaxf(m, v[i]);
  return m;
}

// 3: exp(v[i] - m) as exp2(v[i] * log2e - m * log2e): m * log2e once per row (exp_reference,
// which also turns an all -inf row's m = -inf into 0, so -inf - (-inf) = NaN never happens), then
// one FFMA and one MUFU.EX2 per element. Returns the thread's sum.
template <int kPerThread>
__device__ __forceinline__ float scale_exp(float (&v)[kPerThread], float m) {
  const float reference = exp_reference(m);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    v[i] = exp_shifted(v[i], reference);
    s += v[i];
  }
  return s;
}

// Given: v[i] <- v[i] * factor.
template <int kPerThread>
__device__ __forceinline__ void scale(float (&v)[kPerThread], float factor) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) v[i] *= factor;
}

// 5: the masked store: the slots past N hold exp(-inf) = 0 and are never written.
template <int kThreads, int kPerThread>
__device__ __forceinline__ void store_tile(float* row, int n, const float (&v)[kPerThread]) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int j = element_index<kThreads>(i);
    if (j < n) row[j] = v[i];
  }
}

template <int kTile, int kThreads>
__global__ void __launch_bounds__(kThreads)
    fused_starter_kernel(const float* __restrict__ x, std::int64_t ld_x, float* __restrict__ y,
                         std::int64_t ld_y, int n) {
  constexpr int kPerThread = kTile / kThreads;
  float v[kPerThread];  // the thread's share of the row, in registers
  load_tile<kThreads>(x + blockIdx.x * ld_x, n, v);
  // 4: every thread takes part in both block reductions (they hold __syncthreads), also the
  // threads whose slots are all past N. An all -inf row has row_sum = 0: 0 * (1 / 0) = NaN, the
  // defined result (as PyTorch).
  const float row_max = block_max<kThreads>(thread_max(v));
  const float row_sum = block_sum<kThreads>(scale_exp(v, row_max));
  scale(v, 1.0f / row_sum);
  store_tile<kThreads>(y + blockIdx.x * ld_y, n, v);
}

// --- Written for you: the same plumbing as fused_row.cu (its tiles: FusedTiles, fused_row.hpp).

void launch(const Launch& l) {
  const Problem& p = l.p;
  const auto* x = static_cast<const float*>(l.x);
  auto* y = static_cast<float*>(l.y);
  const int n = static_cast<int>(p.N);
  const bool launched = with_fused_tile(
      n,
      [&](auto tile) {
        using T = decltype(tile);
        fused_starter_kernel<T::kTile, T::kThreads>
            <<<static_cast<unsigned>(p.M), T::kThreads, 0, l.stream>>>(x, p.ld_x, y, p.ld_y, n);
        CUDA_CHECK_LAUNCH();
      },
      FusedTiles{});
  if (!launched)
    throw std::invalid_argument("fused_starter: N = " + std::to_string(p.N) +
                                " exceeds the cap of " + std::to_string(kFusedMaxN));
}

std::optional<std::string> unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  if (p.N > kFusedMaxN)
    return "N = " + std::to_string(p.N) + " exceeds the one-tile cap of " +
           std::to_string(kFusedMaxN) + " (the row must fit in registers)";
  return too_many_rows(p, "fused_starter");
}

}  // namespace

namespace entries {

KernelInfo fused_starter() {
  KernelInfo k;
  k.name = "fused_starter";
  k.description = "lab exercise 03: the reference solution (docs/lab/answers), N <= " +
                  std::to_string(kFusedMaxN);
  k.role = Role::lab;
  k.traffic = TrafficModel::fused;
  k.dtypes = {DType::f32};
  k.unsupported = unsupported;
  k.launch = launch;
  return k;
}

}  // namespace entries
}  // namespace smr
