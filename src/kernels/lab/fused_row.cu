// fused: the whole softmax of a row in one kernel, the row held in registers.
//
// What changes from `unfused`: the three kernels become one. A block owns one row; its threads
// load the row once into registers, reduce the max, exponentiate, reduce the sum, scale, and
// store: nothing goes back to DRAM between the steps, so x is read once and y written once.
//
// The row is one tile whose size is a compile-time constant: the next power of two >= N, from
// the small set of instantiations in `FusedTiles` (fused_row.hpp, the only place a tile size is
// named, shared with the lab's starter). Each
// thread holds kTile / kThreads elements in registers, as float4-sized chunks: chunk
// c = i * kThreads + t of thread t covers elements 4c .. 4c+3, so a warp's chunk i is 512
// contiguous bytes. The elements past N are masked: never read, never written, and set to -inf,
// the sentinel that does double duty: it cannot win the max, and exp(-inf - m) = 0 adds nothing
// to the sum.
//
// Loads and stores are 16 bytes wide (LDG.E.128 / STG.E.128) where the row is 16-byte aligned:
// x + row * ld_x is, for every row, only when x is and ld_x is a multiple of 4. Any other stride
// or pointer still works: that row's chunks are moved one float at a time. Correctness first:
// making the odd strides fast is the production kernel's business.
//
// Bytes per element (fp32), the model's `fused` traffic: 4 read + 4 written = 8 (2 x 4MN).
// FLOPs per element: 3 algorithmic (subtract, exp, divide; here the subtract is folded into the
// exponential's FMA and the divide is a multiply by one reciprocal per row) + max and sum in the
// reductions. 3 FLOP / 8 B = 0.375 FLOP/B: DRAM-bound on every GPU, the claim the lab tests.
//
// Limits: N <= kFusedMaxN (fused_row.hpp): 32768 = 1024 threads x 32 registers of data; past it
// the registry says so (never a run that silently spills). One block per row: a problem with few
// rows leaves SMs idle, and M <= 2^31 - 1.
// Numerics: the exp2 form and its traps are explained in softmax_math.cuh; special values as in
// PyTorch (docs/verification.md): a row with a NaN or a +inf is all NaN, a row of -inf is all NaN.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/lab/fused_row.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/common/reduce.cuh"
#include "kernels/common/softmax_math.cuh"

namespace smr {
namespace {

inline constexpr int kChunk = 4;  // floats per 16-byte access

// Thread t's chunk i: elements 4 * (i * kThreads + t) + 0..3 of the row.
template <int kThreads>
__device__ __forceinline__ int chunk_start(int i) {
  return kChunk * (i * kThreads + static_cast<int>(threadIdx.x));
}

__device__ __forceinline__ bool is_16_byte_aligned(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0;
}

// v <- the thread's elements of the row; -inf where an element is past N.
template <int kThreads, int kPerThread>
__device__ __forceinline__ void load_tile(const float* row, int n, float (&v)[kPerThread]) {
  const bool wide = is_16_byte_aligned(row);  // the same for the whole block: no divergence
#pragma unroll
  for (int i = 0; i < kPerThread / kChunk; ++i) {
    const int j = chunk_start<kThreads>(i);
    if (wide && j + kChunk <= n) {
      const float4 c = *reinterpret_cast<const float4*>(row + j);
      v[kChunk * i + 0] = c.x;
      v[kChunk * i + 1] = c.y;
      v[kChunk * i + 2] = c.z;
      v[kChunk * i + 3] = c.w;
    } else {
#pragma unroll
      for (int k = 0; k < kChunk; ++k) v[kChunk * i + k] = j + k < n ? row[j + k] : -INFINITY;
    }
  }
}

// The thread's elements that are inside the row -> y. Nothing past N is written.
template <int kThreads, int kPerThread>
__device__ __forceinline__ void store_tile(float* row, int n, const float (&v)[kPerThread]) {
  const bool wide = is_16_byte_aligned(row);
#pragma unroll
  for (int i = 0; i < kPerThread / kChunk; ++i) {
    const int j = chunk_start<kThreads>(i);
    if (wide && j + kChunk <= n) {
      *reinterpret_cast<float4*>(row + j) =
          make_float4(v[kChunk * i + 0], v[kChunk * i + 1], v[kChunk * i + 2], v[kChunk * i + 3]);
    } else {
#pragma unroll
      for (int k = 0; k < kChunk; ++k)
        if (j + k < n) row[j + k] = v[kChunk * i + k];
    }
  }
}

template <int kPerThread>
__device__ __forceinline__ float thread_max(const float (&v)[kPerThread]) {
  float m = v[0];
#pragma unroll
  for (int i = 1; i < kPerThread; ++i) m = fmaxf(m, v[i]);
  return m;
}

// v[i] <- exp(v[i] - m); returns the thread's sum of them (a chain of at most 32 additions).
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

template <int kPerThread>
__device__ __forceinline__ void scale(float (&v)[kPerThread], float factor) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) v[i] *= factor;
}

template <int kTile, int kThreads>
__global__ void __launch_bounds__(kThreads)
    fused_row_kernel(const float* __restrict__ x, std::int64_t ld_x, float* __restrict__ y,
                     std::int64_t ld_y, int n) {
  constexpr int kPerThread = kTile / kThreads;
  static_assert(kPerThread % kChunk == 0, "each thread holds whole 16-byte chunks");
  float v[kPerThread];  // the thread's share of the row, in registers
  load_tile<kThreads>(x + blockIdx.x * ld_x, n, v);
  const float row_max = block_max<kThreads>(thread_max(v));
  const float row_sum = block_sum<kThreads>(scale_exp(v, row_max));
  // The division as a multiply by one reciprocal per row: 1 / row_sum is IEEE-rounded, the
  // multiply rounds once more (2^-24 relative). An all -inf row has row_sum = 0: 0 * inf = NaN.
  scale(v, 1.0f / row_sum);
  store_tile<kThreads>(y + blockIdx.x * ld_y, n, v);
}

void launch(const Launch& l) {
  const Problem& p = l.p;
  const auto* x = static_cast<const float*>(l.x);
  auto* y = static_cast<float*>(l.y);
  const int n = static_cast<int>(p.N);
  const bool launched = with_fused_tile(
      n,
      [&](auto tile) {
        using T = decltype(tile);
        fused_row_kernel<T::kTile, T::kThreads>
            <<<static_cast<unsigned>(p.M), T::kThreads, 0, l.stream>>>(x, p.ld_x, y, p.ld_y, n);
        CUDA_CHECK_LAUNCH();
      },
      FusedTiles{});
  if (!launched)
    throw std::invalid_argument("fused: N = " + std::to_string(p.N) + " exceeds the cap of " +
                                std::to_string(kFusedMaxN) + " (the registry should have said so)");
}

std::optional<std::string> unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  if (p.N > kFusedMaxN)
    return "N = " + std::to_string(p.N) + " exceeds the fused kernel's one-tile cap of " +
           std::to_string(kFusedMaxN) +
           " (the row must fit in registers: 1024 threads x 32 floats; a larger tile would spill)";
  return too_many_rows(p, "fused");
}

}  // namespace

namespace entries {

KernelInfo fused_row() {
  KernelInfo k;
  k.name = "fused";
  k.description =
      "one block per row, the row in registers as one power-of-two tile: one read, one write "
      "(N <= " + std::to_string(kFusedMaxN) + ")";
  k.role = Role::lab;
  k.traffic = TrafficModel::fused;
  k.dtypes = {DType::f32};
  k.unsupported = unsupported;
  k.launch = launch;
  return k;
}

}  // namespace entries
}  // namespace smr
