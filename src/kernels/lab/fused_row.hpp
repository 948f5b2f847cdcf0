// The fused kernel's tiles and its one-tile cap, for the kernel (fused_row.cu), the lab's starter
// and its solution, the registry, the tests and the docs. Plain C++: no device code here.
#pragma once

#include <cstdint>

namespace smr {

// The largest N the fused kernel takes: its largest tile, 1024 threads x 32 floats held in
// registers. The next tile (65536) would need 64 floats per thread, the whole 64-register budget
// of a 1024-thread block, and would spill: docs/performance.md, "Lab kernels", has the ptxas
// table that shows every instantiation up to this cap without spill stores or stack frame.
inline constexpr std::int64_t kFusedMaxN = 32768;

// The instantiations, smallest first: (tile, threads). Elements per thread = tile / threads,
// kept between 4 (one 16-byte chunk) and 32 (the register cap: with 1024 threads a thread has
// 64 registers in all). Threads grow with the tile so that each thread's share stays small and
// a block has enough warps to hide the load latency.
template <int kTileSize, int kBlockThreads>
struct FusedTile {
  static constexpr int kTile = kTileSize;
  static constexpr int kThreads = kBlockThreads;
};

template <class... T>
struct FusedTileList {};

using FusedTiles =
    FusedTileList<FusedTile<128, 32>, FusedTile<256, 64>, FusedTile<512, 128>,
                  FusedTile<1024, 128>, FusedTile<2048, 256>, FusedTile<4096, 512>,
                  FusedTile<8192, 1024>, FusedTile<16384, 1024>, FusedTile<32768, 1024>>;

template <class... T>
constexpr int largest_tile(FusedTileList<T...>) {
  int m = 0;
  ((m = T::kTile > m ? T::kTile : m), ...);
  return m;
}
static_assert(largest_tile(FusedTiles{}) == kFusedMaxN, "the cap is the largest tile");

// The one switch from a run-time N to a compile-time tile: f(FusedTile{}) for the smallest tile
// >= n. False when n is past the cap.
template <class F, class... T>
bool with_fused_tile(int n, F&& f, FusedTileList<T...> = {}) {
  return ((n <= T::kTile ? (f(T{}), true) : false) || ...);
}

}  // namespace smr
