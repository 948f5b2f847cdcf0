// The production softmax's dispatch (softmax_dispatch.hpp): shape and dtype -> kernel plan.
// Pure host code; every number a plan holds is derived here from the Problem and DeviceLimits.
#include "kernels/production/softmax_dispatch.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <type_traits>

#include <fmt/format.h>

#include "kernels/production/access.hpp"
#include "kernels/production/staged_span.hpp"

namespace smr {

namespace {

using i64 = std::int64_t;

i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }
i64 round_up(i64 a, i64 b) { return ceil_div(a, b) * b; }
i64 round_down(i64 a, i64 b) { return a / b * b; }

// Elements of one 16-byte vector: 4 for fp32, 8 for bf16/fp16.
i64 vec_elems(DType t) { return kVectorBytes / dtype_bytes(t); }

std::string kib(double bytes) {
  if (bytes >= 1024.0 * 1024.0) return fmt::format("{:.3g} MiB", bytes / (1024.0 * 1024.0));
  if (bytes >= 1024.0) return fmt::format("{:.3g} KiB", bytes / 1024.0);
  return fmt::format("{:.0f} B", bytes);
}

void check_problem(const Problem& p) {
  if (p.M < 1) throw std::invalid_argument(fmt::format("softmax dispatch: M = {} must be >= 1", p.M));
  if (p.N < 1) throw std::invalid_argument(fmt::format("softmax dispatch: N = {} must be >= 1", p.N));
  if (p.ld_x < p.N)
    throw std::invalid_argument(
        fmt::format("softmax dispatch: ld_x = {} is less than N = {}", p.ld_x, p.N));
  if (p.ld_y < p.N)
    throw std::invalid_argument(
        fmt::format("softmax dispatch: ld_y = {} is less than N = {}", p.ld_y, p.N));
}

// The largest cluster a plan may use: the caller's max_cluster within [1, kMaxClusterSize] and
// the device's own maximum; 1 on a device without clusters.
int device_max_cluster(const DeviceLimits& d, int max_cluster) {
  if (!d.has_clusters()) return 1;
  return std::clamp(std::min(max_cluster, d.max_cluster), 1, kMaxClusterSize);
}

// Elements a row may start past a 16-byte boundary: 0 when x's stride is whole vectors (the base
// pointers the harness and PyTorch allocate are aligned), else up to V - 1. The kernels hold such
// rows through their 16-byte windows (storage.cuh), which need that much room beyond N: in a
// register tile its vectors and extra elements (tile_need), one vector more in a shared-memory
// slice.
i64 row_head_room(const Problem& p) {
  return (p.ld_x * dtype_bytes(p.dtype)) % kVectorBytes == 0 ? 0 : vec_elems(p.dtype) - 1;
}
i64 slice_head_room(const Problem& p) { return row_head_room(p) > 0 ? vec_elems(p.dtype) : 0; }

// Elements a register tile holds: lanes (or threads) x vectors x elements a vector.
i64 tile_capacity(TileShape t, DType type) {
  return static_cast<i64>(t.threads_or_lanes) * t.vecs * vec_elems(type);
}

// The elements a register tile of `lanes` lanes (or threads) must hold in its vectors: the row's
// window, less the one element a lane past the vectors that the tiles of rows off boundaries hold
// (row_tile.cuh). A tile of C elements holds the row when tile_need <= C: any N <= C at any offset
// once lanes >= V - 1, and rows of 2^k + 1 on the tile of 2^k.
i64 tile_need(const Problem& p, int lanes) {
  const i64 room = row_head_room(p);
  return room > 0 ? std::max<i64>(1, p.N + room - lanes) : p.N;
}
bool tile_holds(const Problem& p, TileShape t) {
  return tile_need(p, t.threads_or_lanes) <= tile_capacity(t, p.dtype);
}
// The lanes the families' limits count on: warp_rows' widest tiles have 32, block_row's more.
constexpr int kRuleLanes = 32;

std::string shape_words(const Problem& p) {
  return fmt::format("M = {}, N = {} {} ({} rows)", p.M, p.N, to_string(p.dtype),
                     kib(static_cast<double>(p.N) * dtype_bytes(p.dtype)));
}


// The candidates-only tiles of `wide` that hold the row (tile_holds) fuller than the default tile
// of `default_capacity` does: the ones the tuning test times beside it.
std::vector<TileShape> fuller_tiles(const std::vector<TileShape>& wide, const Problem& p,
                                    i64 default_capacity) {
  std::vector<TileShape> out;
  for (TileShape s : wide)
    if (tile_holds(p, s) && tile_capacity(s, p.dtype) < default_capacity) out.push_back(s);
  return out;
}

// A visitor of one lambda per form (std::visit).
template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

// A plan's own family's fields (the plan must be of that family).
template <class Form>
Form& form_of(SoftmaxPlan& s) {
  return std::get<Form>(s.form);
}
template <class Form>
const Form& form_of(const SoftmaxPlan& s) {
  return std::get<Form>(s.form);
}

// ---- warp_rows ---------------------------------------------------------------------------------

// The grid: one block per 8 x 32/G rows, except 16-bit rows past 512 elements: a persistent grid
// sized to the card (docs/performance.md, "warp_rows"). fp32: one block per rows the faster on the
// H200 at N = 32 ... 1024. 16-bit: within 2% of each other on the H200 at 32 ... 512 (one block
// per rows 0.984-1.002x), where on the H100 one block per rows ran 1.04-1.05x on aligned rows and
// 1.14-1.23x at 128 ... 512 with ld = N + 1; past 512 the persistent grid rests on the H200 alone
// (one block per rows 0.880x, 0.904x at 1000 and 1024), where the H100 timed one block per rows
// 1.003x, 1.035x, and 1.165x at 1000 with ld = 1001 (results/h200/tuning/bf16-short-rows.log;
// results/h100/a3e4cf9-any-stride/tune-short.log, tune-unaligned.log).
inline constexpr i64 kWarpRowsPersistentFromN16 = 513;
bool warp_rows_persistent_default(const Problem& p) {
  return p.dtype != DType::f32 && p.N >= kWarpRowsPersistentFromN16;
}

// `two_pass`: the reduction (warp_rows_two_pass_default when not given).
SoftmaxPlan warp_rows_plan(const Problem& p, TileShape tile, bool persistent,
                           std::optional<bool> two_pass = std::nullopt) {
  WarpRowsPlan w;
  w.lanes_per_row = tile.threads_or_lanes;
  w.vecs = tile.vecs;
  w.two_pass = two_pass.value_or(warp_rows_two_pass_default(p.dtype));
  w.capacity = tile_capacity(tile, p.dtype);
  const i64 rows_per_block =
      static_cast<i64>(kWarpRowsThreads / 32) * (32 / w.lanes_per_row);
  // 0: persistent, the launcher fills the card (occupancy API) or covers M, if fewer.
  w.grid = persistent ? 0 : ceil_div(p.M, rows_per_block);
  SoftmaxPlan s;
  s.form = w;
  s.why = fmt::format(
      "{}: warp_rows, {} lane(s) per row x {} 16-byte vector(s) per lane = {} elements in "
      "registers, {} rows per warp per trip, {}, {}",
      shape_words(p), w.lanes_per_row, w.vecs, w.capacity, 32 / w.lanes_per_row,
      persistent ? "grid-stride over rows on a grid sized to the card"
                 : fmt::format("one block per {} rows", rows_per_block),
      w.two_pass ? "the row's max reduced over its lanes first, then the sum"
                 : "(max, sum) pairs merged over its lanes");
  return s;
}

// Whether rows take the staged plan by default: rows off 16-byte boundaries of at most
// kWarpRowsStagedMaxN elements with no padding between them (ld = N for x and y: the span is all
// rows). On the H100 the staged plan ran fp32 N = 31 and 33 at 98% and 93% of the copy (1.30x and
// 1.49x torch.softmax in the same run) and bf16 at 54% and 63% (1.36x, 1.98x), and lost to the
// register tiles at N = 128 and 256 (ld = N + 1: 0.72-0.77x the best tile fp32, 0.54-0.68x bf16):
// results/h100/odd-rows/. On padded rows it lost at N = 32 and 64 too (ld = N + 1: 0.60-0.72x
// the best tile fp32, 0.68-0.70x bf16: results/h100/a3e4cf9-any-stride/tune-unaligned.log).
bool warp_rows_staged_default(const Problem& p) {
  return row_head_room(p) > 0 && p.N <= kWarpRowsStagedMaxN && p.ld_x == p.N && p.ld_y == p.N;
}

// The staged plan (warp_rows.cu, "Staged rows"): R rows a warp a trip, as many as fit in the span
// of kWarpRowsStagedVecs vectors a lane whatever the first row's offset from a boundary, and G
// lanes a row, the most that still give each of the R rows its own group (G x R <= 32, G a power
// of two). nullopt when one row's window does not fit the span. Where more than 32 rows fit, R is
// rounded down to a multiple of 32 (one lane a row: the warp reduces 32 rows a round, and a last
// round of a few rows costs as much as a full one): on the H100 the whole rounds ran 1.44x and
// 1.23x the fuller span at bf16 N = 31 and 33 (R = 64 against 65, 32 against 61), 1.11x and
// 1.15x at N = 1 (fp32, bf16), 1.00-1.02x at N = 2 and 4
// (results/h100/e07b69b-extra-element/tune-odd.log). fill_span: as many rows as fit, a candidate.
std::optional<SoftmaxPlan> warp_rows_staged_plan(const Problem& p, bool fill_span = false) {
  const i64 span = warp_rows_staged_span(static_cast<int>(dtype_bytes(p.dtype)));
  i64 rows = prod::staged_rows_fit(static_cast<int>(vec_elems(p.dtype)), p.N, p.ld_x, span);
  if (rows == 0) return std::nullopt;
  if (!fill_span && rows > 32) rows -= rows % 32;
  int lanes = 32;
  while (lanes > 1 && lanes * rows > 32) lanes /= 2;
  WarpRowsPlan w;
  w.lanes_per_row = lanes;
  w.vecs = kWarpRowsStagedVecs;
  w.two_pass = true;
  w.capacity = span;
  w.staged_rows = static_cast<int>(rows);
  SoftmaxPlan s;
  s.form = w;
  s.why = fmt::format(
      "{}: warp_rows staged, {} row(s) a warp a trip copied in 16-byte vectors into the warp's "
      "shared memory ({} elements from the first row's 16-byte window), each row reduced there by "
      "{} lane(s) (max, then sum), the outputs stored back as 16-byte vectors; grid-stride over "
      "rows on a grid sized to the card",
      shape_words(p), rows, span, lanes);
  return s;
}

// The packed plan (warp_rows.cu, "Packed rows"): rows that divide a 16-byte vector (N = 1, 2, 4
// fp32; 1, 2, 4, 8 16-bit) with nothing between them (ld = N for x and y), so that every vector of
// the matrix holds V / N whole rows and a lane reduces each in its own registers: no shuffle, no
// shared memory, no element-wise access but the last few rows'. kWarpRowsPackedVecs vectors a
// lane a trip, a grid sized to the card. nullopt for any other shape.
std::optional<SoftmaxPlan> warp_rows_packed_plan(const Problem& p) {
  const i64 V = vec_elems(p.dtype);
  if (!prod::rows_pack_vectors(p.N, p.ld_x, p.ld_y, V)) return std::nullopt;
  WarpRowsPlan w;
  w.lanes_per_row = 1;
  w.vecs = kWarpRowsPackedVecs;
  w.two_pass = true;
  w.capacity = V;
  w.packed = true;
  SoftmaxPlan s;
  s.form = w;
  s.why = fmt::format(
      "{}: warp_rows packed, {} row(s) whole in each 16-byte vector, {} vectors a lane a trip, "
      "each row reduced in the lane's registers (max, then sum); grid-stride on a grid sized to "
      "the card",
      shape_words(p), V / p.N, kWarpRowsPackedVecs);
  return s;
}

// ---- block_row ---------------------------------------------------------------------------------

// The tiles are listed by capacity: 16-bit rows take the first that holds the row (tile_holds),
// fp32 rows the last one N fills to at least kBlockRowMinFillPercent (the first, if none).
std::optional<TileShape> block_row_default_tile(const Problem& p) {
  std::optional<TileShape> pick;
  for (TileShape t : block_row_tiles(p.dtype)) {
    if (!tile_holds(p, t)) continue;
    if (!pick) pick = t;
    else if (p.dtype == DType::f32 &&
             p.N * 100 >= kBlockRowMinFillPercent * tile_capacity(t, p.dtype))
      pick = t;
  }
  return pick;
}

SoftmaxPlan block_row_plan(const Problem& p, TileShape tile) {
  BlockRowPlan r;
  r.threads = tile.threads_or_lanes;
  r.vecs = tile.vecs;
  r.capacity = tile_capacity(tile, p.dtype);
  r.grid = p.M;
  SoftmaxPlan s;
  s.form = r;
  s.why = fmt::format(
      "{}: block_row, one block per row, {} threads x {} 16-byte vectors = {} elements in "
      "registers ({}% full), every load issued before the first reduction",
      shape_words(p), r.threads, r.vecs, r.capacity, (p.N * 100) / r.capacity);
  return s;
}

// ---- block_hybrid ------------------------------------------------------------------------------

// Dynamic shared memory a slice kernel's block may take: the opt-in limit less the budget for
// its static shared memory.
std::size_t slice_smem_limit(const DeviceLimits& d) {
  return d.shared_bytes_per_block > kSliceStaticSmem ? d.shared_bytes_per_block - kSliceStaticSmem
                                                     : 0;
}

// One block per row: `tile` holds the row's first elements in registers, shared memory the rest
// (with two vectors of room: the register part ends on a 16-byte boundary of x, so the rest may
// start up to V - 1 elements later than capacity, and its window up to V - 1 before that).
// None when the rest does not fit. C > 1: the row cut into C equal slices of whole vectors, one
// per block of a cluster, each held that way (a slice longer than the tile; none where a slice is
// not, or the row is too short for C non-empty slices).
// block_hybrid blocks of `threads` threads with `smem` bytes of dynamic shared memory an SM holds:
// 1024 threads' registers at 64 a thread, and the slices' shared memory.
i64 hybrid_blocks_per_sm(const DeviceLimits& d, int threads, std::size_t smem) {
  const i64 by_smem =
      static_cast<i64>(smem_per_sm(d) / (smem + kSliceStaticSmem + kSmemReservedPerBlock));
  return std::max<i64>(1, std::min<i64>(kTileThreadsPerSm / threads, by_smem));
}

std::optional<SoftmaxPlan> block_hybrid_plan(const Problem& p, const DeviceLimits& d,
                                             TileShape tile, int C = 1) {
  const i64 V = vec_elems(p.dtype);
  const i64 b = dtype_bytes(p.dtype);
  const i64 cap = tile_capacity(tile, p.dtype);
  const i64 part = C > 1 ? round_up(ceil_div(p.N, C), V) : p.N;  // elements per block
  const i64 rest = round_up(std::max<i64>(0, part - cap), V) + 2 * V;
  if (part <= cap || static_cast<std::size_t>(rest * b) > slice_smem_limit(d)) return std::nullopt;
  if (C > 1 && part * (C - 1) >= p.N) return std::nullopt;
  const i64 per_sm =
      hybrid_blocks_per_sm(d, tile.threads_or_lanes, static_cast<std::size_t>(rest * b));
  BlockHybridPlan h;
  h.threads = tile.threads_or_lanes;
  h.vecs = tile.vecs;
  h.capacity = cap;
  h.cluster = C;
  h.slice = part;
  h.resident = part - cap;
  h.smem_bytes = static_cast<std::size_t>(rest * b);
  h.grid = p.M * C;
  SoftmaxPlan s;
  s.form = h;
  s.rows_in_flight = std::max<i64>(1, std::min<i64>(p.M, per_sm * d.sm_count / C));
  if (C == 1)
    s.why = fmt::format(
        "{}: block_hybrid, one block per row, the first {} elements in registers ({} threads x {} "
        "16-byte vectors), the other {} ({}) in shared memory (TMA bulk copy); no cluster; x read "
        "once",
        shape_words(p), cap, h.threads, h.vecs, h.resident,
        kib(static_cast<double>(h.resident * b)));
  else
    s.why = fmt::format(
        "{}: block_hybrid across a cluster of {} blocks per row, each a slice of {} elements: the "
        "first {} in registers ({} threads x {} 16-byte vectors), the other {} ({}) in shared "
        "memory (TMA bulk copy), (max, sum) exchanged through distributed shared memory; x read "
        "once",
        shape_words(p), C, part, cap, h.threads, h.vecs, h.resident,
        kib(static_cast<double>(h.resident * b)));
  return s;
}

// The default block_hybrid plan. fp32: the first listed tile that holds the row (512 threads
// first: tile_lists.hpp). 16-bit: the first listed tile that holds the row with as many blocks
// per SM as its threads allow (two of 512, one of 1024), else the first that holds it at all.
// None where no tile does.
std::optional<SoftmaxPlan> block_hybrid_default(const Problem& p, const DeviceLimits& d) {
  std::optional<SoftmaxPlan> any;
  for (TileShape t : block_hybrid_tiles(p.dtype)) {
    std::optional<SoftmaxPlan> s = block_hybrid_plan(p, d, t);
    if (!s) continue;
    if (p.dtype == DType::f32) return s;
    const i64 full =
        std::min<i64>(p.M, static_cast<i64>(kTileThreadsPerSm / t.threads_or_lanes) * d.sm_count);
    if (s->rows_in_flight == full) return s;
    if (!any) any = s;
  }
  return any;
}

// block_hybrid across a cluster by default: the 512-thread tile (the first listed), C = 1, 2, 4 ...
// up to kHybridClusterDefaultMax, the smallest C whose blocks share an SM two at a time; 16-bit
// rows, where none does, the smallest C whose slice fits at all. It needs a full wave of blocks
// (M x C >= SMs) and at least as much of each slice in shared memory as in registers (a slice
// barely past its tile is cluster_tile's, and 16-bit register tiles alone ran slower than
// block_hybrid at bf16 131072); nullopt where no C qualifies. The shapes it takes are those where
// it beat the plan it replaces on the H200 (bf16 100000 ... 1000003, fp32 2^18); where it lost
// (fp32 131072; fp32 2^19 and 1000003 and bf16 2^21 at C = 16), it is not the default
// (results/h200/tuning/; docs/performance.md, "block_hybrid").
std::optional<SoftmaxPlan> hybrid_cluster_default(const Problem& p, const DeviceLimits& d,
                                                  int max_cluster) {
  const TileShape tile = block_hybrid_tiles(p.dtype).front();
  const int C_max = std::min(max_cluster, kHybridClusterDefaultMax);
  const auto two_per_sm = [&](const BlockHybridPlan& h) {
    return hybrid_blocks_per_sm(d, h.threads, h.smem_bytes) >= 2;
  };
  for (const bool shared : {true, false}) {
    if (!shared && p.dtype == DType::f32) break;
    for (int C = 1; C <= C_max; C *= 2) {
      std::optional<SoftmaxPlan> s = block_hybrid_plan(p, d, tile, C);
      if (!s) continue;
      const BlockHybridPlan& h = form_of<BlockHybridPlan>(*s);
      if (p.M * C < d.sm_count || h.resident < h.capacity || (shared && !two_per_sm(h)))
        continue;
      s->why += shared ? " (the fewest blocks a row that share an SM two at a time)"
                       : " (the fewest blocks a row whose slices fit)";
      return s;
    }
  }
  return std::nullopt;
}

// ---- cluster_tile ------------------------------------------------------------------------------

// C = the smallest power of two of `tile`s that covers the row (none when max_cluster of them do
// not); the row is then cut into C equal slices.
std::optional<SoftmaxPlan> cluster_tile_plan(const Problem& p, const DeviceLimits& d,
                                             TileShape tile, int max_cluster) {
  const i64 cap = tile_capacity(tile, p.dtype);
  const auto slice_for = [&](int C) { return round_up(ceil_div(p.N, C), vec_elems(p.dtype)); };
  const i64 room = row_head_room(p);  // each slice's window must fit the tile
  int C = 1;
  while (slice_for(C) + room > cap && C < max_cluster) C *= 2;
  if (slice_for(C) + room > cap) return std::nullopt;
  ClusterTilePlan t;
  t.threads = tile.threads_or_lanes;
  t.vecs = tile.vecs;
  t.capacity = cap;
  t.cluster = C;
  t.slice = slice_for(C);  // equal slices, whole vectors
  t.grid = p.M * C;
  SoftmaxPlan s;
  s.form = t;
  // Blocks per SM: the register file, not the 2048-thread limit, bounds them (kTileThreadsPerSm).
  const i64 blocks_per_sm = std::max(1, kTileThreadsPerSm / tile.threads_or_lanes);
  s.rows_in_flight = std::max<i64>(1, std::min<i64>(p.M, blocks_per_sm * d.sm_count / C));
  s.why = fmt::format(
      "{}: cluster_tile, a cluster of {} block(s) per row, each holding {} elements in registers "
      "(a tile of {} threads x {} 16-byte vectors), (max, sum) exchanged through distributed "
      "shared memory; x read once",
      shape_words(p), C, t.slice, t.threads, t.vecs);
  return s;
}

// ---- cluster_row -------------------------------------------------------------------------------

// The cluster plan with C blocks per row; none when its slice does not fit.
std::optional<SoftmaxPlan> cluster_plan(const Problem& p, const DeviceLimits& d, int C) {
  const i64 b = dtype_bytes(p.dtype);
  const i64 slice = round_up(ceil_div(p.N, C), vec_elems(p.dtype));
  const auto slice_bytes = static_cast<std::size_t>(slice * b);
  const auto smem = static_cast<std::size_t>((slice + slice_head_room(p)) * b);  // the window
  if (smem > slice_smem_limit(d)) return std::nullopt;
  ClusterRowPlan c;
  c.cluster = C;
  c.slice = slice;
  c.smem_bytes = smem;
  c.grid = p.M * C;
  // Who copies the slice in: the threads (cp.async) for clusters of 8, the copy engine otherwise
  // (on the H200 cp.async was the faster at C = 8, fp32 and bf16; neither was throughout at
  // C = 1, 2, 16: results/h200/tuning/; docs/performance.md, "cluster_row").
  c.thread_copy = C == 8;
  SoftmaxPlan s;
  s.form = c;
  const std::size_t per_block = smem + kSliceStaticSmem + kSmemReservedPerBlock;
  const i64 blocks_per_sm = std::max<i64>(1, static_cast<i64>(smem_per_sm(d) / per_block));
  s.rows_in_flight = std::max<i64>(1, std::min<i64>(p.M, blocks_per_sm * d.sm_count / C));
  s.why = fmt::format(
      "{}: cluster_row, a cluster of {} block(s) per row, {} elements ({}) per block held in "
      "shared memory ({}), (max, sum) exchanged through distributed shared memory; x read once",
      shape_words(p), C, slice, kib(static_cast<double>(slice_bytes)),
      c.thread_copy ? "copied by the threads, cp.async" : "TMA bulk copy");
  return s;
}

// The smallest cluster whose slice is at most `target` bytes; none where no cluster's is.
std::optional<SoftmaxPlan> smallest_cluster(const Problem& p, const DeviceLimits& d,
                                            int max_cluster, std::size_t target) {
  for (int C = 1; C <= max_cluster; C *= 2) {
    std::optional<SoftmaxPlan> s = cluster_plan(p, d, C);
    if (s && static_cast<std::size_t>(form_of<ClusterRowPlan>(*s).slice * dtype_bytes(p.dtype)) <=
                 target)
      return s;
  }
  return std::nullopt;
}

// ---- split_row ---------------------------------------------------------------------------------

// Whether split_row prefetches the next slice into L2, when the caller does not say: only while
// the rows its blocks hold at once fill at most a share of L2 -- 41% for one slice a block, 45%
// for the two-slice pipelined plan, whose rows held are twice its rows in flight (the three-slice
// default never prefetches: split_default). The prefetched lines must survive until the slice is
// copied in, beside the outputs being written (write-back, dirty in L2). Both shares are set by
// measurements, not derived:
// - one slice a block, on the H200: the prefetch paid at waves of up to ~25 MB (41% of its 60 MB
//   L2) and cost past them, where the default sweep's counters showed more bytes read per element
//   than one read of the row; it cost rows read twice too (results/h200/tuning/);
// - two slices a block: with the early re-poll it paid 1.02-1.06x on the H200 at 2^18 ... 2^20
//   fp32, 43% and 40% of its L2 held (results/h200/tuning/fp32-long-rows.log), and cost on the
//   H100 at 2^19 and 2^20, 48% of its 50 MB: the plan without it ran 1.17x and 1.15x, and 1.06x
//   at N = 1000003 (46%) (results/h100/a3e4cf9-any-stride/tune-long.log). No card's measurement
//   lies between 43% (paid) and 46% (cost); docs/performance.md, "split_row".
inline constexpr double kSplitPrefetchL2Share = 0.41;      // one slice a block
inline constexpr double kPipelinedPrefetchL2Share = 0.45;  // two slices a block
bool split_prefetch_default(const Problem& p, const DeviceLimits& d, i64 rows_in_flight,
                            int buffers, bool on_chip) {
  const double held = static_cast<double>(rows_in_flight) * buffers * static_cast<double>(p.N) *
                      static_cast<double>(dtype_bytes(p.dtype));
  const double share = buffers == 1 ? kSplitPrefetchL2Share : kPipelinedPrefetchL2Share;
  return on_chip && held <= share * static_cast<double>(d.l2_bytes);
}

enum class Prefetch { by_rule, on, off };

// The dynamic shared memory a split_row block may take with blocks_per_sm blocks on every SM.
std::size_t split_block_smem(const DeviceLimits& d, int blocks_per_sm) {
  const std::size_t per_sm = smem_per_sm(d) / static_cast<std::size_t>(blocks_per_sm);
  return std::min(per_sm > kSmemReservedPerBlock + kSliceStaticSmem
                      ? per_sm - kSmemReservedPerBlock - kSliceStaticSmem
                      : 0,
                  slice_smem_limit(d));
}

// blocks_per_sm: the grid's blocks on every SM (kSplitBlocksPerSm, or 1: each block twice the
// shared memory, so slices twice as long and half as many per row -- each block still takes as
// many items, the grid being half as large). buffers: the slices each block holds at once (1, or
// 2 or 3 for the pipelined exchange: each slice in that share of the block's shared memory).
// rows_max (rows on chip): at most that many rows in flight, each over more blocks (0: no cap).
SoftmaxPlan split_plan(const Problem& p, const DeviceLimits& d, Prefetch prefetch,
                       int blocks_per_sm = kSplitBlocksPerSm, int buffers = 1, i64 rows_max = 0) {
  SoftmaxPlan s;
  s.form = SplitRowPlan{};
  SplitRowPlan& r = form_of<SplitRowPlan>(s);
  r.buffers = buffers;
  const i64 b = dtype_bytes(p.dtype);
  const i64 V = vec_elems(p.dtype);
  const i64 grid_max = static_cast<i64>(d.sm_count) * blocks_per_sm;
  // Shared memory per block with blocks_per_sm blocks on every SM, per buffer.
  const std::size_t usable =
      split_block_smem(d, blocks_per_sm) / static_cast<std::size_t>(buffers);
  const i64 room = slice_head_room(p);  // a slice's window: one vector more when rows are unaligned
  const i64 cap = std::max<i64>(V, round_down(static_cast<i64>(usable) / b - room, V));
  const i64 slices_max = std::max<i64>(1, ceil_div(p.N, kMinSplitSlice));
  const i64 slices_needed = ceil_div(p.N, cap);  // slices that hold a whole row on chip
  i64 R = 1, S = 1;
  if (slices_needed <= grid_max) {
    // Whole rows fit on chip: R rows at once, balanced so the last wave is as full as the first.
    R = std::min<i64>(p.M, grid_max / slices_needed);
    if (rows_max > 0) R = std::min(R, rows_max);
    const i64 waves = ceil_div(p.M, R);
    R = ceil_div(p.M, waves);
    S = std::min<i64>(grid_max / R, slices_max);
    S = std::max<i64>(S, slices_needed);
  } else {
    S = std::min<i64>(grid_max, slices_max);
  }
  const i64 slice = round_up(ceil_div(p.N, S), V);
  S = ceil_div(p.N, slice);  // no empty slices
  r.slices = static_cast<int>(S);
  r.slice = slice;
  r.resident = std::min(slice, cap);
  s.rows_in_flight = R;
  r.grid = R * S;
  r.smem_bytes = static_cast<std::size_t>((r.resident + room) * b * buffers);
  const std::size_t partials = static_cast<std::size_t>(round_up(p.M * S * 8, 16));
  r.workspace_bytes = partials + static_cast<std::size_t>(p.M) * 4;
  const bool on_chip = r.resident == r.slice;
  s.traffic = on_chip ? TrafficModel::fused : TrafficModel::two_read;
  // The pipelined exchange prefetches, at each trip's start, the slice that trip copies in.
  r.prefetch = prefetch == Prefetch::on ||
               (prefetch == Prefetch::by_rule && split_prefetch_default(p, d, R, buffers, on_chip));
  const double reread = on_chip ? 0.0 : 1.0 - static_cast<double>(S * r.resident) /
                                                  static_cast<double>(p.N);
  const char* slices_word = buffers == 3 ? "three" : "two";  // of a pipelined plan (buffers > 1)
  s.why = fmt::format(
      "{}: split_row, each row over {} blocks of a co-resident grid of {} ({} per SM; {} row(s) "
      "at a time), {} elements per block{}; (max, sum) partials through global memory{}; each "
      "block copies its next slice in chunk by chunk as it writes this one",
      shape_words(p), S, r.grid, blocks_per_sm, R, slice,
      on_chip ? fmt::format(" held in shared memory ({}{}): x read once",
                            kib(static_cast<double>(r.smem_bytes)),
                            buffers > 1 ? fmt::format(" for {} slices", slices_word) : "")
              : fmt::format(", the first {} ({}) held in shared memory, the rest ({:.0f}% of the "
                            "row) read twice, the second time in reverse so its tail hits L2",
                            r.resident, kib(static_cast<double>(r.smem_bytes)), 100.0 * reread),
      r.prefetch && buffers == 1
          ? ", the next slice prefetched into L2 while a row waits for its partials"
          : "");
  if (buffers > 1)
    s.why += fmt::format(
        "; {} slices per block: the next row's statistics are published before this row is "
        "written, a whole trip before any block waits for them{}{}",
        slices_word, buffers == 3 ? ", from copies issued a whole trip before" : "",
        r.prefetch ? "; the slice each trip copies in prefetched into L2 at the trip's start" : "");
  return s;
}

// The pipelined split_row plan (`buffers` = 2 or 3 slices per block, one block per SM); none where
// a row does not fit on chip in the grid's parts of shared memory.
std::optional<SoftmaxPlan> split_pipelined(const Problem& p, const DeviceLimits& d,
                                           int buffers = 2, Prefetch prefetch = Prefetch::off) {
  SoftmaxPlan s = split_plan(p, d, prefetch, 1, buffers);
  const SplitRowPlan& r = form_of<SplitRowPlan>(s);
  if (r.resident != r.slice) return std::nullopt;
  return s;
}

// The same pipelined plan polling again, before the statistics' block reduction, each partial that
// the trip's first load found unpublished (a candidate for the tuning run).
SoftmaxPlan with_repoll(SoftmaxPlan s) {
  form_of<SplitRowPlan>(s).repoll = true;
  s.why += "; a partial not yet published at the trip's start polled again before the statistics' "
           "reduction";
  return s;
}

// The same split_row plan with its partials counted in (a release fetch_add per slice, an acquire
// spin on the row's counter) instead of tagged: a candidate for the tuning run.
SoftmaxPlan by_counter(SoftmaxPlan s) {
  form_of<SplitRowPlan>(s).tagged_partials = false;
  s.why += "; partials counted in (release/acquire), not tagged";
  return s;
}

// The same split_row plan of fp32 rows read twice with the streamed parts dealt to the row's
// blocks in turn, a step of kSliceThreads vectors each (split_row.cu, interleaved_part): at any
// moment the grid's streamed loads and stores fall in one window of consecutive addresses, as the
// copy ceiling's do, not in one stream per block.
SoftmaxPlan with_interleaved(SoftmaxPlan s) {
  form_of<SplitRowPlan>(s).interleaved = true;
  s.why += "; the parts not kept in shared memory dealt to the row's blocks in turn, a step each "
           "(the grid's streamed accesses in one window of consecutive addresses)";
  return s;
}

// Whether split_row's kernel has the interleaved form for plan s of p: fp32 rows on 16-byte
// boundaries read twice, one slice per block.
bool interleavable(const Problem& p, const SplitRowPlan& r) {
  return p.dtype == DType::f32 && row_head_room(p) == 0 && r.buffers == 1 && r.resident < r.slice;
}

// Whether fp32 rows read twice deal their streamed parts out step by step (with_interleaved):
// where a row's streamed part is larger than L2, so that its second read comes from DRAM. On the
// H200 it paid at M = 1, N = 2^26 (238 MB streamed) and cost where the streamed part fits in L2
// (M = 8, N = 2^24), and for bf16 everywhere (its interleaved instantiation spills), so fp32 only
// (results/h200/tuning/; docs/performance.md, "split_row").
bool split_interleave_default(const Problem& p, const DeviceLimits& d, const SplitRowPlan& r) {
  const double streamed = static_cast<double>(p.N - std::min<i64>(p.N, r.slices * r.resident)) *
                          static_cast<double>(dtype_bytes(p.dtype));
  return interleavable(p, r) && streamed > static_cast<double>(d.l2_bytes);
}

// The split_row plan of rows on chip with one block per SM and at most rows_max rows in flight,
// its shared memory a ring of chunk slots (split_row.cu, split_row_ring_kernel): each of the next
// slices' chunks copied in as soon as a slot is free, so that most of the next slice is in flight
// while this one's statistics are taken and its row's partials awaited. None where the block's
// shared memory holds no more than one slice's kSliceChunks chunks (nothing would be copied
// sooner), or for rows the ring does not take (off 16-byte boundaries, or not whole vectors: their
// launches would run the one-slice kernel).
std::optional<SoftmaxPlan> split_ring(const Problem& p, const DeviceLimits& d, i64 rows_max) {
  if (row_head_room(p) != 0 || p.N % vec_elems(p.dtype) != 0) return std::nullopt;
  SoftmaxPlan s = split_plan(p, d, Prefetch::off, 1, 1, rows_max);
  SplitRowPlan& r = form_of<SplitRowPlan>(s);
  if (r.resident != r.slice) return std::nullopt;
  r.ring = true;
  r.smem_bytes = split_block_smem(d, 1);
  const int slots = split_ring_slots(r, p.dtype);
  if (slots <= kSplitChunks) return std::nullopt;
  r.smem_bytes = static_cast<std::size_t>(slots * split_chunk_bytes(r.slice, p.dtype));
  // (The one-slice plan's last clause, the next slice copied in as this one is written, replaced.)
  const std::string_view copied = "; each block copies its next slice in chunk by chunk as it "
                                  "writes this one";
  if (const std::size_t at = s.why.find(copied); at != std::string::npos)
    s.why.erase(at, copied.size());
  s.why += fmt::format("; the block's shared memory ({}) a ring of {} chunk slots, each of the next "
                       "slices' chunks copied in as soon as a slot is free",
                       kib(static_cast<double>(r.smem_bytes)), slots);
  return s;
}

// The default split_row plan, each choice the faster on the H200 of those the tuning test times
// (results/h200/tuning/; docs/performance.md, "split_row"): rows that fit on chip on one block per
// SM (slices twice as long as two blocks' would be), rows read twice on two (there one block per
// SM keeps a smaller share of the row). fp32 rows take the pipelined exchange where it fits:
// - two slices per block where that keeps at least kSplitPipelinedMinRows rows in flight (with
//   fewer, every block of the card waits on one row; 16-bit rows never: their statistics phase,
//   twice the elements per byte, is half a trip), with the slice each trip copies in prefetched
//   into L2 at the trip's start where split_prefetch_default says so, and then a partial found
//   unpublished at the trip's start polled again before the statistics' reduction (fewer trips
//   then wait for a partial when they need it; timed only beside the prefetch);
// - else three slices per block where they are no shorter than two slices would be (the third
//   part of shared memory is then free, and it gives the copies a trip of lead time; where the
//   slices would have to shrink it is slower);
// fp32 rows off 16-byte boundaries (N = 1000003): the two-slice plan (its prefetch by the same
// rule) where it keeps kSplitPipelinedMinRows rows in flight, else two blocks per SM with counted
// partials.
// Aligned fp32 rows on chip that take neither form and go one at a time over the whole card
// (N = 2^22: a 127 KB slice a block, two would not fit) take the ring of chunk slots (split_ring;
// where it would have more rows in flight or shorter slices than the plan it replaces it is
// slower, its exchange then on the critical path of every trip). Rows read twice: two blocks per
// SM, and for fp32 rows whose streamed part is larger than L2 that part dealt out step by step
// (split_interleave_default).
SoftmaxPlan split_default(const Problem& p, const DeviceLimits& d) {
  const auto on_chip = [](const SoftmaxPlan& s) {
    const SplitRowPlan& r = form_of<SplitRowPlan>(s);
    return r.resident == r.slice;
  };
  const auto slices = [](const SoftmaxPlan& s) { return form_of<SplitRowPlan>(s).slices; };
  if (p.dtype == DType::f32) {
    if (row_head_room(p) == 0) {
      const std::optional<SoftmaxPlan> two = split_pipelined(p, d, 2, Prefetch::by_rule);
      if (two && two->rows_in_flight >= kSplitPipelinedMinRows)
        return form_of<SplitRowPlan>(*two).prefetch ? with_repoll(*two) : *two;
      const std::optional<SoftmaxPlan> three = split_pipelined(p, d, 3);
      if (two && three && slices(*three) == slices(*two)) return *three;
    } else {
      // Rows off 16-byte boundaries: the two-slice plan where it keeps as many rows in flight as
      // the aligned rows' default needs (at N = 1000003 faster than the counted plan:
      // results/h200/tuning/), else two blocks per SM with counted partials.
      const std::optional<SoftmaxPlan> two = split_pipelined(p, d, 2, Prefetch::by_rule);
      if (two && two->rows_in_flight >= kSplitPipelinedMinRows) return *two;
      const SoftmaxPlan two_per_sm = split_plan(p, d, Prefetch::off);
      if (on_chip(two_per_sm)) return by_counter(two_per_sm);
    }
  }
  SoftmaxPlan one = split_plan(p, d, Prefetch::by_rule, 1);
  if (on_chip(one)) {
    if (p.dtype == DType::f32 && one.rows_in_flight == 1)
      if (std::optional<SoftmaxPlan> ring = split_ring(p, d, 1);
          ring && slices(*ring) == slices(one))
        return *ring;
    return one;
  }
  const SoftmaxPlan twice = split_plan(p, d, Prefetch::by_rule);
  return split_interleave_default(p, d, form_of<SplitRowPlan>(twice)) ? with_interleaved(twice)
                                                                        : twice;
}

// The same cluster_row plan with its slice copied in the other way (threads / copy engine): a
// candidate for the tuning run.
SoftmaxPlan other_copy(SoftmaxPlan s) {
  bool& thread_copy = form_of<ClusterRowPlan>(s).thread_copy;
  thread_copy = !thread_copy;
  s.why += thread_copy ? "; the slice copied by the threads (cp.async), not TMA"
                       : "; the slice copied by TMA, not the threads";
  return s;
}

}  // namespace

