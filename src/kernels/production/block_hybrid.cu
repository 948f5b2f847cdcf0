// block_hybrid: rows a little too long for one block's registers (32768 < N <= ~90K fp32, ~148K
// 16-bit; 16-bit from 16385 on), one block per row: the row's first part in registers (a
// block_row tile of 1024 or 512 threads), the rest in shared memory (TMA bulk copies,
// row_slice.cuh). Longer rows the same way across a cluster, a slice a block (below).
//
// What changes from cluster_tile on its 1024-thread tiles (two blocks of a cluster, 32768
// elements in each one's registers: at N = 65536 fp32 further from the copy ceiling than
// block_row at 32768, results/h200/tuning/): no cluster. An SM holds 64K fp32 elements at once
// if it uses both of its stores, the register file (a 1024-thread block with 32 fp32 registers of
// data a thread: 128 KB) and shared memory (up to 227 KB), so one block can hold the whole row,
// as block_row does at 32768, and
// neither waits for two SMs of one GPC to be free at the same time (a cluster's launch) nor for a
// partner at a cluster barrier once per row.
//
// Per block (its row, or across a cluster its slice of the row: N below is then the slice's
// length, x and y its first elements):
//   1. thread 0 hands the shared-memory part, x[cut, N), to the copy engine in 4 chunks; then every
//      thread issues its tile's K 16-byte loads of x[0, cut) (row_tile.cuh);
//   2. the tile's (max, sum) (the tile keeps its exponentials), then the slice's, chunk by chunk as
//      the chunks land; one block reduction of the merged pair (across a cluster, then merged with
//      the other blocks' pairs: cluster_row_stats);
//   3. the tile is stored from registers, the slice written from shared memory.
// `cut` is where the register tile's window ends: the tile's capacity less the row's offset from
// a 16-byte boundary on the vector path, so the shared-memory part starts on a boundary.
//
// Cost per element: one read and one write (TrafficModel::fused). FLOPs: as block_row for the tile,
// as cluster_row for the slice (its exponentials evaluated twice). Bound: DRAM bandwidth, with up
// to 128 KB of register loads and 227 KB of copies in flight per SM.
//
// Measured on the H200: its % of the copy ceiling per shape is in results/h200/default/ and
// results/h200/bf16/ (docs/performance.md, "block_hybrid"). Writing the slice two vectors at a
// time (write_slice_vecs_grouped) is what brought fp32 N = 65536 up to the register tiles' level;
// a persistent grid (each block taking every grid-th row, the next row's slice copied in while
// this one is written) ran slower than one block per row (results/h200/tuning/).
//
// Limits: N <= the tile's capacity + the shared memory a block can take (the dispatch's
// block_hybrid_max_n), across a cluster N <= C times that; M x C <= 2^31 - 1 (C blocks per row).
//
// Across a cluster (BlockHybridPlan::cluster = C > 1): a row too long for one block is
// cut into C equal slices (whole vectors), one per block of a cluster, and each block holds its
// slice as above -- the first part in its register tile, the rest in its shared memory -- and
// reduces it to one (max, sum) pair, merged with the other blocks' through distributed shared
// memory (cluster_stats.cuh, as cluster_tile and cluster_row do). What it adds to those two:
// cluster_tile holds at most a tile a block (16384 or 32768 elements), cluster_row stages the
// whole slice through shared memory; here a block holds up to a tile plus 227 KB, so a row of
// 2^18 fp32 is 8 blocks of 32768 (16384 in registers, 64 KiB in shared memory, two blocks an
// SM), where cluster_tile would need 16 and split_row runs it over the whole card. On the H200 it
// beats split_row at fp32 2^18 and bf16 2^19, and cluster_row's two blocks at fp32 100000; 16
// blocks a row lost everywhere (the card places 7 clusters of 16 at one block an SM):
// results/h200/tuning/; docs/performance.md, "block_hybrid".
#include <cooperative_groups.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/arch.cuh"
#include "kernels/production/cluster_stats.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/production/row_slice.cuh"
#include "kernels/production/row_tile.cuh"
#include "kernels/production/softmax_families.hpp"

