// The production softmax's dispatch: which kernel runs a shape, with which parameters, and why.
//
// A pure host function of (Problem, DeviceLimits): no GPU is needed to ask what `softmax` would
// run, so the table below is unit-tested (tests/kernels/test_dispatch.cpp) and printed in
// docs/performance.md; `softmax-bench plan --device-profile NAME` asks it for a card that is not
// there. The families are those the device has (family_needs: before sm_90, warp_rows and
// block_row only). The rule order is kRules in softmax_dispatch.cpp. The registry entry
// `softmax` (softmax.cu) calls plan_softmax() and launch_plan(), which hands each family's
// launcher its family's plan (SoftmaxPlan::form); the tuning test (experiments/test_tuning.cpp,
// tag [.tune]) times every plan candidate_plans() offers for a shape.
//
// The kernel families, by row length (a register tile holds its elements as fp32 whatever the
// storage, so a 16-bit tile takes half the 16-byte vectors per thread of an fp32 tile of the same
// length; cluster_row is the alternative to cluster_tile that the tuning test times, and the
// default where cluster_tile cannot hold the row or the rows are 16-bit):
//   warp_rows    N <= 1024          G = 1..32 lanes per row, rows in registers, 32/G rows per
//                                   warp; unpadded rows off 16-byte boundaries to N = 64
//                                   staged: R rows a warp copied into shared memory as 16-byte
//                                   vectors, reduced there by G lanes a row, stored back as
//                                   vectors; longer or padded ones on the tile of half the lanes
//                                   and twice the vectors (dense rows that divide a vector: the
//                                   packed candidate, V / N rows a vector in one lane)
//   block_row    N <= 32768         one block per row, 64..1024 threads x K 16-byte vectors in
//                                   registers, every load issued before the first reduction
//   block_hybrid N <= 32768 + the   one block per row, the first 16384 or 32768 elements in
//                shared memory of   registers (a block_row tile of 512 or 1024 threads), the rest
//                a block (~90K fp32, in shared memory (TMA bulk copy): no cluster; needs M >= SMs
//                ~148K 16-bit)      (fp32 rows that fill C tiles of 16384 exactly, N = 65536, take
//                                   cluster_tile instead); across a cluster of C <= 8 blocks,
//                                   each a slice that way (16-bit rows past block_row to ~1.06M,
//                                   fp32 100000 and 2^18)
//   cluster_tile N <= 16 tiles      the row split over a cluster of C <= 16 blocks, each slice in
//                (524288)           registers (a block_row tile), (max, sum) exchanged through
//                                   distributed shared memory; needs M x C >= SMs
//   cluster_row  row <= 16 x 112 KB the row split over a cluster of C <= 16 blocks, each slice in
//                (458752 fp32,      shared memory (TMA bulk copy), (max, sum) exchanged through
//                917504 bf16)       distributed shared memory; needs M x C >= SMs
//   split_row    everything longer, a row split over S blocks of a co-resident (cooperative)
//                and too few rows   grid, (max, sum) partials exchanged through global memory;
//                for clusters       slices stay in shared memory where the card can hold the rows
//                                   in flight, else the part that does not fit is read twice
//                                   (TrafficModel::two_read); aligned fp32 rows on chip: two
//                                   slices per block with >= 3 rows in flight (each trip's
//                                   incoming slice prefetched into L2 and unpublished partials
//                                   polled again early where the rows held fit 45% of L2), else
//                                   three where they are as long (the pipelined exchange);
//                                   unaligned fp32 rows on chip: two slices per block while >= 3
//                                   rows are in flight (the prefetch by the same rule), else two
//                                   blocks per SM, partials counted; aligned fp32 rows on chip one
//                                   at a time over the card where neither pipelined form fits
//                                   (2^22): the block's shared memory a ring of chunk slots
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <variant>
#include <vector>

#include "core/problem.hpp"
#include "core/traffic.hpp"
#include "kernels/production/tile_lists.hpp"
#include "kernels/registry.hpp"

