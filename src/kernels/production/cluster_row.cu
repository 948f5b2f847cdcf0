// cluster_row: long rows (16384 < N, up to 16 x 112 KB per row), the row held on chip across a
// thread-block cluster.
//
// What changes from block_row: a row too long for one block's registers is cut into C slices
// (C = 1, 2, 4, 8, 16), one per block of a cluster (Hopper: blocks of a cluster run at the same
// time on neighbouring SMs and can read each other's shared memory). Each block copies its slice
// into shared memory once (TMA bulk copies, row_slice.cuh), computes the slice's (max, sum),
// and publishes it in its shared memory; after one cluster barrier every warp of every block reads
// the C pairs through distributed shared memory and merges them in rank order (cluster_stats.cuh)
// -- every block gets the same row statistics -- and then writes its slice from shared memory.
// x is read from DRAM once, y written once, like the register kernels: no second pass and
// no workspace, for rows up to ~1.8 MB.
//
// C is the smallest power of two that makes a slice at most 64 KB (three blocks per SM), else at
// most 112 KB (two per SM: one block's exchange and write overlap another's copy); clusters
// above 8 blocks need cudaFuncAttributeNonPortableClusterSizeAllowed. The launcher asks
// cudaOccupancyMaxActiveClusters whether the device can place such a cluster at all
// (cluster_row_active_clusters), and the registry entry falls back to a smaller cluster (or
// split_row) when it cannot.
//
// Cost per element: one read, one write (TrafficModel::fused); shared memory: one TMA write and
// two 16-byte reads per vector; FLOPs: 2 exponentials per element (one for the statistics, one
// for the output) plus one per vector for the merge. Bound: DRAM bandwidth, if enough slices are
// being copied at once: each SM holds 2-3 blocks with 64-112 KB of copies in flight.
//
// The cluster exchange keeps each block alive until every block of its cluster has read its
// partial: the final cluster barrier (arrive after reading, wait before exiting).
#include <cooperative_groups.h>

#include <algorithm>
#include <stdexcept>
#include <string>

#include "kernels/common/arch.cuh"
#include "kernels/production/cluster_stats.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/production/row_slice.cuh"
#include "kernels/production/softmax_families.hpp"

