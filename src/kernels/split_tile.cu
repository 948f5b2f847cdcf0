// split_tile: long rows held in REGISTERS across many blocks of a co-resident grid.
//
// What changes from cluster_tile: the blocks sharing a row are not a cluster. A cluster of 16
// blocks leaves 15-40% of the card's block slots empty by its placement alone (the H200 places
// 14 clusters of 16 x 512 threads: 224 of 264 slots; docs/performance.md, "Session 14"), and 16
// tiles of 16384 fp32 hold a row of 2^18 at most. Here the row is cut into S equal slices over S
// blocks of a persistent grid launched cooperatively (all resident), and the blocks exchange
// their (max, sum) through global memory as split_row's do (split_partials.cuh: one tagged 64-bit
// word per slice, no fence, no counter).
// What changes from split_row: no shared-memory copy of the slice (no TMA, no second pass over
// shared memory, no chunks): each block loads its slice exactly as block_row loads a row (16-byte
// loads straight into registers, all issued before the first use, row_tile.cuh), at the price of
// a register file per 32768 fp32 elements. The card holds SMs x 32768 fp32 elements this way
// (17.3 MB on the H200): rows of 2^18 ... 2^22 fit R = 16 ... 1 at a time.
//
// A grid of G = R x S blocks (one or two per SM, the tile says); block b always takes slice b % S
// of rows b / S, b / S + R, ... For each (row, slice):
//   1. load the slice into the tile, take the thread's (max, sum) (the tile keeps exp(x - the
//      thread's max)), reduce it over the block;
//   2. thread 0 publishes the block's partial;
//   3. thread i waits for partial i of the row, the block merges the S partials (one per thread,
//      then one block reduction: the same tree in every block, so every block of the row gets the
//      same statistics) and writes its slice from the tile.
// Nothing overlaps step 3's wait within a block; the other block on the SM (512-thread tiles, two
// per SM) and the blocks of the other R - 1 rows keep loading and storing meanwhile.
//
// Why it cannot deadlock: every block is resident (cooperative launch: the launch fails rather
// than leaves blocks unscheduled), the S blocks of a row are the same S blocks for every row they
// take (the grid is R x S), and each of them publishes before it waits.
//
// Cost per element: one read and one write (TrafficModel::fused), plus 8 bytes of partials per
// slice; FLOPs as block_row (the tile keeps its exponentials: one MUFU.EX2 per element, one
// multiply for the output).
#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/cuda_check.hpp"
#include "kernels/row_slice.cuh"
#include "kernels/row_tile.cuh"
#include "kernels/softmax_families.hpp"
#include "kernels/split_partials.cuh"