namespace smr {

enum class SoftmaxFamily { warp_rows, block_row, block_hybrid, cluster_tile, cluster_row, split_row };
std::string_view to_string(SoftmaxFamily f);  // "warp_rows", ...

// ---- Fixed design constants (each kernel file static_asserts the ones it depends on) ----------
inline constexpr int kVectorBytes = 16;             // one LDG.E.128 / STG.E.128 per vector
inline constexpr int kWarpRowsThreads = 256;        // warp_rows block size (8 warps)
inline constexpr int kWarpRowsStagedVecs = 8;       // warp_rows staged: 16-byte vectors a lane
                                                    // stages a trip (a 4 KB span a warp)
// The elements one warp's staged span holds: 32 lanes x kWarpRowsStagedVecs vectors.
constexpr std::int64_t warp_rows_staged_span(int elem_bytes) {
  return std::int64_t{32} * kWarpRowsStagedVecs * (kVectorBytes / elem_bytes);
}
// Unpadded rows off 16-byte boundaries up to this N take warp_rows' staged plan by default
// (measured ahead of torch.softmax at N = 31 and 33 on the H100, behind the register tiles at 128
// and 256 and on padded rows: softmax_dispatch.cpp, warp_rows_staged_default).
inline constexpr std::int64_t kWarpRowsStagedMaxN = 64;
// warp_rows' packed rows (N divides a 16-byte vector, ld = N): the vectors a lane loads a trip.
inline constexpr int kWarpRowsPackedVecs = 4;
inline constexpr int kSliceThreads = 512;           // cluster_row and split_row block size
inline constexpr int kSplitBlocksPerSm = 2;         // split_row: __launch_bounds__(512, 2)
// The register-tile blocks (block_row, block_hybrid, cluster_tile) keep every thread within 64
// registers: 1024 threads fill an SM's 64K registers, as one block of 1024 or several smaller.
inline constexpr int kTileThreadsPerSm = 1024;
inline constexpr int kPortableClusterSize = 8;      // clusters above this need the opt-in attribute
inline constexpr int kMaxClusterSize = 16;          // Hopper's non-portable maximum
inline constexpr std::size_t kSmemReservedPerBlock = 1024;  // sm_90 reserves 1 KB per block
inline constexpr std::size_t kSliceStaticSmem = 1024;       // budget for a slice kernel's static
                                                            // shared memory (barriers, partials)
// cluster_row: the preferred (and largest) slice per block. 112 KB lets two blocks share an SM,
// so one block's exchange and write overlap the other's loads.
inline constexpr std::size_t kClusterSliceTarget = 64 * 1024;
inline constexpr std::size_t kClusterSliceMax = 112 * 1024;
// split_row: a slice is never shorter than this (it bounds the workspace: see split_workspace_bytes).
inline constexpr std::int64_t kMinSplitSlice = 2048;
// split_row: a slice is copied into shared memory in this many chunks (row_slice.cuh), and the
// ring of chunk slots (SplitRowPlan::ring) has at most this many slots.
inline constexpr int kSplitChunks = 4;
inline constexpr int kSplitRingSlotsMax = 16;
// split_row: aligned fp32 rows on chip take the pipelined exchange with two slices per block by
// default when it keeps at least this many rows in flight.
inline constexpr std::int64_t kSplitPipelinedMinRows = 3;
// Row lengths up to which each register family is the default. block_row's limit is its largest
// tile, 1024 threads x 32 elements (fp32 8 vectors, 16-bit 4: the tile is fp32 in registers
// whatever the storage, and a 1024-thread block stays within 64 registers a thread).
inline constexpr std::int64_t kWarpRowsMaxN = 1024;  // warp_rows' largest tile
// The longest row warp_rows runs by default: 1024 for 16-bit rows; fp32 rows of 513 ... 1024 go
// to block_row, whose 64 x 4 tile (96 x 4 from about N = 1000, kBlockRowMinFillPercent) ran
// faster than warp_rows' 32 x 8 there on the H200
// (results/h200/tuning/; docs/performance.md, "warp_rows").
std::int64_t warp_rows_max_n(DType t);
// warp_rows' reduction: 16-bit rows reduce the max over the lane group first, then the sum against
// it (the two-pass form: a 16-byte vector holds 8 elements, so instructions per byte count, and it
// ran at least as fast as the pairs' merge at bf16 N = 32 ... 1024); fp32 rows merge (max, sum)
// pairs, the two forms tied there (results/h200/tuning/; docs/performance.md, "warp_rows").
bool warp_rows_two_pass_default(DType t);
inline constexpr std::int64_t kBlockRowMaxN = 32768;  // every dtype
std::int64_t block_row_max_n(DType t);
// block_row's tile: fp32 rows take the widest listed tile they fill to at least this percentage
// (N + head room >= 65% of its capacity), 16-bit rows the smallest that holds them. On the H200
// fp32 rows of 1000 ... 4096 ran faster on tiles they fill to 65-73% than on the smallest that
// holds them, and slower on tiles they fill to half; 16-bit rows ran slower on any wider tile
// (results/h200/tuning/; docs/performance.md, "block_row").
inline constexpr std::int64_t kBlockRowMinFillPercent = 65;
// The largest clusters the dispatch picks by default (the tuning test times the others: on the
// H200, fp32, 16-block cluster_tile rows and 16-block cluster_row rows were slower than split_row,
// and 16-bit cluster_tile rows slower than cluster_row's). cluster_tile: two of its largest fp32
// tile (1024 threads), else up to 8 of the next (512 threads, faster than four of 1024 at
// N = 131072). Evidence: results/h200/tuning/; docs/performance.md, "cluster_tile".
inline constexpr int kClusterTileWideMax = 2;     // fp32 only
inline constexpr int kClusterTileDefaultMax = 8;  // fp32 only
inline constexpr int kClusterRowDefaultMax = 8;
// block_hybrid across a cluster: the largest cluster the dispatch picks by default (16 blocks a
// row, 16 SMs a cluster at one block an SM, ran slower than the plans they would replace:
// results/h200/tuning/; docs/performance.md, "block_hybrid").
inline constexpr int kHybridClusterDefaultMax = 8;
// The longest row block_hybrid holds on a device with these limits: its largest tile (32768
// elements) plus the slice the block's shared memory holds, less two vectors of room for the
// window.
std::int64_t block_hybrid_max_n(DType t, const DeviceLimits& d);
std::vector<TileShape> block_hybrid_tiles(DType t);
// The longest row cluster_tile runs by default: 8 tiles of 16384 fp32; 0 for 16-bit rows.
std::int64_t cluster_tile_max_n(DType t);
// The longest row cluster_row runs by default: 8 slices of kClusterSliceMax.
std::int64_t cluster_row_max_n(DType t);

// The instantiated tiles (tile_lists.hpp: the kernel files instantiate the same lists), as
// TileShapes in the lists' order. warp_rows: (lanes per row G, 16-byte vectors per lane K);
// block_row, cluster_tile: (threads, K). Capacity in elements = G (or threads) x K x (16 / dtype
// bytes).
std::vector<TileShape> warp_rows_tiles(DType t);
std::vector<TileShape> block_row_tiles(DType t);
// The candidates-only tiles (tile_lists.hpp: warp_rows' of 3 vectors a lane, block_row's 16-bit
// 96 x 2; none of block_row's for fp32): timed by the tuning test where they hold a row fuller
// than the default tile, never picked by default.
std::vector<TileShape> warp_rows_wide_tiles(DType t);
std::vector<TileShape> block_row_wide_tiles(DType t);
std::vector<TileShape> cluster_tile_tiles(DType t);  // (threads, K) per block, largest first

// ---- What each family needs of the device --------------------------------------------------
// warp_rows and block_row run on every card the build targets (sm_75 on); block_hybrid and
// split_row copy their slices with TMA bulk copies onto mbarriers (sm_90); cluster_tile and
// cluster_row, and block_hybrid across a cluster, exchange (max, sum) through distributed shared
// memory (sm_90 and cluster launch).
struct FamilyNeeds {
  int min_cc = 75;        // compute capability x 10
  bool clusters = false;  // thread-block clusters (cluster launch, distributed shared memory)
};
FamilyNeeds family_needs(SoftmaxFamily f);
// Why a device with these limits cannot run family f ("cluster_row needs sm_90 ..."); nullopt
// when it can.
std::optional<std::string> family_unavailable(SoftmaxFamily f, const DeviceLimits& d);
inline bool family_available(SoftmaxFamily f, const DeviceLimits& d) {
  return !family_unavailable(f, d).has_value();
}
// Why no family this device has runs p, in one line: rows longer than block_row's largest tile
// on a card without sm_90's bulk copies (every family for such rows needs them); nullopt when
// plan_softmax has a plan. The registry entry refuses such shapes with this reason.
std::optional<std::string> softmax_unsupported(const Problem& p, const DeviceLimits& d);

// ---- What each family's launch takes ----------------------------------------------------------
// One type per family, each with the fields its launcher and kernel use and nothing else,
// compared field by field (a defaulted operator==).
struct WarpRowsPlan {
  int lanes_per_row = 0;       // G (blocks of kWarpRowsThreads threads)
  int vecs = 0;                // K: 16-byte vectors per lane
  bool two_pass = false;       // the row's max reduced over the lane group first, then the sum of
                               // exponentials against it (no pairs' merge)
  std::int64_t capacity = 0;   // elements a row's tile holds (>= N)
  std::int64_t grid = 0;       // blocks; 0: a persistent grid sized to the card
  int staged_rows = 0;         // > 0: rows staged through shared memory, this many a warp a trip
                               // (G lanes reduce a row there; K = kWarpRowsStagedVecs, capacity
                               // the span a warp stages: warp_rows.cu, "Staged rows")
  bool shared_ends = false;    // dense rows off boundaries: the 16-byte vector two rows of a trip
                               // share stored once, whole (row_tile.cuh store_tile_shared_ends)
  bool packed = false;         // rows packed whole in 16-byte vectors (N divides a vector, ld = N):
                               // each lane K = kWarpRowsPackedVecs vectors of V / N rows each
                               // (G = 1, capacity V: warp_rows.cu, "Packed rows")
  bool operator==(const WarpRowsPlan&) const = default;
};
struct BlockRowPlan {
  int threads = 0;
  int vecs = 0;                // K: 16-byte vectors per thread
  std::int64_t capacity = 0;   // elements the tile holds (>= N)
  std::int64_t grid = 0;       // one block per row
  bool operator==(const BlockRowPlan&) const = default;
};
struct BlockHybridPlan {
  int threads = 0;
  int vecs = 0;
  std::int64_t capacity = 0;   // elements in registers a block (< slice)
  int cluster = 1;             // blocks a row (a cluster when > 1)
  std::int64_t slice = 0;      // elements a block holds (N where cluster = 1)
  std::int64_t resident = 0;   // of them in shared memory (slice - capacity)
  std::size_t smem_bytes = 0;  // dynamic shared memory per block
  std::int64_t grid = 0;
  bool operator==(const BlockHybridPlan&) const = default;
};
struct ClusterTilePlan {
  int threads = 0;
  int vecs = 0;
  std::int64_t capacity = 0;   // elements a block's tile holds (>= slice)
  int cluster = 0;             // blocks a row, one cluster
  std::int64_t slice = 0;      // elements a block (whole 16-byte vectors)
  std::int64_t grid = 0;
  bool operator==(const ClusterTilePlan&) const = default;
};
struct ClusterRowPlan {
  int cluster = 0;             // blocks a row (of kSliceThreads threads), one cluster
  std::int64_t slice = 0;      // elements a block, all in shared memory (whole 16-byte vectors)
  std::size_t smem_bytes = 0;  // dynamic shared memory per block
  std::int64_t grid = 0;
  bool thread_copy = false;    // the threads copy the slice in (cp.async), not the copy engine
                               // (TMA)
  bool operator==(const ClusterRowPlan&) const = default;
};
struct SplitRowPlan {
  int slices = 1;              // blocks a row (of kSliceThreads threads)
  std::int64_t slice = 0;      // elements a block (whole 16-byte vectors)
  std::int64_t resident = 0;   // of them kept in shared memory (the rest read twice)
  std::int64_t grid = 0;       // blocks: rows in flight x slices
  std::size_t smem_bytes = 0;  // dynamic shared memory per block
  bool prefetch = true;        // the next slice prefetched into L2 while a row waits (pipelined:
                               // the slice a trip copies in, at the trip's start)
  bool tagged_partials = true; // each partial its own flag (no counter, no fence)
  int buffers = 1;             // slices a block holds at once (2 or 3: the next row's statistics
                               // and exchange overlap this row's write, and at 3 its copies are
                               // issued a trip earlier; rows on chip)
  bool repoll = false;         // pipelined: a partial found unpublished at the trip's start is
                               // loaded again before the statistics' reduction
  bool interleaved = false;    // fp32 rows read twice: the parts not kept in shared memory dealt
                               // to the row's blocks in turn, a step each
  bool ring = false;           // one slice per block, rows on chip: the shared memory a ring of
                               // chunk slots, each chunk of the next slices copied in as soon as
                               // a slot is free
  std::size_t workspace_bytes = 0;  // partials + arrival counters
  bool operator==(const SplitRowPlan&) const = default;
};
// In SoftmaxFamily's order: a form's index is its family.
using PlanForm = std::variant<WarpRowsPlan, BlockRowPlan, BlockHybridPlan, ClusterTilePlan,
                              ClusterRowPlan, SplitRowPlan>;
template <SoftmaxFamily f, class Form>
inline constexpr bool kFormOf =
    std::is_same_v<std::variant_alternative_t<static_cast<std::size_t>(f), PlanForm>, Form>;
static_assert(kFormOf<SoftmaxFamily::warp_rows, WarpRowsPlan> &&
                  kFormOf<SoftmaxFamily::block_row, BlockRowPlan> &&
                  kFormOf<SoftmaxFamily::block_hybrid, BlockHybridPlan> &&
                  kFormOf<SoftmaxFamily::cluster_tile, ClusterTilePlan> &&
                  kFormOf<SoftmaxFamily::cluster_row, ClusterRowPlan> &&
                  kFormOf<SoftmaxFamily::split_row, SplitRowPlan>,
              "PlanForm lists the families in SoftmaxFamily's order");

// What one launch of the production softmax does: the family's own plan (form) and what every
// plan says of itself. Two plans launch the same kernels with the same arguments when their forms
// are equal (candidate_plans lists each form once); operator== compares the words too.
struct SoftmaxPlan {
  PlanForm form;
  std::int64_t rows_in_flight = 0;  // rows the blocks work on at once (split_row: exact; the
                                    // others an estimate; 0: unknown, the card's SMs)
  TrafficModel traffic = TrafficModel::fused;
  std::string why;                  // the choice in words, for docs, logs and results' `extra`
  SoftmaxFamily family() const { return static_cast<SoftmaxFamily>(form.index()); }
  bool operator==(const SoftmaxPlan&) const = default;
};

// Blocks a row's cluster holds: the form's cluster for cluster_tile, cluster_row and
// block_hybrid, 1 for the families without one.
int plan_cluster(const SoftmaxPlan& plan);

// The blocks the plan launches (its form's grid; 0 for a persistent grid, which the launcher
// sizes to the card).
std::int64_t plan_grid(const SoftmaxPlan& plan);

// What `softmax` runs for p on a device with these limits. `max_cluster` is the largest cluster
// the caller allows for the cluster kernels, lowered to d.max_cluster; the cluster families are
// never picked where the device has no clusters (d.has_clusters()). Throws std::invalid_argument
// for M or N < 1, ld < N, or a shape no family the device has runs (softmax_unsupported).
SoftmaxPlan plan_softmax(const Problem& p, const DeviceLimits& d, int max_cluster = kMaxClusterSize);

// Every plan worth timing for p: the default first, then the other tiles of the same family and
// the neighbouring families that can run p. Each is a complete, launchable plan.
std::vector<SoftmaxPlan> candidate_plans(const Problem& p, const DeviceLimits& d,
                                         int max_cluster = kMaxClusterSize);

// Plans for one family only (empty when the family cannot run p on this device, or the device
// lacks what the family needs: family_unavailable).
std::vector<SoftmaxPlan> family_plans(SoftmaxFamily f, const Problem& p, const DeviceLimits& d,
                                      int max_cluster = kMaxClusterSize);

// An upper bound of the workspace any plan for p may need on any device: split_row keeps one
// (max, sum) pair per slice (slices <= ceil(N / kMinSplitSlice)) and one arrival counter per row.
// 0 for rows too short ever to be split. This is the registry entry's workspace_bytes.
std::size_t split_workspace_bytes(const Problem& p);

// split_row: the bytes of one of a slice's kSplitChunks chunks (whole vectors), and the chunk slots
// a ring plan's shared memory holds (at most kSplitRingSlotsMax): what the dispatch sizes a ring
// plan by and what its launch passes the kernel.
std::int64_t split_chunk_bytes(std::int64_t slice, DType t);
int split_ring_slots(const SplitRowPlan& plan, DType t);

// Shared memory per SM: d.shared_bytes_per_sm, or where that is 0 the per-block opt-in limit plus
// the 1 KB reserved per block (sm_90: 227 KB + 1 KB).
std::size_t smem_per_sm(const DeviceLimits& d);

// One line for logs: "split_row S=264 slice=15888 resident=15888 R=1 grid=264 smem=63552 B".
std::string summary(const SoftmaxPlan& plan);

// The candidate plan of p whose summary() is `text`, to run or profile one plan by name
// (smr-counter-probe --plan); nullopt when no candidate has that summary.
std::optional<SoftmaxPlan> find_candidate(const Problem& p, const DeviceLimits& d,
                                          std::string_view text, int max_cluster = kMaxClusterSize);

// Enqueues `plan` for `l` (softmax.cu). Throws std::invalid_argument for a plan the kernels do
// not instantiate or a missing workspace, smr::CudaError for a failed launch.
void launch_plan(const SoftmaxPlan& plan, const Launch& l);

}  // namespace smr
