// block_hybrid: rows a little too long for one block's registers (32768 < N <= ~90K fp32, ~148K
// 16-bit; 16-bit from 16385 on), one block per row: the row's first part in registers (a
// block_row tile of 1024 or 512 threads), the rest in shared memory (TMA bulk copies,
// row_slice.cuh).
//
// What changes from cluster_tile, which ran N = 65536 fp32 before (two blocks of a cluster, 32768
// elements in each one's registers: 85% of the copy ceiling, where block_row reaches 96% at
// 32768): no cluster. An SM holds 64K fp32 elements at once if it uses both of its stores, the
// register file (a 1024-thread block with 32 fp32 registers of data a thread: 128 KB) and shared
// memory (up to 227 KB), so one block can hold the whole row, as block_row does at 32768, and
// neither waits for two SMs of one GPC to be free at the same time (a cluster's launch) nor for a
// partner at a cluster barrier once per row.
//
// Per block (one row):
//   1. thread 0 hands the shared-memory part, x[cut, N), to the copy engine in 4 chunks; then every
//      thread issues its tile's K 16-byte loads of x[0, cut) (row_tile.cuh);
//   2. the tile's (max, sum) (the tile keeps its exponentials), then the slice's, chunk by chunk as
//      the chunks land; one block reduction of the merged pair;
//   3. the tile is stored from registers, the slice written from shared memory.
// `cut` is where the register tile's window ends: the tile's capacity less the row's offset from
// a 16-byte boundary on the vector path, so the shared-memory part starts on a boundary.
//
// Cost per element: one read and one write (TrafficModel::fused). FLOPs: as block_row for the tile,
// as cluster_row for the slice (its exponentials evaluated twice). Bound: DRAM bandwidth, with up
// to 128 KB of register loads and 227 KB of copies in flight per SM.
//
// Measured on the H200 (docs/performance.md, sessions 4-5): fp32 N = 65536 87% of the copy
// ceiling (predicted ~95%: one block per SM loads, reduces and stores in turn, nothing overlaps the
// phases on that SM), N = 50257 (rows off 16-byte boundaries) 91.5%, both on the 512-thread tile;
// bf16 32768 and 65536 85% and 89% on the 512-thread tile, two blocks per SM, whose phases do
// overlap; bf16 50257 82%.
//
// Limits: N <= the tile's capacity + the shared memory a block can take (the dispatch's
// block_hybrid_max_n); M <= 2^31 - 1 (one block per row).
#include <algorithm>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda_check.hpp"
#include "kernels/row_slice.cuh"
#include "kernels/row_tile.cuh"
#include "kernels/softmax_families.hpp"

namespace smr::prod {

namespace {

// W = V: the tile's window ends on a 16-byte boundary of x and y (kWindowed: the row starts
// anywhere), so the slice starts on one. W = 1: element by element, the slice through its window.
//
// Block b takes rows b, b + gridDim.x, ... (a grid of M blocks: one row each). Chunk c of every
// row's slice is the window vectors [c per, (c + 1) per) of shared memory (one `per` for all rows,
// row_slice.cuh's chunk_range), so the next row's chunk c can be copied in as soon as this row's
// chunk c is written: the next row's loads overlap this row's stores, as in split_row.
template <int W, bool kWindowed, bool kPersistent, int kThreads, int K, class T>
__device__ __forceinline__ void block_hybrid_body(const T* __restrict__ x, T* __restrict__ y,
                                                  std::int64_t M, std::int64_t N,
                                                  std::int64_t ld_x, std::int64_t ld_y) {
  constexpr int V = Vec<T>::kElems;
  constexpr std::int64_t kCapacity = static_cast<std::int64_t>(kThreads) * K * V;
  extern __shared__ __align__(kVecBytes) unsigned char slice_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier bars[kSliceChunks];
  T* s = reinterpret_cast<T*>(slice_smem);
  const int t = static_cast<int>(threadIdx.x);
  init_slice_barriers(bars);
  SliceBarriers sb{bars};
  // A row's slice window spans at most (N - kCapacity) / V + 2 vectors (the tile's window ends up
  // to V - 1 elements early, the slice's window starts up to V - 1 before it).
  const int per = static_cast<int>(chunk_vecs((N - kCapacity) / V + 2));
  // Where row r's register part ends (`cut`) and its slice lies in shared memory.
  struct RowPart {
    const T* xrow;
    int cut;
    SliceWindow w;
  };
  const auto part_of = [&](int r) {
    RowPart rp;
    rp.xrow = x + r * ld_x;
    rp.cut = static_cast<int>(
        std::min(N, kCapacity - (W == V && kWindowed ? row_head(rp.xrow) : 0)));
    rp.w = slice_window<W == 1>(rp.xrow + rp.cut, N - rp.cut, true);
    return rp;
  };

  // 1. The first row's slice goes to the copy engine first (it takes longest); every later row's
  //    is copied in while the row before it is written (step 3).
  const int rows = static_cast<int>(M);
  if (static_cast<int>(blockIdx.x) < rows) {
    const RowPart first = part_of(static_cast<int>(blockIdx.x));
#pragma unroll
    for (int c = 0; c < kSliceChunks; ++c)
      issue_chunk_copy(s, first.xrow + first.cut - first.w.lo, chunk_range(c, first.w, per), sb, c);
  }
  for (int r = static_cast<int>(blockIdx.x); r < rows; r += static_cast<int>(gridDim.x)) {
    const RowPart rp = part_of(r);
    const SliceWindow& w = rp.w;
    T* yrow = y + r * ld_y;
    copy_slice_rest(s, rp.xrow + rp.cut - w.lo, w);  // the edges, element by element
    RowTile<T, K> tile;
    load_tile<W, kThreads, kWindowed>(rp.xrow, rp.cut, t, tile);

    // 2. Statistics: the tile's, the slice's (chunk by chunk as they land), one block reduction.
    const RowStats mine = tile_stats(tile);
    const RowStats sliced = slice_stats(s, w, per, sb);
    const RowStats stats = block_allreduce<kThreads>(merge(mine, sliced), MergeOp{});

    // 3. Output: the slice from shared memory first, chunk by chunk, the next row's chunk c copied
    //    in once every thread has written this row's chunk c (the edges before any chunk: no copy
    //    may land on their vectors while they are read); then the tile from registers.
    const RowScale scale = row_scale(stats);
    T* y_window = yrow + rp.cut - w.lo;
    write_slice_edges(s, y_window, w, scale);
    const int next = r + static_cast<int>(gridDim.x);
    const bool has_next = kPersistent && next < rows;
    const RowPart nx = part_of(has_next ? next : r);
#pragma unroll
    for (int c = 0; c < kSliceChunks; ++c) {
      const VecRange cr = chunk_range(c, w.vlo, w.vhi, per);
      write_slice_vecs(s, y_window, cr.begin, cr.end, W == V, scale);
      __syncthreads();  // every read of chunk c is done
      if (has_next) issue_chunk_copy(s, nx.xrow + nx.cut - nx.w.lo, chunk_range(c, nx.w, per), sb, c);
    }
    store_tile<W, kThreads, kWindowed>(yrow, rp.cut, t, tile, tile_scale(mine, stats));
    if constexpr (!kPersistent) break;
  }
}

// A thread within 64 registers: 1024 threads per SM (one block of 1024, or two of 512;
// softmax_families.hpp).
template <class T, int kThreads, int K, Access A, bool kPersistent>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks<kThreads>)
    block_hybrid_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t M,
                        std::int64_t N, std::int64_t ld_x, std::int64_t ld_y) {
  block_hybrid_body<kGroupWidth<T, A>, kWindowed<A>, kPersistent, kThreads, K>(x, y, M, N, ld_x,
                                                                               ld_y);
}

