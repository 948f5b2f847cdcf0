// warp_rows: short rows (N <= 1024), a few lanes of a warp per row.
//
// What changes from the lab's fused kernel (fused_row.cu): a block per row wastes most of a block
// on a short row (N = 128 fp32 is 32 vectors: one warp's worth) and pays two block-wide barriers
// per 512 bytes. Here a row belongs to a group of G lanes of one warp (G = 1 .. 32, so 32 / G rows
// per warp), held in registers as K 16-byte vectors per lane (row_tile.cuh); the reductions are
// log2(G) shuffles, no shared memory, no barrier: 16-bit rows the max, then the sum against it
// (two passes, one float a shuffle); fp32 rows (max, sum) pairs, rescaled at each merge (one pass,
// row_stats.cuh): each form the faster for its dtype on the H200. The grid is one block per
// 8 x 32 / G rows (the default but for 16-bit rows past 512) or sized to the card (SMs x resident
// blocks) with each warp striding over the rows (16-bit rows past 512: the faster there on the
// H200; results/h200/tuning/, results/h100/a3e4cf9-any-stride/; docs/performance.md, "warp_rows").
//
// Tiles (G, K), listed by capacity G x K x V (tile_lists.hpp, for this file and the dispatch
// alike): 8 elements per lane while lanes are added (fp32 K = 2, bf16/fp16 K = 1), fp32 from
// capacity 128 on 4 vectors per lane first, and beside each the same capacity on other lanes x
// vectors: the dispatch takes the first tile of the smallest capacity that holds N, and the
// tuning test times the others -- among them tiles of 3 vectors a lane, candidates only, for
// rows just past a power of two at strides of whole vectors (129 fp32 fills 16 x 3's 192 where
// 16 x 4's 256 is half empty; at ld = N the tile of 128 holds it, below).
//
// Cost per element: one read and one write (8 B fp32, 4 B bf16/fp16: TrafficModel::fused);
// FLOPs: 1 FFMA + 1 MUFU.EX2 per element for the sum, then 1 FMUL for the output (the tiles keep
// the exponentials, in fp32 whatever the storage: row_tile.cuh), the max and sum adds. Bound: DRAM
// bandwidth, provided enough loads are in flight: each lane issues its K loads before the first
// shuffle, and an SM holds 24 to 64 warps of this kernel (by its register count, 32 to 80 per
// thread: docs/performance.md): 24 to 98 KB of loads in flight.
//
// Limits: N <= G * K * V of the largest tile (1024), and up to G more on rows off boundaries.
// Rows not 16-byte aligned (odd ld or base) are read and written through their 16-byte windows
// (row_tile.cuh): up to V - 1 elements longer than the row, the part past the tile's vectors
// held by each lane's extra element, instantiated where a window overflows the vectors
// (access.hpp, tile_path). Where x's and y's windows do not line up, or the tile cannot hold the
// window, the kernel's scalar instantiation (W = 1) runs: correct, with 4-8x more accesses. Each
// access pattern (aligned, windowed, scalar; the last two with and without the extra element) is
// its own instantiation, each with launch bounds that keep it at the registers measured best
// (warp_rows_min_blocks below). The windowed instantiation without the extra element has a twin
// for the shared-ends candidate (WarpRowsPlan::shared_ends, dense rows): the 16-byte vector two
// rows of a trip share is stored once, whole (row_tile.cuh, store_tile_shared_ends).
//
// Staged rows (WarpRowsPlan::staged_rows = R > 0: the dispatch's plan for rows off 16-byte
// boundaries up to kWarpRowsStagedMaxN elements). A register tile must hold a row's whole window,
// so a short row off a boundary takes a tile of up to twice its length with lanes idle (N = 31
// fp32: 64, four rows a warp, 496 bytes a trip), and its head and tail go element by element.
// warp_rows_staged_kernel, below, cuts the work by memory instead: a warp copies the span of its
// next R consecutive rows -- from the first row's 16-byte window to the last row's end, up to
// kStagedSpan<T> elements -- into its own part of shared memory in 16-byte vectors (only the span's
// first and last vector, where partial, element by element), reduces each row there with G lanes
// per row (max, then the exponentials' sum, then the outputs written in place: the two-pass
// reduction), and stores the span back in 16-byte vectors where y's rows lie as x's (a vector that
// touches a row's padding, element by element), else element by element, the warp's lanes on
// consecutive elements. Every access to global memory is then a whole coalesced vector except two
// per trip (and the padding's edges), whatever N and ld are; the cost is the shared memory round
// trip (a 16-byte store and load per vector, three 4- or 2-byte loads and one store per element)
// and 32 KB of shared memory a block. On the H100 that paid for rows of 31 and 33 elements and not
// for 128 and 256, where a register tile of half the lanes and twice the vectors ran faster
// (results/h100/odd-rows/).
//
// Packed rows (WarpRowsPlan::packed: a candidate of the dispatch for dense rows that divide a
// 16-byte vector, N = 1, 2, 4 fp32 and 1, 2, 4, 8 16-bit; not yet timed). Every vector of
// the matrix then holds V / N whole rows, so warp_rows_packed_kernel, below, gives each lane
// kWarpRowsPackedVecs vectors a trip and reduces each of their rows in the lane's registers: no
// lane group, no shuffle, no shared memory, every access but the last few rows' a whole
// coalesced 16-byte vector.
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/arch.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/production/row_tile.cuh"
#include "kernels/production/staged_span.hpp"
#include "kernels/production/softmax_families.hpp"