namespace smr::prod {

namespace cg = cooperative_groups;

namespace {

// What a launch of cluster_row_kernel takes (launch_cluster_row fills it from a ClusterRowPlan).
template <class T>
struct ClusterRowParams {
  const T* x;
  T* y;
  std::int64_t N, ld_x, ld_y;
  std::int64_t slice;  // elements a block (whole 16-byte vectors)
  bool x_tma;          // each slice's window copied in by the copy engine (else by the threads)
  bool y_vec;          // y written in 16-byte vectors (its rows' windows line up with x's)
  bool thread_copy;    // the threads copy the slice in with cp.async, not the copy engine (TMA)
};

// Three blocks per SM must fit (64 KB slices): the launch bounds keep a thread within 42 registers.
// (On Turing, whose SM holds 1024 threads, where the kernel is a trap anyway: common/arch.cuh.)
// kWindowed: the rows may start off 16-byte boundaries (compiled apart from the aligned case, whose
// offsets are 0 at compile time).
template <class T, bool kWindowed>
__global__ void __launch_bounds__(kSliceThreads, min_blocks_within(3, kSliceThreads))
    cluster_row_kernel(const ClusterRowParams<T> a) {
#if SMR_ARCH_HAS_CLUSTERS  // clusters, TMA (common/arch.cuh)
  const T* __restrict__ x = a.x;
  T* __restrict__ y = a.y;
  const std::int64_t N = a.N, ld_x = a.ld_x, ld_y = a.ld_y, slice = a.slice;
  const bool x_tma = a.x_tma, y_vec = a.y_vec, thread_copy = a.thread_copy;
  static_assert(kSliceThreads % kWarpSize == 0);
  extern __shared__ __align__(kVecBytes) unsigned char slice_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier bars[kSliceChunks];
  __shared__ RowStats block_stats;  // this block's partial, read by the whole cluster

  const cg::cluster_group cluster = cg::this_cluster();
  const int C = static_cast<int>(cluster.num_blocks());
  const int rank = static_cast<int>(cluster.block_rank());
  const std::int64_t row = blockIdx.x / C;  // 1-D clusters tile the grid: blocks row*C .. row*C+C-1
  const std::int64_t begin = rank * slice;
  const std::int64_t n = std::max<std::int64_t>(0, std::min(slice, N - begin));
  T* s = reinterpret_cast<T*>(slice_smem);

  init_slice_barriers(bars);
  SliceBarriers sb{bars, false, thread_copy};
  const T* src = x + row * ld_x + begin;
  const SliceWindow w = slice_window<kWindowed>(src, n, x_tma);
  const std::int64_t per = chunk_vecs(w.vhi);
  issue_slice_copy(s, src - w.lo, w, per, sb);
  const RowStats mine =
      block_allreduce<kSliceThreads>(slice_stats<kWindowed>(s, w, per, sb), MergeOp{});
  // Every block's partial through distributed shared memory (cluster_stats.cuh).
  const RowStats row_stats = cluster_row_stats(block_stats, mine);

  write_slice(s, y + row * ld_y + begin - w.lo, w, y_vec, row_scale(row_stats));

  // No block may exit (and free its shared memory) while another still reads its partial.
  cluster_wait_readers();
#else
  (void)a;
  SMR_ARCH_UNSUPPORTED();
#endif
}

// Once per process and instantiation: the dynamic shared memory limit and the 16-block opt-in.
template <class T, bool kWindowed>
void prepare() {
  static const bool done = [] {
    const auto kernel = cluster_row_kernel<T, kWindowed>;
    allow_all_dynamic_shared_memory(kernel);
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
    return true;
  }();
  (void)done;
}

void check_plan(const ClusterRowPlan& plan, const Problem& p) {
  const bool pow2 = plan.cluster >= 1 && (plan.cluster & (plan.cluster - 1)) == 0;
  if (!pow2 || plan.cluster > kMaxClusterSize)
    throw std::invalid_argument("cluster_row: cluster size " + std::to_string(plan.cluster) +
                                " is not a power of two in 1..16");
  if (plan.slice < 1 || plan.slice % (kVecBytes / dtype_bytes(p.dtype)) != 0 ||
      plan.slice * plan.cluster < p.N ||
      plan.smem_bytes < static_cast<std::size_t>(plan.slice * dtype_bytes(p.dtype)))
    throw std::invalid_argument("cluster_row: slice " + std::to_string(plan.slice) + " x " +
                                std::to_string(plan.cluster) + " blocks does not cover N = " +
                                std::to_string(p.N) + " in whole vectors within " +
                                std::to_string(plan.smem_bytes) + " bytes");
  check_grid_blocks("cluster_row", "M x C", p.M * plan.cluster);
}

}  // namespace

void launch_cluster_row(const ClusterRowPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  check_plan(plan, p);
  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    const bool windowed = !is_vector_aligned(l.x, p.ld_x, sizeof(T));
    const auto kernel = windowed ? cluster_row_kernel<T, true> : cluster_row_kernel<T, false>;
    prepare<T, true>();
    prepare<T, false>();
    cudaLaunchAttribute attr[1];
    const cudaLaunchConfig_t cfg = cluster_launch_config(
        p.M * plan.cluster, kSliceThreads, plan.smem_bytes, plan.cluster, l.stream, attr);
    // The copy engine brings each slice's window when shared memory has room for it (the
    // dispatch gives rows that are not 16-byte aligned one vector more).
    const bool x_tma = static_cast<std::size_t>(
                           (plan.slice + max_row_head(l.x, p.ld_x, sizeof(T))) * sizeof(T)) <=
                       plan.smem_bytes;
    const bool y_vec = x_tma && same_vector_offsets(l.x, p.ld_x, l.y, p.ld_y, sizeof(T));
    const ClusterRowParams<T> args{static_cast<const T*>(l.x), static_cast<T*>(l.y), p.N, p.ld_x,
                                   p.ld_y, plan.slice, x_tma, y_vec, plan.thread_copy};
    CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args));
    CUDA_CHECK_LAUNCH();
  });
}

int cluster_row_active_clusters(const ClusterRowPlan& plan, DType t) {
  int clusters = 0;
  with_storage(t, [&](auto type_tag) {
    using T = decltype(type_tag);
    // (Either instantiation: both within the launch bounds' 42 registers, the same shared memory.)
    const auto kernel = cluster_row_kernel<T, true>;
    prepare<T, true>();
    clusters = max_active_clusters(reinterpret_cast<const void*>(kernel), kSliceThreads,
                                   plan.smem_bytes, plan.cluster);
  });
  return clusters;
}

}  // namespace smr::prod