int plan_cluster(const SoftmaxPlan& plan) {
  return std::visit(
      [](const auto& f) {
        if constexpr (requires { f.cluster; })
          return f.cluster;
        else
          return 1;
      },
      plan.form);
}

std::int64_t plan_grid(const SoftmaxPlan& plan) {
  return std::visit([](const auto& f) { return f.grid; }, plan.form);
}

std::string_view to_string(SoftmaxFamily f) {
  switch (f) {
    case SoftmaxFamily::warp_rows: return "warp_rows";
    case SoftmaxFamily::block_row: return "block_row";
    case SoftmaxFamily::block_hybrid: return "block_hybrid";
    case SoftmaxFamily::cluster_tile: return "cluster_tile";
    case SoftmaxFamily::cluster_row: return "cluster_row";
    case SoftmaxFamily::split_row: return "split_row";
  }
  return "?";
}

std::vector<TileShape> warp_rows_tiles(DType t) {
  return t == DType::f32 ? tile_shapes(WarpRowsTilesFp32{}) : tile_shapes(WarpRowsTiles16{});
}

std::vector<TileShape> block_row_tiles(DType t) {
  return t == DType::f32 ? tile_shapes(BlockRowTilesFp32{}) : tile_shapes(BlockRowTiles16{});
}

std::vector<TileShape> warp_rows_wide_tiles(DType t) {
  return t == DType::f32 ? tile_shapes(WarpRowsWideTilesFp32{})
                         : tile_shapes(WarpRowsWideTiles16{});
}

