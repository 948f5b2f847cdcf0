// The production softmax's kernel families, as the dispatch sees them (host-side declarations;
// each is defined in the .cu file of its name). softmax.cu's launch_plan() calls one of these.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

#include <cuda_runtime_api.h>

#include "kernels/registry.hpp"
#include "kernels/production/softmax_dispatch.hpp"

namespace smr::prod {

// Each launcher takes its family's plan (softmax_dispatch.hpp, SoftmaxPlan::form).
void launch_warp_rows(const WarpRowsPlan& plan, const Launch& l);        // warp_rows.cu
void launch_block_row(const BlockRowPlan& plan, const Launch& l);        // block_row.cu
void launch_block_hybrid(const BlockHybridPlan& plan, const Launch& l);  // block_hybrid.cu
void launch_cluster_row(const ClusterRowPlan& plan, const Launch& l);    // cluster_row.cu
void launch_cluster_tile(const ClusterTilePlan& plan, const Launch& l);  // cluster_tile.cu
void launch_split_row(const SplitRowPlan& plan, const Launch& l);        // split_row.cu

// Clusters of plan.cluster blocks with plan.smem_bytes each that the device can hold at once
// (cudaOccupancyMaxActiveClusters); 0 when such a cluster cannot be scheduled at all.
int cluster_row_active_clusters(const ClusterRowPlan& plan, DType t);
int cluster_tile_active_clusters(const ClusterTilePlan& plan, DType t);
int block_hybrid_active_clusters(const BlockHybridPlan& plan, DType t);  // plan.cluster > 1
// Clusters of `cluster` blocks of `kernel` (`threads` threads, `smem` dynamic shared memory each)
// the current device holds at once (cudaOccupancyMaxActiveClusters); an error -- a cluster the
// device can never place -- counts as 0. What the three functions above ask (softmax.cu).
int max_active_clusters(const void* kernel, int threads, std::size_t smem, int cluster);
// The one for the plan's family; -1 for a plan without a cluster.
int active_clusters(const SoftmaxPlan& plan, DType t);

// Whether the device can place the plan's cluster at all (the cluster families and block_hybrid
// across a cluster; true for every other plan and for a cluster of one block: plan_cluster). The
// registry entry never picks a plan that fails this, and the tests skip such candidates for the
// same reason (softmax.cu).
bool cluster_placeable(const SoftmaxPlan& plan, DType t);

// Blocks of the split kernel for dtype t with plan.smem_bytes that fit on one SM.
int split_row_blocks_per_sm(const SplitRowPlan& plan, DType t);

// Blocks of `kernel` (with `threads` threads and `smem` dynamic shared memory) the current device
// holds at once: SMs x cudaOccupancyMaxActiveBlocksPerMultiprocessor.
std::int64_t resident_blocks(const void* kernel, int threads, std::size_t smem);
inline std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// The register-tile kernels' minimum blocks per SM in __launch_bounds__: kTileThreadsPerSm
// threads, so that ptxas keeps each thread within 64 registers.
template <int kThreads>
inline constexpr int kTileMinBlocks =
    kThreads >= kTileThreadsPerSm ? 1 : kTileThreadsPerSm / kThreads;

// The launchers' checks: a grid of `blocks` blocks (`what`: how they are counted) within the
// 2^31 - 1 a 1-D grid allows; the error for a plan whose tile the family does not instantiate
// (`lanes_name`: "T" for threads, "G" for warp_rows' lanes).
inline void check_grid_blocks(std::string_view family, std::string_view what, std::int64_t blocks) {
  constexpr std::int64_t kMaxGridX = 0x7fffffff;
  if (blocks > kMaxGridX)
    throw std::invalid_argument(std::string(family) + ": " + std::string(what) + " = " +
                                std::to_string(blocks) +
                                " blocks exceed the grid limit of 2^31 - 1");
}
inline std::invalid_argument no_tile_error(std::string_view family, std::string_view lanes_name,
                                           int lanes, int vecs, DType t) {
  return std::invalid_argument(std::string(family) + ": no instantiated tile " +
                               std::string(lanes_name) + "=" + std::to_string(lanes) + " K=" +
                               std::to_string(vecs) + " for " + std::string(to_string(t)));
}

// A launch of `blocks` blocks of `threads` threads in 1-D clusters of `cluster` blocks (the
// cluster kernels: cluster_row.cu, cluster_tile.cu, block_hybrid.cu across a cluster). `attr` is the one attribute it points to.
inline cudaLaunchConfig_t cluster_launch_config(std::int64_t blocks, int threads, std::size_t smem,
                                                int cluster, cudaStream_t stream,
                                                cudaLaunchAttribute* attr) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = dim3(static_cast<unsigned>(blocks));
  cfg.blockDim = dim3(static_cast<unsigned>(threads));
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = static_cast<unsigned>(cluster);
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  return cfg;
}

}  // namespace smr::prod
