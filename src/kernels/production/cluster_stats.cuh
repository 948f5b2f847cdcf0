// A row's (max, sum) from the partials of the blocks of one cluster (device code): the exchange
// cluster_tile.cu and cluster_row.cu share.
//
// Each block reduces its slice to one (max, sum) pair; thread 0 puts it in the block's shared
// memory; after one cluster barrier, lane i of every warp reads block i's pair through distributed
// shared memory (mapa + ld.shared::cluster) and the warp merges the C pairs in rank order, so every
// thread of every block gets the same row statistics.
//
// Lifetime. A block must not exit while another block may still read its pair. After reading,
// every thread arrives on the cluster barrier again; cluster_wait_readers() waits for all of the
// cluster's arrivals before the block may exit.
//
// Only thread 0 writes what the other blocks read, so only its arrival needs release semantics.
// Warp 0 arrives with release (barrier.cluster.arrive: a memory barrier in that warp), the other
// warps relaxed; the second arrival orders no write (the pairs read before it are already in
// registers) and is relaxed in every warp. On the H200 this made the cluster plans with two or
// more blocks an SM faster, and those with one no slower, than release arrivals in every warp as
// cooperative_groups' cluster.sync() emits (a MEMBAR in every warp, once per row:
// results/h200/tuning/; docs/performance.md, "cluster_tile"). The split is by warp, never inside
// one: thread 0 alone with release and threads 1-31 relaxed, warp 0 divided between two arrive
// instructions, hung every cluster kernel.
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>

#include "kernels/common/arch.cuh"
#include "kernels/common/reduce.cuh"
#include "kernels/production/row_stats.cuh"

// sm_90 and later only (clusters): defined for no other architecture (common/arch.cuh).
#if SMR_ARCH_HAS_CLUSTERS
namespace smr::prod {

// The row's statistics from this block's pair `block` (the same in every thread: a block
// reduction's result) and the other blocks' pairs. `slot` is a __shared__ RowStats of this block.
// Every thread of every block of the cluster must call it, then cluster_wait_readers() before it
// exits.
__device__ __forceinline__ RowStats cluster_row_stats(RowStats& slot, RowStats block) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) slot = block;
  // Every pair written and released (one arrive instruction per warp: the branch is warp-uniform).
  if (threadIdx.x < kWarpSize)
    cuda::ptx::barrier_cluster_arrive();
  else
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
  cuda::ptx::barrier_cluster_wait();
  const int C = static_cast<int>(cluster.num_blocks());
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const RowStats part = lane < C ? *cluster.map_shared_rank(&slot, lane) : empty_stats();
  const RowStats row = warp_allreduce(part, MergeOp{});
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);  // done reading the others' pairs
  return row;
}

// Waits until every block of the cluster has read this block's pair (cluster_row_stats' second
// arrival); call it last, before the block exits.
__device__ __forceinline__ void cluster_wait_readers() { cuda::ptx::barrier_cluster_wait(); }

}  // namespace smr::prod
#endif  // SMR_ARCH_HAS_CLUSTERS