namespace smr::prod {

namespace {

// Loads elements [0, n) of an aligned row's slice into the tile as load_tile does, its whole
// vectors from the copy in shared memory `s` (s[i] = row[i] for i < n / V x V), the partial last
// vector (fewer than V elements) from `row` itself.
template <int kLanes, class T, int K>
__device__ __forceinline__ void load_tile_staged(const T* s, const T* row, std::int64_t n,
                                                 int lane, RowTile<T, K>& t) {
  constexpr int V = Vec<T>::kElems;
  const auto* sv = reinterpret_cast<const Vec<T>*>(s);
  const std::int64_t whole = n / V;
  const int valid = groups_for_lane<kLanes>(whole, lane);
#pragma unroll
  for (int q = 0; q < K; ++q) {
    if (q < valid) {
      const Vec<T> v = sv[q * kLanes + lane];
#pragma unroll
      for (int e = 0; e < V; ++e) t.e[q * V + e] = to_float(v.e[e]);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) t.e[q * V + e] = -INFINITY;
    }
  }
  const int rest = static_cast<int>(n - whole * V);
  if (rest != 0 && whole % kLanes == lane) {
    const std::int64_t q_tail = whole / kLanes;
#pragma unroll
    for (int q = 0; q < K; ++q)
      if (q == q_tail)
#pragma unroll
        for (int e = 0; e < V; ++e)
          if (e < rest) t.e[q * V + e] = to_float(__ldg(row + whole * V + e));
  }
}

// kStaged (aligned rows only): each next slice is copied into shared memory by the copy engine
// (one TMA bulk copy of its whole vectors, on one mbarrier) as soon as this slice has been moved
// from there into registers -- so it is in flight while this slice's statistics are taken, its
// row's partials awaited and its outputs stored -- and the tile is loaded from shared memory.
template <int W, bool kWindowed, bool kStaged, int kThreads, int K, class T>
__device__ __forceinline__ void split_tile_body(const T* __restrict__ x, T* __restrict__ y,
                                                std::int64_t M, std::int64_t N, std::int64_t ld_x,
                                                std::int64_t ld_y, int S, std::int64_t slice,
                                                float2* __restrict__ partials) {
  constexpr int V = Vec<T>::kElems;
  static_assert(!kStaged || (W == V && !kWindowed), "the staged copy takes aligned rows");
  extern __shared__ __align__(kVecBytes) unsigned char tile_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier staged;
  T* s = reinterpret_cast<T*>(tile_smem);
  const int t = static_cast<int>(threadIdx.x);
  const std::int64_t items = M * S;
  const auto slice_of = [&](std::int64_t item, auto* base, std::int64_t ld) {
    const std::int64_t row = item / S;
    return base + row * ld + (item % S) * slice;
  };
  const auto length = [&](std::int64_t item) {
    return std::max<std::int64_t>(0, std::min(slice, N - (item % S) * slice));
  };
  // Every thread calls it (issue_chunk_copy: thread 0 copies, the others arrive).
  const auto stage = [&](std::int64_t item) {
    issue_chunk_copy(s, slice_of(item, x, ld_x), VecRange{0, length(item) / V}, staged, false);
  };
  bool parity = false;
  if constexpr (kStaged) {
    if (t == 0) {
      init(&staged, blockDim.x);
      cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // the init, seen by the copy engine
    }
    __syncthreads();
    if (blockIdx.x < items) stage(blockIdx.x);
  }
  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const std::int64_t row = item / S;
    const int part = static_cast<int>(item % S);
    const std::int64_t n = length(item);  // slice: whole vectors, its window fits the tile

    // 1. The slice into registers, its statistics.
    RowTile<T, K> tile;
    if constexpr (kStaged) {
      staged.wait_parity(parity);
      parity = !parity;
      load_tile_staged<kThreads>(s, slice_of(item, x, ld_x), n, t, tile);
      __syncthreads();  // every thread's reads of s are done: the next slice may land there
      if (item + gridDim.x < items) stage(item + gridDim.x);
    } else {
      load_tile<W, kThreads, kWindowed>(slice_of(item, x, ld_x), n, t, tile);
    }
    const RowStats mine = tile_stats(tile);
    const RowStats block = block_allreduce<kThreads>(mine, MergeOp{});

    // 2-3. Publish; merge the row's S partials.
    float2* row_partials = partials + row * S;
    if (t == 0) publish_partial(row_partials + part, block);
    const RowStats row_stats = block_allreduce<kThreads>(
        thread_partials<kThreads>(row_partials, S, true), MergeOp{});

    store_tile<W, kThreads, kWindowed>(slice_of(item, y, ld_y), n, t, tile,
                                       tile_scale(mine, row_stats));
  }
}

// At least 1024 threads per SM: each thread within 64 registers (softmax_families.hpp).
template <class T, int kThreads, int K, Access A, bool kStaged = false>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks<kThreads>)
    split_tile_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t M, std::int64_t N,
                      std::int64_t ld_x, std::int64_t ld_y, int S, std::int64_t slice,
                      float2* __restrict__ partials) {
  split_tile_body<kGroupWidth<T, A>, kWindowed<A>, kStaged, kThreads, K>(x, y, M, N, ld_x, ld_y,
                                                                         S, slice, partials);
}

// Blocks of `kernel` with `smem` bytes of dynamic shared memory the current device holds at once,
// asked once per (device, kernel, smem), after allowing the kernel that much (above 48 KB it must
// be asked for): neither call may run between a timed launch's events.
std::int64_t resident_tile_blocks(const void* kernel, int threads, std::size_t smem) {
  static std::mutex mu;
  static std::map<std::tuple<int, const void*, std::size_t>, std::int64_t> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(device, kernel, smem);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  if (smem > 0)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    static_cast<int>(smem)));
  const std::int64_t n = resident_blocks(kernel, threads, smem);
  cache.emplace(key, n);
  return n;
}