std::vector<TileShape> block_row_wide_tiles(DType t) {
  return t == DType::f32 ? tile_shapes(BlockRowWideTilesFp32{})
                         : tile_shapes(BlockRowWideTiles16{});
}

std::vector<TileShape> cluster_tile_tiles(DType t) {
  return t == DType::f32 ? tile_shapes(ClusterTileTilesFp32{}) : tile_shapes(ClusterTileTiles16{});
}

std::int64_t warp_rows_max_n(DType t) { return t == DType::f32 ? 512 : kWarpRowsMaxN; }

bool warp_rows_two_pass_default(DType t) { return t != DType::f32; }

std::int64_t block_row_max_n(DType) { return kBlockRowMaxN; }

std::vector<TileShape> block_hybrid_tiles(DType t) {
  return t == DType::f32 ? tile_shapes(BlockHybridTilesFp32{}) : tile_shapes(BlockHybridTiles16{});
}

std::int64_t block_hybrid_max_n(DType t, const DeviceLimits& d) {
  const i64 V = vec_elems(t);
  i64 cap = 0;  // the largest tile's
  for (TileShape tile : block_hybrid_tiles(t))
    cap = std::max<i64>(cap, tile_capacity(tile, t));
  return cap + round_down(static_cast<i64>(slice_smem_limit(d)) / dtype_bytes(t), V) - 2 * V;
}

