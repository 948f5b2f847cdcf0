// A row held in registers by kLanes threads, K 16-byte vectors each (device code): the tile that
// warp_rows.cu (kLanes = 1..32 lanes of a warp) and block_row.cu (kLanes = the whole block) share.
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
#include <type_traits>

#include "kernels/row_stats.cuh"
#include "kernels/storage.cuh"

namespace smr::prod {

// kWide: the elements are held widened to fp32 (as they are loaded) and the exponentials are kept
// in place after tile_stats, so the output costs one multiply per element. fp32 tiles are always
// wide. A 16-bit tile is either narrow -- the 16-byte vectors as loaded, 2 elements a register,
// each widened where it is used and its exponential evaluated again for the output -- or wide,
// twice the registers for one exponential per element instead of two (the dispatch's plans say
// which: SoftmaxPlan::wide).
template <class T, int K, bool kWide_ = sizeof(T) == 4>
struct RowTile {
  static constexpr bool kWide = kWide_;
  using Elem = std::conditional_t<kWide, float, T>;
  static constexpr int kVecs = K;
  static constexpr int kElems = K * Vec<T>::kElems;
  Elem e[kElems];
  __device__ __forceinline__ Elem& at(int i) { return e[i]; }
  __device__ __forceinline__ const Elem& at(int i) const { return e[i]; }
};

// An element as the tile holds it: fp32 in a wide tile, the storage type otherwise.
template <class Elem, class T>
__device__ __forceinline__ Elem held(T v) {
  if constexpr (std::is_same_v<Elem, T>)
    return v;
  else
    return to_float(v);
}
template <class Elem>
__device__ __forceinline__ Elem held_neg_inf() {
  if constexpr (std::is_same_v<Elem, float>)
    return -INFINITY;
  else
    return storage_neg_inf<Elem>();
}

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
template <int W, int kLanes, class T, int K, bool kWide>
__device__ __forceinline__ void load_tile(const T* row, std::int64_t n, int lane,
                                          RowTile<T, K, kWide>& t) {
  using Elem = typename RowTile<T, K, kWide>::Elem;
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
        for (int e = 0; e < V; ++e) t.e[q * V + e] = held<Elem>(v.e[e]);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) t.e[q * V + e] = held_neg_inf<Elem>();
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
            if (e < rest) t.e[q * V + e] = held<Elem>(__ldg(row + groups * V + e));
    }
  } else {
#pragma unroll
    for (int q = 0; q < kGroups; ++q)
      t.at(q) = q < valid ? held<Elem>(__ldg(mine + q * kLanes)) : held_neg_inf<Elem>();
  }
}

// (max, sum) of this thread's part of the row: the max first, then one exponential per element,
// taken against the THREAD's reference point. A wide tile (every fp32 tile) is overwritten with
// those exponentials, so store_tile needs one multiply per element, not a second exponential (the
// counters showed 2.7 special-function instructions per element with the recomputation, against
// 1.3 for the lab's fused kernel; the time gained on the H200 was ~1%: docs/performance.md).
template <class T, int K, bool kWide>
__device__ __forceinline__ RowStats tile_stats(RowTile<T, K, kWide>& t) {
  constexpr int n = RowTile<T, K, kWide>::kElems;
  float m = to_float(t.at(0));
#pragma unroll
  for (int i = 1; i < n; ++i) m = fmaxf(m, to_float(t.at(i)));
  const float reference = exp_reference(m);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < n; ++i) {
    const float e = exp_shifted(to_float(t.at(i)), reference);
    if constexpr (kWide) t.at(i) = e;
    s += e;
  }
  return RowStats{m, s};
}

// What store_tile needs from a thread's own statistics and the row's: for a wide tile, which
// holds exp(x - thread max), the factor exp(thread max - row max) / row sum -- the same
// rescaling the merge applied to this thread's sum, so the sum and the outputs agree (0 for a
// thread that saw only -inf; NaN for the whole row when its sum is NaN or 0, as row_stats.cuh
// defines); for a narrow 16-bit tile, the row's reference point and 1 / sum. Numerics: exp(x - thread
// max) x exp(thread max - row max) is two roundings where exp(x - row max) is one, a relative
// error of a few 1e-7, far inside the 2^-15 tolerance (docs/verification.md).
struct TileScale {
  float reference;  // narrow: the row's exp reference point; wide: unused
  float factor;     // wide: rescale x 1 / sum; narrow: 1 / sum
};
template <class T, int K, bool kWide>
__device__ __forceinline__ TileScale tile_scale(const RowTile<T, K, kWide>&, RowStats mine,
                                                RowStats row) {
  const RowScale r = row_scale(row);
  if constexpr (kWide)
    return TileScale{r.reference, rescale(mine.max, r.reference) * r.inv_sum};
  else
    return TileScale{r.reference, r.inv_sum};
}

template <bool kWide, class Elem>
__device__ __forceinline__ float tile_output(Elem v, TileScale s) {
  if constexpr (kWide)
    return v * s.factor;
  else
    return exp_shifted(to_float(v), s.reference) * s.factor;
}

// Writes softmax of the tile's elements [0, n) to `row`, through the same mapping as load_tile
// (after tile_stats; `r` from tile_scale).
template <int W, int kLanes, class T, int K, bool kWide>
__device__ __forceinline__ void store_tile(T* row, std::int64_t n, int lane,
                                           const RowTile<T, K, kWide>& t, TileScale r) {
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
      for (int e = 0; e < V; ++e) out.e[e] = from_float<T>(tile_output<kWide>(t.e[q * V + e], r));
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
      if (q < valid) mine[q * kLanes] = from_float<T>(tile_output<kWide>(t.at(q), r));
  }
}

}  // namespace smr::prod
