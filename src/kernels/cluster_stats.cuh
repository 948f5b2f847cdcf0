// A row's (max, sum) from the partials of the blocks of one cluster (device code): the exchange
// cluster_tile.cu and cluster_row.cu share.
//
// Each block reduces its slice to one (max, sum) pair; thread 0 puts it in the block's shared
// memory; after one cluster barrier, lane i of every warp reads block i's pair through distributed
// shared memory (mapa + ld.shared::cluster) and the warp merges the C pairs in rank order, so every
// thread of every block gets the same row statistics.
//
// The barrier's memory ordering. Only thread 0's write must be visible to the other blocks, so
// only thread 0 arrives with release semantics (barrier.cluster.arrive.release); the other threads
// arrive relaxed (no ordering: they wrote nothing the cluster reads), and every thread waits with
// acquire semantics. cooperative_groups' cluster.sync() gives every thread's arrival release
// semantics: a memory barrier in each of the block's warps (Nsight Compute, session 7: at N =
// 131072 fp32 on cluster_tile, 3.95 cycles per issued instruction stalled on a memory barrier).
//
// Lifetime. A block must not exit while another block may still read its pair. After reading,
// every thread arrives on the cluster barrier again, with release semantics (its remote read is
// performed before its arrival is seen: a relaxed arrival would not promise that);
// cluster_wait_readers() waits for all of the cluster's arrivals before the block may exit.
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
__device__ __forceinline__ RowStats cluster_row_stats(RowStats& slot, RowStats block) {
  namespace cg = cooperative_groups;
  const cg::cluster_group cluster = cg::this_cluster();
  if (threadIdx.x == 0) {
    slot = block;
    cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);  // the pair's write, released
  } else {
    // Relaxed: nothing this thread wrote is read by another block. (The asm clobbers memory so
    // that the compiler keeps this block's earlier accesses before it, as the release does.)
    asm volatile("barrier.cluster.arrive.relaxed;" ::: "memory");
  }
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
  const int C = static_cast<int>(cluster.num_blocks());
  const int lane = static_cast<int>(threadIdx.x) % kWarpSize;
  const RowStats part = lane < C ? *cluster.map_shared_rank(&slot, lane) : empty_stats();
  const RowStats row = warp_allreduce(part, MergeOp{});
  cuda::ptx::barrier_cluster_arrive(cuda::ptx::sem_release);  // done reading the others' pairs
  return row;
}

// Waits until every block of the cluster has read this block's pair (cluster_row_stats' second
// arrival); call it last, before the block exits.
__device__ __forceinline__ void cluster_wait_readers() {
  cuda::ptx::barrier_cluster_wait(cuda::ptx::sem_acquire);
}

}  // namespace smr::prod