std::int64_t cluster_tile_max_n(DType t) {
  if (t != DType::f32) return 0;
  const TileShape narrow = cluster_tile_tiles(t).back();  // the tile of the larger clusters
  return static_cast<i64>(kClusterTileDefaultMax) * narrow.threads_or_lanes * narrow.vecs *
         vec_elems(t);
}

std::int64_t cluster_row_max_n(DType t) {
  return static_cast<i64>(kClusterRowDefaultMax) * static_cast<i64>(kClusterSliceMax) /
         dtype_bytes(t);
}

std::size_t smem_per_sm(const DeviceLimits& d) {
  return d.shared_bytes_per_sm > 0 ? d.shared_bytes_per_sm
                                   : d.shared_bytes_per_block + kSmemReservedPerBlock;
}

FamilyNeeds family_needs(SoftmaxFamily f) {
  switch (f) {
    case SoftmaxFamily::warp_rows:
    case SoftmaxFamily::block_row: return {75, false};
    case SoftmaxFamily::block_hybrid:
    case SoftmaxFamily::split_row: return {90, false};
    case SoftmaxFamily::cluster_tile:
    case SoftmaxFamily::cluster_row: return {90, true};
  }
  return {90, true};
}

std::optional<std::string> family_unavailable(SoftmaxFamily f, const DeviceLimits& d) {
  const FamilyNeeds need = family_needs(f);
  if (d.compute_capability() < need.min_cc)
    return fmt::format("{} needs sm_{} (the device is sm_{}{})", to_string(f), need.min_cc,
                       d.cc_major, d.cc_minor);
  if (need.clusters && !d.has_clusters())
    return fmt::format("{} needs thread-block clusters, which the device does not launch",
                       to_string(f));
  return std::nullopt;
}

