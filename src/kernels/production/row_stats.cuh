// The (max, sum) pair of part of a row, and how two parts merge (device code).
//
// Every production kernel splits a row among threads (and blocks, and clusters): each part
// computes its own statistics
//     max = max_j x_j,   sum = sum_j exp(x_j - max)      (taken against exp_reference(max))
// and the parts merge pairwise, the "online softmax" step of Milakov & Gimelshein:
//     max = max(a.max, b.max)
//     sum = a.sum * exp(a.max - max) + b.sum * exp(b.max - max)
// One of the two rescalings is exp(0) = 1, so merge() computes only the other one.
//
// Numerics, with softmax_math.cuh's conventions:
// - a part that saw only -inf (masked lanes, a thread past the row's end, an all--inf chunk) has
//   (max, sum) = (-inf, 0). Its rescaling factor is defined as 0, never exp(-inf - (-inf)) = NaN,
//   and never 2^(0 - reference) (the -inf part's reference is 0, which would overflow against a
//   very negative max);
// - a NaN in x is ignored by fmaxf but makes its part's sum NaN, and NaN * 0 is NaN: a NaN
//   reaches the row's sum through any merge, and the whole row becomes NaN;
// - +inf: the max is +inf, exp(inf - inf) = NaN makes the sum NaN: the row is NaN, as PyTorch's;
// - an all--inf row ends with sum 0 and 0 * (1 / 0) = NaN, as the lab kernels define it.
// merge() is commutative bit for bit (ties take a.sum + b.sum), so a butterfly all-reduce leaves
// the same pair in every lane, and every block of a cluster computes the same row statistics.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

#include "kernels/common/reduce.cuh"
#include "kernels/common/softmax_math.cuh"

namespace smr::prod {

struct RowStats {
  float max;  // no member initialisers: the type lives in __shared__ arrays
  float sum;
};

__device__ __forceinline__ RowStats empty_stats() { return RowStats{-INFINITY, 0.0f}; }

// exp(part_max - row_max) against the row's reference point; 0 for a part that saw only -inf.
__device__ __forceinline__ float rescale(float part_max, float row_reference) {
  return part_max == -INFINITY ? 0.0f : exp2_ftz(exp_reference(part_max) - row_reference);
}

__device__ __forceinline__ RowStats merge(RowStats a, RowStats b) {
  const bool a_high = a.max >= b.max;
  const float high = a_high ? a.max : b.max;
  const float low = a_high ? b.max : a.max;
  const float sum_high = a_high ? a.sum : b.sum;
  const float sum_low = a_high ? b.sum : a.sum;
  return RowStats{high, sum_high + sum_low * rescale(low, exp_reference(high))};
}

struct MergeOp {
  __device__ __forceinline__ RowStats operator()(RowStats a, RowStats b) const { return merge(a, b); }
  __device__ __forceinline__ RowStats identity() const { return empty_stats(); }
};

// reduce.cuh's warp_allreduce / block_allreduce find this by argument-dependent lookup.
__device__ __forceinline__ RowStats shfl_xor(RowStats v, int lane_mask) {
  return RowStats{__shfl_xor_sync(kFullWarpMask, v.max, lane_mask),
                  __shfl_xor_sync(kFullWarpMask, v.sum, lane_mask)};
}

// The float shuffle (reduce.cuh) beside RowStats' own, for group_allreduce of a max or a sum.
using smr::shfl_xor;

// A butterfly over aligned groups of kLanes lanes (a power of two <= 32): every lane gets its
// group's reduction. All 32 lanes of the warp must call it. kLanes = 32 is warp_allreduce.
template <int kLanes, class T, class Op>
__device__ __forceinline__ T group_allreduce(T v, Op op) {
  static_assert(kLanes >= 1 && kLanes <= kWarpSize && (kLanes & (kLanes - 1)) == 0,
                "a lane group is a power of two within one warp");
#pragma unroll
  for (int offset = kLanes / 2; offset > 0; offset /= 2) v = op(v, shfl_xor(v, offset));
  return v;
}

// Statistics of n values held by one thread: the max first, then one exponential per value.
template <int n>
__device__ __forceinline__ RowStats stats_of(const float (&v)[n]) {
  float m = v[0];
#pragma unroll
  for (int i = 1; i < n; ++i) m = fmaxf(m, v[i]);
  const float reference = exp_reference(m);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < n; ++i) s += exp_shifted_ftz(v[i], reference);
  return RowStats{m, s};
}

// What every output element needs: the row's reference point and 1 / sum.
struct RowScale {
  float reference;
  float inv_sum;
};
__device__ __forceinline__ RowScale row_scale(RowStats s) {
  return RowScale{exp_reference(s.max), 1.0f / s.sum};
}
__device__ __forceinline__ float softmax_value(float x, RowScale r) {
  return exp_shifted_ftz(x, r.reference) * r.inv_sum;
}

}  // namespace smr::prod
