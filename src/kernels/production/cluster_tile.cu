// cluster_tile: long rows held in REGISTERS across a thread-block cluster.
//
// What changes from block_row: a row longer than one block's register tile is cut into C equal
// slices of at most one tile each (C = 2, 4, 8, 16 blocks of one cluster; equal, so that no SM of
// the cluster idles while another loads a whole tile: N = 100000 on 4 tiles of 32768 is 4
// slices of 25000, not 3 full tiles and a 1696-element rest). Each block loads its slice exactly as
// block_row loads a row (16-byte loads straight into registers, all issued before the first use,
// row_tile.cuh), reduces it to the slice's (max, sum), and publishes that pair in its shared
// memory; after one cluster barrier the blocks read each other's pair through distributed shared
// memory, merge them in rank order (cluster_stats.cuh: every block gets the same statistics), and
// write their slices from registers. What changes from cluster_row: no shared-memory copy of the
// slice (no TMA, no second pass over shared memory), at the price of a register file per 32768
// fp32 elements: one 1024-thread block per SM.
//
// Tiles (threads, K; tile_lists.hpp): fp32 (1024, 8) = 32768 elements and (512, 8) = 16384 per
// block; bf16/fp16 (1024, 4) = 32768, (512, 4) and (1024, 2) = 16384. Rows up to 16 tiles:
// 524288. The dispatch runs it by default for fp32 rows of 2 tiles of 32768, or up to 8 of 16384,
// that block_hybrid does not take; on the H200 16 tiles ran slower than split_row and 16-bit rows
// slower than cluster_row (its % of the copy ceiling: results/h200/default/; the alternatives:
// results/h200/tuning/; docs/performance.md, "cluster_tile").
//
// Cost per element: one read and one write (TrafficModel::fused); FLOPs as block_row (the tiles
// keep their exponentials). Bound: DRAM bandwidth, with 128 KB of loads in flight per SM (one
// 1024-thread block of 32 elements per thread), as the lab's fused kernel at N = 32768; plus one
// cluster barrier per row, during which the SM's loads for that row are already done.
//
// The cluster exchange keeps each block alive until every block of its cluster has read its
// partial: the final cluster barrier (arrive after reading, wait before exiting).
#include <cooperative_groups.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/common/arch.cuh"
#include "kernels/production/cluster_stats.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/production/row_tile.cuh"
#include "kernels/production/softmax_families.hpp"

namespace smr::prod {

namespace cg = cooperative_groups;

namespace {

// Clusters: sm_90 and later only (common/arch.cuh); the kernel traps elsewhere.
#if SMR_ARCH_HAS_CLUSTERS
template <int W, bool kWindowed, int kThreads, int K, class T>
__device__ __forceinline__ void cluster_tile_body(const T* __restrict__ x, T* __restrict__ y,
                                                  std::int64_t N, std::int64_t ld_x,
                                                  std::int64_t ld_y, std::int64_t slice) {
  __shared__ RowStats block_stats;  // this block's partial, read by the whole cluster
  const cg::cluster_group cluster = cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = blockIdx.x / C;  // 1-D clusters tile the grid: blocks row*C .. row*C+C-1
  const std::int64_t begin = rank * slice;  // slice <= the tile's capacity, a multiple of V
  const std::int64_t n = std::max<std::int64_t>(0, std::min(slice, N - begin));
  const int t = static_cast<int>(threadIdx.x);

  RowTile<T, K> tile;
  load_tile<W, kThreads, kWindowed>(x + row * ld_x + begin, n, t, tile);
  const RowStats mine = tile_stats(tile);
  const RowStats block = block_allreduce<kThreads>(mine, MergeOp{});
  // Every block's partial through distributed shared memory (cluster_stats.cuh).
  const RowStats row_stats = cluster_row_stats(block_stats, block);

  store_tile<W, kThreads, kWindowed>(y + row * ld_y + begin, n, t, tile,
                                     tile_scale(mine, row_stats));

  // No block may exit (and free its shared memory) while another still reads its partial.
  cluster_wait_readers();
}
#endif  // SMR_ARCH_HAS_CLUSTERS

// At least 1024 threads per SM: each thread within 64 registers (softmax_families.hpp).
template <class T, int kThreads, int K, Access A>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks<kThreads>)
    cluster_tile_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t N,
                        std::int64_t ld_x, std::int64_t ld_y, std::int64_t slice) {
#if SMR_ARCH_HAS_CLUSTERS
  cluster_tile_body<kGroupWidth<T, A>, kWindowed<A>, kThreads, K>(x, y, N, ld_x, ld_y, slice);
#else
  (void)x, (void)y, (void)N, (void)ld_x, (void)ld_y, (void)slice;
  SMR_ARCH_UNSUPPORTED();
#endif
}