std::optional<std::string> softmax_unsupported(const Problem& p, const DeviceLimits& d) {
  if (tile_need(p, kRuleLanes) <= block_row_max_n(p.dtype) ||
      family_available(SoftmaxFamily::split_row, d))
    return std::nullopt;
  return fmt::format(
      "N = {} {} exceeds block_row's {} elements, the longest row the production softmax runs on "
      "sm_{}{} (the families for longer rows need sm_90's bulk copies)",
      p.N, to_string(p.dtype), block_row_max_n(p.dtype) + p.N - tile_need(p, kRuleLanes),
      d.cc_major, d.cc_minor);
}

std::int64_t split_chunk_bytes(std::int64_t slice, DType t) {
  return ceil_div(slice / vec_elems(t), kSplitChunks) * kVectorBytes;
}

int split_ring_slots(const SplitRowPlan& plan, DType t) {
  return static_cast<int>(std::min<i64>(
      kSplitRingSlotsMax,
      static_cast<i64>(plan.smem_bytes) / split_chunk_bytes(plan.slice, t)));
}

std::size_t split_workspace_bytes(const Problem& p) {
  if (p.M < 1 || p.N < 2 * kMinSplitSlice) return 0;
  const i64 slices_max = ceil_div(p.N, kMinSplitSlice);
  return static_cast<std::size_t>(round_up(p.M * slices_max * 8, 16)) +
         static_cast<std::size_t>(p.M) * 4;
}

