// A row held in registers by kLanes threads, K 16-byte vectors' worth each (device code): the tile
// that warp_rows.cu (kLanes = 1..32 lanes of a warp), block_row.cu and cluster_tile.cu (kLanes =
// the whole block) share.
//
// Which elements a thread holds. Thread `lane` (0 .. kLanes-1) owns groups of W elements,
//     group q (q = 0 .. K*V/W - 1) = elements [(q * kLanes + lane) * W, ... + W)
// W = V (4 fp32 or 8 bf16/fp16 elements, one 16-byte access) on the vector path: for each q the
// kLanes threads read kLanes consecutive 16-byte vectors, a fully coalesced access, and a thread's
// K loads are independent, all issued before any is used. W = 1 on the scalar path (rows that are
// not 16-byte aligned): for each q consecutive threads read consecutive elements. Either way the
// group sits at register slots [q * W, q * W + W) of the thread's tile, so the statistics and the
// output do not care which path loaded it. Elements past the row's end hold -inf (max ignores
// them, exp gives 0) and are never stored.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/row_stats.cuh"
#include "kernels/storage.cuh"

namespace smr::prod {

// The tile holds its elements as fp32 whatever the storage type: a 16-bit element is widened as
// it is loaded, and tile_stats overwrites each element with its exponential, so the output costs
// one multiply per element. (A 16-bit tile used to keep the 16-byte vectors as loaded, 2 elements
// a register, and evaluate each exponential again for the output: on the H200 holding fp32 was
// 1.10-1.44x faster at every bf16 shape the tuning run timed, and ptxas gave it no more registers
// -- 80 instead of 99 for warp_rows 32 x 4: docs/performance.md.)
template <class T, int K>
struct RowTile {
  static constexpr int kVecs = K;
  static constexpr int kElems = K * Vec<T>::kElems;
  float e[kElems];
  __device__ __forceinline__ float& at(int i) { return e[i]; }
  __device__ __forceinline__ float at(int i) const { return e[i]; }
};

// How many of the groups q = 0, 1, ... of lane `lane` (group q is number q * kLanes + lane of the
// row) lie among the row's first `groups` groups.
template <int kLanes>
__device__ __forceinline__ int groups_for_lane(std::int64_t groups, int lane) {
  return lane < groups ? static_cast<int>((groups - lane + kLanes - 1) / kLanes) : 0;
}

// Loads elements [0, n) of `row` into the tile (n <= kLanes * K * V; n = 0 fills -inf only).
//
// Vector path: whole vectors are loaded with one predicated 16-byte load each; the row's last,
// partial vector (only when n is not a multiple of V) is patched afterwards element by element.
// Keeping the partial case out of the per-vector code keeps the register count near the tile's
// 4K registers plus addresses: a per-vector "full or partial" branch made ptxas keep both
// versions of every vector live (123 registers instead of 74 for warp_rows, fp32, K = 8).
template <int W, int kLanes, class T, int K>
__device__ __forceinline__ void load_tile(const T* row, std::int64_t n, int lane, RowTile<T, K>& t) {
  constexpr int V = Vec<T>::kElems;
  static_assert(W == V || W == 1, "a group is one vector or one element");
  constexpr int kGroups = K * V / W;
  // Groups q < valid lie inside the row for this lane: one 32-bit compare with a constant per
  // group, and each address is `mine` plus a compile-time offset.
  const std::int64_t groups = W == V ? n / V : n;  // whole groups in the row
  const int valid = groups_for_lane<kLanes>(groups, lane);
  const T* mine = row + static_cast<std::int64_t>(lane) * W;
  if constexpr (W == V) {
#pragma unroll
    for (int q = 0; q < K; ++q) {
      if (q < valid) {
        const Vec<T> v = load_vec(mine + q * kLanes * V);
#pragma unroll
        for (int e = 0; e < V; ++e) t.e[q * V + e] = to_float(v.e[e]);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) t.e[q * V + e] = -INFINITY;
      }
    }
    const int rest = static_cast<int>(n - groups * V);
    if (rest != 0 && groups % kLanes == lane) {  // this thread owns the partial vector
      const std::int64_t q_tail = groups / kLanes;
#pragma unroll
      for (int q = 0; q < K; ++q)
        if (q == q_tail)
#pragma unroll
          for (int e = 0; e < V; ++e)
            if (e < rest) t.e[q * V + e] = to_float(__ldg(row + groups * V + e));
    }
  } else {
#pragma unroll
    for (int q = 0; q < kGroups; ++q)
      t.at(q) = q < valid ? to_float(__ldg(mine + q * kLanes)) : -INFINITY;
  }
}

// (max, sum) of this thread's part of the row: the max first, then one exponential per element,
// taken against the THREAD's reference point. The tile is overwritten with those exponentials,
// so store_tile needs one multiply per element, not a second exponential (the counters showed
// 2.7 special-function instructions per element with the recomputation, against 1.3 for the
// lab's fused kernel: docs/performance.md).
template <class T, int K>
__device__ __forceinline__ RowStats tile_stats(RowTile<T, K>& t) {
  constexpr int n = RowTile<T, K>::kElems;
  float m = t.at(0);
#pragma unroll
  for (int i = 1; i < n; ++i) m = fmaxf(m, t.at(i));
  const float reference = exp_reference(m);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < n; ++i) {
    const float e = exp_shifted(t.at(i), reference);
    t.at(i) = e;
    s += e;
  }
  return RowStats{m, s};
}

// The factor store_tile multiplies the tile's exp(x - thread max) by: exp(thread max - row max)
// / row sum -- the same rescaling the merge applied to this thread's sum, so the sum and the
// outputs agree (0 for a thread that saw only -inf; NaN for the whole row when its sum is NaN or
// 0, as row_stats.cuh defines). Numerics: exp(x - thread max) x exp(thread max - row max) is two
// roundings where exp(x - row max) is one, a relative error of a few 1e-7, far inside the 2^-15
// tolerance (docs/verification.md).
__device__ __forceinline__ float tile_scale(RowStats mine, RowStats row) {
  const RowScale r = row_scale(row);
  return rescale(mine.max, r.reference) * r.inv_sum;
}

// Writes softmax of the tile's elements [0, n) to `row`, through the same mapping as load_tile
// (after tile_stats; `factor` from tile_scale).
template <int W, int kLanes, class T, int K>
__device__ __forceinline__ void store_tile(T* row, std::int64_t n, int lane, const RowTile<T, K>& t,
                                           float factor) {
  constexpr int V = Vec<T>::kElems;
  constexpr int kGroups = K * V / W;
  const std::int64_t groups = W == V ? n / V : n;
  const int valid = groups_for_lane<kLanes>(groups, lane);
  T* mine = row + static_cast<std::int64_t>(lane) * W;
  if constexpr (W == V) {
    const int rest = static_cast<int>(n - groups * V);
    const bool owns_tail = rest != 0 && groups % kLanes == lane;
#pragma unroll
    for (int q = 0; q < K; ++q) {
      Vec<T> out;
#pragma unroll
      for (int e = 0; e < V; ++e) out.e[e] = from_float<T>(t.e[q * V + e] * factor);
      if (q < valid) {
        store_vec(mine + q * kLanes * V, out);
      } else if (owns_tail && q == valid) {
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (e < rest) row[groups * V + e] = out.e[e];
      }
    }
  } else {
#pragma unroll
    for (int q = 0; q < kGroups; ++q)
      if (q < valid) mine[q * kLanes] = from_float<T>(t.at(q) * factor);
  }
}

}  // namespace smr::prod