namespace smr::prod {

namespace {

template <int W, bool kWindowed, bool kExtra, int G, int K, bool kTwoPass, bool kSharedEnds,
          class T>
__device__ __forceinline__ void warp_rows_body(const T* __restrict__ x, T* __restrict__ y,
                                               std::int64_t M, std::int64_t N, std::int64_t ld_x,
                                               std::int64_t ld_y) {
  constexpr int kRowsPerWarp = kWarpSize / G;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const int lane_in_row = lane % G;
  const std::int64_t warp =
      (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / kWarpSize);

  // `first` is the same for the whole warp, so every lane takes the same trips and the shuffles
  // always see all 32 lanes; lanes past the last row load nothing and store nothing. A trip
  // takes 32 / G consecutive rows: row first + lane / G for each lane group.
  for (std::int64_t first = warp * kRowsPerWarp; first < M; first += warps * kRowsPerWarp) {
    RowTile<T, K, kExtra> tile;
    const std::int64_t row = first + lane / G;
    const bool live = row < M;
    load_tile<W, G, kWindowed>(x + (live ? row : 0) * ld_x, live ? N : 0, lane_in_row, tile);
    float factor;
    if constexpr (kTwoPass) {
      // The row's max over the lane group first, then the exponentials against it and their
      // sum: 2 x log2(G) shuffles of one float, where the pairs' merge below shuffles two
      // and rescales a sum (an FFMA and a MUFU.EX2 with its -inf guard) at every step.
      // Numerics as the merge's (row_stats.cuh): a row of -inf has max -inf, reference 0,
      // exponentials 0 and sum 0, so 0 x (1 / 0) = NaN; a NaN is skipped by the max (fmaxf)
      // but makes the sum NaN, and so every output; +inf gives exp(inf - inf) = NaN. Each
      // output is exp(x - row max) / sum, one rounding fewer than the merge's rescaling.
      const float row_max = group_allreduce<G>(tile_max(tile), MaxOp{});
      const float sum = group_allreduce<G>(tile_exp_sum(tile, exp_reference(row_max)), SumOp{});
      factor = 1.0f / sum;
    } else {
      const RowStats mine = tile_stats(tile);
      factor = tile_scale(mine, group_allreduce<G>(mine, MergeOp{}));
    }
    if constexpr (kSharedEnds) {  // dense rows: the vectors two rows share stored whole, once
      static_assert(W == Vec<T>::kElems && kWindowed && !kExtra, "windowed tiles only");
      const int group = lane / G;
      store_tile_shared_ends<G>(y + (live ? row : 0) * ld_y, N, lane_in_row, group, live,
                                group + 1 < kRowsPerWarp && row + 1 < M, tile, factor);
    } else if (row < M) {
      store_tile<W, G, kWindowed>(y + row * ld_y, N, lane_in_row, tile, factor);
    }
  }
}

// The launch bounds of each tile: the minimum blocks of 256 threads per SM, so the register
// budget ptxas works to (compiler facts and timings: results/h200/tuning/; docs/performance.md,
// "warp_rows").
// - 16-bit rows within at most 64 registers a thread (4 blocks): left to itself ptxas gives the
//   aligned instantiations 67-78, and the same tile ran markedly slower there. Tiles of 1 or 2
//   vectors a lane (N <= 512) within 40 and 48 registers (6 and 5 blocks), so that an SM holds
//   more warps' loads: faster than at 64. The bounds cost spills in a few instantiations with
//   CUDA 13.0's ptxas (4 bytes in bf16's 1-vector two-pass tiles, 24 in fp16's aligned 4-vector
//   two-pass tiles, 4-8 in some windowed ones: results/h100/e07b69b-extra-element/ptxas-spills.md).
// - fp32 tiles of 2 vectors a lane (N = 32, 64) within 40 registers (6 blocks), 4 vectors
//   (N = 128 ... 512) within 64 (4 blocks): a bound of one block per SM gave them more registers
//   and fewer blocks, and they ran slower. Fewer registers (8 blocks, 32 registers with spill) or
//   fewer blocks (shared memory reserved for nothing) ran slower too: the copy ceiling's 5 blocks
//   an SM, its best, do not carry over. Other fp32 tiles keep ptxas' choice (74-80 at 8 vectors a
//   lane): a 64-register bound spills there.
template <class T, int K>
constexpr int warp_rows_min_blocks() {
  if constexpr (sizeof(T) == 2) {  // 16-bit storage, fp32 tiles
    if constexpr (K == 1) return 6;  // 40 registers
    if constexpr (K == 2) return 5;  // 48
    return 4;                        // 64
  } else {  // fp32
    if constexpr (K == 2) return 6;  // 40
    if constexpr (K == 3 || K == 4) return 4;  // 64
    return 1;                        // ptxas' choice
  }
}

// (On Turing, whose SM holds 1024 threads, at most 4 blocks: common/arch.cuh.)
template <class T, int G, int K, bool kTwoPass, Access A, bool kExtra, bool kSharedEnds>
__global__ void __launch_bounds__(kWarpRowsThreads,
                                  min_blocks_within(warp_rows_min_blocks<T, K>(), kWarpRowsThreads))
    warp_rows_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t M, std::int64_t N,
                     std::int64_t ld_x, std::int64_t ld_y) {
  warp_rows_body<kGroupWidth<T, A>, kWindowed<A>, kExtra, G, K, kTwoPass, kSharedEnds>(
      x, y, M, N, ld_x, ld_y);
}

template <class T, int G, int K, bool kTwoPass, Access A, bool kExtra, bool kSharedEnds = false>
void launch_access(const WarpRowsPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  const auto kernel = warp_rows_kernel<T, G, K, kTwoPass, A, kExtra, kSharedEnds>;
  constexpr std::int64_t kRowsPerBlock = (kWarpRowsThreads / kWarpSize) * (kWarpSize / G);
  static const std::int64_t resident =
      resident_blocks(reinterpret_cast<const void*>(kernel), kWarpRowsThreads, 0);
  const std::int64_t needed = ceil_div(p.M, kRowsPerBlock);
  const std::int64_t grid = plan.grid > 0 ? plan.grid : std::min(needed, resident);
  kernel<<<static_cast<unsigned>(grid), kWarpRowsThreads, 0, l.stream>>>(
      static_cast<const T*>(l.x), static_cast<T*>(l.y), p.M, p.N, p.ld_x, p.ld_y);
  CUDA_CHECK_LAUNCH();
}

template <class T, int G, int K, bool kTwoPass>
void launch_tile(const WarpRowsPlan& plan, const Launch& l) {
  const std::optional<TilePath> path =
      tile_path(l.x, l.p.ld_x, l.y, l.p.ld_y, sizeof(T), l.p.N,
                static_cast<std::int64_t>(G) * K * Vec<T>::kElems, G);
  if (!path)
    throw std::invalid_argument("warp_rows: tile G=" + std::to_string(G) + " K=" +
                                std::to_string(K) + " holds fewer than N = " +
                                std::to_string(l.p.N) + " elements");
  // The shared ends (plan.shared_ends) assume dense rows of at least a vector, two or more a warp:
  // a plan for another layout is refused. Their instantiation runs where the rows reach the tile
  // through windows that fit its vectors; x and y placed otherwise at run time (on boundaries,
  // or at other offsets) take the tile's ordinary path, which shares nothing.
  if (plan.shared_ends && !(l.p.ld_x == l.p.N && l.p.ld_y == l.p.N &&
                            l.p.N >= Vec<T>::kElems && G < kWarpSize))
    throw std::invalid_argument("warp_rows: shared ends need dense rows (ld_x = ld_y = N) of at "
                                "least a vector and fewer than 32 lanes a row, not N = " +
                                std::to_string(l.p.N) + ", ld_x = " + std::to_string(l.p.ld_x) +
                                ", ld_y = " + std::to_string(l.p.ld_y) + ", G = " +
                                std::to_string(G));
  with_tile_path(*path, [&](auto a, auto extra) {
    if constexpr (decltype(a)::value == Access::windowed && !decltype(extra)::value &&
                  G < kWarpSize) {
      if (plan.shared_ends) return launch_access<T, G, K, kTwoPass, a, extra, true>(plan, l);
    }
    launch_access<T, G, K, kTwoPass, a, extra>(plan, l);
  });
}

// ---- Staged rows --------------------------------------------------------------------------------

// Elements of the span one warp stages per trip: kWarpRowsStagedVecs 16-byte vectors per lane.
template <class T>
inline constexpr int kStagedSpan = static_cast<int>(warp_rows_staged_span(sizeof(T)));
static_assert(kStagedSpan<float> == kWarpSize * kWarpRowsStagedVecs * Vec<float>::kElems);

// Rows [first, first + rows) of x, staged: x's span (from the first row's window to the last row's
// end) copied to `stage`, each row reduced there with G lanes per row, the outputs written over
// their inputs, and the span stored to y. `ld` is ld_x (the span's layout in shared memory);
// y_vec: y's rows start as far past a boundary as x's and ld_y == ld_x, so the span goes back as
// vectors.
template <int G, class T>
__device__ __forceinline__ void staged_trip(const T* __restrict__ x, T* __restrict__ y,
                                            Vec<T>* stage, std::int64_t first, int rows,
                                            std::int64_t N, std::int64_t ld_x, std::int64_t ld_y,
                                            bool y_vec) {
  constexpr int V = Vec<T>::kElems;
  constexpr int K = kWarpRowsStagedVecs;
  constexpr int kSpan = kStagedSpan<T>;
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const T* row0 = x + first * ld_x;
  const int h = row_head(row0);
  const T* window = row0 - h;
  // The span in window positions (staged_span.hpp): [h, end). The host's R keeps end <= kSpan:
  // int arithmetic.
  const int n = static_cast<int>(N);
  const int ld = static_cast<int>(ld_x < kSpan ? ld_x : kSpan);  // rows > 1 only when ld < kSpan
  const StagedSpan span{h, n, ld, rows, V};
  const int end = span.end();
  const int vecs = span.vectors();
  T* s = stage[0].e;

  // 1. The span into shared memory: every load issued before the first store. Vectors wholly
  //    inside [h, end) are one 16-byte load; the first and last, where partial, element by element
  //    (the window's bytes outside the span may lie outside x's allocation).
  Vec<T> v[K];
#pragma unroll
  for (int q = 0; q < K; ++q) {
    const int i = q * kWarpSize + lane;
    if (i < vecs && span.loads_whole(i)) v[q] = load_vec(window + i * V);
  }
#pragma unroll
  for (int q = 0; q < K; ++q) {
    const int i = q * kWarpSize + lane;
    if (i >= vecs) continue;
    if (span.loads_whole(i)) {
      stage[i] = v[q];
    } else {
#pragma unroll 1
      for (int e = 0; e < V; ++e) {
        const int p = i * V + e;
        s[p] = p >= h && p < end ? window[p] : storage_neg_inf<T>();
      }
    }
  }
  __syncwarp();

  // 2. Each row from shared memory, 32 / G rows at a time (lanes past the last row reduce an
  //    empty row, so that every lane takes every shuffle): the max, the exponentials' sum against
  //    it, the outputs over the inputs. Numerics as the tiles' two-pass reduction (row_tile.cuh).
  constexpr int kRowsAtOnce = kWarpSize / G;
  const int lane_in_row = lane % G;
  for (int r0 = 0; r0 < rows; r0 += kRowsAtOnce) {
    const int r = r0 + lane / G;
    const int len = r < rows ? n : 0;
    T* in = s + h + (r < rows ? r : 0) * ld;
    float m = -INFINITY;
    for (int j = lane_in_row; j < len; j += G) m = fmaxf(m, to_float(in[j]));
    m = group_allreduce<G>(m, MaxOp{});
    const float reference = exp_reference(m);
    float sum = 0.0f;
    for (int j = lane_in_row; j < len; j += G) sum += exp_shifted_ftz(to_float(in[j]), reference);
    const float factor = 1.0f / group_allreduce<G>(sum, SumOp{});
    for (int j = lane_in_row; j < len; j += G)
      in[j] = from_float<T>(exp_shifted_ftz(to_float(in[j]), reference) * factor);
  }
  __syncwarp();

  // 3. The span back to y.
  if (y_vec) {
    // y's window of the same span. A vector is stored whole when each of its elements is an
    // output: inside [h, end) and, on padded rows (ld > N), not in a row's padding.
    T* y_window = y + first * ld_y - h;
#pragma unroll
    for (int q = 0; q < K; ++q) {
      const int i = q * kWarpSize + lane;
      if (i >= vecs) continue;
      if (span.stores_whole(i)) {
        store_vec(y_window + i * V, stage[i]);
      } else {
#pragma unroll 1
        for (int e = 0; e < V; ++e) {
          const int p = i * V + e;
          if (span.is_output(p)) y_window[p] = s[p];
        }
      }
    }
  } else {
    for (int r = 0; r < rows; ++r)
      for (int j = lane; j < n; j += kWarpSize) y[(first + r) * ld_y + j] = s[h + r * ld + j];
  }
  __syncwarp();  // the next trip's copy overwrites what the lanes read here
}

// Each warp takes R consecutive rows a trip (R = rows_per_trip, the dispatch's: R rows of x fit
// in a span whatever the first row's offset from a boundary), warps striding over the rows on a
// grid sized to the card. Shared memory: kWarpRowsStagedVecs vectors per thread, 32 KB a block.
// Launch bounds: 4 blocks an SM, so 64 registers a thread (left to itself ptxas took 128-172, one
// block an SM: results/h100/odd-rows-staged-first/; at 5 or 6 blocks it spills).
template <class T, int G>
__global__ void __launch_bounds__(kWarpRowsThreads, min_blocks_within(4, kWarpRowsThreads))
    warp_rows_staged_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t M,
                            std::int64_t N, std::int64_t ld_x, std::int64_t ld_y, int rows_per_trip,
                            bool y_vec) {
  __shared__ Vec<T> stage[kWarpRowsThreads * kWarpRowsStagedVecs];
  const int warp_in_block = static_cast<int>(threadIdx.x) / kWarpSize;
  Vec<T>* mine = stage + warp_in_block * kWarpSize * kWarpRowsStagedVecs;
  const std::int64_t warp =
      (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / kWarpSize;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / kWarpSize);
  for (std::int64_t first = warp * rows_per_trip; first < M; first += warps * rows_per_trip) {
    const int rows = static_cast<int>(M - first < rows_per_trip ? M - first : rows_per_trip);
    staged_trip<G>(x, y, mine, first, rows, N, ld_x, ld_y, y_vec);
  }
}