std::vector<SoftmaxPlan> family_plans(SoftmaxFamily f, const Problem& p, const DeviceLimits& d,
                                      int max_cluster) {
  check_problem(p);
  std::vector<SoftmaxPlan> out;
  if (!family_available(f, d)) return out;
  max_cluster = device_max_cluster(d, max_cluster);
  const i64 b = dtype_bytes(p.dtype);
  constexpr std::size_t kMaxTiles = 3;  // the smallest tiles that fit: larger ones only mask more
  switch (f) {
    case SoftmaxFamily::warp_rows: {
      // Unpadded rows off 16-byte boundaries up to kWarpRowsStagedMaxN: the staged plan first
      // (the default). Then every tile of the two smallest capacities that hold the row --
      // for rows off boundaries the one with half the lanes and twice the vectors of the first
      // of the smallest capacity first, where listed (on the H100 1.00-1.27x the first at fp32
      // and bf16 N = 128 and 256, ld = N + 1: results/h100/odd-rows/tune-pad1.log) -- and the
      // first of them on the other kind of grid and with the other reduction (two-pass <->
      // pairs' merge). The staged plan is a candidate on every row it holds, last where it is not
      // the default, and beside it its form that fills the span where that differs.
      const std::optional<SoftmaxPlan> staged = warp_rows_staged_plan(p);
      const bool staged_first = staged && warp_rows_staged_default(p);
      if (staged_first) out.push_back(*staged);
      const std::size_t tiles_from = out.size();
      const bool persistent = warp_rows_persistent_default(p);
      i64 first_cap = 0;
      for (TileShape t : warp_rows_tiles(p.dtype)) {
        const i64 cap = tile_capacity(t, p.dtype);
        if (!tile_holds(p, t) || (first_cap > 0 && cap > 2 * first_cap)) continue;
        if (first_cap == 0) first_cap = cap;
        out.push_back(warp_rows_plan(p, t, persistent));
      }
      if (out.size() > tiles_from && row_head_room(p) > 0) {
        const WarpRowsPlan first = form_of<WarpRowsPlan>(out[tiles_from]);
        const auto narrower = std::find_if(
            out.begin() + static_cast<std::ptrdiff_t>(tiles_from), out.end(),
            [&](const SoftmaxPlan& s) {
              const WarpRowsPlan& w = form_of<WarpRowsPlan>(s);
              return 2 * w.lanes_per_row == first.lanes_per_row && w.vecs == 2 * first.vecs;
            });
        if (narrower != out.end()) {
          narrower->why += fmt::format(
              "; rows off 16-byte boundaries: half the lanes of the {} x {} tile, twice the vectors",
              first.lanes_per_row, first.vecs);
          std::rotate(out.begin() + static_cast<std::ptrdiff_t>(tiles_from), narrower,
                      narrower + 1);
        }
      }
      if (out.size() > tiles_from) {
        const WarpRowsPlan first = form_of<WarpRowsPlan>(out[tiles_from]);
        out.push_back(warp_rows_plan(p, {first.lanes_per_row, first.vecs}, !persistent));
        out.push_back(
            warp_rows_plan(p, {first.lanes_per_row, first.vecs}, persistent, !first.two_pass));
        for (TileShape t :
             fuller_tiles(warp_rows_wide_tiles(p.dtype), p, first.capacity))
          out.push_back(warp_rows_plan(p, t, persistent));
        // Dense rows off boundaries (ld = N) past the staged plan's, two or more a warp, whose
        // windows fit the first tile's vectors: the same tile storing the vector two rows share
        // once, whole -- a candidate (the 16-bit odd rows' write sectors:
        // results/h100/b847af0-odd-counters/).
        const i64 V = vec_elems(p.dtype);
        if (!staged_first && row_head_room(p) > 0 && p.ld_x == p.N && p.ld_y == p.N && p.N >= V &&
            first.lanes_per_row < 32 && p.N + V - 1 <= first.capacity) {
          SoftmaxPlan shared = out[tiles_from];
          std::get<WarpRowsPlan>(shared.form).shared_ends = true;
          shared.why += "; the 16-byte vector two rows of a trip share stored once, whole";
          out.push_back(shared);
        }
      }
      if (staged) {
        if (!staged_first) out.push_back(*staged);
        if (const std::optional<SoftmaxPlan> filled = warp_rows_staged_plan(p, true);
            filled && !(filled->form == staged->form))
          out.push_back(*filled);
      }
      // Rows packed whole in vectors (N divides V, ld = N): the packed plan, a candidate. It is
      // not the default before a GPU run has verified and timed it (docs/performance.md, Open):
      // predicted ahead of the staged plan where N < V (bf16 N = 1 ran 25% of the copy staged on
      // the H100: results/h100/b847af0-sweeps/).
      if (const std::optional<SoftmaxPlan> packed = warp_rows_packed_plan(p))
        out.push_back(*packed);
      break;
    }
    case SoftmaxFamily::block_row: {
      // The default (block_row_default_tile) first, then the smallest tiles that hold the row.
      const std::optional<TileShape> pick = block_row_default_tile(p);
      if (!pick) break;
      out.push_back(block_row_plan(p, *pick));
      std::size_t holding = 0;  // tiles seen that hold the row
      for (TileShape t : block_row_tiles(p.dtype)) {
        if (!tile_holds(p, t)) continue;
        if (holding++ == kMaxTiles) break;
        if (t != *pick) out.push_back(block_row_plan(p, t));
      }
      for (TileShape t :
           fuller_tiles(block_row_wide_tiles(p.dtype), p, tile_capacity(*pick, p.dtype)))
        out.push_back(block_row_plan(p, t));
      break;
    }
    case SoftmaxFamily::block_hybrid:
      // One block per row, then across clusters of 2 ... max_cluster blocks (each block a slice
      // longer than its tile).
      for (int C = 1; C <= max_cluster; C *= 2)
        for (TileShape t : block_hybrid_tiles(p.dtype))
          if (std::optional<SoftmaxPlan> s = block_hybrid_plan(p, d, t, C)) out.push_back(*s);
      break;
    case SoftmaxFamily::cluster_tile:
      for (TileShape t : cluster_tile_tiles(p.dtype)) {
        std::optional<SoftmaxPlan> s = cluster_tile_plan(p, d, t, max_cluster);
        if (s && form_of<ClusterTilePlan>(*s).cluster > 1) out.push_back(*s);  // C = 1: block_row
      }
      break;
    case SoftmaxFamily::cluster_row:
      for (int C = 1; C <= max_cluster; C *= 2) {
        std::optional<SoftmaxPlan> s = cluster_plan(p, d, C);
        // Slices under 4 KB leave a block too little to load to be worth a cluster.
        if (s && (form_of<ClusterRowPlan>(*s).slice * b >= 4096 || C == 1)) {
          out.push_back(*s);
          out.push_back(other_copy(*s));
        }
      }
      break;
    case SoftmaxFamily::split_row:
      if (p.N >= 2 * kMinSplitSlice) {
        out.push_back(split_plan(p, d, Prefetch::by_rule));
        out.push_back(split_plan(
            p, d, form_of<SplitRowPlan>(out.back()).prefetch ? Prefetch::off : Prefetch::on));
        out.push_back(by_counter(out.front()));
        // fp32 rows read twice on 16-byte boundaries: the streamed parts dealt out step by step
        // (or, where that is the default, not).
        if (interleavable(p, form_of<SplitRowPlan>(out.front())))
          out.push_back(with_interleaved(out.front()));
        // One block per SM: slices twice as long.
        out.push_back(split_plan(p, d, Prefetch::by_rule, 1));
        // One block per SM with two slices of the same length as two blocks' (rows on chip),
        // or three of two thirds of that; each with and without the L2 prefetch of the slice it
        // copies in next, and each of those also polling unpublished partials again early.
        for (const bool prefetch : {false, true})
          for (const int buffers : {2, 3})
            if (std::optional<SoftmaxPlan> q =
                    split_pipelined(p, d, buffers, prefetch ? Prefetch::on : Prefetch::off)) {
              out.push_back(*q);
              out.push_back(with_repoll(*q));
            }
        // The ring of chunk slots (rows on chip, one block per SM), on the one-slice plan's rows
        // in flight, half of them and one (fewer rows at a time, shorter slices, more chunks
        // ahead); for rows longer than a cluster takes by default, those split_row runs.
        if (p.N > cluster_row_max_n(p.dtype)) {
          const i64 rows = split_plan(p, d, Prefetch::off, 1).rows_in_flight;
          for (const i64 r : {rows, std::max<i64>(1, rows / 2), i64{1}})
            if (std::optional<SoftmaxPlan> q = split_ring(p, d, r))
              if (std::none_of(out.begin(), out.end(),
                               [&](const SoftmaxPlan& o) { return o.form == q->form; }))
                out.push_back(*q);
        }
      }
      break;
  }
  return out;
}

