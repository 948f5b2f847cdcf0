// The register tiles the production kernels are instantiated for: one list per family and dtype
// class, shared by the kernels (which instantiate exactly these) and the dispatch (which picks
// among them), so the two cannot drift apart. Plain C++: no device code here.
//
// A tile is (lanes, vectors): the threads that hold one row (warp_rows: G lanes of a warp;
// block_row and cluster_tile: the block's threads) and the 16-byte vectors each of them holds
// (K). Its capacity in elements is lanes x K x (16 / dtype bytes). Each list is ordered by
// capacity, and the first tile of each capacity is the dispatch's default for it; the others
// are there for the tuning test (experiments/test_tuning.cpp, "[.tune]"), which times them.
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

// ---- warp_rows: (G lanes per row, K vectors per lane) -------------------------------------------
// fp32: 8 elements per lane (K = 2) while lanes are added, up to capacity 256 (32 lanes), then 4
// vectors per lane (capacity 512), and beside each capacity the same row on other lanes x
// vectors. (Session 3's tuning run had 4 vectors per lane first from capacity 128 on, 1.02x at
// N = 128 and 1.07x at 256; on the exponentials of session 6, one MUFU.EX2 each, 2 vectors on
// twice the lanes ran 1.018x at N = 128 and 1.007x at 256.) 16-bit rows take 2 vectors per lane
// first wherever the capacity allows (on the H200 they beat 1 vector per lane by 1.24-1.36x at
// N = 32 ... 256: docs/performance.md). A 16-bit lane holds at most 4 vectors: at 8 (64
// elements) ptxas needed 194 registers and spilled.
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

// ---- block_row: (threads, K vectors per thread) ---------------------------------------------
// fp32: 16 or 32 elements per thread (4 or 8 vectors). bf16/fp16: 32 elements (4 vectors) first,
// 16 (2 vectors) beside them: on the H200 a 16-bit row of 16384 on 512 x 4 ran 1.54x faster than
// on 1024 x 2 (more bytes in flight per thread). 1024 x 4 holds 32768 16-bit elements as the 32
// fp32 registers a thread of fp32's 1024 x 8 holds. Every block stays within 64 registers a thread.
// Session 4 added 3072-element tiles (fp32 192 x 4, 16-bit 96 x 4: N = 3000 filled 73% of the
// 4096 tile it took, 90.5% of the copy ceiling fp32, 78% bf16) and, as candidates against
// warp_rows at N = 1024, 1024-element tiles (fp32 64 x 4, 16-bit 64 x 2). Session 12 added fp32
// tiles half again as wide as a power of two (96 x 4, 384 x 4): fp32 rows take the widest tile
// they fill to at least kBlockRowMinFillPercent (softmax_dispatch.hpp), where N = 1024, 2048 and
// 4096 on 96 x 4, 192 x 4 and 384 x 4 (two thirds full) ran 1.007x, 1.022x and 1.013x the tiles
// that hold them exactly (docs/performance.md). (768 x 4 ran 0.917x 512 x 4 at N = 8192, and
// session 11's tiles of 8 elements a thread, 256 x 2, 512 x 2 and 1024 x 2, 0.61-0.98x the
// 4-vector tiles of the same capacity: not kept. Session 24's, not kept either: 1024 x 4, the
// Triton seed's block at N = 16384, 0.889x 512 x 8 there; the 4-vector tiles of 256-1024 threads
// under launch bounds of 2048 threads an SM, 32 registers and 8 bytes of spill where the aligned
// build takes 40, 0.87-0.97x at N = 2048 ... 16384.)
using BlockRowTilesFp32 =
    TileList<RegisterTile<64, 4>, RegisterTile<96, 4>, RegisterTile<128, 4>, RegisterTile<192, 4>,
             RegisterTile<256, 4>, RegisterTile<384, 4>, RegisterTile<512, 4>, RegisterTile<512, 8>,
             RegisterTile<1024, 8>>;
using BlockRowTiles16 =
    TileList<RegisterTile<64, 2>, RegisterTile<64, 4>, RegisterTile<128, 2>, RegisterTile<96, 4>,
             RegisterTile<128, 4>, RegisterTile<256, 2>, RegisterTile<256, 4>, RegisterTile<512, 2>,
             RegisterTile<512, 4>, RegisterTile<1024, 2>, RegisterTile<1024, 4>>;

// ---- block_hybrid: (threads, K), the register part of a row that continues in shared memory --
// block_row's largest tiles: 32768 elements (fp32 8 vectors, 16-bit 4) on 1024 threads, and 16384
// on 512 threads, two blocks per SM while two slices fit in its shared memory. 16-bit rows take
// the 512-thread tile first (on the H200 a 1024-thread block_row tile of 16-bit rows ran at 73% of
// the copy ceiling, two 512-thread blocks per SM at 88%: session 4). fp32 rows take the
// 512-thread tile whenever it holds the row (N <= 16384 + a slice of ~227 KB), one or two per SM:
// it ran 1.06x the 1024-thread tile at N = 50257 and 1.015x at 65536 in session 5's tuning run
// (both tiles' aligned instantiations spill 28 bytes at the 64-register bound: not the reason).
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