template <class T, int G>
void launch_staged(const WarpRowsPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  const auto kernel = warp_rows_staged_kernel<T, G>;
  static const std::int64_t resident =
      resident_blocks(reinterpret_cast<const void*>(kernel), kWarpRowsThreads, 0);
  constexpr std::int64_t kWarps = kWarpRowsThreads / kWarpSize;
  const std::int64_t grid = std::min(ceil_div(ceil_div(p.M, plan.staged_rows), kWarps), resident);
  const bool y_vec = p.ld_x == p.ld_y && same_vector_offsets(l.x, p.ld_x, l.y, p.ld_y,
                                                             static_cast<int>(sizeof(T)));
  kernel<<<static_cast<unsigned>(grid), kWarpRowsThreads, 0, l.stream>>>(
      static_cast<const T*>(l.x), static_cast<T*>(l.y), p.M, p.N, p.ld_x, p.ld_y,
      static_cast<int>(plan.staged_rows), y_vec);
  CUDA_CHECK_LAUNCH();
}

// The lanes per row the staged kernel is instantiated for.
template <class F>
bool with_staged_lanes(int lanes, F&& f) {
  switch (lanes) {
    case 1: f(std::integral_constant<int, 1>{}); return true;
    case 2: f(std::integral_constant<int, 2>{}); return true;
    case 4: f(std::integral_constant<int, 4>{}); return true;
    case 8: f(std::integral_constant<int, 8>{}); return true;
    case 16: f(std::integral_constant<int, 16>{}); return true;
    case 32: f(std::integral_constant<int, 32>{}); return true;
    default: return false;
  }
}