namespace {

// ---- The dispatch's rules ----------------------------------------------------------------------
// plan_softmax asks each rule in kRules' order; the first that gives a plan runs. A rule sees the
// shape, the device's limits (SMs, L2, shared memory per block and per SM, clusters) and the
// largest cluster allowed; its thresholds are the constants of softmax_dispatch.hpp.
struct Ask {
  const Problem& p;
  const DeviceLimits& d;
  int max_cluster;
  i64 need;  // what a register tile of 32 or more lanes must hold (tile_need): the families' limits
};
using Rule = std::optional<SoftmaxPlan> (*)(const Ask&);

SoftmaxPlan first_plan(SoftmaxFamily f, const Ask& a) {
  std::vector<SoftmaxPlan> plans = family_plans(f, a.p, a.d, a.max_cluster);
  if (plans.empty())
    throw std::logic_error(fmt::format("softmax dispatch: {} has no plan for {}", to_string(f),
                                       shape_words(a.p)));
  return plans.front();
}

// cluster_tile on its 512-thread tiles (16384 fp32 elements each), up to 8 of them.
std::optional<SoftmaxPlan> narrow_cluster_tile(const Ask& a) {
  return cluster_tile_plan(a.p, a.d, cluster_tile_tiles(a.p.dtype).back(),
                           std::min(a.max_cluster, kClusterTileDefaultMax));
}

// Rows warp_rows' tiles hold.
std::optional<SoftmaxPlan> warp_rows_rule(const Ask& a) {
  if (a.need > warp_rows_max_n(a.p.dtype)) return std::nullopt;
  return first_plan(SoftmaxFamily::warp_rows, a);
}

// 16-bit rows past 16384, where block_row would need its 1024-thread tile: a 512-thread
// block_hybrid, two per SM, if the rows fill the card.
std::optional<SoftmaxPlan> hybrid_16bit_rule(const Ask& a) {
  const Problem& p = a.p;
  if (p.dtype == DType::f32 || p.N <= kBlockRowMaxN / 2 || a.need > block_row_max_n(p.dtype) ||
      p.M < a.d.sm_count || !family_available(SoftmaxFamily::block_hybrid, a.d))
    return std::nullopt;
  std::optional<SoftmaxPlan> h = block_hybrid_default(p, a.d);
  if (h && form_of<BlockHybridPlan>(*h).threads < 1024) return h;
  return std::nullopt;
}

// Rows block_row's tiles hold.
std::optional<SoftmaxPlan> block_row_rule(const Ask& a) {
  if (a.need > block_row_max_n(a.p.dtype)) return std::nullopt;
  return first_plan(SoftmaxFamily::block_row, a);
}

// Longer rows on a card without the families for them (family_needs): refused, with the reason.
std::optional<SoftmaxPlan> unsupported_rule(const Ask& a) {
  if (std::optional<std::string> why = softmax_unsupported(a.p, a.d))
    throw std::invalid_argument("softmax dispatch: " + *why);
  return std::nullopt;
}

// 16-bit rows past block_row: block_hybrid's 512-thread tile, one block per row or across a
// cluster of up to 8 (hybrid_cluster_default), where the rows give a full wave of blocks.
std::optional<SoftmaxPlan> hybrid_cluster_16bit_rule(const Ask& a) {
  if (a.p.dtype == DType::f32) return std::nullopt;
  return hybrid_cluster_default(a.p, a.d, a.max_cluster);
}

// Longer rows: one block per row, registers and shared memory, while they hold the row; it
// needs a full wave of rows (M >= SMs). Except fp32 rows that fill a cluster of 512-thread
// register tiles exactly (N = 65536: 4 x 16384), which take the cluster: on the H200 faster
// than block_hybrid's 16384 + 192 KiB (results/h200/tuning/; docs/performance.md,
// "cluster_tile").
std::optional<SoftmaxPlan> hybrid_rule(const Ask& a) {
  const Problem& p = a.p;
  if (p.N > block_hybrid_max_n(p.dtype, a.d) || p.M < a.d.sm_count) return std::nullopt;
  if (p.dtype == DType::f32 && a.max_cluster > 1)
    if (std::optional<SoftmaxPlan> t = narrow_cluster_tile(a)) {
      const ClusterTilePlan& c = form_of<ClusterTilePlan>(*t);
      if (c.cluster > 1 && p.N == c.cluster * c.capacity && p.M * c.cluster >= a.d.sm_count) {
        t->why += " (the row fills the cluster's tiles exactly: faster than block_hybrid)";
        return t;
      }
    }
  return block_hybrid_default(p, a.d);
}

// fp32 rows just past block_hybrid, while two blocks of a cluster hold the row in shared memory
// (cluster_row C = 2 fits: one block per SM; on the H200 faster than cluster_tile's 4 register
// tiles at N = 100000): two blocks of a cluster, each holding half the row as block_hybrid holds
// a row, 16384 elements in registers and the rest in shared memory (there faster than
// cluster_row C = 2: results/h200/tuning/; docs/performance.md, "block_hybrid").
std::optional<SoftmaxPlan> two_block_cluster_rule(const Ask& a) {
  const Problem& p = a.p;
  if (p.dtype != DType::f32 || a.max_cluster < 2 || p.N <= block_hybrid_max_n(p.dtype, a.d))
    return std::nullopt;
  std::optional<SoftmaxPlan> two = cluster_plan(p, a.d, 2);
  if (!two || p.M * 2 < a.d.sm_count) return std::nullopt;
  std::optional<SoftmaxPlan> h = block_hybrid_plan(p, a.d, block_hybrid_tiles(p.dtype).front(), 2);
  if (h) {
    h->why += " (two blocks, each half the row in registers and shared memory: faster than "
              "cluster_row's two)";
    return h;
  }
  two->why += " (two blocks, each half the row in shared memory: faster than 4 register tiles)";
  return two;
}

// Then a cluster of register tiles (fp32): two of 1024 threads while they hold the row, else up
// to 8 of 512 threads; it needs at least a full wave of blocks (M x C >= SMs), else the rows
// are split over the whole card.
std::optional<SoftmaxPlan> cluster_tile_rule(const Ask& a) {
  const Problem& p = a.p;
  if (a.max_cluster <= 1 || p.N > cluster_tile_max_n(p.dtype)) return std::nullopt;
  std::optional<SoftmaxPlan> t = cluster_tile_plan(p, a.d, cluster_tile_tiles(p.dtype).front(),
                                                   std::min(a.max_cluster, kClusterTileWideMax));
  if (!t) t = narrow_cluster_tile(a);
  if (!t) return std::nullopt;
  const int C = form_of<ClusterTilePlan>(*t).cluster;
  if (C > 1 && p.M * C >= a.d.sm_count) return t;
  return std::nullopt;
}

// The cluster_row plan for the rule below: the smallest cluster (up to 8) whose slices are at
// most 64 KB, else at most 112 KB; none where none holds the row or the device has no clusters.
std::optional<SoftmaxPlan> cluster_row_default(const Ask& a) {
  if (!family_available(SoftmaxFamily::cluster_row, a.d)) return std::nullopt;
  const int row_max = std::min(a.max_cluster, kClusterRowDefaultMax);
  std::optional<SoftmaxPlan> c = smallest_cluster(a.p, a.d, row_max, kClusterSliceTarget);
  if (!c) c = smallest_cluster(a.p, a.d, row_max, kClusterSliceMax);
  return c;
}

// Then rows in shared memory (up to 8 slices), again a cluster if the card is full of them.
std::optional<SoftmaxPlan> cluster_row_rule(const Ask& a) {
  std::optional<SoftmaxPlan> c = cluster_row_default(a);
  if (c && a.p.M * form_of<ClusterRowPlan>(*c).cluster >= a.d.sm_count) return c;
  return std::nullopt;
}

// Then fp32 rows no such cluster holds, across a cluster of block_hybrid blocks two an SM
// (N = 2^18: 8 blocks of 16384 in registers + 64 KiB), if the card is full of them.
std::optional<SoftmaxPlan> hybrid_cluster_fp32_rule(const Ask& a) {
  if (a.p.dtype != DType::f32) return std::nullopt;
  return hybrid_cluster_default(a.p, a.d, a.max_cluster);
}

// Everything else: split_row (split_default), saying why where a cluster held the row.
std::optional<SoftmaxPlan> split_row_rule(const Ask& a) {
  SoftmaxPlan s = split_default(a.p, a.d);
  if (const std::optional<SoftmaxPlan> c = cluster_row_default(a)) {
    const int C = form_of<ClusterRowPlan>(*c).cluster;
    s.why += fmt::format(" (a cluster of {} would give only {} blocks for {} SMs)", C, a.p.M * C,
                         a.d.sm_count);
  }
  return s;
}

// The dispatch, in order: the first rule that gives a plan runs.
constexpr Rule kRules[] = {
    warp_rows_rule,             // N <= 512 fp32, 1024 16-bit
    hybrid_16bit_rule,          // 16-bit N in (16384, 32768], M >= SMs
    block_row_rule,             // N <= 32768
    unsupported_rule,           // longer rows on a card before sm_90: refused
    hybrid_cluster_16bit_rule,  // 16-bit: block_hybrid, C = 1 ... 8
    hybrid_rule,                // N <= 32768 + a block's shared memory, M >= SMs
    two_block_cluster_rule,     // fp32, two blocks of a cluster hold the row
    cluster_tile_rule,          // fp32 N <= 8 x 16384, M x C >= SMs
    cluster_row_rule,           // up to 8 slices of 112 KB, M x C >= SMs
    hybrid_cluster_fp32_rule,   // fp32 rows no cluster_row plan holds (2^18)
    split_row_rule,             // everything else
};

}  // namespace