namespace smr::prod {

namespace {

// Shared-memory vectors a thread reads at once in the slice's output pass (row_slice.cuh's
// write_slice_vecs_grouped): two for fp32, one for 16-bit (two vectors of 8 widened elements each
// took the 16-bit slice kernels to the 64-register bound with spills).
template <class T>
inline constexpr int kOutputGroup = sizeof(T) == 4 ? 2 : 1;

// W = V: the tile's window ends on a 16-byte boundary of x and y (kWindowed: the row starts
// anywhere), so the slice starts on one. W = 1: element by element, the slice through its window.
// kCluster: this block's part of the row is slice `rank` of C (elements [rank x slice, ...), a
// multiple of V from the row's start, so it lies against 16-byte boundaries as the row does);
// else the whole row (slice = N).
// TMA bulk copies (and across a cluster, clusters): sm_90 and later only (common/arch.cuh); the
// kernel traps elsewhere.
#if SMR_ARCH_HAS_CLUSTERS
template <int W, bool kWindowed, bool kCluster, int kThreads, int K, class T>
__device__ __forceinline__ void block_hybrid_body(const T* __restrict__ x, T* __restrict__ y,
                                                  std::int64_t N, std::int64_t ld_x,
                                                  std::int64_t ld_y, std::int64_t slice) {
  constexpr int V = Vec<T>::kElems;
  constexpr std::int64_t kCapacity = static_cast<std::int64_t>(kThreads) * K * V;
  extern __shared__ __align__(kVecBytes) unsigned char slice_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier bars[kSliceChunks];
  T* s = reinterpret_cast<T*>(slice_smem);
  const int t = static_cast<int>(threadIdx.x);
  std::int64_t row = blockIdx.x, begin = 0;
  if constexpr (kCluster) {
    const cooperative_groups::cluster_group cluster = cooperative_groups::this_cluster();
    row = blockIdx.x / cluster.num_blocks();  // 1-D clusters tile the grid, C blocks a row
    begin = cluster.block_rank() * slice;
    N = std::max<std::int64_t>(0, std::min(slice, N - begin));  // from here on: this block's part
  }
  const T* xrow = x + row * ld_x + begin;
  T* yrow = y + row * ld_y + begin;

  // 1. The slice's copies first (they take longest), then the tile's loads.
  const std::int64_t cut = std::min(N, kCapacity - (W == V && kWindowed ? row_head(xrow) : 0));
  init_slice_barriers(bars);
  SliceBarriers sb{bars};
  const SliceWindow w = slice_window<W == 1>(xrow + cut, N - cut, true);
  const std::int64_t per = chunk_vecs(w.vhi);
  issue_slice_copy(s, xrow + cut - w.lo, w, per, sb);
  RowTile<T, K> tile;
  load_tile<W, kThreads, kWindowed>(xrow, cut, t, tile);

  // 2. Statistics: the tile's, the slice's, one block reduction.
  const RowStats mine = tile_stats(tile);
  // (W == 1: the slice may start off a 16-byte boundary, as in slice_window<W == 1> above.)
  const RowStats sliced = slice_stats<W == 1>(s, w, per, sb);
  RowStats stats = block_allreduce<kThreads>(merge(mine, sliced), MergeOp{});
  if constexpr (kCluster) {
    // The row's statistics from every block's pair (distributed shared memory).
    __shared__ RowStats block_stats;
    stats = cluster_row_stats(block_stats, stats);
  }

  // 3. Output: the tile from registers, the slice from shared memory.
  store_tile<W, kThreads, kWindowed>(yrow, cut, t, tile, tile_scale(mine, stats));
  const RowScale scale = row_scale(stats);
  write_slice_vecs_grouped<kOutputGroup<T>>(s, yrow + cut - w.lo, w.vlo, w.vhi, W == V, scale);
  write_slice_edges(s, yrow + cut - w.lo, w, scale);
  // No block may exit (and free its shared memory) while another still reads its pair.
  if constexpr (kCluster) cluster_wait_readers();
}
#endif  // SMR_ARCH_HAS_CLUSTERS

// A thread within 64 registers: 1024 threads per SM (one block of 1024, or two of 512;
// softmax_families.hpp).
template <class T, int kThreads, int K, Access A, bool kCluster>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks<kThreads>)
    block_hybrid_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t N,
                        std::int64_t ld_x, std::int64_t ld_y, std::int64_t slice) {
#if SMR_ARCH_HAS_CLUSTERS
  block_hybrid_body<kGroupWidth<T, A>, kWindowed<A>, kCluster, kThreads, K>(x, y, N, ld_x, ld_y,
                                                                            slice);
#else
  (void)x, (void)y, (void)N, (void)ld_x, (void)ld_y, (void)slice;
  SMR_ARCH_UNSUPPORTED();
#endif
}