// ---- Packed rows -------------------------------------------------------------------------------

// Rows that divide a 16-byte vector (N = 1, 2, 4 fp32; 1, 2, 4, 8 bf16/fp16) with nothing between
// them (ld = N): every vector of x holds V / N whole rows, so one lane loads a vector and reduces
// each of its rows in its own registers -- no lane group, no shuffle, no shared memory. Where the
// staged trip (above) copies a span through shared memory and reduces 32 rows a round, here every
// element costs its share of one 16-byte load and store and a few instructions. Lane `me` of the
// grid takes units me, me + T, ..., me + (K - 1) T of each trip (T the grid's threads), all K
// loads issued before the first row is reduced; consecutive lanes take consecutive units, so each
// load and store is fully coalesced. A unit is one 16-byte vector where x and y start on 16-byte
// boundaries (kVector), else one row loaded element by element (correct, not fast). The last
// rows of the vector path -- fewer than V / N, past the last whole vector -- go one a lane,
// element by element. Numerics: the tiles' two-pass form (row_tile.cuh, warp_rows_body).

// Softmax of each of the kElems / N rows of `e`, in place.
template <int N, int kElems>
__device__ __forceinline__ void packed_rows_softmax(float (&e)[kElems]) {
  static_assert(kElems % N == 0, "whole rows");
#pragma unroll
  for (int r = 0; r < kElems; r += N) {
    float m = e[r];
#pragma unroll
    for (int j = 1; j < N; ++j) m = fmaxf(m, e[r + j]);
    const float reference = exp_reference(m);
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < N; ++j) {
      e[r + j] = exp_shifted_ftz(e[r + j], reference);
      sum += e[r + j];
    }
    const float factor = 1.0f / sum;
#pragma unroll
    for (int j = 0; j < N; ++j) e[r + j] *= factor;
  }
}