SoftmaxPlan plan_softmax(const Problem& p, const DeviceLimits& d, int max_cluster) {
  check_problem(p);
  const Ask ask{p, d, device_max_cluster(d, max_cluster), tile_need(p, kRuleLanes)};
  for (Rule rule : kRules)
    if (std::optional<SoftmaxPlan> plan = rule(ask)) return *std::move(plan);
  throw std::logic_error("softmax dispatch: no rule gave a plan for " + shape_words(p));
}

std::vector<SoftmaxPlan> candidate_plans(const Problem& p, const DeviceLimits& d, int max_cluster) {
  std::vector<SoftmaxPlan> out{plan_softmax(p, d, max_cluster)};
  // The neighbours of the default: each family within a factor 4 of its default range.
  std::vector<SoftmaxFamily> families;
  if (p.N <= kWarpRowsMaxN) families.push_back(SoftmaxFamily::warp_rows);
  if (p.N > kWarpRowsMaxN / 4) families.push_back(SoftmaxFamily::block_row);
  if (p.N > kBlockRowMaxN / 2) families.push_back(SoftmaxFamily::block_hybrid);
  if (p.N > kBlockRowMaxN / 2) families.push_back(SoftmaxFamily::cluster_tile);
  if (p.N > kBlockRowMaxN / 4) families.push_back(SoftmaxFamily::cluster_row);
  if (p.N > kBlockRowMaxN / 4) families.push_back(SoftmaxFamily::split_row);
  for (SoftmaxFamily f : families)
    for (SoftmaxPlan& s : family_plans(f, p, d, max_cluster))
      if (std::none_of(out.begin(), out.end(),
                       [&](const SoftmaxPlan& o) { return o.form == s.form; }))
        out.push_back(std::move(s));
  return out;
}

std::optional<SoftmaxPlan> find_candidate(const Problem& p, const DeviceLimits& d,
                                          std::string_view text, int max_cluster) {
  for (SoftmaxPlan& s : candidate_plans(p, d, max_cluster))
    if (summary(s) == text) return std::move(s);
  return std::nullopt;
}

std::string summary(const SoftmaxPlan& s) {
  return std::visit(
      Overloaded{
          [](const WarpRowsPlan& w) {
            if (w.staged_rows > 0)
              return fmt::format("warp_rows staged R={} G={} cap={}", w.staged_rows,
                                 w.lanes_per_row, w.capacity);
            if (w.packed)
              return fmt::format("warp_rows packed K={} cap={}", w.vecs, w.capacity);
            return fmt::format("warp_rows G={} K={} cap={}{}{}{}", w.lanes_per_row, w.vecs,
                               w.capacity,
                               w.grid > 0 ? fmt::format(" grid={}", w.grid) : std::string{},
                               w.two_pass ? " two-pass" : "", w.shared_ends ? " shared-ends" : "");
          },
          [](const BlockRowPlan& r) {
            return fmt::format("block_row T={} K={} cap={}", r.threads, r.vecs, r.capacity);
          },
          [](const BlockHybridPlan& h) {
            return fmt::format("block_hybrid {}T={} K={} cap={} smem={}",
                               h.cluster > 1 ? fmt::format("C={} slice={} ", h.cluster, h.slice)
                                             : std::string{},
                               h.threads, h.vecs, h.capacity, h.smem_bytes);
          },
          [](const ClusterTilePlan& t) {
            return fmt::format("cluster_tile C={} T={} K={} slice={}", t.cluster, t.threads,
                               t.vecs, t.slice);
          },
          [](const ClusterRowPlan& c) {
            return fmt::format("cluster_row C={} slice={} smem={}{}", c.cluster, c.slice,
                               c.smem_bytes, c.thread_copy ? " ldgsts" : "");
          },
          [&](const SplitRowPlan& r) {
            return fmt::format(
                "split_row S={} slice={} resident={} R={} grid={} smem={}{}{}{}{}{}{}", r.slices,
                r.slice, r.resident, s.rows_in_flight, r.grid, r.smem_bytes,
                r.prefetch ? " prefetch" : "", r.tagged_partials ? "" : " counted",
                r.repoll ? " repoll" : "",
                r.buffers == 2   ? " pipelined"
                : r.buffers == 3 ? " pipelined B=3"
                                 : "",
                r.interleaved ? " interleaved" : "", r.ring ? " ring" : "");
          },
      },
      s.form);
}

}  // namespace smr
