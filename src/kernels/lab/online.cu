// online: softmax for rows of any length, streamed in slices with a running max and sum.
//
// What changes from `fused`: no tile. The row no longer has to fit in registers, so there is no
// cap on N; the price is a second read of the row. (Milakov and Gimelshein, "Online normalizer
// calculation for softmax", 2018; the same update is FlashAttention's inner loop.)
//
//   pass 1  each thread streams its elements of the row, slice by slice, keeping a running
//           state (max m, sum d of exp(x - m) over what it has seen). When a slice raises the
//           max from m to m', the sum so far is rescaled: d' = d * exp(m - m') + sum exp(x - m').
//           Then the threads' states are combined pairwise with the same rule, the (m, d) merge:
//               m = max(m_a, m_b),   d = d_a * exp(m_a - m) + d_b * exp(m_b - m)
//   pass 2  every thread reads its elements again and writes exp(x - m) / d.
//
// Bytes per element (fp32), the model's `online` traffic: pass 1 reads 4, pass 2 reads 4 and
// writes 4: 12 bytes (3 x 4MN), or 8 when the rows in flight fit in L2 and the second read hits
// there (`rows_in_flight` below gives the model the number of rows resident at once).
// FLOPs per element: 3 algorithmic (subtract, exp, divide: the subtract folded into the FMA of
// softmax_math.cuh, the divide a multiply by one reciprocal), each exp computed twice (once per
// pass), plus max, sum and one rescaling exp per slice: still ~0.25 FLOP/B, DRAM-bound.
//
// Limits: one block per row (a problem with fewer rows than SMs leaves SMs idle: the production
// kernel splits huge rows across blocks); M <= 2^31 - 1. No workspace.
// Numerics: the -inf trap (a thread, a slice or a whole row that has seen only -inf) is handled
// by softmax_math.cuh's exp_reference; see the comments at `absorb` and `merge`. Special values
// as in PyTorch: a NaN or +inf in a row makes it all NaN, an all -inf row is all NaN.
#include <cstdint>
#include <optional>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/common/reduce.cuh"
#include "kernels/lab/row_block.cuh"
#include "kernels/common/softmax_math.cuh"