// kUnit elements from `p`: one 16-byte vector (kUnit = V) or element by element.
template <int kUnit, class T>
__device__ __forceinline__ void load_unit(const T* p, float (&e)[kUnit]) {
  if constexpr (kUnit == Vec<T>::kElems) {
    const Vec<T> v = load_vec(p);
#pragma unroll
    for (int j = 0; j < kUnit; ++j) e[j] = to_float(v.e[j]);
  } else {
#pragma unroll
    for (int j = 0; j < kUnit; ++j) e[j] = load_one(p + j);
  }
}
template <int kUnit, class T>
__device__ __forceinline__ void store_unit(T* p, const float (&e)[kUnit]) {
  if constexpr (kUnit == Vec<T>::kElems) {
    Vec<T> v;
#pragma unroll
    for (int j = 0; j < kUnit; ++j) v.e[j] = from_float<T>(e[j]);
    store_vec(p, v);
  } else {
#pragma unroll
    for (int j = 0; j < kUnit; ++j) p[j] = from_float<T>(e[j]);
  }
}

template <class T, int N, bool kVector>
__global__ void __launch_bounds__(kWarpRowsThreads)
    warp_rows_packed_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t M) {
  constexpr int V = Vec<T>::kElems;
  static_assert(V % N == 0, "a row divides a vector");
  constexpr int kUnit = kVector ? V : N;
  constexpr int K = kWarpRowsPackedVecs;
  const std::int64_t units = M * N / kUnit;  // whole units (the vector path's last rows: below)
  const std::int64_t threads = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  const std::int64_t me = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (std::int64_t first = me; first < units; first += K * threads) {
    float e[K][kUnit];
#pragma unroll
    for (int q = 0; q < K; ++q)
      if (first + q * threads < units) load_unit<kUnit>(x + (first + q * threads) * kUnit, e[q]);
#pragma unroll
    for (int q = 0; q < K; ++q) {
      if (first + q * threads < units) {
        packed_rows_softmax<N>(e[q]);
        store_unit<kUnit>(y + (first + q * threads) * kUnit, e[q]);
      }
    }
  }
  if constexpr (kVector) {
    const std::int64_t row = units * (V / N) + me;
    if (row < M) {
      float e[N];
      load_unit<N>(x + row * N, e);
      packed_rows_softmax<N>(e);
      store_unit<N>(y + row * N, e);
    }
  }
}