// f(kernel, capacity, smem): the staged instantiation for a staged plan on aligned rows (its
// shared memory the slice's bytes), else the one that loads from global memory.
template <class T, Access A, class F>
bool with_kernel(const SoftmaxPlan& plan, F&& f) {
  using Tiles = std::conditional_t<sizeof(T) == 4, SplitTileTilesFp32, SplitTileTiles16>;
  return with_tile(Tiles{}, plan.threads, plan.vecs, [&](auto tile) {
    constexpr int kThreads = decltype(tile)::kLanes;
    constexpr int K = decltype(tile)::kVecs;
    constexpr std::int64_t kCapacity = static_cast<std::int64_t>(kThreads) * K * Vec<T>::kElems;
    if constexpr (A == Access::aligned) {
      if (plan.prefetch) {
        f(split_tile_kernel<T, kThreads, K, A, true>, kCapacity, plan.smem_bytes);
        return;
      }
    }
    f(split_tile_kernel<T, kThreads, K, A>, kCapacity, std::size_t{0});
  });
}

}  // namespace

void launch_split_tile(const SoftmaxPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  if (plan.slices < 1 || plan.grid < plan.slices || plan.grid % plan.slices != 0)
    throw std::invalid_argument("split_tile: a grid of " + std::to_string(plan.grid) +
                                " blocks is not a whole number of rows of " +
                                std::to_string(plan.slices) + " slices");
  const std::size_t need = static_cast<std::size_t>(p.M * plan.slices) * 8;
  bool found = false;
  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    const Access access =
        tile_access(l.x, p.ld_x, l.y, p.ld_y, sizeof(T), plan.slice,
                    static_cast<std::int64_t>(plan.threads) * plan.vecs * Vec<T>::kElems);
    with_access(access, [&](auto a) {
      found = with_kernel<T, a>(plan, [&](auto kernel, std::int64_t capacity, std::size_t smem) {
        if (plan.slice > capacity)
          throw std::invalid_argument("split_tile: a slice of " + std::to_string(plan.slice) +
                                      " elements does not fit a tile of " +
                                      std::to_string(capacity));
        if (plan.slice < 1 || plan.slice % (kVecBytes / dtype_bytes(p.dtype)) != 0 ||
            plan.slice * plan.slices < p.N)
          throw std::invalid_argument("split_tile: " + std::to_string(plan.slices) +
                                      " slices of " + std::to_string(plan.slice) +
                                      " elements do not cover N = " + std::to_string(p.N) +
                                      " in whole vectors");
        if (smem > 0 && smem < static_cast<std::size_t>(plan.slice) * sizeof(T))
          throw std::invalid_argument("split_tile: a staged slice of " +
                                      std::to_string(plan.slice) + " elements needs " +
                                      std::to_string(plan.slice * sizeof(T)) +
                                      " bytes of shared memory, the plan has " +
                                      std::to_string(smem));
        if (l.workspace == nullptr)
          throw std::invalid_argument("split_tile: needs a workspace of " + std::to_string(need) +
                                      " bytes (KernelInfo::workspace_bytes), got none");
        auto* partials = static_cast<float2*>(l.workspace);
        const std::int64_t resident =
            resident_tile_blocks(reinterpret_cast<const void*>(kernel), plan.threads, smem);
        if (plan.grid > resident)
          throw std::invalid_argument("split_tile: the grid of " + std::to_string(plan.grid) +
                                      " blocks exceeds the " + std::to_string(resident) +
                                      " this device holds at once");
        CUDA_CHECK(cudaMemsetAsync(partials, kUnpublishedByte, need, l.stream));
        cudaLaunchConfig_t cfg{};
        cfg.gridDim = dim3(static_cast<unsigned>(plan.grid));
        cfg.blockDim = dim3(static_cast<unsigned>(plan.threads));
        cfg.dynamicSmemBytes = smem;
        cfg.stream = l.stream;
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeCooperative;  // all blocks resident, or the launch fails
        attr[0].val.cooperative = 1;
        cfg.attrs = attr;
        cfg.numAttrs = 1;
        CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, static_cast<const T*>(l.x),
                                      static_cast<T*>(l.y), p.M, p.N, p.ld_x, p.ld_y, plan.slices,
                                      plan.slice, partials));
        CUDA_CHECK_LAUNCH();
      });
    });
  });
  if (!found) throw no_tile_error("split_tile", "T", plan.threads, plan.vecs, p.dtype);
}

}  // namespace smr::prod
