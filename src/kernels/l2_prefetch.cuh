// L2 prefetches: one bulk instruction (the copy engine's cp.async.bulk.prefetch.L2) that brings
// a stretch of global memory towards L2 without waiting for it and without any register or
// shared-memory destination. A hint: it changes no result, and the loads that later read those
// bytes are ordinary loads.
//
// Two users:
// - split_row: a block prefetches its next slice while it waits for its row's partials;
// - the wave prefetch (block_row, cluster_tile, block_hybrid; SoftmaxPlan::wave_prefetch, a
//   candidate for the tuning run): a block whose part of a row is on chip prefetches the same
//   part of the row one wave later -- the row that the block starting in the SM slot a finishing
//   block frees will load, about when this one finishes -- so that DRAM reads for it are under
//   way while this block reduces and stores, and that block's first loads find L2.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "kernels/storage.cuh"

namespace smr::prod {

// Brings bytes [src, src + bytes) towards L2 without waiting (one bulk prefetch instruction;
// 16-byte aligned source and size).
__device__ __forceinline__ void prefetch_l2(const void* src, std::uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;" ::"l"(src), "r"(bytes) : "memory");
}

// The whole 16-byte vectors inside elements [p, p + n) towards L2 (up to 15 bytes at either end
// left out, so that nothing outside the span is touched). A span past 4 GB is cut to its first
// 4 GB - 16 bytes (the instruction's size is 32-bit).
template <class T>
__device__ __forceinline__ void prefetch_span_l2(const T* p, std::int64_t n) {
  constexpr std::uintptr_t kMask = kVecBytes - 1;
  const std::uintptr_t lo = (reinterpret_cast<std::uintptr_t>(p) + kMask) & ~kMask;
  const std::uintptr_t hi = reinterpret_cast<std::uintptr_t>(p + n) & ~kMask;
  if (hi <= lo) return;
  constexpr std::uintptr_t kMax = 0xffffffffu & ~kMask;
  const std::uintptr_t bytes = hi - lo < kMax ? hi - lo : kMax;
  prefetch_l2(reinterpret_cast<const void*>(lo), static_cast<std::uint32_t>(bytes));
}

// When a block issues its wave prefetch (SoftmaxPlan::wave_prefetch).
enum class WaveAt : int {
  none = 0,    // no prefetch (every default plan)
  loaded = 1,  // once this block's own loads have arrived (before its reductions)
  stored = 2,  // once this block's stores are issued (before it exits)
};

// The row a wave ahead is `rows` rows past this block's: the blocks (the clusters, for the
// cluster kernels) the card holds at once, so that the block a finishing block of this wave
// makes room for takes about that row. `at`: when to issue it.
struct WavePrefetch {
  std::int64_t rows = 0;
  WaveAt at = WaveAt::none;
};

// The kernel argument for a plan's SoftmaxPlan::wave_prefetch (0, 1, 2) and its wave of `rows`
// (prod::wave_rows).
inline WavePrefetch wave_prefetch_arg(int wave_prefetch, std::int64_t rows) {
  if (wave_prefetch < 0 || wave_prefetch > 2)
    throw std::invalid_argument("wave_prefetch " + std::to_string(wave_prefetch) +
                                " is none of 0 (none), 1 (once loaded), 2 (once stored)");
  return WavePrefetch{rows, static_cast<WaveAt>(wave_prefetch)};
}

// Calls f(std::bool_constant<kWave>), kWave = whether the plan has a wave prefetch. The kernels
// that take one are instantiated with and without it, so that every default plan runs the code it
// ran before the candidate existed: a prefetch between a block's loads and its reduction moved
// ptxas's register counts by up to 8 a thread (block_row fp32 384 x 4 from 40 to 48: 3 blocks an
// SM, not 4).
template <class F>
void with_wave(int wave_prefetch, F&& f) {
  if (wave_prefetch != 0)
    f(std::true_type{});
  else
    f(std::false_type{});
}

// kWave: thread 0 prefetches elements [begin, begin + n) of row `row + ahead.rows` of x (rows of
// ld elements, M of them) when `now` is the plan's point; nothing past the last row. Without
// kWave: no code at all.
template <bool kWave, class T>
__device__ __forceinline__ void prefetch_wave_ahead(const WavePrefetch& ahead, WaveAt now,
                                                    const T* x, std::int64_t row, std::int64_t M,
                                                    std::int64_t ld, std::int64_t begin,
                                                    std::int64_t n) {
  if constexpr (kWave) {
    if (ahead.at != now || threadIdx.x != 0) return;
    const std::int64_t later = row + ahead.rows;
    if (ahead.rows > 0 && later < M) prefetch_span_l2(x + later * ld + begin, n);
  }
}

}  // namespace smr::prod
