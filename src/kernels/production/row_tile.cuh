// A row held in registers by kLanes threads, K 16-byte vectors' worth each (device code): the tile
// that warp_rows.cu (kLanes = 1..32 lanes of a warp), block_row.cu, block_hybrid.cu and
// cluster_tile.cu (kLanes = the whole block) share. (experiments/tile_copy.cu copies rows through
// warp_rows' tiles with none of the arithmetic: the cost of these accesses alone.)
//
// Which elements a thread holds. Thread `lane` (0 .. kLanes-1) owns groups of W elements,
//     group q (q = 0 .. K*V/W - 1) = elements [(q * kLanes + lane) * W, ... + W)
// of the row's window (storage.cuh: the row from the 16-byte boundary at or below its start).
// W = V (4 fp32 or 8 bf16/fp16 elements, one 16-byte access) on the vector path: for each q the
// kLanes threads read kLanes consecutive 16-byte vectors, a fully coalesced access, and a thread's
// K loads are independent, all issued before any is used. W = 1 on the scalar path (where x's and
// y's windows do not line up, or the tile has no room for the window; the window is then the row
// itself): for each q consecutive threads read consecutive elements. Either way the group sits at
// register slots [q * W, q * W + W) of the thread's tile, so the statistics and the output do not
// care which path loaded it. Window elements outside the row hold -inf (max ignores them, exp
// gives 0) and are never stored.
//
// One element more a thread (kExtra, where the rows' windows are longer than the vectors:
// access.hpp's tile_path): thread `lane` also holds element C + lane of the window, C = kLanes * K
// * V the vectors' capacity, loaded on its own. A row h elements past a boundary has a window of
// h + N elements, up to V - 1 more than N: without the extra elements a row of 1023 bf16 (window
// up to 1030) needs a tile of 2048, half of it -inf that is still exponentiated, and a row of
// 2^k + 1 the next tile up. With them the tile of C holds any row of N <= C at any offset
// (kLanes >= V - 1), and rows a few elements past C (2^k + 1) too: C + kLanes elements of window
// in all. The scalar path's extra element is element C + lane of the row itself.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/production/row_stats.cuh"
#include "kernels/production/storage.cuh"

namespace smr::prod {

// The tile holds its elements as fp32 whatever the storage type: a 16-bit element is widened as
// it is loaded, and tile_stats overwrites each element with its exponential, so the output costs
// one multiply per element. (A 16-bit tile used to keep the 16-byte vectors as loaded, 2 elements
// a register, and evaluate each exponential again for the output: on the H200 holding fp32 was
// faster at every bf16 shape the tuning run timed, and ptxas gave it fewer registers, not more:
// docs/performance.md, "Tried and rejected".)
template <class T, int K, bool kExtra_ = false>
struct RowTile {
  static constexpr int kVecs = K;
  static constexpr int kElems = K * Vec<T>::kElems;
  static constexpr bool kExtra = kExtra_;
  float e[kElems];
  float extra;  // window element C + lane (kExtra only; unused, it takes no register)
  __device__ __forceinline__ float& at(int i) { return e[i]; }
  __device__ __forceinline__ float at(int i) const { return e[i]; }
};

// C, the elements the tile's vectors hold across its kLanes lanes (the extra elements are past it).
template <int kLanes, class T, int K>
__device__ __forceinline__ constexpr std::int64_t tile_capacity() {
  return std::int64_t{kLanes} * RowTile<T, K>::kElems;
}

// How many of the groups q = 0, 1, ... of lane `lane` (group q is number q * kLanes + lane of the
// row) lie among the row's first `groups` groups.
template <int kLanes>
__device__ __forceinline__ int groups_for_lane(std::int64_t groups, int lane) {
  return lane < groups ? static_cast<int>((groups - lane + kLanes - 1) / kLanes) : 0;
}

// Loads elements [0, n) of `row` into the tile (n = 0 fills -inf only).
//
// Vector path: the tile holds the row's window (storage.cuh), the row's elements at window
// positions [h, h + n) with h = row_head(row), so h + n <= kLanes * K * V. Window vectors wholly
// inside the row are loaded with one predicated 16-byte load each; the at most two partial
// vectors -- the first (when h > 0) and the last (when h + n is not a multiple of V) -- are
// patched afterwards element by element. Keeping the partial cases out of the per-vector code
// keeps the register count near the tile's 4K registers plus addresses: a per-vector "full or
// partial" branch made ptxas keep both versions of every vector live (123 registers instead of 74
// for warp_rows, fp32, K = 8). An aligned row (h = 0) is the same code with nothing to patch at
// the front.
// kWindowed = false: the caller guarantees that the row starts on a 16-byte boundary (h = 0 at
// compile time: Access::aligned).
template <int W, int kLanes, bool kWindowed = false, class T, int K, bool kExtra>
__device__ __forceinline__ void load_tile(const T* row, std::int64_t n, int lane,
                                          RowTile<T, K, kExtra>& t) {
  constexpr int V = Vec<T>::kElems;
  static_assert(W == V || W == 1, "a group is one vector or one element");
  constexpr int kGroups = K * V / W;
  if constexpr (W == V) {
    const int h = kWindowed ? row_head(row) : 0;
    const T* window = row - h;
    const std::int64_t end = h + n;          // the row's end in the window
    const std::int64_t whole = end / V;      // window vectors [h > 0, whole) are inside the row
    // Groups q < valid lie before `whole` for this lane: one 32-bit compare with a constant per
    // group, and each address is `mine` plus a compile-time offset. Lane 0's vector 0 is partial
    // when h > 0.
    const int valid = groups_for_lane<kLanes>(whole, lane);
    const bool partial_first = h != 0 && lane == 0;
    const T* mine = window + static_cast<std::int64_t>(lane) * V;
#pragma unroll
    for (int q = 0; q < K; ++q) {
      if (q < valid && !(q == 0 && partial_first)) {
        const Vec<T> v = load_vec(mine + q * kLanes * V);
#pragma unroll
        for (int e = 0; e < V; ++e) t.e[q * V + e] = to_float(v.e[e]);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) t.e[q * V + e] = -INFINITY;
      }
    }
    if (partial_first) {  // window vector 0: elements [h, min(V, end))
#pragma unroll
      for (int e = 0; e < V; ++e)
        if (e >= h && e < end) t.e[e] = to_float(__ldg(window + e));
    }
    // The last partial vector, number `whole` (unless it is vector 0, patched above).
    const int rest = static_cast<int>(end - whole * V);
    if (rest != 0 && (whole > 0 || h == 0) && whole % kLanes == lane) {
      const std::int64_t q_tail = whole / kLanes;
#pragma unroll
      for (int q = 0; q < K; ++q)
        if (q == q_tail)
#pragma unroll
          for (int e = 0; e < V; ++e)
            if (e < rest) t.e[q * V + e] = to_float(__ldg(window + whole * V + e));
    }
    // Past the vectors (end > C): window element C + lane. (The vector code above loads nothing
    // there: vectors at or past C have no group q < K, so the tail vector is not patched either.)
    if constexpr (kExtra) {
      const std::int64_t i = tile_capacity<kLanes, T, K>() + lane;  // C + lane
      t.extra = i < end ? to_float(__ldg(window + i)) : -INFINITY;
    }
  } else {
    const int valid = groups_for_lane<kLanes>(n, lane);
    const T* mine = row + lane;
#pragma unroll
    for (int q = 0; q < kGroups; ++q)
      t.at(q) = q < valid ? to_float(__ldg(mine + q * kLanes)) : -INFINITY;
    if constexpr (kExtra)
      t.extra = kGroups < valid ? to_float(__ldg(mine + kGroups * kLanes)) : -INFINITY;
  }
}

