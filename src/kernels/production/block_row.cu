// block_row: medium rows (1024 < N <= 32768), one block per row, the row in registers.
//
// What changes from the lab's fused kernel (fused_row.cu), which is the same design: 16-byte
// loads (one LDG.E.128 moves 4 fp32 or 8 bf16/fp16 elements), a tile of K vectors per thread with
// all K loads issued before the first use, and one block-wide reduction of (max, sum) pairs
// (row_stats.cuh) instead of a max reduction followed by a sum reduction: one round of barriers
// instead of two. The tile is (threads, K) from a short list, chosen by the dispatch: for 16-bit
// rows the smallest that holds N, for fp32 rows the widest that N fills to at least 65% (on the
// H200 a row two thirds of its tile ran faster than on the tile it fills exactly:
// softmax_dispatch.hpp); the tail of a row that is not a whole number of vectors is patched
// element by element (row_tile.cuh).
//
// Tiles (tile_lists.hpp): fp32 (64, 4) (96, 4) (128, 4) (192, 4) (256, 4) (384, 4) (512, 4)
// (512, 8) (1024, 8) -> 1024 .. 32768 elements (N = 513 ... 1024 included: warp_rows stops at 512
// fp32); bf16/fp16 (64, 4) (96, 4) (128, 4) (192, 4) (256, 4) (384, 4) (512, 4) (1024, 4) ->
// 2048 .. 32768 elements (192 x 4 and 384 x 4 hold rows just past 4096 and 8192 two thirds full,
// where the next power of two would be half full), with (128, 2) .. (1024, 2) beside them for the
// tuning test, (64, 2), (64, 1) and (128, 1), 512 and 1024 elements, candidates against
// warp_rows, and (96, 2), a candidate only (never the dispatch's pick) for rows just past 1024.
// A thread holds at most 32 elements (its tile is fp32 whatever the storage: row_tile.cuh), and a
// block stays within 64 registers per thread.
//
// Cost per element: one read and one write (TrafficModel::fused); the same FLOPs as warp_rows.
// Bound: DRAM bandwidth, if the SM holds enough rows at once: every thread has K x 16 bytes in
// flight before its first barrier, and the launch bounds keep each thread within 64 registers so
// that at least 1024 threads (64 KB .. 128 KB of loads) fit on an SM.
//
// Rows off 16-byte boundaries: through their windows, the part past the tile's vectors in each
// thread's extra element (row_tile.cuh), so the tile of N holds them (bf16 4097 on 128 x 4).
//
// Limits: N <= threads x K x V of the largest tile, and up to `threads` more on rows off
// boundaries; M <= 2^31 - 1 (one block per row).
#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/cuda_check.hpp"
#include "kernels/production/row_tile.cuh"
#include "kernels/production/softmax_families.hpp"

namespace smr::prod {

namespace {

template <int W, bool kWindowed, bool kExtra, int kThreads, int K, class T>
__device__ __forceinline__ void block_row_body(const T* __restrict__ x, T* __restrict__ y,
                                               std::int64_t N, std::int64_t ld_x,
                                               std::int64_t ld_y) {
  const std::int64_t row = blockIdx.x;
  const int t = static_cast<int>(threadIdx.x);
  RowTile<T, K, kExtra> tile;
  load_tile<W, kThreads, kWindowed>(x + row * ld_x, N, t, tile);
  const RowStats mine = tile_stats(tile);
  const RowStats stats = block_allreduce<kThreads>(mine, MergeOp{});
  store_tile<W, kThreads, kWindowed>(y + row * ld_y, N, t, tile, tile_scale(mine, stats));
}

// At least 1024 threads per SM: each thread within 64 registers (softmax_families.hpp).
template <class T, int kThreads, int K, Access A, bool kExtra>
__global__ void __launch_bounds__(kThreads, kTileMinBlocks<kThreads>)
    block_row_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t N, std::int64_t ld_x,
                     std::int64_t ld_y) {
  block_row_body<kGroupWidth<T, A>, kWindowed<A>, kExtra, kThreads, K>(x, y, N, ld_x, ld_y);
}

}  // namespace

void launch_block_row(const BlockRowPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  check_grid_blocks("block_row", "M (one block per row)", p.M);
  bool found = false;
  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    using Tiles =
        std::conditional_t<sizeof(T) == 4, BlockRowKernelTilesFp32, BlockRowKernelTiles16>;
    found = with_tile(Tiles{}, plan.threads, plan.vecs, [&](auto tile) {
      constexpr int kThreads = decltype(tile)::kLanes;
      constexpr int K = decltype(tile)::kVecs;
      const std::optional<TilePath> path =
          tile_path(l.x, p.ld_x, l.y, p.ld_y, sizeof(T), p.N,
                    static_cast<std::int64_t>(kThreads) * K * Vec<T>::kElems, kThreads);
      if (!path)
        throw std::invalid_argument("block_row: tile T=" + std::to_string(kThreads) +
                                    " K=" + std::to_string(K) + " holds fewer than N = " +
                                    std::to_string(p.N) + " elements");
      with_tile_path(*path, [&](auto a, auto extra) {
        block_row_kernel<T, kThreads, K, a, extra>
            <<<static_cast<unsigned>(p.M), kThreads, 0, l.stream>>>(
                static_cast<const T*>(l.x), static_cast<T*>(l.y), p.N, p.ld_x, p.ld_y);
      });
      CUDA_CHECK_LAUNCH();
    });
  });
  if (!found) throw no_tile_error("block_row", "T", plan.threads, plan.vecs, p.dtype);
}

}  // namespace smr::prod