template <class T, int N, bool kVector>
void launch_packed_access(const Launch& l) {
  const auto kernel = warp_rows_packed_kernel<T, N, kVector>;
  static const std::int64_t resident =
      resident_blocks(reinterpret_cast<const void*>(kernel), kWarpRowsThreads, 0);
  const std::int64_t units = kVector ? l.p.M * N / Vec<T>::kElems : l.p.M;
  const std::int64_t per_block = std::int64_t{kWarpRowsThreads} * kWarpRowsPackedVecs;
  const std::int64_t grid =
      std::max<std::int64_t>(1, std::min(ceil_div(units, per_block), resident));
  kernel<<<static_cast<unsigned>(grid), kWarpRowsThreads, 0, l.stream>>>(
      static_cast<const T*>(l.x), static_cast<T*>(l.y), l.p.M);
  CUDA_CHECK_LAUNCH();
}

template <class T>
void launch_packed(const Launch& l) {
  const Problem& p = l.p;
  constexpr int V = Vec<T>::kElems;
  if (!rows_pack_vectors(p.N, p.ld_x, p.ld_y, V))
    throw std::invalid_argument("warp_rows: packed rows need N dividing " + std::to_string(V) +
                                " and ld_x = ld_y = N, not N = " + std::to_string(p.N) +
                                ", ld_x = " + std::to_string(p.ld_x) +
                                ", ld_y = " + std::to_string(p.ld_y));
  const bool vector = on_vector_boundary(l.x) && on_vector_boundary(l.y);
  const auto with_n = [&](auto n) {
    constexpr int kN = decltype(n)::value;
    if constexpr (V % kN == 0) {
      if (vector)
        launch_packed_access<T, kN, true>(l);
      else
        launch_packed_access<T, kN, false>(l);
    }
  };
  switch (p.N) {
    case 1: with_n(std::integral_constant<int, 1>{}); break;
    case 2: with_n(std::integral_constant<int, 2>{}); break;
    case 4: with_n(std::integral_constant<int, 4>{}); break;
    case 8: with_n(std::integral_constant<int, 8>{}); break;
  }
}

}  // namespace