// The max of this thread's part of the row (fmaxf: a NaN element is passed over; it reaches the
// output through the sum, row_stats.cuh).
template <class Tile>
__device__ __forceinline__ float tile_max(const Tile& t) {
  float m = t.at(0);
#pragma unroll
  for (int i = 1; i < Tile::kElems; ++i) m = fmaxf(m, t.at(i));
  if constexpr (Tile::kExtra) m = fmaxf(m, t.extra);
  return m;
}

// Overwrites each element with exp(x - m), m the max the reference point was taken from
// (exp_reference(m): 0 when m is -inf, so an all--inf part gives zeros, not NaN), and returns
// their sum. Keeping the exponentials means store_tile needs one multiply per element, not a
// second exponential (the counters showed 2.7 special-function instructions per element with the
// recomputation, against 1.3 for the lab's fused kernel: docs/performance.md).
template <class Tile>
__device__ __forceinline__ float tile_exp_sum(Tile& t, float reference) {
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < Tile::kElems; ++i) {
    const float e = exp_shifted_ftz(t.at(i), reference);
    t.at(i) = e;
    s += e;
  }
  if constexpr (Tile::kExtra) {
    t.extra = exp_shifted_ftz(t.extra, reference);
    s += t.extra;
  }
  return s;
}

// (max, sum) of this thread's part of the row, the sum taken against the THREAD's max, to be
// merged with the other threads' (row_stats.cuh) and rescaled by tile_scale.
template <class Tile>
__device__ __forceinline__ RowStats tile_stats(Tile& t) {
  const float m = tile_max(t);
  return RowStats{m, tile_exp_sum(t, exp_reference(m))};
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

// store_tile's vector path, and store_tile_shared_ends' (below). head_by_prev: the row's partial
// first vector is stored by the row before it (not here); tail_to_next: the partial last vector
// is stored whole, its elements past the row taken from next_head (the next row's outputs there).
template <int kLanes, bool kWindowed, class T, int K, bool kExtra>
__device__ __forceinline__ void store_window(T* row, std::int64_t n, int lane,
                                             const RowTile<T, K, kExtra>& t, float factor,
                                             bool head_by_prev, bool tail_to_next,
                                             const Vec<T>& next_head) {
  constexpr int V = Vec<T>::kElems;
  const int h = kWindowed ? row_head(row) : 0;
  T* window = row - h;
  const std::int64_t end = h + n;
  const std::int64_t whole = end / V;
  const int valid = groups_for_lane<kLanes>(whole, lane);
  const bool partial_first = h != 0 && lane == 0;
  const int rest = static_cast<int>(end - whole * V);
  const bool owns_tail = rest != 0 && (whole > 0 || h == 0) && whole % kLanes == lane;
  T* mine = window + static_cast<std::int64_t>(lane) * V;
#pragma unroll
  for (int q = 0; q < K; ++q) {
    Vec<T> out;
#pragma unroll
    for (int e = 0; e < V; ++e) out.e[e] = from_float<T>(t.e[q * V + e] * factor);
    if (q == 0 && partial_first) {
      if (!head_by_prev)
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (e >= h && e < end) window[e] = out.e[e];
    } else if (q < valid) {
      store_vec(mine + q * kLanes * V, out);
    } else if (owns_tail && q == valid) {
      if (tail_to_next) {
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (e >= rest) out.e[e] = next_head.e[e];
        store_vec(window + whole * V, out);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (e < rest) window[whole * V + e] = out.e[e];
      }
    }
  }
  if constexpr (kExtra) {
    const std::int64_t i = tile_capacity<kLanes, T, K>() + lane;  // C + lane
    if (i < end) window[i] = from_float<T>(t.extra * factor);
  }
}

// Writes softmax of the tile's elements to `row`[0, n), through the same mapping as load_tile
// (after tile_stats, `factor` from tile_scale; or after tile_exp_sum against the row's own max,
// `factor` 1 / the row's sum). On the vector path y's row must start as far past a 16-byte
// boundary as x's (same_vector_offsets).
template <int W, int kLanes, bool kWindowed = false, class T, int K, bool kExtra>
__device__ __forceinline__ void store_tile(T* row, std::int64_t n, int lane,
                                           const RowTile<T, K, kExtra>& t, float factor) {
  constexpr int V = Vec<T>::kElems;
  constexpr int kGroups = K * V / W;
  if constexpr (W == V) {
    store_window<kLanes, kWindowed>(row, n, lane, t, factor, false, false, Vec<T>{});
  } else {
    const int valid = groups_for_lane<kLanes>(n, lane);
    T* mine = row + lane;
#pragma unroll
    for (int q = 0; q < kGroups; ++q)
      if (q < valid) mine[q * kLanes] = from_float<T>(t.at(q) * factor);
    if constexpr (kExtra)
      if (kGroups < valid) mine[kGroups * kLanes] = from_float<T>(t.extra * factor);
  }
}

// store_tile for warp_rows' dense rows (ld = N, x's and y's windows lined up), called by every
// lane of the warp (it shuffles): where two consecutive rows of a warp's trip meet inside a
// 16-byte vector -- the last, partial vector of the row before is the first, partial vector of
// the row after -- that vector is stored once, whole, by the lane that owns the earlier row's tail,
// with the later row's elements taken by shuffle from its group's lane 0; only the trip's first
// row's head and last row's tail go element by element. (store_tile stores both partial vectors
// element by element: on dense bf16 rows of 100 ... 197 each such element is an L1 -> L2 write
// sector of its own, 1.31-1.71x the sectors of aligned rows: results/h100/b847af0-odd-counters/.)
// `group` is the row's lane group in the warp (lane / kLanes), `live` whether it has a row,
// `next_live` whether the group after it has the next row. Windowed tiles without the extra
// element only (the window fits the vectors, so a row's tail vector is a tile slot), and rows of
// n >= V (a row's head and tail are then different vectors, and every row after the trip's
// first that starts inside a vector has its head stored by the row before).
template <int kLanes, class T, int K>
__device__ __forceinline__ void store_tile_shared_ends(T* row, std::int64_t n, int lane, int group,
                                                       bool live, bool next_live,
                                                       const RowTile<T, K, false>& t,
                                                       float factor) {
  constexpr int V = Vec<T>::kElems;
  constexpr int kWords = static_cast<int>(sizeof(Vec<T>) / sizeof(unsigned));
  // The next group's lane 0 outputs of its window vector 0: the vector this row's tail shares.
  Vec<T> head;
#pragma unroll
  for (int e = 0; e < V; ++e) head.e[e] = from_float<T>(t.e[e] * factor);
  unsigned words[kWords];
  __builtin_memcpy(words, &head, sizeof(head));
  const int src = (group + 1) * kLanes < kWarpSize ? (group + 1) * kLanes : group * kLanes;
#pragma unroll
  for (int w = 0; w < kWords; ++w) words[w] = __shfl_sync(0xffffffffu, words[w], src);
  Vec<T> next_head;
  __builtin_memcpy(&next_head, words, sizeof(next_head));
  if (live)
    store_window<kLanes, true>(row, n, lane, t, factor, group > 0 && n >= V,
                               next_live && n >= V, next_head);
}

}  // namespace smr::prod
