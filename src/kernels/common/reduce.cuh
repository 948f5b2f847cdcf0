// Warp- and block-wide reductions shared by the row kernels (device code; include from .cu files).
//
// Every reduction here is an *all*-reduce: every thread of the warp (block) gets the result,
// because every thread of a softmax row needs the row's max and sum to scale its own elements.
//
//   warp_allreduce(v, op)                 butterfly over the 32 lanes: 5 shuffles, no shared memory
//   block_allreduce<kBlockThreads>(v, op) each warp reduces, the warps' results meet in shared
//                                         memory, every warp reduces those: 2 barriers
//   warp_max / warp_sum / block_max / block_sum   the float cases, named as the math reads
//
// An operation is a small struct with `T operator()(T, T)` (associative and commutative) and
// `T identity()` (the value that changes nothing: -inf for max, 0 for sum). Types other than
// float (the online kernel's (max, sum) pair) provide their own `shfl_xor(T, int)` overload in
// their namespace; the templates find it by argument-dependent lookup.
//
// Numerics: a sum over a block of T threads is a tree of depth log2(T) (5 levels in the warp,
// log2(T / 32) across warps), not a chain of T additions: that is what keeps the rounding error of
// a row sum small (docs/verification.md, "Tolerance").
#pragma once

#include <cuda_runtime.h>

#include <cmath>

namespace smr {

inline constexpr int kWarpSize = 32;
inline constexpr unsigned kFullWarpMask = 0xffffffffu;
inline constexpr int kMaxBlockThreads = 1024;

struct MaxOp {
  // fmaxf ignores a NaN operand: a NaN in the input does not become the row max; it reaches the
  // output through the sum instead (the whole row becomes NaN, docs/verification.md).
  __device__ __forceinline__ float operator()(float a, float b) const { return fmaxf(a, b); }
  __device__ __forceinline__ float identity() const { return -INFINITY; }
};

struct SumOp {
  __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
  __device__ __forceinline__ float identity() const { return 0.0f; }
};

__device__ __forceinline__ float shfl_xor(float v, int lane_mask) {
  return __shfl_xor_sync(kFullWarpMask, v, lane_mask);
}

// Butterfly: after step `offset`, every lane holds the reduction of a group of 2 * offset lanes;
// after the last step every lane holds the whole warp's result. All 32 lanes must call it.
template <class T, class Op>
__device__ __forceinline__ T warp_allreduce(T v, Op op) {
#pragma unroll
  for (int offset = kWarpSize / 2; offset > 0; offset /= 2) v = op(v, shfl_xor(v, offset));
  return v;
}

// All kBlockThreads threads of the block must call it (it contains __syncthreads). It may be
// called several times in a row: the trailing barrier keeps the next call from overwriting
// `warp_results` while a slow warp is still reading it.
template <int kBlockThreads, class T, class Op>
__device__ __forceinline__ T block_allreduce(T v, Op op) {
  static_assert(kBlockThreads > 0 && kBlockThreads % kWarpSize == 0 &&
                    kBlockThreads <= kMaxBlockThreads,
                "a block is 1 to 32 whole warps");
  constexpr int kWarps = kBlockThreads / kWarpSize;
  v = warp_allreduce(v, op);
  if constexpr (kWarps == 1) {
    return v;
  } else {
    __shared__ T warp_results[kWarps];
    const int warp = static_cast<int>(threadIdx.x) / kWarpSize;
    const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
    if (lane == 0) warp_results[warp] = v;
    __syncthreads();
    // Every warp reduces the kWarps partial results itself: no second broadcast needed.
    v = warp_allreduce(lane < kWarps ? warp_results[lane] : op.identity(), op);
    __syncthreads();
    return v;
  }
}

__device__ __forceinline__ float warp_max(float v) { return warp_allreduce(v, MaxOp{}); }
__device__ __forceinline__ float warp_sum(float v) { return warp_allreduce(v, SumOp{}); }

template <int kBlockThreads>
__device__ __forceinline__ float block_max(float v) {
  return block_allreduce<kBlockThreads>(v, MaxOp{});
}

template <int kBlockThreads>
__device__ __forceinline__ float block_sum(float v) {
  return block_allreduce<kBlockThreads>(v, SumOp{});
}

}  // namespace smr