// The persistent instantiation (a block takes several rows) is compiled apart from the
// one-row-per-block one: its loop keeps more state live, at the 64-register bound.
template <class T, Access A, class F>
bool with_kernel(const SoftmaxPlan& plan, bool persistent, F&& f) {
  using Tiles = std::conditional_t<sizeof(T) == 4, BlockHybridTilesFp32, BlockHybridTiles16>;
  return with_tile(Tiles{}, plan.threads, plan.vecs, [&](auto tile) {
    constexpr int kThreads = decltype(tile)::kLanes;
    constexpr int K = decltype(tile)::kVecs;
    const auto one_row = block_hybrid_kernel<T, kThreads, K, A, false>;
    const auto many_rows = block_hybrid_kernel<T, kThreads, K, A, true>;
    static const bool prepared = [&] {  // once per instantiation
      allow_all_dynamic_shared_memory(one_row);
      allow_all_dynamic_shared_memory(many_rows);
      return true;
    }();
    (void)prepared;
    f(persistent ? many_rows : one_row, static_cast<std::int64_t>(kThreads) * K * Vec<T>::kElems);
  });
}

}  // namespace

void launch_block_hybrid(const SoftmaxPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  if (plan.grid < 1 || plan.grid > p.M)
    throw std::invalid_argument("block_hybrid: a grid of " + std::to_string(plan.grid) +
                                " blocks for M = " + std::to_string(p.M) +
                                " rows (1 ... M blocks, each taking every grid-th row)");
  check_grid_blocks("block_hybrid", "the grid", plan.grid);
  bool found = false;
  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    // (The tile's part of a row ends where its window fills the tile: any row's window fits.)
    const Access access = row_access(l.x, p.ld_x, l.y, p.ld_y, sizeof(T));
    with_access(access, [&](auto a) {
      found = with_kernel<T, a>(plan, plan.grid < p.M, [&](auto kernel, std::int64_t capacity) {
        // The slice: x[cut, N) with cut >= capacity - (V - 1), its window up to V - 1 more.
        constexpr std::int64_t V = Vec<T>::kElems;
        const std::int64_t need = std::max<std::int64_t>(0, p.N - capacity) + 2 * V;
        if (plan.smem_bytes < static_cast<std::size_t>(need * static_cast<std::int64_t>(sizeof(T))))
          throw std::invalid_argument("block_hybrid: " + std::to_string(plan.smem_bytes) +
                                      " bytes of shared memory do not hold the " +
                                      std::to_string(p.N) + " - " + std::to_string(capacity) +
                                      " elements past the register tile");
        kernel<<<static_cast<unsigned>(plan.grid), plan.threads, plan.smem_bytes, l.stream>>>(
            static_cast<const T*>(l.x), static_cast<T*>(l.y), p.M, p.N, p.ld_x, p.ld_y);
        CUDA_CHECK_LAUNCH();
      });
    });
  });
  if (!found) throw no_tile_error("block_hybrid", "T", plan.threads, plan.vecs, p.dtype);
}

}  // namespace smr::prod
