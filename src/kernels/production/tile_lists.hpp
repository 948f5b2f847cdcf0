// The register tiles the production kernels are instantiated for: one list per family and dtype
// class, shared by the kernels (which instantiate exactly these) and the dispatch (which picks
// among them), so the two cannot drift apart. Plain C++: no device code here.
//
// A tile is (lanes, vectors): the threads that hold one row (warp_rows: G lanes of a warp;
// block_row and cluster_tile: the block's threads) and the 16-byte vectors each of them holds
// (K). Its capacity in elements is lanes x K x (16 / dtype bytes). Each list is ordered by
// capacity (cluster_tile's largest first), and the first tile of each capacity is the
// dispatch's default for it (for warp_rows rows off 16-byte boundaries, the tile of that capacity
// with half the lanes and twice the vectors); the others are there for the tuning test
// (experiments/test_tuning.cpp, "[.tune]"), which times them.
#pragma once

#include <vector>

namespace smr {

// A tile as the dispatch sees it (softmax_dispatch.hpp).
struct TileShape {
  int threads_or_lanes;
  int vecs;
  friend bool operator==(TileShape, TileShape) = default;
};

// A tile as the kernels see it: both numbers at compile time.
template <int kLanes_, int kVecs_>
struct RegisterTile {
  static constexpr int kLanes = kLanes_;
  static constexpr int kVecs = kVecs_;
};

template <class... Tiles>
struct TileList {};

// Two lists as one: a kernel instantiates its default tiles and its candidates-only ones.
template <class A, class B>
struct JoinTiles;
template <class... A, class... B>
struct JoinTiles<TileList<A...>, TileList<B...>> {
  using type = TileList<A..., B...>;
};
template <class A, class B>
using JoinTilesT = typename JoinTiles<A, B>::type;

// ---- warp_rows: (G lanes per row, K vectors per lane) -------------------------------------------
// fp32: 8 elements per lane (K = 2) while lanes are added, up to capacity 256 (32 lanes), then 4
// vectors per lane (capacity 512), and beside each capacity the same row on other lanes x
// vectors: on the H200 2 vectors on twice the lanes ran faster than 4 vectors per lane at
// N = 128 and 256. 16-bit rows take 2 vectors per lane first from capacity 32 on (faster than 1
// vector per lane at N = 32 ... 256; capacities 8 and 16 are 1 x 1 and 2 x 1 only). Evidence:
// results/h200/tuning/; docs/performance.md, "warp_rows". A 16-bit lane holds at most 4 vectors:
// at 8 (64 elements) ptxas needed 194 registers and spilled.
using WarpRowsTilesFp32 =
    TileList<RegisterTile<1, 2>, RegisterTile<2, 2>, RegisterTile<4, 2>, RegisterTile<2, 4>,
             RegisterTile<8, 2>, RegisterTile<4, 4>, RegisterTile<2, 8>, RegisterTile<16, 2>,
             RegisterTile<8, 4>, RegisterTile<4, 8>, RegisterTile<32, 2>, RegisterTile<16, 4>,
             RegisterTile<8, 8>, RegisterTile<32, 4>, RegisterTile<16, 8>, RegisterTile<32, 8>>;
using WarpRowsTiles16 =
    TileList<RegisterTile<1, 1>, RegisterTile<2, 1>, RegisterTile<2, 2>, RegisterTile<4, 1>,
             RegisterTile<4, 2>, RegisterTile<8, 1>, RegisterTile<2, 4>, RegisterTile<8, 2>,
             RegisterTile<16, 1>, RegisterTile<4, 4>, RegisterTile<16, 2>, RegisterTile<32, 1>,
             RegisterTile<8, 4>, RegisterTile<32, 2>, RegisterTile<16, 4>, RegisterTile<32, 4>>;
// Tiles of 3 vectors a lane, candidates only (as block_row's wide tiles below): a row just past a
// power of two at a stride of whole vectors (fp32 129, 257; 16-bit 129 ... 185, 257) fills one
// two thirds where the default tile is half full. (At ld = N the power-of-two tile and its extra
// element a lane hold such rows: row_tile.cuh.) Not picked by the dispatch until a run times
// them against it.
using WarpRowsWideTilesFp32 = TileList<RegisterTile<16, 3>, RegisterTile<32, 3>>;
using WarpRowsWideTiles16 = TileList<RegisterTile<8, 3>, RegisterTile<16, 3>>;
// Every tile warp_rows.cu instantiates.
using WarpRowsKernelTilesFp32 = JoinTilesT<WarpRowsTilesFp32, WarpRowsWideTilesFp32>;
using WarpRowsKernelTiles16 = JoinTilesT<WarpRowsTiles16, WarpRowsWideTiles16>;

// ---- block_row: (threads, K vectors per thread) ---------------------------------------------
// fp32: 16 or 32 elements per thread (4 or 8 vectors). bf16/fp16: 32 elements (4 vectors) first,
// 16 (2 vectors) beside them: on the H200 a 16-bit row of 16384 ran faster on 512 x 4 than on
// 1024 x 2 (more bytes in flight per thread). 1024 x 4 holds 32768 16-bit elements as the 32
// fp32 registers a thread of fp32's 1024 x 8 holds. Every block stays within 64 registers a thread.
// 3072-element tiles: 16-bit 96 x 4 holds N = 3000 closer than a 4096 tile would, fp32 192 x 4
// is the default for rows of about 2000 ... 2660 (the fill rule below). 1024-element tiles (fp32
// 64 x 4, 16-bit 64 x 2) are block_row's for fp32 rows of 513 to about 1000 (softmax_dispatch.hpp,
// warp_rows_max_n; from there 96 x 4 is filled to 65%) and candidates against warp_rows for
// 16-bit rows, with the 16-bit tiles of one vector a thread (64 x 1, 128 x 1: 512 and 1024
// elements, one row on 2 or 4 warps, as the Triton seed kernel holds a 16-bit row of 1024;
// 128 x 1 ran 0.89x warp_rows' 32 x 4 at bf16 N = 1024 on the H100:
// results/h100/a3e4cf9-any-stride/tune-short.log). fp32 tiles half again as wide as a power of
// two (96 x 4, 384 x 4) are there because fp32 rows take the widest tile they fill to at least
// kBlockRowMinFillPercent (softmax_dispatch.hpp). Tiles that ran slower than these and are not
// built (768 x 4; 8 elements a thread on 256-1024 threads; 1024 x 4 fp32; 4-vector tiles under
// 32-register launch bounds) are in docs/performance.md, "Tried and rejected"; the measurements
// behind the list in results/h200/tuning/.
using BlockRowTilesFp32 =
    TileList<RegisterTile<64, 4>, RegisterTile<96, 4>, RegisterTile<128, 4>, RegisterTile<192, 4>,
             RegisterTile<256, 4>, RegisterTile<384, 4>, RegisterTile<512, 4>, RegisterTile<512, 8>,
             RegisterTile<1024, 8>>;
// 16-bit tiles half again as wide as a power of two (6144 and 12288 elements: 192 x 4, 384 x 4)
// hold a row just past a power of two at a stride of whole vectors (4097 ... 6144) two thirds full
// where the next power-of-two tile would be half full: on the H100 1.13x and 1.09x that tile at
// N = 4096 and 8192, ld = N + 1 (results/h100/a3e4cf9-any-stride/tune-unaligned.log, before the
// extra element a lane, with which the power-of-two tile holds rows at ld = N: row_tile.cuh).
using BlockRowTiles16 =
    TileList<RegisterTile<64, 1>, RegisterTile<64, 2>, RegisterTile<128, 1>, RegisterTile<64, 4>,
             RegisterTile<128, 2>, RegisterTile<96, 4>, RegisterTile<128, 4>, RegisterTile<256, 2>,
             RegisterTile<192, 4>, RegisterTile<256, 4>, RegisterTile<512, 2>,
             RegisterTile<384, 4>, RegisterTile<512, 4>, RegisterTile<1024, 2>,
             RegisterTile<1024, 4>>;
// The same for rows just past 1024 (96 x 2, 1536 elements), a candidate only: it ran 0.88x the
// half-full 64 x 4 at N = 1024, ld = 1025, in the same run (two vectors a thread, not four).
using BlockRowWideTiles16 = TileList<RegisterTile<96, 2>>;
using BlockRowWideTilesFp32 = TileList<>;  // fp32 has its 1.5x tiles among the defaults
// Every tile block_row.cu instantiates.
using BlockRowKernelTilesFp32 = JoinTilesT<BlockRowTilesFp32, BlockRowWideTilesFp32>;
using BlockRowKernelTiles16 = JoinTilesT<BlockRowTiles16, BlockRowWideTiles16>;

// ---- block_hybrid: (threads, K), the register part of a row that continues in shared memory --
// block_row's largest tiles: 32768 elements (fp32 8 vectors, 16-bit 4) on 1024 threads, and 16384
// on 512 threads, two blocks per SM while two slices fit in its shared memory. 16-bit rows take
// the 512-thread tile first (on the H200 two 512-thread blocks per SM ran well ahead of one
// 1024-thread block). fp32 rows take the 512-thread tile whenever it holds the row (N <= 16384 +
// a slice of ~227 KB), one or two per SM: faster than the 1024-thread tile at N = 50257 and 65536
// (both tiles' aligned instantiations spill at the 64-register bound: not the reason). Evidence:
// results/h200/tuning/; docs/performance.md, "block_hybrid".
using BlockHybridTilesFp32 = TileList<RegisterTile<512, 8>, RegisterTile<1024, 8>>;
using BlockHybridTiles16 = TileList<RegisterTile<512, 4>, RegisterTile<1024, 4>>;

// ---- cluster_tile: (threads, K) per block, largest first ---------------------------------------
// block_row's largest tiles: 32768 elements per block on 1024 threads (fp32 8 vectors, 16-bit 4:
// 32 fp32 registers a thread either way), then 16384 on 512 threads (two blocks per SM, twice
// the blocks per row) and, for 16-bit rows, 16384 on 1024 threads.
using ClusterTileTilesFp32 = TileList<RegisterTile<1024, 8>, RegisterTile<512, 8>>;
using ClusterTileTiles16 =
    TileList<RegisterTile<1024, 4>, RegisterTile<512, 4>, RegisterTile<1024, 2>>;

// The list as the dispatch's TileShapes, in order.
template <class... Tiles>
std::vector<TileShape> tile_shapes(TileList<Tiles...>) {
  return {TileShape{Tiles::kLanes, Tiles::kVecs}...};
}

// The one switch from a plan's run-time (lanes, vecs) to a compile-time tile: calls
// f(RegisterTile<lanes, vecs>{}) for the listed tile equal to them; false when none is.
template <class F, class... Tiles>
bool with_tile(TileList<Tiles...>, int lanes, int vecs, F&& f) {
  return ((Tiles::kLanes == lanes && Tiles::kVecs == vecs ? (f(Tiles{}), true) : false) || ...);
}

}  // namespace smr