namespace smr {
namespace {

// The running state of a (partial) row: its max, and the sum of exp(x - max) over the elements
// it has seen, taken against exp_reference(max) (softmax_math.cuh). Nothing seen yet: {-inf, 0}.
struct RowState {
  float max;
  float sum;
};

// Combine two states. The larger max wins; the other sum is rescaled to it. When a max is -inf
// its sum is 0 (it has seen only -inf), and the reference point of the result is 0 if both are
// -inf: exp2(-inf - 0) = 0, so 0 * 0 = 0 instead of 0 * exp(-inf - (-inf)) = 0 * NaN = NaN.
// The state with the larger max is scaled by exp2(0) = 1 exactly: no rounding is added to it.
__device__ __forceinline__ RowState merge(RowState a, RowState b) {
  const float max = fmaxf(a.max, b.max);
  const float reference = exp_reference(max);
  return {max, a.sum * exp2f(scaled_max(a.max) - reference) +
                   b.sum * exp2f(scaled_max(b.max) - reference)};
}

// Fold one slice of the thread's elements into its running state (the online update).
__device__ __forceinline__ RowState absorb(RowState s, float (&v)[kSliceLoads]) {
  const float max = fmaxf(s.max, slice_max(v));
  const float reference = exp_reference(max);  // 0 while everything seen is -inf: no NaN
#pragma unroll
  for (int u = 0; u < kSliceLoads; ++u) v[u] = exp_shifted(v[u], reference);
  return {max, s.sum * exp2f(scaled_max(s.max) - reference) + slice_sum(v)};
}

struct MergeOp {
  __device__ __forceinline__ RowState operator()(RowState a, RowState b) const {
    return merge(a, b);
  }
  __device__ __forceinline__ RowState identity() const { return {-INFINITY, 0.0f}; }
};

// reduce.cuh's warp_allreduce shuffles through this overload (found by argument-dependent lookup).
__device__ __forceinline__ RowState shfl_xor(RowState s, int lane_mask) {
  return {__shfl_xor_sync(kFullWarpMask, s.max, lane_mask),
          __shfl_xor_sync(kFullWarpMask, s.sum, lane_mask)};
}

template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    online_kernel(const float* __restrict__ x, std::int64_t ld_x, std::int64_t n,
                  float* __restrict__ y, std::int64_t ld_y) {
  const float* row = x + blockIdx.x * ld_x;
  float* out = y + blockIdx.x * ld_y;
  constexpr int kSlice = kThreads * kSliceLoads;

  // Pass 1: the thread's running (max, sum), then the block's.
  RowState s{-INFINITY, 0.0f};
  for (std::int64_t base = 0; base < n; base += kSlice) {
    float v[kSliceLoads];
    load_slice<kThreads>(row, base, n, v, -INFINITY);
    s = absorb(s, v);
  }
  s = block_allreduce<kThreads>(s, MergeOp{});

  // Pass 2: read the row again, write exp(x - max) / sum. An all -inf row: sum = 0, 0 * inf = NaN.
  const float reference = exp_reference(s.max);
  const float inv_sum = 1.0f / s.sum;
  for (std::int64_t base = 0; base < n; base += kSlice) {
    float v[kSliceLoads];
    load_slice<kThreads>(row, base, n, v, -INFINITY);
#pragma unroll
    for (int u = 0; u < kSliceLoads; ++u) v[u] = exp_shifted(v[u], reference) * inv_sum;
    store_slice<kThreads>(out, base, n, v);
  }
}

void launch(const Launch& l) {
  const Problem& p = l.p;
  const auto* x = static_cast<const float*>(l.x);
  auto* y = static_cast<float*>(l.y);
  with_row_block_threads(row_block_threads(p.N), [&](auto threads) {
    constexpr int kThreads = decltype(threads)::value;
    online_kernel<kThreads>
        <<<static_cast<unsigned>(p.M), kThreads, 0, l.stream>>>(x, p.ld_x, p.N, y, p.ld_y);
    CUDA_CHECK_LAUNCH();
  });
}

// Hardware limits per SM on sm_90 (and sm_80): 2048 resident threads, 32 resident blocks.
inline constexpr int kThreadsPerSm = 2048;
inline constexpr int kBlocksPerSm = 32;

// Blocks (= rows) resident per SM. With a GPU: the occupancy calculator, which also knows the
// kernel's registers. Without one (`softmax-bench model`): the thread and block limits, which
// are the binding ones here (ptxas: no instantiation needs more than 32 registers per thread,
// docs/performance.md).
int blocks_per_sm(int threads) {
  int blocks = 0;
  with_row_block_threads(threads, [&](auto t) {
    constexpr int kThreads = decltype(t)::value;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, online_kernel<kThreads>, kThreads,
                                                      0) != cudaSuccess) {
      (void)cudaGetLastError();  // no device here: not an error for the model
      blocks = 0;
    }
  });
  if (blocks > 0) return blocks;
  const int by_threads = kThreadsPerSm / threads;
  return by_threads < kBlocksPerSm ? by_threads : kBlocksPerSm;
}

std::int64_t rows_in_flight(const Problem& p, const DeviceLimits& d) {
  const std::int64_t resident =
      static_cast<std::int64_t>(blocks_per_sm(row_block_threads(p.N))) * d.sm_count;
  return resident < p.M ? resident : p.M;
}

std::optional<std::string> unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  return too_many_rows(p, "online");
}

}  // namespace

namespace entries {

KernelInfo online() {
  KernelInfo k;
  k.name = "online";
  k.description =
      "one block per row, any N: running max and rescaled sum in one pass, exp(x - max) / sum "
      "in a second (3 passes, 2 when L2 holds the rows)";
  k.role = Role::lab;
  k.traffic = TrafficModel::online;
  k.dtypes = {DType::f32};
  k.unsupported = unsupported;
  k.launch = launch;
  k.rows_in_flight = rows_in_flight;
  return k;
}

}  // namespace entries
}  // namespace smr