template <class T, Access A, class F>
bool with_kernel(const BlockHybridPlan& plan, F&& f) {
  using Tiles = std::conditional_t<sizeof(T) == 4, BlockHybridTilesFp32, BlockHybridTiles16>;
  return with_tile(Tiles{}, plan.threads, plan.vecs, [&](auto tile) {
    constexpr int kThreads = decltype(tile)::kLanes;
    constexpr int K = decltype(tile)::kVecs;
    const auto prepare = [](auto kernel, bool cluster) {
      allow_all_dynamic_shared_memory(kernel);
      // Clusters of more than 8 blocks need the opt-in.
      if (cluster)
        CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
      return true;
    };
    const auto run = [&](auto cluster) {
      constexpr bool kCluster = decltype(cluster)::value;
      const auto kernel = block_hybrid_kernel<T, kThreads, K, A, kCluster>;
      static const bool prepared = prepare(kernel, kCluster);  // once per instantiation
      (void)prepared;
      f(kernel, static_cast<std::int64_t>(kThreads) * K * Vec<T>::kElems);
    };
    if (plan.cluster > 1)
      run(std::true_type{});
    else
      run(std::false_type{});
  });
}

// Elements of a row each block holds: the plan's slice across a cluster, else the row.
std::int64_t block_part(const BlockHybridPlan& plan, const Problem& p) {
  return plan.cluster > 1 ? plan.slice : p.N;
}

}  // namespace

void launch_block_hybrid(const BlockHybridPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  const int C = plan.cluster;
  if (C > 1) {
    if (C > kMaxClusterSize || (C & (C - 1)) != 0)
      throw std::invalid_argument("block_hybrid: cluster size " + std::to_string(C) +
                                  " is not a power of two in 1..16");
    const std::int64_t V = kVecBytes / dtype_bytes(p.dtype);
    // Every block's slice in whole vectors, none of them empty.
    if (plan.slice < 1 || plan.slice % V != 0 || plan.slice * C < p.N ||
        plan.slice * (C - 1) >= p.N)
      throw std::invalid_argument("block_hybrid: " + std::to_string(C) + " slices of " +
                                  std::to_string(plan.slice) +
                                  " elements do not cut N = " + std::to_string(p.N) +
                                  " into non-empty parts of whole vectors");
    check_grid_blocks("block_hybrid", "M x C", p.M * C);
  } else {
    check_grid_blocks("block_hybrid", "M (one block per row)", p.M);
  }
  const std::int64_t part = block_part(plan, p);
  bool found = false;
  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    // (The tile's part of a row ends where its window fills the tile: any row's window fits.)
    const Access access = row_access(l.x, p.ld_x, l.y, p.ld_y, sizeof(T));
    with_access(access, [&](auto a) {
      found = with_kernel<T, a>(plan, [&](auto kernel, std::int64_t capacity) {
        // The block's shared-memory part: x[cut, part) with cut >= capacity - (V - 1), its window
        // up to V - 1 more.
        constexpr std::int64_t V = Vec<T>::kElems;
        const std::int64_t need = std::max<std::int64_t>(0, part - capacity) + 2 * V;
        if (plan.smem_bytes < static_cast<std::size_t>(need * static_cast<std::int64_t>(sizeof(T))))
          throw std::invalid_argument("block_hybrid: " + std::to_string(plan.smem_bytes) +
                                      " bytes of shared memory do not hold the " +
                                      std::to_string(part) + " - " + std::to_string(capacity) +
                                      " elements past the register tile");
        const auto* xp = static_cast<const T*>(l.x);
        auto* yp = static_cast<T*>(l.y);
        if (C > 1) {
          cudaLaunchAttribute attr[1];
          const cudaLaunchConfig_t cfg =
              cluster_launch_config(p.M * C, plan.threads, plan.smem_bytes, C, l.stream, attr);
          CUDA_CHECK(
              cudaLaunchKernelEx(&cfg, kernel, xp, yp, p.N, p.ld_x, p.ld_y, plan.slice));
        } else {
          kernel<<<static_cast<unsigned>(p.M), plan.threads, plan.smem_bytes, l.stream>>>(
              xp, yp, p.N, p.ld_x, p.ld_y, p.N);
        }
        CUDA_CHECK_LAUNCH();
      });
    });
  });
  if (!found) throw no_tile_error("block_hybrid", "T", plan.threads, plan.vecs, p.dtype);
}

int block_hybrid_active_clusters(const BlockHybridPlan& plan, DType t) {
  int clusters = 0;
  bool found = false;
  with_storage(t, [&](auto type_tag) {
    using T = decltype(type_tag);
    // (The aligned instantiation: the others take the same resources.)
    found = with_kernel<T, Access::aligned>(plan, [&](auto kernel, std::int64_t) {
      clusters = max_active_clusters(reinterpret_cast<const void*>(kernel), plan.threads,
                                     plan.smem_bytes, plan.cluster);
    });
  });
  if (!found) throw no_tile_error("block_hybrid", "T", plan.threads, plan.vecs, t);
  return clusters;
}

}  // namespace smr::prod