void launch_warp_rows(const WarpRowsPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  bool found = false;
  if (plan.packed) {
    with_storage(p.dtype, [&](auto type_tag) { launch_packed<decltype(type_tag)>(l); });
    return;
  }
  if (plan.staged_rows > 0) {
    with_storage(p.dtype, [&](auto type_tag) {
      using T = decltype(type_tag);
      if (plan.staged_rows > staged_rows_fit(Vec<T>::kElems, p.N, p.ld_x, kStagedSpan<T>))
        throw std::invalid_argument("warp_rows: " + std::to_string(plan.staged_rows) +
                                    " staged rows of N = " + std::to_string(p.N) +
                                    ", ld = " + std::to_string(p.ld_x) + " exceed the span of " +
                                    std::to_string(kStagedSpan<T>) + " elements");
      found = with_staged_lanes(plan.lanes_per_row,
                                [&](auto g) { launch_staged<T, decltype(g)::value>(plan, l); });
    });
    if (!found)
      throw std::invalid_argument("warp_rows: no staged kernel for G=" +
                                  std::to_string(plan.lanes_per_row));
    return;
  }
  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    using Tiles =
        std::conditional_t<sizeof(T) == 4, WarpRowsKernelTilesFp32, WarpRowsKernelTiles16>;
    found = with_tile(Tiles{}, plan.lanes_per_row, plan.vecs, [&](auto tile) {
      constexpr int G = decltype(tile)::kLanes;
      constexpr int K = decltype(tile)::kVecs;
      if (plan.two_pass)
        launch_tile<T, G, K, true>(plan, l);
      else
        launch_tile<T, G, K, false>(plan, l);
    });
  });
  if (!found) throw no_tile_error("warp_rows", "G", plan.lanes_per_row, plan.vecs, p.dtype);
}

}  // namespace smr::prod
