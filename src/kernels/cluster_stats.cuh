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
// By default both arrivals have release semantics in every thread (barrier.cluster.arrive, as
// cooperative_groups' cluster.sync() emits): a memory barrier in each warp. Only thread 0's write
// needs it. Arriving relaxed in every other thread (thread 0 alone with release, so warp 0 split
// between the two) hung every cluster kernel on the H200 (session 7, call 2). Not yet understood;
// a guess to test: the arrival counts per warp, and the split warp arrived twice. `relaxed`
// (SoftmaxPlan::relaxed_exchange, a tuning candidate) tests it without splitting a warp: warp 0
// arrives with release (its thread 0 wrote the pair), warps 1.. relaxed; the second arrival is
// relaxed everywhere (it orders no write: the pairs read before it are already in registers).
#pragma once

#include <cooperative_groups.h>
#include <cuda/ptx>

#include "kernels/reduce.cuh"
#include "kernels/row_stats.cuh"

namespace smr::prod {

// The row's statistics from this block's pair `block` (the same in every thread: a block
// reduction's result) and the other blocks' pairs. `slot` is a __shared__ RowStats of this block.
// Every thread of every block of the cluster must call it, then cluster_wait_readers() before it
// exits.
__device__ __forceinline__ RowStats cluster_row_stats(RowStats& slot, RowStats block,
                                                     bool relaxed = false) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) slot = block;
  // Every pair written and released (the branch is uniform in each warp).
  if (relaxed && threadIdx.x >= kWarpSize)
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
  else
    cuda::ptx::barrier_cluster_arrive();
  cuda::ptx::barrier_cluster_wait();
  const int C = static_cast<int>(cluster.num_blocks());
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const RowStats part = lane < C ? *cluster.map_shared_rank(&slot, lane) : empty_stats();
  const RowStats row = warp_allreduce(part, MergeOp{});
  // Done reading the others' pairs.
  if (relaxed)
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_relaxed);
  else
    cuda::ptx::barrier_cluster_arrive();
  return row;
}

// Waits until every block of the cluster has read this block's pair (cluster_row_stats' second
// arrival); call it last, before the block exits.
__device__ __forceinline__ void cluster_wait_readers() { cuda::ptx::barrier_cluster_wait(); }

}  // namespace smr::prod