// f(kernel, capacity) for the plan's tile.
template <class T, Access A, class F>
bool with_kernel(const ClusterTilePlan& plan, F&& f) {
  using Tiles = std::conditional_t<sizeof(T) == 4, ClusterTileTilesFp32, ClusterTileTiles16>;
  return with_tile(Tiles{}, plan.threads, plan.vecs, [&](auto tile) {
    constexpr int kThreads = decltype(tile)::kLanes;
    constexpr int K = decltype(tile)::kVecs;
    const auto kernel = cluster_tile_kernel<T, kThreads, K, A>;
    // Once per instantiation: clusters of more than 8 blocks need the opt-in.
    static const bool prepared = [&] {
      CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
      return true;
    }();
    (void)prepared;
    f(kernel, static_cast<std::int64_t>(kThreads) * K * Vec<T>::kElems);
  });
}

}  // namespace

void launch_cluster_tile(const ClusterTilePlan& plan, const Launch& l) {
  const Problem& p = l.p;
  const bool pow2 = plan.cluster >= 1 && (plan.cluster & (plan.cluster - 1)) == 0;
  if (!pow2 || plan.cluster > kMaxClusterSize)
    throw std::invalid_argument("cluster_tile: cluster size " + std::to_string(plan.cluster) +
                                " is not a power of two in 1..16");
  check_grid_blocks("cluster_tile", "M x C", p.M * plan.cluster);
  bool found = false;
  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    const Access access =
        tile_access(l.x, p.ld_x, l.y, p.ld_y, sizeof(T), plan.slice,
                    static_cast<std::int64_t>(plan.threads) * plan.vecs * Vec<T>::kElems);
    with_access(access, [&](auto a) {
      found = with_kernel<T, a>(plan, [&](auto kernel, std::int64_t capacity) {
        if (plan.slice > capacity || plan.slice < 1 ||
            plan.slice % (kVecBytes / dtype_bytes(p.dtype)) != 0 || plan.slice * plan.cluster < p.N)
          throw std::invalid_argument("cluster_tile: " + std::to_string(plan.cluster) +
                                      " slices of " + std::to_string(plan.slice) +
                                      " elements (tiles of " + std::to_string(capacity) +
                                      ") do not cover N = " + std::to_string(p.N) +
                                      " in whole vectors");
        cudaLaunchAttribute attr[1];
        const cudaLaunchConfig_t cfg = cluster_launch_config(p.M * plan.cluster, plan.threads, 0,
                                                             plan.cluster, l.stream, attr);
        CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, static_cast<const T*>(l.x),
                                      static_cast<T*>(l.y), p.N, p.ld_x, p.ld_y, plan.slice));
        CUDA_CHECK_LAUNCH();
      });
    });
  });
  if (!found) throw no_tile_error("cluster_tile", "T", plan.threads, plan.vecs, p.dtype);
}

int cluster_tile_active_clusters(const ClusterTilePlan& plan, DType t) {
  int clusters = 0;
  bool found = false;
  with_storage(t, [&](auto type_tag) {
    using T = decltype(type_tag);
    // (The aligned instantiation: the others take the same resources, 64 registers a thread.)
    found = with_kernel<T, Access::aligned>(plan, [&](auto kernel, std::int64_t) {
      clusters = max_active_clusters(reinterpret_cast<const void*>(kernel), plan.threads, 0,
                                     plan.cluster);
    });
  });
  if (!found) throw no_tile_error("cluster_tile", "T", plan.threads, plan.vecs, t);
  return clusters;
}

}  // namespace smr::prod
