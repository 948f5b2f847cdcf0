// Host-only checks of the production softmax's dispatch (kernels/production/softmax_dispatch.hpp): which
// family runs each shape, at every boundary N - 1 / N / N + 1, and that every plan it makes is
// one the kernels can launch (invariants below). No GPU: the DeviceLimits defaults are the H200;
// the last cases ask every device profile (kernels/device_profiles.hpp).
#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <variant>
#include <vector>

#include "catch.hpp"
#include "edge_shapes.hpp"
#include "kernels/device_profiles.hpp"
#include "kernels/registry.hpp"
#include "kernels/production/softmax_dispatch.hpp"

using namespace smr;

namespace {

const DeviceLimits kH200{};  // 132 SMs, 227 KB of shared memory per block
constexpr DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};

std::int64_t vec_elems(DType t) { return kVectorBytes / dtype_bytes(t); }

// A plan's own family's fields: std::get on its form, which throws (failing the case) for a plan
// of another family.
const WarpRowsPlan& warp_rows_of(const SoftmaxPlan& s) { return std::get<WarpRowsPlan>(s.form); }
const BlockRowPlan& block_row_of(const SoftmaxPlan& s) { return std::get<BlockRowPlan>(s.form); }
const BlockHybridPlan& block_hybrid_of(const SoftmaxPlan& s) {
  return std::get<BlockHybridPlan>(s.form);
}
BlockHybridPlan& block_hybrid_of(SoftmaxPlan& s) { return std::get<BlockHybridPlan>(s.form); }
const ClusterTilePlan& cluster_tile_of(const SoftmaxPlan& s) {
  return std::get<ClusterTilePlan>(s.form);
}
const ClusterRowPlan& cluster_row_of(const SoftmaxPlan& s) {
  return std::get<ClusterRowPlan>(s.form);
}
const SplitRowPlan& split_row_of(const SoftmaxPlan& s) { return std::get<SplitRowPlan>(s.form); }
SplitRowPlan& split_row_of(SoftmaxPlan& s) { return std::get<SplitRowPlan>(s.form); }

// Threads a block of the plan's kernel has: the tile's, or the family's fixed block size.
int block_threads(const SoftmaxPlan& s) {
  switch (s.family()) {
    case SoftmaxFamily::warp_rows: return kWarpRowsThreads;
    case SoftmaxFamily::block_row: return block_row_of(s).threads;
    case SoftmaxFamily::block_hybrid: return block_hybrid_of(s).threads;
    case SoftmaxFamily::cluster_tile: return cluster_tile_of(s).threads;
    case SoftmaxFamily::cluster_row:
    case SoftmaxFamily::split_row: return kSliceThreads;
  }
  return 0;
}

// Whether s is split_row with two or three slices per block (the pipelined exchange).
bool pipelined(const SoftmaxPlan& s) {
  return s.family() == SoftmaxFamily::split_row && split_row_of(s).buffers > 1;
}

// split_row's plan with one slice per block on one block per SM (the default for 16-bit rows on
// chip; a candidate for fp32 ones).
SoftmaxPlan single_slice_one_per_sm(const Problem& p, const DeviceLimits& d = kH200) {
  for (const SoftmaxPlan& s : family_plans(SoftmaxFamily::split_row, p, d)) {
    const SplitRowPlan& r = split_row_of(s);
    if (r.buffers == 1 && !r.ring && r.grid <= d.sm_count) return s;
  }
  FAIL("no split_row plan with one slice per block on one block per SM for N = " << p.N);
  return {};
}

// split_row's pipelined plans for p with `buffers` slices per block (2 or 3): one, or none where
// rows do not fit.
std::vector<SoftmaxPlan> pipelined_plans(const Problem& p, int buffers = 2, bool prefetch = false) {
  std::vector<SoftmaxPlan> out;
  for (const SoftmaxPlan& s : family_plans(SoftmaxFamily::split_row, p, kH200)) {
    const SplitRowPlan& r = split_row_of(s);
    if (r.buffers == buffers && r.prefetch == prefetch && !r.repoll) out.push_back(s);
  }
  return out;
}

// The shape of an aligned fp32 pipelined plan with `buffers` slices per block on the H200's 132
// SMs: S slices a row, R rows in flight, the whole grid, every slice's bytes in shared memory,
// and the summary and reason naming the form.
void check_pipelined_fp32(const SoftmaxPlan& s, int buffers, int slices, std::int64_t rows) {
  INFO(summary(s));
  const SplitRowPlan& r = split_row_of(s);
  CHECK(r.buffers == buffers);
  CHECK(r.slices == slices);
  CHECK(s.rows_in_flight == rows);
  CHECK(r.grid == 132);
  CHECK(r.smem_bytes ==
        static_cast<std::size_t>(buffers) * static_cast<std::size_t>(r.slice) * 4u);
  CHECK(r.smem_bytes + kSliceStaticSmem + kSmemReservedPerBlock <= smem_per_sm(kH200));
  CHECK(summary(s).find(buffers == 3 ? " pipelined B=3" : " pipelined") != std::string::npos);
  CHECK(s.why.find(buffers == 3 ? "three slices per block" : "two slices per block") !=
        std::string::npos);
}

// Rows whose stride is whole 16-byte vectors (ld = N rounded up to a vector).
Problem padded(std::int64_t M, std::int64_t N, DType t) {
  Problem p = dense(M, N, t);
  p.ld_x = p.ld_y = (N + vec_elems(t) - 1) / vec_elems(t) * vec_elems(t);
  return p;
}

// The room beyond N a row's 16-byte window takes (storage.cuh): a row of a stride that is not
// whole vectors starts up to V - 1 elements past a 16-byte boundary. A register tile holds it in
// its vectors and extra elements (tile_fits below), a shared-memory slice in one vector more.
std::int64_t head_room(const Problem& p) {
  return (p.ld_x * dtype_bytes(p.dtype)) % kVectorBytes == 0 ? 0 : vec_elems(p.dtype) - 1;
}
std::int64_t slice_room(const Problem& p) { return head_room(p) > 0 ? vec_elems(p.dtype) : 0; }
// Whether a register tile of `capacity` elements in its vectors and `lanes` lanes holds the row:
// an aligned row in the vectors, a row off boundaries with its window in the vectors and in the
// one element a lane past them (row_tile.cuh).
bool tile_fits(const Problem& p, std::int64_t capacity, std::int64_t lanes) {
  return head_room(p) > 0 ? p.N + head_room(p) <= capacity + lanes : p.N <= capacity;
}

// Everything launch_plan relies on, per family.
void check_invariants(const SoftmaxPlan& s, const Problem& p, const DeviceLimits& d) {
  INFO(summary(s) << " for M = " << p.M << ", N = " << p.N << " " << to_string(p.dtype));
  CHECK(!s.why.empty());
  const std::int64_t V = vec_elems(p.dtype);
  const std::int64_t b = dtype_bytes(p.dtype);
  switch (s.family()) {
    case SoftmaxFamily::warp_rows: {
      const auto& f = warp_rows_of(s);
      CHECK(s.traffic == TrafficModel::fused);
      if (f.packed) {
        // Packed: rows that divide a vector, dense; one lane a unit, a grid sized to the card.
        CHECK(V % p.N == 0);
        CHECK(p.ld_x == p.N);
        CHECK(p.ld_y == p.N);
        CHECK(f.lanes_per_row == 1);
        CHECK(f.vecs == kWarpRowsPackedVecs);
        CHECK(f.capacity == V);
        CHECK(f.two_pass);
        CHECK(f.grid == 0);
        CHECK(f.staged_rows == 0);
        break;
      }
      if (f.staged_rows > 0) {
        // Staged: a span of 32 lanes x kWarpRowsStagedVecs vectors holds R rows from the first
        // one's window whatever its offset, R + 1 would not; G x R <= 32 lanes unless G = 1.
        const std::int64_t span = std::int64_t{32} * kWarpRowsStagedVecs * V;
        const std::int64_t ld = std::min(p.ld_x, span);
        CHECK(f.vecs == kWarpRowsStagedVecs);
        CHECK(f.capacity == span);
        CHECK(f.two_pass);
        CHECK(f.grid == 0);
        CHECK((f.lanes_per_row & (f.lanes_per_row - 1)) == 0);
        CHECK(f.lanes_per_row <= 32);
        CHECK((f.lanes_per_row == 1 || f.lanes_per_row * f.staged_rows <= 32));
        CHECK((f.lanes_per_row == 32 || 2 * f.lanes_per_row * f.staged_rows > 32));
        CHECK(V - 1 + (f.staged_rows - 1) * ld + p.N <= span);
        // Whole rounds of 32 rows (the default where more than 32 fit), or as many as fit.
        const bool most = V - 1 + f.staged_rows * ld + p.N > span;
        CHECK((most || (f.lanes_per_row == 1 && f.staged_rows % 32 == 0 &&
                        V - 1 + (f.staged_rows + 32) * ld + p.N > span)));
        break;
      }
      auto tiles = warp_rows_tiles(p.dtype);
      for (TileShape t : warp_rows_wide_tiles(p.dtype)) tiles.push_back(t);
      CHECK(std::any_of(tiles.begin(), tiles.end(), [&](TileShape t) {
        return t.threads_or_lanes == f.lanes_per_row && t.vecs == f.vecs;
      }));
      CHECK(f.capacity == std::int64_t{f.lanes_per_row} * f.vecs * V);
      CHECK(tile_fits(p, f.capacity, f.lanes_per_row));
      if (f.grid > 0) {  // one block per (8 warps x 32 / G) rows
        const std::int64_t rows_per_block =
            std::int64_t{kWarpRowsThreads / 32} * (32 / f.lanes_per_row);
        CHECK(f.grid == (p.M + rows_per_block - 1) / rows_per_block);
      }
      break;
    }
    case SoftmaxFamily::block_row: {
      const auto& f = block_row_of(s);
      auto tiles = block_row_tiles(p.dtype);
      for (TileShape t : block_row_wide_tiles(p.dtype)) tiles.push_back(t);
      CHECK(std::any_of(tiles.begin(), tiles.end(), [&](TileShape t) {
        return t.threads_or_lanes == f.threads && t.vecs == f.vecs;
      }));
      CHECK(f.capacity == std::int64_t{f.threads} * f.vecs * V);
      CHECK(tile_fits(p, f.capacity, f.threads));
      CHECK(f.grid == p.M);
      CHECK(s.traffic == TrafficModel::fused);
      break;
    }
    case SoftmaxFamily::block_hybrid: {
      const auto& f = block_hybrid_of(s);
      const auto tiles = block_hybrid_tiles(p.dtype);
      CHECK(std::any_of(tiles.begin(), tiles.end(), [&](TileShape t) {
        return t.threads_or_lanes == f.threads && t.vecs == f.vecs;
      }));
      CHECK(f.capacity == std::int64_t{f.threads} * f.vecs * V);
      if (f.cluster == 1) {
        CHECK(f.slice == p.N);  // one block per row
      } else {
        // Across a cluster: C equal slices of whole vectors, none empty.
        CHECK((f.cluster & (f.cluster - 1)) == 0);
        CHECK(f.cluster <= kMaxClusterSize);
        CHECK(f.slice % V == 0);
        CHECK(f.slice * f.cluster >= p.N);
        CHECK(f.slice * (f.cluster - 1) < p.N);
      }
      CHECK(f.capacity < f.slice);  // else block_row or cluster_tile
      CHECK(f.resident == f.slice - f.capacity);
      // The rest of the block's part and two vectors of room for its window, in whole vectors.
      CHECK(f.smem_bytes == static_cast<std::size_t>(((f.resident + V - 1) / V + 2) * V * b));
      CHECK(f.smem_bytes + kSliceStaticSmem <= d.shared_bytes_per_block);
      CHECK(f.grid == p.M * f.cluster);
      CHECK(s.traffic == TrafficModel::fused);
      break;
    }
    case SoftmaxFamily::cluster_tile: {
      const auto& f = cluster_tile_of(s);
      const auto tiles = cluster_tile_tiles(p.dtype);
      CHECK(std::any_of(tiles.begin(), tiles.end(), [&](TileShape t) {
        return t.threads_or_lanes == f.threads && t.vecs == f.vecs;
      }));
      CHECK(f.cluster >= 2);
      CHECK(f.cluster <= kMaxClusterSize);
      CHECK((f.cluster & (f.cluster - 1)) == 0);
      CHECK(f.capacity == std::int64_t{f.threads} * f.vecs * V);
      CHECK(f.slice + head_room(p) <= f.capacity);  // each block's window fits its tile
      CHECK(f.slice % V == 0);
      CHECK(f.slice * f.cluster >= p.N);
      CHECK(f.slice * (f.cluster - 1) < p.N);  // no empty block
      CHECK(f.capacity * f.cluster >= p.N);
      // The fewest tiles (a power of two) that hold N's windows: half as many would not.
      const std::int64_t half = f.cluster / 2;
      CHECK(((p.N + half - 1) / half + V - 1) / V * V + head_room(p) > f.capacity);
      CHECK(f.grid == p.M * f.cluster);
      CHECK(s.traffic == TrafficModel::fused);
      break;
    }
    case SoftmaxFamily::cluster_row: {
      const auto& f = cluster_row_of(s);
      CHECK(f.cluster >= 1);
      CHECK(f.cluster <= kMaxClusterSize);
      CHECK((f.cluster & (f.cluster - 1)) == 0);
      CHECK(f.slice % V == 0);
      CHECK(f.slice * f.cluster >= p.N);
      CHECK(f.slice * (f.cluster - 1) < p.N);  // no empty block
      CHECK(f.smem_bytes == static_cast<std::size_t>((f.slice + slice_room(p)) * b));
      CHECK(f.smem_bytes + kSliceStaticSmem <= d.shared_bytes_per_block);
      CHECK(f.grid == p.M * f.cluster);
      CHECK(s.traffic == TrafficModel::fused);
      break;
    }
    case SoftmaxFamily::split_row: {
      const auto& f = split_row_of(s);
      CHECK(f.slices >= 1);
      CHECK(f.slice % V == 0);
      CHECK(std::int64_t{f.slices} * f.slice >= p.N);
      CHECK(std::int64_t{f.slices - 1} * f.slice < p.N);  // no empty slice
      CHECK(f.resident >= V);
      CHECK(f.resident % V == 0);
      CHECK(f.resident <= f.slice);
      CHECK((f.buffers >= 1 && f.buffers <= 3));
      if (f.ring) {
        // The ring: whole slices on chip, one block per SM, tagged partials, rows on 16-byte
        // boundaries of whole vectors; its shared memory 5 ... kSplitRingSlotsMax chunk slots.
        const auto chunk = static_cast<std::size_t>(
            (f.slice / V + kSplitChunks - 1) / kSplitChunks * kVectorBytes);
        CHECK(f.buffers == 1);
        CHECK(f.resident == f.slice);
        CHECK(f.grid <= std::int64_t{d.sm_count});
        CHECK(f.tagged_partials);
        CHECK(p.N % V == 0);
        CHECK(slice_room(p) == 0);
        CHECK(f.smem_bytes % chunk == 0);
        CHECK(f.smem_bytes / chunk > static_cast<std::size_t>(kSplitChunks));
        CHECK(f.smem_bytes / chunk <= static_cast<std::size_t>(kSplitRingSlotsMax));
      } else {
        CHECK(f.smem_bytes ==
              static_cast<std::size_t>((f.resident + slice_room(p)) * b * f.buffers));
      }
      // Two or three slices per block: whole slices on chip, one block per SM, tagged partials
      // (the L2 prefetch either way: a candidate each).
      if (f.buffers > 1) {
        CHECK(f.resident == f.slice);
        CHECK(f.grid <= std::int64_t{d.sm_count});
        CHECK(f.tagged_partials);
      }
      // Co-resident grid: every block of a row is running at once; the blocks an SM gets
      // (at most kSplitBlocksPerSm) fit in its shared memory.
      CHECK(f.grid >= f.slices);
      CHECK(f.grid <= std::int64_t{d.sm_count} * kSplitBlocksPerSm);
      const std::int64_t per_sm = (f.grid + d.sm_count - 1) / d.sm_count;
      CHECK(static_cast<std::size_t>(per_sm) *
                (f.smem_bytes + kSliceStaticSmem + kSmemReservedPerBlock) <=
            smem_per_sm(d));
      CHECK(f.grid == s.rows_in_flight * f.slices);
      CHECK(s.rows_in_flight >= 1);
      CHECK(s.rows_in_flight <= p.M);
      CHECK(f.workspace_bytes >= static_cast<std::size_t>(p.M * f.slices * 8 + p.M * 4));
      CHECK(f.workspace_bytes <= split_workspace_bytes(p));
      CHECK(s.traffic == (f.resident == f.slice ? TrafficModel::fused : TrafficModel::two_read));
      // Streamed parts dealt out step by step: fp32 rows read twice, one slice per block.
      if (f.interleaved) {
        CHECK(p.dtype == DType::f32);
        CHECK(f.buffers == 1);
        CHECK(f.resident < f.slice);
      }
      break;
    }
  }
}

std::vector<std::int64_t> boundary_ns() {
  std::set<std::int64_t> ns{1, 2, 3, 7, 31, 33, 1000, 3000, 50257, 100000, 1000003};
  for (int k = 1; k <= 26; ++k) {
    const std::int64_t p2 = std::int64_t{1} << k;
    ns.insert({p2 - 1, p2, p2 + 1});
  }
  return {ns.begin(), ns.end()};
}

}  // namespace

TEST_CASE("dispatch: each family takes the rows it is built for, edge N - 1 / N / N + 1",
          "[dispatch]") {
  for (const DType t : kDtypes) {
    INFO("dtype " << to_string(t));
    const std::int64_t M = 4096;  // enough rows for every family's wave
    const std::int64_t V = vec_elems(t);
    // warp_rows to 1024 (16-bit) or 512 (fp32: 513 ... 1024 on block_row's 64 x 4 tile).
    const std::int64_t warp_max = warp_rows_max_n(t);
    CHECK(warp_max == (t == DType::f32 ? 512 : kWarpRowsMaxN));
    CHECK(plan_softmax(dense(M, 1, t), kH200).family() == SoftmaxFamily::warp_rows);
    CHECK(plan_softmax(padded(M, warp_max - 1, t), kH200).family() == SoftmaxFamily::warp_rows);
    CHECK(plan_softmax(dense(M, warp_max, t), kH200).family() == SoftmaxFamily::warp_rows);
    // (Rows past a limit at a stride of whole vectors: at ld = N a few more elements stay with
    // the family, below.)
    CHECK(plan_softmax(padded(M, warp_max + 1, t), kH200).family() == SoftmaxFamily::block_row);
    if (t == DType::f32) {  // 1024 fills 96 x 4 to 67%
      const SoftmaxPlan k1 = plan_softmax(dense(M, kWarpRowsMaxN, t), kH200);
      CHECK(k1.family() == SoftmaxFamily::block_row);
      CHECK(block_row_of(k1).threads == 96);
      CHECK(block_row_of(k1).vecs == 4);
    }
    // block_row to 32768 fp32; 16-bit rows past 16384 on as many rows as SMs take block_hybrid's
    // 512-thread tile, two per SM (fewer rows stay on block_row).
    const std::int64_t block_max = block_row_max_n(t);
    CHECK(block_max == kBlockRowMaxN);
    const std::int64_t block_default_max = t == DType::f32 ? block_max : block_max / 2;
    CHECK(plan_softmax(padded(M, block_default_max - 1, t), kH200).family() == SoftmaxFamily::block_row);
    CHECK(plan_softmax(dense(M, block_default_max, t), kH200).family() == SoftmaxFamily::block_row);
    if (t != DType::f32) {
      const SoftmaxPlan h = plan_softmax(dense(M, block_default_max + 1, t), kH200);
      CHECK(h.family() == SoftmaxFamily::block_hybrid);
      CHECK(block_hybrid_of(h).threads == 512);
      CHECK(plan_softmax(dense(M, block_max, t), kH200).family() == SoftmaxFamily::block_hybrid);
      CHECK(plan_softmax(dense(kH200.sm_count - 1, block_max, t), kH200).family() ==
            SoftmaxFamily::block_row);
    }
    // Rows off 16-byte boundaries up to kWarpRowsStagedMaxN are staged (no window's room
    // needed); longer ones take a register tile whose vectors and one element a lane past them
    // hold the window (up to N + V - 1 elements): the families' 32-lane tiles hold rows up to
    // their limit + 32 - (V - 1) at a stride of N, not one more.
    for (const std::int64_t n : {std::int64_t{1}, V + 1, kWarpRowsStagedMaxN - 1}) {
      const SoftmaxPlan staged = plan_softmax(dense(M, n, t), kH200);
      CHECK(staged.family() == SoftmaxFamily::warp_rows);
      CHECK(warp_rows_of(staged).staged_rows > 0);
    }
    CHECK(warp_rows_of(plan_softmax(dense(M, kWarpRowsStagedMaxN + 1, t), kH200)).staged_rows == 0);
    CHECK(warp_rows_of(plan_softmax(dense(M, kWarpRowsStagedMaxN, t), kH200)).staged_rows == 0);
    const std::int64_t past = 32 - (V - 1);  // elements past the limit a 32-lane tile holds
    CHECK(plan_softmax(dense(M, warp_max - 1, t), kH200).family() == SoftmaxFamily::warp_rows);
    CHECK(plan_softmax(dense(M, warp_max + past, t), kH200).family() == SoftmaxFamily::warp_rows);
    CHECK(plan_softmax(dense(M, warp_max + past + 1, t), kH200).family() ==
          SoftmaxFamily::block_row);
    const std::int64_t few_rows = kH200.sm_count - 1;  // block_row's whole range for every dtype
    CHECK(plan_softmax(dense(few_rows, block_max + past, t), kH200).family() ==
          SoftmaxFamily::block_row);
    CHECK(plan_softmax(dense(few_rows, block_max + past + 1, t), kH200).family() !=
          SoftmaxFamily::block_row);
    // Past block_row: one block per row, registers and shared memory, while a block holds the
    // row and the rows fill the card (M >= SMs).
    const SoftmaxPlan past_block = plan_softmax(padded(M, block_max + 1, t), kH200);
    CHECK(past_block.family() == SoftmaxFamily::block_hybrid);
    if (t == DType::f32) {
      // fp32: the 512-thread tile while it holds the row (16384 in registers, the rest in
      // shared memory), then the 1024-thread one.
      CHECK(block_hybrid_of(past_block).threads == 512);
      const SoftmaxPlan past_64k = plan_softmax(dense(M, 65536 + V, t), kH200);
      CHECK(past_64k.family() == SoftmaxFamily::block_hybrid);
      CHECK(block_hybrid_of(past_64k).threads == 512);
      const std::int64_t on_512 = 16384 + 231424 / dtype_bytes(t) - 2 * V;
      CHECK(block_hybrid_of(plan_softmax(dense(M, on_512, t), kH200)).threads == 512);
      const SoftmaxPlan big = plan_softmax(dense(M, on_512 + V, t), kH200);
      CHECK(big.family() == SoftmaxFamily::block_hybrid);
      CHECK(block_hybrid_of(big).threads == 1024);
    }
    const std::int64_t hybrid_max = block_hybrid_max_n(t, kH200);
    // 32768 in registers + 231424 bytes of shared memory less two vectors.
    CHECK(hybrid_max == block_max + 231424 / dtype_bytes(t) - 2 * V);
    CHECK(plan_softmax(padded(M, hybrid_max, t), kH200).family() == SoftmaxFamily::block_hybrid);
    // One past it: block_hybrid across a cluster (fp32: two blocks, in place of cluster_row's
    // two; 16-bit: four, the fewest that share an SM two at a time).
    const SoftmaxPlan past_one = plan_softmax(dense(M, hybrid_max + 1, t), kH200);
    CHECK(past_one.family() == SoftmaxFamily::block_hybrid);
    CHECK(block_hybrid_of(past_one).cluster == (t == DType::f32 ? 2 : 4));
    CHECK(block_hybrid_of(past_one).threads == 512);
    const SoftmaxPlan few = plan_softmax(padded(kH200.sm_count - 1, block_max + 1, t), kH200);
    CHECK(few.family() != SoftmaxFamily::block_hybrid);
    if (t == DType::f32) {
      // fp32: register tiles across a cluster (2 x 32768, then up to 8 x 16384), then
      // shared-memory slices.
      CHECK(few.family() == SoftmaxFamily::cluster_tile);
      CHECK(cluster_tile_of(few).cluster == 2);
      // Past block_hybrid: two blocks of a cluster, each half the row as block_hybrid holds a
      // row, while cluster_row's two would fit (N <= 2 x 57856), then 4 register tiles.
      const std::int64_t two_slices = 2 * (231424 / 4);  // rows of whole vectors: no room needed
      const SoftmaxPlan two_halves = plan_softmax(padded(M, two_slices, t), kH200);
      CHECK(two_halves.family() == SoftmaxFamily::block_hybrid);
      CHECK(block_hybrid_of(two_halves).cluster == 2);
      CHECK(plan_softmax(padded(M, two_slices + V, t), kH200).family() == SoftmaxFamily::cluster_tile);
      const SoftmaxPlan at_tiles = plan_softmax(dense(M, cluster_tile_max_n(t), t), kH200);
      CHECK(at_tiles.family() == SoftmaxFamily::cluster_tile);
      CHECK(cluster_tile_of(at_tiles).cluster == kClusterTileDefaultMax);
      CHECK(plan_softmax(dense(M, cluster_tile_max_n(t) + 1, t), kH200).family() ==
            SoftmaxFamily::cluster_row);
    } else {
      // 16-bit: shared-memory slices, the fewest of at most 64 KB each (32769 elements: 2).
      CHECK(cluster_tile_max_n(t) == 0);
      // (Few rows: block_hybrid's cluster would hold a slice barely past its tile.)
      CHECK(few.family() == SoftmaxFamily::cluster_row);
      CHECK(cluster_row_of(few).cluster == 2);
    }
    // The longest row 8 shared-memory slices hold, and one past it: split over the card.
    const std::int64_t cluster_max_n = cluster_row_max_n(t);
    CHECK(cluster_max_n == kClusterRowDefaultMax * static_cast<std::int64_t>(kClusterSliceMax) /
                               dtype_bytes(t));
    // (16-bit rows take block_hybrid across 8 blocks there, and to 8 slices of the 512-thread
    // tile and a block's shared memory; fp32 rows take cluster_row.)
    const SoftmaxFamily at_family =
        t == DType::f32 ? SoftmaxFamily::cluster_row : SoftmaxFamily::block_hybrid;
    const SoftmaxPlan at = plan_softmax(dense(M, cluster_max_n, t), kH200);
    CHECK(at.family() == at_family);
    CHECK(plan_cluster(at) == kClusterRowDefaultMax);
    CHECK(plan_softmax(dense(M, cluster_max_n - 1, t), kH200).family() == at_family);
    if (t == DType::f32) {
      CHECK(plan_softmax(dense(M, cluster_max_n + 1, t), kH200).family() == SoftmaxFamily::split_row);
    } else {
      const std::int64_t hybrid_cluster_max = 8 * (16384 + 231424 / dtype_bytes(t) - 2 * V);
      CHECK(block_hybrid_of(plan_softmax(dense(M, hybrid_cluster_max, t), kH200)).cluster == 8);
      CHECK(plan_softmax(dense(M, hybrid_cluster_max + V, t), kH200).family() ==
            SoftmaxFamily::split_row);
    }

    // Rows per wave: block_hybrid needs M >= SMs, a cluster M x C >= SMs, else the rows are split
    // over the whole card.
    // (fp32's 256 KB rows fill 4 register tiles of 16384 exactly and take that cluster at any M
    // that fills the card: one vector more is block_hybrid's.)
    const std::int64_t n = 256 * 1024 / dtype_bytes(t);  // 256 KB rows
    const std::int64_t n_hybrid = t == DType::f32 ? n + V : n;
    CHECK(plan_softmax(dense(kH200.sm_count, n_hybrid, t), kH200).family() ==
          SoftmaxFamily::block_hybrid);
    const SoftmaxPlan wide = plan_softmax(dense(kH200.sm_count - 1, n, t), kH200);
    // fp32: 2 register tiles of 32768; 16-bit: block_hybrid across 2 blocks of 65536 (16384 in
    // registers, 96 KiB in shared memory: two an SM).
    const SoftmaxFamily f = t == DType::f32 ? SoftmaxFamily::cluster_tile : SoftmaxFamily::block_hybrid;
    REQUIRE(wide.family() == f);
    const int C = 2;
    REQUIRE(plan_cluster(wide) == C);
    const std::int64_t m_min = (kH200.sm_count + C - 1) / C;
    CHECK(plan_softmax(dense(m_min, n, t), kH200).family() == f);
    // One row fewer: shared-memory slices (or 16-bit block_hybrid's four) if their clusters fill
    // the card, else split.
    const SoftmaxPlan fewer = plan_softmax(dense(m_min - 1, n, t), kH200);
    CHECK(!(fewer.family() == f && plan_cluster(fewer) == C));
    if (fewer.family() == SoftmaxFamily::cluster_row)
      CHECK((m_min - 1) * cluster_row_of(fewer).cluster >= kH200.sm_count);
  }
}

TEST_CASE("dispatch: register tiles are the smallest that hold the row (fp32 block_row: the "
          "widest filled to 65%)", "[dispatch]") {
  for (const DType t : kDtypes) {
    INFO("dtype " << to_string(t));
    const std::int64_t V = vec_elems(t);
    for (const auto& [family, tiles, lo, hi] :
         {std::tuple{SoftmaxFamily::warp_rows, warp_rows_tiles(t), std::int64_t{1}, warp_rows_max_n(t)},
          std::tuple{SoftmaxFamily::block_row, block_row_tiles(t), warp_rows_max_n(t) + 1,
                     block_row_max_n(t)}}) {
      for (TileShape tile : tiles) {
        const std::int64_t cap = std::int64_t{tile.threads_or_lanes} * tile.vecs * V;
        for (const std::int64_t n : {cap - V, cap - 1, cap, cap + 1, cap + 33 - V, cap + 34 - V}) {
          // Strides of whole vectors, and ld = N: rows off boundaries have their windows held by
          // the vectors and one element a lane (rows off 16-byte boundaries to
          // kWarpRowsStagedMaxN are staged instead). The families' limits count 32 lanes.
          // (Fewer rows than SMs: 16-bit rows past 16384 on more would take block_hybrid.)
          for (const Problem& p : {padded(100, n, t), dense(100, n, t)}) {
            if (n < lo || !tile_fits(p, hi, 32)) continue;
            if (family == SoftmaxFamily::block_row && tile_fits(p, warp_rows_max_n(t), 32))
              continue;  // a row off boundaries just past warp_rows' limit: warp_rows'
            if (family == SoftmaxFamily::warp_rows && head_room(p) > 0 && n <= kWarpRowsStagedMaxN)
              continue;
            const SoftmaxPlan s = plan_softmax(p, kH200);
            INFO("N = " << n << ", ld = " << p.ld_x << ": " << summary(s));
            REQUIRE(s.family() == family);
            // Smallest listed capacity that holds the row (tile_fits); for fp32 block_row the
            // largest one N fills to at least kBlockRowMinFillPercent, if any.
            std::int64_t best = -1;
            for (TileShape c : tiles) {
              const std::int64_t c_cap = std::int64_t{c.threads_or_lanes} * c.vecs * V;
              if (tile_fits(p, c_cap, c.threads_or_lanes) && (best < 0 || c_cap < best))
                best = c_cap;
            }
            if (family == SoftmaxFamily::block_row && t == DType::f32)
              for (TileShape c : tiles) {
                const std::int64_t c_cap = std::int64_t{c.threads_or_lanes} * c.vecs * V;
                if (c_cap > best && tile_fits(p, c_cap, c.threads_or_lanes) &&
                    n * 100 >= kBlockRowMinFillPercent * c_cap)
                  best = c_cap;
              }
            CHECK((family == SoftmaxFamily::warp_rows ? warp_rows_of(s).capacity
                                                      : block_row_of(s).capacity) == best);
          }
        }
      }
    }
  }
}

TEST_CASE("dispatch: cluster tiles are the fewest that hold the row", "[dispatch]") {
  const std::int64_t M = 4096;
  // fp32 tiles of 32768: 128 KB rows -> 1 block (block_row), 256 KB -> 2, then tiles of 16384 up
  // to 8 (512 KB), on fewer rows than SMs (else block_hybrid takes them up to ~90K).
  const std::int64_t few = 100;
  CHECK(plan_softmax(dense(M, 32768, DType::f32), kH200).family() == SoftmaxFamily::block_row);
  CHECK(cluster_tile_of(plan_softmax(padded(few, 32769, DType::f32), kH200)).cluster == 2);
  CHECK(cluster_tile_of(plan_softmax(dense(few, 65536, DType::f32), kH200)).cluster == 2);
  // Past two tiles of 32768, tiles of 16384 (512 threads), up to 8 of them.
  CHECK(cluster_tile_of(plan_softmax(dense(few, 65537, DType::f32), kH200)).cluster == 8);
  // Equal slices: N = 100000 on 4 blocks of 25000, not 3 x 32768 and a rest (a candidate: the
  // default there is block_hybrid across 2 blocks of 50000).
  const Problem p100k = dense(M, 100000, DType::f32);
  const SoftmaxPlan two = plan_softmax(p100k, kH200);
  CHECK(two.family() == SoftmaxFamily::block_hybrid);
  CHECK(block_hybrid_of(two).cluster == 2);
  CHECK(block_hybrid_of(two).slice == 50000);
  const SoftmaxPlan even = family_plans(SoftmaxFamily::cluster_tile, p100k, kH200).front();
  CHECK(cluster_tile_of(even).cluster == 4);
  CHECK(cluster_tile_of(even).slice == 25000);
  // Past 8 tiles of 16384, shared-memory slices (8 x 64 KB = 512 KB) while they hold the row,
  // then split.
  const SoftmaxPlan eight = plan_softmax(dense(M, 1 << 17, DType::f32), kH200);
  CHECK(eight.family() == SoftmaxFamily::cluster_tile);
  CHECK(cluster_tile_of(eight).cluster == 8);
  CHECK(cluster_tile_of(eight).threads == 512);
  const SoftmaxPlan slices = plan_softmax(dense(M, (1 << 17) + 4, DType::f32), kH200);
  CHECK(slices.family() == SoftmaxFamily::cluster_row);
  // Clusters of 8 copy their slices in by the threads (cp.async), smaller ones by TMA.
  CHECK(cluster_row_of(slices).cluster == 8);
  CHECK(cluster_row_of(slices).thread_copy);
  const SoftmaxPlan two_rows = family_plans(SoftmaxFamily::cluster_row, p100k, kH200).front();
  CHECK(cluster_row_of(two_rows).cluster == 2);
  CHECK_FALSE(cluster_row_of(two_rows).thread_copy);
  // 2^18: past cluster_row's 8 slices of 112 KB, block_hybrid across 8 blocks of 32768 (16384
  // in registers, 64 KiB in shared memory, two an SM).
  const SoftmaxPlan hybrid8 = plan_softmax(dense(M, 1 << 18, DType::f32), kH200);
  CHECK(hybrid8.family() == SoftmaxFamily::block_hybrid);
  CHECK(block_hybrid_of(hybrid8).cluster == 8);
  CHECK(block_hybrid_of(hybrid8).slice == 32768);
  CHECK(block_hybrid_of(hybrid8).resident == 16384);
  // With fewer rows than 8 blocks a row fill the card, split.
  CHECK(plan_softmax(dense(16, 1 << 18, DType::f32), kH200).family() == SoftmaxFamily::split_row);
  // The other tiles are candidates: 16 tiles of 32768 (fp32), 16-bit tiles of 16384.
  CHECK(cluster_tile_of(
            family_plans(SoftmaxFamily::cluster_tile, dense(M, 1 << 19, DType::f32), kH200).front())
            .cluster == 16);
  CHECK(cluster_tile_of(
            family_plans(SoftmaxFamily::cluster_tile, dense(M, 32768, DType::bf16), kH200).front())
            .cluster == 2);
  // Without clusters (max_cluster = 1) a row longer than a block's tile goes to one block's
  // registers and shared memory (block_hybrid) while they hold it and the rows fill the card
  // (which leaves nothing to cluster_row with C = 1: one block's shared memory holds less than
  // block_hybrid), else it is split.
  CHECK(plan_softmax(dense(M, 1 << 18, DType::f32), kH200, 1).family() == SoftmaxFamily::split_row);
  CHECK(plan_softmax(dense(M, 40000, DType::bf16), kH200, 1).family() == SoftmaxFamily::block_hybrid);
  CHECK(plan_softmax(dense(few, 40000, DType::bf16), kH200, 1).family() == SoftmaxFamily::split_row);
}

TEST_CASE("dispatch: fp32 rows that fill a cluster's register tiles exactly take the cluster",
          "[dispatch]") {
  // N = 65536 fp32 = 4 tiles of 16384 (512 threads x 8 vectors), M = 2048 rows: 8192 blocks.
  const SoftmaxPlan exact = plan_softmax(dense(2048, 65536, DType::f32), kH200);
  INFO(summary(exact));
  CHECK(exact.family() == SoftmaxFamily::cluster_tile);
  CHECK(cluster_tile_of(exact).cluster == 4);
  CHECK(cluster_tile_of(exact).threads == 512);
  CHECK(cluster_tile_of(exact).slice == cluster_tile_of(exact).capacity);
  CHECK(exact.why.find("fills the cluster's tiles exactly") != std::string::npos);
  // One vector more or less, a window's room, 16-bit storage, no clusters: block_hybrid.
  for (const Problem& p :
       {dense(2048, 65536 - 4, DType::f32), dense(2048, 65536 + 4, DType::f32),
        dense(2670, 50257, DType::f32), Problem{2048, 65536, 65537, 65537, DType::f32},
        dense(2048, 65536, DType::bf16)}) {
    INFO(p.M << " x " << p.N << " ld " << p.ld_x << " " << to_string(p.dtype));
    CHECK(plan_softmax(p, kH200).family() == SoftmaxFamily::block_hybrid);
  }
  CHECK(plan_softmax(dense(2048, 65536, DType::f32), kH200, 1).family() ==
        SoftmaxFamily::block_hybrid);
  // block_hybrid's 512-thread plan is still a candidate beside it.
  const std::vector<SoftmaxPlan> c = candidate_plans(dense(2048, 65536, DType::f32), kH200);
  CHECK(std::any_of(c.begin(), c.end(), [](const SoftmaxPlan& s) {
    return s.family() == SoftmaxFamily::block_hybrid && block_hybrid_of(s).threads == 512;
  }));
}

TEST_CASE("dispatch: cluster slices prefer 64 KB, never exceed shared memory", "[dispatch]") {
  const std::int64_t M = 4096;
  // fp32: 768 KB rows -> 8 of 96 KB (no 8 slices of 64 KB hold them). (16-bit rows of that
  // length take block_hybrid across a cluster.)
  CHECK(block_hybrid_of(plan_softmax(dense(M, 32768, DType::bf16), kH200)).cluster == 1);
  const SoftmaxPlan big = plan_softmax(dense(M, 3 << 16, DType::f32), kH200);
  CHECK(big.family() == SoftmaxFamily::cluster_row);
  CHECK(cluster_row_of(big).cluster == 8);
  CHECK(cluster_row_of(big).smem_bytes == 96u * 1024u);
  CHECK(plan_softmax(dense(M, 3 << 17, DType::bf16), kH200).family() == SoftmaxFamily::block_hybrid);
  // Every cluster_row candidate fits shared memory (check_invariants), 64 KB preferred among them.
  const auto plans = family_plans(SoftmaxFamily::cluster_row, dense(M, 65536, DType::f32), kH200);
  REQUIRE(plans.size() >= 3);
  CHECK(std::any_of(plans.begin(), plans.end(),
                    [](const SoftmaxPlan& s) {
                      const ClusterRowPlan& c = cluster_row_of(s);
                      return c.cluster == 4 && c.smem_bytes == 65536u;
                    }));
}

TEST_CASE("dispatch: split rows stay on chip while the card holds them, else read twice",
          "[dispatch]") {
  // M = 32, N = 2^22 fp32: 16 MB rows, one at a time over all 132 blocks (one per SM), 127 KB
  // each.
  const SoftmaxPlan a = plan_softmax(dense(32, 1 << 22, DType::f32), kH200);
  REQUIRE(a.family() == SoftmaxFamily::split_row);
  CHECK(a.rows_in_flight == 1);
  CHECK(split_row_of(a).grid == 132);
  // Rows read twice keep two blocks per SM (more of the row resident at once).
  CHECK(split_row_of(plan_softmax(dense(1, 1 << 26, DType::f32), kH200)).grid == 264);
  CHECK(split_row_of(a).resident == split_row_of(a).slice);
  CHECK(a.traffic == TrafficModel::fused);
  // M = 8, N = 2^20 fp32: 32 MB in all, more than the ~29 MB on chip. One slice per block on one
  // block per SM: 2 waves of 4 rows, not 7 rows and then 1 row on a seventh of the card. The
  // default, two slices per block (two waves' slices on chip): 3 waves of at most 3 rows.
  const SoftmaxPlan b = plan_softmax(dense(8, 1 << 20, DType::f32), kH200);
  REQUIRE(b.family() == SoftmaxFamily::split_row);
  CHECK(split_row_of(b).buffers == 2);
  CHECK(b.rows_in_flight == 3);
  CHECK(b.traffic == TrafficModel::fused);
  const SoftmaxPlan one = single_slice_one_per_sm(dense(8, 1 << 20, DType::f32));
  CHECK(one.rows_in_flight == 4);
  CHECK(one.traffic == TrafficModel::fused);
  // M = 1, N = 2^26 fp32 (256 MB) and M = 8, N = 2^24: too long for the card, two reads.
  for (const Problem& p : {dense(1, 1 << 26, DType::f32), dense(8, 1 << 24, DType::f32),
                           dense(1, 1 << 26, DType::bf16)}) {
    const SoftmaxPlan s = plan_softmax(p, kH200);
    INFO(summary(s));
    REQUIRE(s.family() == SoftmaxFamily::split_row);
    CHECK(s.traffic == TrafficModel::two_read);
    CHECK(split_row_of(s).resident < split_row_of(s).slice);
    CHECK(split_row_of(s).grid == 264);
  }
  // The streamed parts dealt out step by step where a row's streamed part is larger than L2
  // (M = 1, N = 2^26 fp32: 238 MB), not where it fits (M = 8, N = 2^24: 37 MB a row), not for
  // bf16, not for rows off 16-byte boundaries -- where it was faster on the H200
  // (results/h200/tuning/); each time the other form is a candidate.
  for (const auto& [p, want] : std::vector<std::pair<Problem, bool>>{
           {dense(1, 1 << 26, DType::f32), true},
           {dense(2, 1 << 25, DType::f32), true},
           {dense(8, 1 << 24, DType::f32), false},
           {dense(1, 1 << 26, DType::bf16), false},
           {Problem{1, (1 << 26) - 1, (1 << 26) - 1, (1 << 26) - 1, DType::f32}, false}}) {
    const SoftmaxPlan s = plan_softmax(p, kH200);
    INFO(summary(s));
    CHECK(split_row_of(s).interleaved == want);
    CHECK((want ? summary(s).find(" interleaved") != std::string::npos
                : summary(s).find(" interleaved") == std::string::npos));
    const std::string plain = want ? summary(s).substr(0, summary(s).size() - 12) : summary(s);
    const std::string other = want ? plain : plain + " interleaved";
    const std::vector<SoftmaxPlan> all = candidate_plans(p, kH200);
    CHECK(std::count_if(all.begin(), all.end(), [&](const SoftmaxPlan& c) {
            return summary(c) == other;
          }) == (p.dtype == DType::f32 && p.N % 4 == 0 ? 1 : 0));
  }
  // Few medium rows: M = 4, N = 65536 would give 16 blocks as clusters; split uses slices of at
  // least kMinSplitSlice elements instead.
  const SoftmaxPlan c = plan_softmax(dense(4, 65536, DType::f32), kH200);
  REQUIRE(c.family() == SoftmaxFamily::split_row);
  CHECK(split_row_of(c).slice >= kMinSplitSlice);
  CHECK(c.rows_in_flight == 4);
}

TEST_CASE("dispatch: every plan for every boundary shape satisfies its family's invariants",
          "[dispatch]") {
  std::size_t checked = 0;
  for (const DType t : kDtypes)
    for (const std::int64_t n : boundary_ns())
      for (const std::int64_t m : {std::int64_t{1}, std::int64_t{7}, std::int64_t{131},
                                   std::int64_t{132}, std::int64_t{133},
                                   std::max<std::int64_t>(1, (std::int64_t{1} << 27) / n)}) {
        const Problem p = dense(m, n, t);
        const SoftmaxPlan d = plan_softmax(p, kH200);
        check_invariants(d, p, kH200);
        const auto all = candidate_plans(p, kH200);
        REQUIRE(!all.empty());
        CHECK(all.front().family() == d.family());
        CHECK(summary(all.front()) == summary(d));
        std::set<std::string> seen;
        for (const SoftmaxPlan& s : all) {
          check_invariants(s, p, kH200);
          CHECK(seen.insert(summary(s)).second);  // no duplicates
          ++checked;
        }
      }
  CHECK(checked > 1000);
}

TEST_CASE("dispatch: strides do not change the plan; bad problems are refused", "[dispatch]") {
  const Problem dense_p = dense(100, 3000, DType::bf16);
  Problem padded = dense_p;
  padded.ld_x = 3001;
  padded.ld_y = 3007;
  CHECK(summary(plan_softmax(dense_p, kH200)) == summary(plan_softmax(padded, kH200)));
  CHECK_THROWS_AS(plan_softmax(dense(0, 10), kH200), std::invalid_argument);
  CHECK_THROWS_AS(plan_softmax(dense(10, 0), kH200), std::invalid_argument);
  CHECK_THROWS_AS(plan_softmax(Problem{4, 10, 9, 10, DType::f32}, kH200), std::invalid_argument);
  CHECK_THROWS_AS(plan_softmax(Problem{4, 10, 10, 9, DType::f32}, kH200), std::invalid_argument);
}

TEST_CASE("dispatch: a smaller card gets plans that fit it", "[dispatch]") {
  DeviceLimits small;
  small.sm_count = 20;
  small.shared_bytes_per_block = 99 * 1024;  // an sm_86-like limit
  for (const std::int64_t n : {std::int64_t{100}, std::int64_t{20000}, std::int64_t{1} << 20,
                               std::int64_t{1} << 24}) {
    const Problem p = dense(64, n, DType::f32);
    for (const SoftmaxPlan& s : candidate_plans(p, small)) check_invariants(s, p, small);
  }
}

TEST_CASE("the registry entry `softmax` exposes the dispatch", "[dispatch][registry]") {
  const KernelInfo* k = find_kernel("softmax");
  REQUIRE(k != nullptr);
  CHECK(k->role == Role::production);
  CHECK(k->launch != nullptr);
  CHECK(k->dtypes == std::vector<DType>{DType::f32, DType::bf16, DType::f16});
  REQUIRE(k->traffic_for != nullptr);
  REQUIRE(k->plan_for != nullptr);
  REQUIRE(k->workspace_bytes != nullptr);
  for (const DType t : kDtypes) {
    for (const Problem& p : {dense(1 << 20, 128, t), dense(32, 1 << 22, t), dense(1, 1 << 26, t),
                             Problem{7, 1001, 1003, 1001, t}}) {
      INFO(k->plan_for(p, kH200));
      CHECK_FALSE(why_unsupported(*k, p, kH200).has_value());
      const SoftmaxPlan s = plan_softmax(p, kH200);
      CHECK(traffic_model(*k, p, kH200) == s.traffic);
      if (const auto* r = std::get_if<SplitRowPlan>(&s.form))
        CHECK(k->workspace_bytes(p) >= r->workspace_bytes);
      CHECK(k->plan_for(p, kH200) == s.why);
    }
  }
  CHECK(traffic_model(*k, dense(1, 1 << 26), kH200) == TrafficModel::two_read);
  CHECK(traffic_model(*k, dense(1 << 17, 1024), kH200) == TrafficModel::fused);
  const auto bad = why_unsupported(*k, Problem{4, 10, 9, 10, DType::f32}, kH200);
  REQUIRE(bad.has_value());
  CHECK(bad->find("ld_x") != std::string::npos);
  // The row limit is the plan's grid: 2^27 rows of one element run (warp_rows staged, a grid
  // sized to the card; the odd-rows sweep's N = 1); 2^31 - 1 rows of 2000 take one block each and
  // run, 2^31 are refused, said with the plan.
  for (const DType t : kDtypes) {
    const Problem one{std::int64_t{1} << 27, 1, 1, 1, t};
    INFO(to_string(t) << ": " << summary(plan_softmax(one, kH200)));
    CHECK(plan_grid(plan_softmax(one, kH200)) == 0);
    CHECK_FALSE(why_unsupported(*k, one, kH200).has_value());
    const Problem tall = dense(std::int64_t{1} << 31, 2000, t);
    REQUIRE(plan_softmax(tall, kH200).family() == SoftmaxFamily::block_row);
    const auto why = why_unsupported(*k, tall, kH200);
    REQUIRE(why.has_value());
    CHECK(why->find("needs a grid of 2147483648 blocks (block_row") != std::string::npos);
    const Problem edge = dense(0x7fffffff, 2000, t);
    CHECK(plan_grid(plan_softmax(edge, kH200)) == 0x7fffffff);
    CHECK_FALSE(why_unsupported(*k, edge, kH200).has_value());
  }
}

TEST_CASE("dispatch: split_row's pipelined candidate holds two slices per block, rows on chip only",
          "[dispatch]") {
  // M = 256, N = 2^19 fp32 (2 MB rows): slices of at most half a block's shared memory (~113 KB),
  // so 19 per row would do; 6 rows of 22 slices fill the 132 SMs, each block two slices.
  const auto a = pipelined_plans(dense(256, 1 << 19, DType::f32));
  REQUIRE(a.size() == 1);
  check_pipelined_fp32(a[0], 2, 22, 6);
  // Twice the slices of the one-slice plan on one block per SM.
  const SoftmaxPlan one = single_slice_one_per_sm(dense(256, 1 << 19, DType::f32));
  CHECK(split_row_of(one).buffers == 1);
  CHECK(split_row_of(one).grid <= kH200.sm_count);
  CHECK(split_row_of(a[0]).slices >= 2 * split_row_of(one).slices);
  // M = 64, N = 2^21: one 8 MB row a wave, 132 slices of 62 KB, two per block.
  const auto c = pipelined_plans(dense(64, 1 << 21, DType::f32));
  REQUIRE(c.size() == 1);
  CHECK(c[0].rows_in_flight == 1);
  CHECK(split_row_of(c[0]).slices == 132);
  // N = 2^22 fp32: two 16 MB rows do not fit on chip; rows read twice never get it either.
  CHECK(pipelined_plans(dense(32, 1 << 22, DType::f32)).empty());
  CHECK(pipelined_plans(dense(8, 1 << 24, DType::f32)).empty());
  CHECK(pipelined_plans(dense(1, 1 << 26, DType::bf16)).empty());
  // bf16 rows of 2^22 elements are 8 MB: they do.
  CHECK(pipelined_plans(dense(32, 1 << 22, DType::bf16)).size() == 1);
  // The default: aligned fp32 rows on chip whose pipelined plan keeps >= kSplitPipelinedMinRows
  // rows in flight (2^19 and 2^20 in the default sweep; 2^18 takes block_hybrid across a
  // cluster), not 16-bit rows.
  for (const std::int64_t n : {std::int64_t{1} << 19, std::int64_t{1} << 20}) {
    const SoftmaxPlan f = plan_softmax(dense((std::int64_t{1} << 27) / n, n, DType::f32), kH200);
    INFO("N = " << n << ": " << summary(f));
    CHECK(f.family() == SoftmaxFamily::split_row);
    CHECK(split_row_of(f).buffers == 2);
    CHECK(f.rows_in_flight >= kSplitPipelinedMinRows);
    CHECK_FALSE(pipelined(plan_softmax(dense((std::int64_t{1} << 27) / n, n, DType::bf16), kH200)));
  }
  // 2^21 (one row in flight): three slices per block, as long as two slices' (S = 132 either way).
  const SoftmaxPlan r1 = plan_softmax(dense(64, 1 << 21, DType::f32), kH200);
  CHECK(split_row_of(r1).buffers == 3);
  CHECK(split_row_of(r1).slices == 132);
  CHECK(split_row_of(plan_softmax(dense(64, 1 << 21, DType::bf16), kH200)).buffers == 1);
  // 2^22: neither fits; one slice per block.
  CHECK(split_row_of(plan_softmax(dense(32, 1 << 22, DType::f32), kH200)).buffers == 1);
  // Rows off 16-byte boundaries (N = 1000003, ld = N): two slices per block with the prefetch
  // (no re-poll) where that keeps 3 rows in flight; with fewer, two blocks per SM, partials
  // counted.
  const SoftmaxPlan odd = plan_softmax(dense(134, 1000003, DType::f32), kH200);
  CHECK(split_row_of(odd).buffers == 2);
  CHECK(split_row_of(odd).prefetch);
  CHECK_FALSE(split_row_of(odd).repoll);
  CHECK(odd.rows_in_flight >= kSplitPipelinedMinRows);
  CHECK(split_row_of(odd).resident == split_row_of(odd).slice);
  // The sanitizer's shapes for these defaults (test_lab_kernels.cpp) take them.
  CHECK(split_row_of(plan_softmax(dense(2, 1 << 21, DType::f32), kH200)).buffers == 3);
  CHECK(split_row_of(plan_softmax(dense(2, 1 << 22, DType::f32), kH200)).ring);
  const SoftmaxPlan few_odd = plan_softmax(dense(4, 300001, DType::f32), kH200);
  CHECK(few_odd.family() == SoftmaxFamily::split_row);
  CHECK(split_row_of(few_odd).buffers == 2);  // 4 rows in flight
  const SoftmaxPlan two_odd = plan_softmax(dense(2, 300001, DType::f32), kH200);
  CHECK(two_odd.family() == SoftmaxFamily::split_row);
  CHECK_FALSE(split_row_of(two_odd).tagged_partials);  // 2 rows: counted, two blocks per SM
  CHECK(split_row_of(two_odd).grid > kH200.sm_count);
  // Padded to 16 bytes (ld = 1000004), the same rows are aligned: the pipelined exchange.
  Problem padded_odd = dense(134, 1000003, DType::f32);
  padded_odd.ld_x = padded_odd.ld_y = 1000004;
  CHECK(split_row_of(plan_softmax(padded_odd, kH200)).buffers == 2);
}

TEST_CASE("dispatch: split_row's three-slice plans: a third of the shared memory per slice",
          "[dispatch]") {
  // M = 256, N = 2^19 fp32: slices of at most a third of a block's shared memory (~75 KB), so 28
  // a row would do; 4 rows of 33 slices fill the 132 SMs -- 1.5 times the two-slice plan's 22.
  const std::vector<SoftmaxPlan> a = pipelined_plans(dense(256, 1 << 19, DType::f32), 3);
  REQUIRE(a.size() == 1);
  check_pipelined_fp32(a[0], 3, 33, 4);
  const std::vector<SoftmaxPlan> two = pipelined_plans(dense(256, 1 << 19, DType::f32));
  REQUIRE(two.size() == 1);
  CHECK(split_row_of(a[0]).slices > split_row_of(two[0]).slices);
  // Rows off 16-byte boundaries (N = 1000003): each third has the window's extra vector.
  const Problem odd = dense(134, 1000003, DType::f32);
  const std::vector<SoftmaxPlan> b = pipelined_plans(odd, 3);
  REQUIRE(b.size() == 1);
  CHECK(split_row_of(b[0]).smem_bytes ==
        3u * static_cast<std::size_t>(split_row_of(b[0]).slice + slice_room(odd)) * 4u);
  // M = 64, N = 2^21: one 8 MB row a wave over all 132 SMs, the same S as two slices per block.
  const std::vector<SoftmaxPlan> c = pipelined_plans(dense(64, 1 << 21, DType::f32), 3);
  REQUIRE(c.size() == 1);
  CHECK(split_row_of(c[0]).slices == 132);
  CHECK(c[0].rows_in_flight == 1);
  // N = 2^22 fp32 (16 MB rows): more than 132 thirds hold.
  CHECK(pipelined_plans(dense(32, 1 << 22, DType::f32), 3).empty());
  CHECK(pipelined_plans(dense(8, 1 << 24, DType::f32), 3).empty());
}

TEST_CASE("dispatch: every pipelined split_row candidate has a twin with the L2 prefetch",
          "[dispatch]") {
  for (const Problem& p : {dense(512, 1 << 18, DType::f32), dense(256, 1 << 19, DType::f32),
                           dense(64, 1 << 21, DType::f32), dense(134, 1000003, DType::f32),
                           dense(128, 1 << 20, DType::bf16)}) {
    for (const int buffers : {2, 3}) {
      INFO("M = " << p.M << ", N = " << p.N << ", " << buffers << " slices");
      const std::vector<SoftmaxPlan> plain = pipelined_plans(p, buffers);
      const std::vector<SoftmaxPlan> twin = pipelined_plans(p, buffers, true);
      REQUIRE(plain.size() == 1);
      REQUIRE(twin.size() == 1);
      const SplitRowPlan& t = split_row_of(twin[0]);
      const SplitRowPlan& q = split_row_of(plain[0]);
      CHECK(t.slices == q.slices);
      CHECK(t.slice == q.slice);
      CHECK(t.grid == q.grid);
      CHECK(t.smem_bytes == q.smem_bytes);
      CHECK(summary(twin[0]).find(" prefetch") != std::string::npos);
      CHECK(twin[0].why.find("prefetched into L2 at the trip's start") != std::string::npos);
      CHECK(plain[0].why.find("prefetched") == std::string::npos);
      CHECK_FALSE(q.repoll);
      CHECK_FALSE(t.repoll);
    }
  }
  // The two-slice defaults take it and the early re-poll on the H200 (2^18 on few rows, 2^19,
  // 2^20), the three-slice one at 2^21 neither (each as measured fastest: results/h200/tuning/);
  // nor do 16-bit rows (no pipelined default). The sanitizer's two-slice shapes
  // (test_lab_kernels.cpp): 16 x 300000 prefetches on the H200 and the H100 (8 rows in flight,
  // 19.2 MB held), 16 x 600000 on neither (6 rows, 28.8 MB: 46% of the H200's L2).
  const DeviceLimits h100 = find_device_profile("h100")->limits;
  for (const Problem& p : {dense(16, 1 << 18, DType::f32), dense(256, 1 << 19, DType::f32),
                           dense(128, 1 << 20, DType::f32), dense(16, 300000, DType::f32)}) {
    const SoftmaxPlan f = plan_softmax(p, kH200);
    INFO(summary(f));
    CHECK(split_row_of(f).buffers == 2);
    CHECK(split_row_of(f).prefetch);
    CHECK(split_row_of(f).repoll);
  }
  for (const DeviceLimits& d : {kH200, h100}) {
    const SoftmaxPlan on = plan_softmax(dense(16, 300000, DType::f32), d);
    const SoftmaxPlan off = plan_softmax(dense(16, 600000, DType::f32), d);
    INFO(summary(on) << " / " << summary(off));
    CHECK(split_row_of(on).buffers == 2);
    CHECK(split_row_of(on).prefetch);
    CHECK(split_row_of(on).repoll);
    CHECK(split_row_of(off).buffers == 2);
    CHECK_FALSE(split_row_of(off).prefetch);
    CHECK_FALSE(split_row_of(off).repoll);
  }
  const SoftmaxPlan r1 = plan_softmax(dense(64, 1 << 21, DType::f32), kH200);
  CHECK(split_row_of(r1).buffers == 3);
  CHECK_FALSE(split_row_of(r1).prefetch);
  CHECK_FALSE(split_row_of(r1).repoll);
  // The early re-poll: a candidate beside each pipelined plan, with the prefetch and without,
  // never without the pipeline.
  for (const Problem& p : {dense(256, 1 << 19, DType::f32), dense(64, 1 << 21, DType::f32)}) {
    int with = 0, prefetching = 0;
    for (const SoftmaxPlan& s : family_plans(SoftmaxFamily::split_row, p, kH200)) {
      if (!split_row_of(s).repoll) continue;
      ++with;
      if (split_row_of(s).prefetch) ++prefetching;
      CHECK(split_row_of(s).buffers > 1);
      CHECK(summary(s).find(" repoll") != std::string::npos);
    }
    CHECK(with == 4);
    CHECK(prefetching == 2);
  }
}

namespace {

// What launch_plan says of plan s for p, which it checks before it touches the device (no GPU
// needed): the invalid_argument's message, or "accepted" when it takes the plan.
std::string launch_refusal(const SoftmaxPlan& s, const Problem& p) {
  Launch l;
  l.p = p;
  try {
    launch_plan(s, l);
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "accepted";
}

}  // namespace

TEST_CASE("split_row refuses a pipelined plan it cannot run, before any launch", "[dispatch]") {
  // launch_plan checks the plan before it touches the device: no GPU needed.
  const Problem p = dense(256, 1 << 19, DType::f32);
  const std::vector<SoftmaxPlan> plans = pipelined_plans(p);
  REQUIRE(plans.size() == 1);
  const SoftmaxPlan good = plans.front();
  const auto refusal = [&](const SoftmaxPlan& s) { return launch_refusal(s, p); };
  SoftmaxPlan part = good;  // a slice only partly resident
  split_row_of(part).resident = split_row_of(good).slice / 2;
  CHECK(refusal(part).find("pipelined exchange") != std::string::npos);
  SoftmaxPlan counted = good;
  split_row_of(counted).tagged_partials = false;
  CHECK(refusal(counted).find("tagged partials") != std::string::npos);
  SoftmaxPlan four = good;
  split_row_of(four).buffers = 4;
  CHECK(refusal(four).find("1, or 2 or 3") != std::string::npos);
  SoftmaxPlan repoll_one = single_slice_one_per_sm(p);  // the re-poll without the pipeline
  split_row_of(repoll_one).repoll = true;
  CHECK(refusal(repoll_one).find("early re-poll") != std::string::npos);
  // Interleaved streamed parts: fp32 rows read twice only.
  SoftmaxPlan on_chip = single_slice_one_per_sm(p);  // every slice resident
  split_row_of(on_chip).interleaved = true;
  CHECK(refusal(on_chip).find("interleaved") != std::string::npos);
  SoftmaxPlan bf16 = plan_softmax(dense(1, 1 << 26, DType::bf16), kH200);
  split_row_of(bf16).interleaved = true;
  CHECK(launch_refusal(bf16, dense(1, 1 << 26, DType::bf16)).find("interleaved") !=
        std::string::npos);
}

// split_row's ring candidates for p.
std::vector<SoftmaxPlan> ring_plans(const Problem& p) {
  std::vector<SoftmaxPlan> out;
  for (const SoftmaxPlan& s : candidate_plans(p, kH200))
    if (s.family() == SoftmaxFamily::split_row && split_row_of(s).ring) out.push_back(s);
  return out;
}

// block_hybrid's candidates across a cluster of C blocks for p.
std::vector<SoftmaxPlan> hybrid_cluster_plans(const Problem& p) {
  std::vector<SoftmaxPlan> out;
  for (const SoftmaxPlan& s : candidate_plans(p, kH200))
    if (s.family() == SoftmaxFamily::block_hybrid && block_hybrid_of(s).cluster > 1)
      out.push_back(s);
  return out;
}

TEST_CASE("dispatch: block_hybrid across a cluster, a slice longer than a tile per block",
          "[dispatch]") {
  // fp32 512 x 262144: 4 blocks of 65536 (the 1024-thread tile's 32768 and 128 KiB of shared
  // memory), 8 of 32768 (either tile and the rest in shared memory); 16 of 16384 would fit the
  // 512-thread tile alone (cluster_tile's).
  const Problem p = dense(512, 1 << 18, DType::f32);
  const std::vector<SoftmaxPlan> plans = hybrid_cluster_plans(p);
  const auto has = [&](int C, int threads) {
    return std::any_of(plans.begin(), plans.end(), [&](const SoftmaxPlan& s) {
      return block_hybrid_of(s).cluster == C && block_hybrid_of(s).threads == threads;
    });
  };
  CHECK(has(4, 1024));
  CHECK(has(4, 512));  // 16384 in registers, 49152 (192 KiB) in shared memory
  CHECK(has(8, 1024) == false);  // 32768 per block: the 1024-thread tile holds it whole
  CHECK(has(8, 512));
  CHECK_FALSE(has(16, 512));
  CHECK_FALSE(has(2, 1024));  // 131072 per block: past a tile and a block's shared memory
  for (const SoftmaxPlan& s : plans) {
    INFO(summary(s));
    const BlockHybridPlan& h = block_hybrid_of(s);
    CHECK(h.slice * h.cluster == p.N);
    CHECK(h.resident == h.slice - h.capacity);
    CHECK(h.grid == p.M * h.cluster);
    CHECK(summary(s).find("C=" + std::to_string(h.cluster)) != std::string::npos);
  }
  // The default is the 8 blocks, two an SM (faster than split_row: results/h200/tuning/).
  const SoftmaxPlan f = plan_softmax(p, kH200);
  CHECK(f.family() == SoftmaxFamily::block_hybrid);
  CHECK(block_hybrid_of(f).cluster == 8);
  CHECK(block_hybrid_of(f).threads == 512);
  // Rows no cluster of block_hybrid blocks holds: fp32 2^21 (131072 a block at C = 16).
  CHECK(hybrid_cluster_plans(dense(64, 1 << 21, DType::f32)).empty());
  // No clusters on the device: none.
  for (const SoftmaxPlan& s : candidate_plans(p, kH200, 1))
    CHECK(plan_cluster(s) == 1);
  // 16-bit rows hold twice the elements a block: bf16 2^21 on 16 blocks of 131072.
  CHECK_FALSE(hybrid_cluster_plans(dense(64, 1 << 21, DType::bf16)).empty());
}

TEST_CASE("block_hybrid refuses a cluster plan it cannot run, before any launch", "[dispatch]") {
  const Problem p = dense(512, 1 << 18, DType::f32);
  const std::vector<SoftmaxPlan> plans = hybrid_cluster_plans(p);
  REQUIRE_FALSE(plans.empty());
  const SoftmaxPlan good = plans.front();
  SoftmaxPlan three = good;
  block_hybrid_of(three).cluster = 3;
  CHECK(launch_refusal(three, p).find("power of two") != std::string::npos);
  SoftmaxPlan short_slices = good;  // the slices do not cover the row
  block_hybrid_of(short_slices).slice = block_hybrid_of(good).slice / 2;
  CHECK(launch_refusal(short_slices, p).find("do not cut N") != std::string::npos);
  SoftmaxPlan odd = good;  // not whole vectors
  block_hybrid_of(odd).slice = block_hybrid_of(good).slice + 1;
  CHECK(launch_refusal(odd, p).find("do not cut N") != std::string::npos);
  SoftmaxPlan empty = good;  // the last block's slice empty
  block_hybrid_of(empty).slice = p.N;
  CHECK(launch_refusal(empty, p).find("do not cut N") != std::string::npos);
}

TEST_CASE("dispatch: split_row's ring of chunk slots, for aligned rows on chip with room for it",
          "[dispatch]") {
  const std::size_t per_block = kH200.shared_bytes_per_block;
  const auto chunk_bytes = [](const SoftmaxPlan& s, DType t) {
    const std::int64_t V = kVectorBytes / dtype_bytes(t);
    return static_cast<std::size_t>((split_row_of(s).slice / V + kSplitChunks - 1) / kSplitChunks *
                                    kVectorBytes);
  };
  // M = 32, N = 2^22 fp32: one row in flight on 132 blocks; its 127 KB slice (4 chunks of 31776
  // bytes) leaves room for 3 more chunks: a ring of 7.
  const Problem p22 = dense(32, 1 << 22, DType::f32);
  const std::vector<SoftmaxPlan> r22 = ring_plans(p22);
  REQUIRE(r22.size() == 1);
  const SoftmaxPlan& ring = r22.front();
  CHECK(ring.family() == SoftmaxFamily::split_row);
  const SplitRowPlan& r = split_row_of(ring);
  CHECK(r.slices == 132);
  CHECK(ring.rows_in_flight == 1);
  CHECK(r.buffers == 1);
  CHECK(r.resident == r.slice);
  CHECK(r.tagged_partials);
  CHECK_FALSE(r.prefetch);
  CHECK(r.smem_bytes == 7 * chunk_bytes(ring, DType::f32));
  CHECK(r.smem_bytes <= per_block);
  CHECK(summary(ring).ends_with(" ring"));
  CHECK(find_candidate(p22, kH200, summary(ring)).has_value());
  CHECK(ring.why.find("ring of 7 chunk slots") != std::string::npos);
  CHECK(ring.why.find("as it writes this one") == std::string::npos);
  // The dispatch's plan there (aligned fp32 rows on chip, one at a time on the whole card, where
  // neither pipelined form fits): the ring; not for bf16 rows of that length (three rows in flight),
  // nor where fp32 rows have more rows in flight (N = 2^21: three slices per block).
  CHECK(plan_softmax(p22, kH200) == ring);
  CHECK_FALSE(split_row_of(plan_softmax(dense(32, 1 << 22, DType::bf16), kH200)).ring);
  CHECK_FALSE(split_row_of(plan_softmax(dense(64, 1 << 21, DType::f32), kH200)).ring);
  CHECK_FALSE(split_row_of(plan_softmax(dense(128, 1 << 20, DType::f32), kH200)).ring);
  // Rows off 16-byte boundaries.
  CHECK_FALSE(split_row_of(plan_softmax(dense(32, (1 << 22) + 1, DType::f32), kH200)).ring);
  // Every ring candidate: more slots than a slice's chunks, at most kSplitRingSlotsMax, within a
  // block's shared memory; its rows in flight the one-slice plan's, half of them, or one.
  for (const Problem& p : {dense(64, 1 << 21, DType::f32), dense(128, 1 << 20, DType::f32),
                           dense(32, 1 << 22, DType::bf16), dense(40, 250000, DType::f32)}) {
    const std::vector<SoftmaxPlan> rings = ring_plans(p);
    INFO(p.M << " x " << p.N << " " << to_string(p.dtype));
    CHECK(!rings.empty());
    for (const SoftmaxPlan& s : rings) {
      const SplitRowPlan& q = split_row_of(s);
      const std::size_t slots = q.smem_bytes / chunk_bytes(s, p.dtype);
      CHECK(q.smem_bytes % chunk_bytes(s, p.dtype) == 0);
      CHECK(slots > static_cast<std::size_t>(kSplitChunks));
      CHECK(slots <= static_cast<std::size_t>(kSplitRingSlotsMax));
      CHECK(q.smem_bytes <= per_block);
      CHECK(q.resident == q.slice);
      CHECK(q.grid <= kH200.sm_count);
      CHECK(q.slices * q.slice >= p.N);
    }
  }
  // N = 2^20 fp32: the one-slice plan's 6 rows in flight leave no room (190 KB slices); 3 rows
  // and 1 do.
  std::set<std::int64_t> rows;
  for (const SoftmaxPlan& s : ring_plans(dense(128, 1 << 20, DType::f32)))
    rows.insert(s.rows_in_flight);
  CHECK(rows == std::set<std::int64_t>{1, 3});
  // None for rows off 16-byte boundaries, rows of a partial last vector, rows read twice.
  CHECK(ring_plans(dense(3, 1000003, DType::f32)).empty());
  CHECK(ring_plans(Problem{40, 250001, 250004, 250008, DType::f32}).empty());
  CHECK(ring_plans(dense(1, 1 << 26, DType::f32)).empty());
  CHECK(ring_plans(dense(8, 1 << 24, DType::bf16)).empty());
}

TEST_CASE("split_row refuses a ring plan it cannot run, before any launch", "[dispatch]") {
  const Problem p = dense(32, 1 << 22, DType::f32);
  const std::vector<SoftmaxPlan> rings = ring_plans(p);
  REQUIRE(rings.size() == 1);
  const auto refusal = [&](const SoftmaxPlan& s) { return launch_refusal(s, p); };
  SoftmaxPlan two = rings.front();  // with the pipelined exchange
  split_row_of(two).buffers = 2;
  CHECK(refusal(two).find("ring of chunks") != std::string::npos);
  SoftmaxPlan counted = rings.front();
  split_row_of(counted).tagged_partials = false;
  CHECK(refusal(counted).find("ring of chunks") != std::string::npos);
  SoftmaxPlan no_room = rings.front();  // shared memory for the slice's own chunks only
  split_row_of(no_room).smem_bytes = static_cast<std::size_t>(split_row_of(no_room).slice) * 4;
  CHECK(refusal(no_room).find("ring of chunks") != std::string::npos);
}

TEST_CASE("dispatch: split_row prefetches into L2 only while a wave of rows fills at most 41% of it",
          "[dispatch]") {
  // M = 32, N = 2^22 fp32 on one slice per block: one 16 MB row per wave: prefetch (the default
  // there, the ring, has most of its next slice on chip: none); M = 64, N = 2^21 on one slice per
  // block: 3 rows, 25.2 MB (the default there, three slices per block, has its next slices on
  // chip: none).
  CHECK(split_row_of(single_slice_one_per_sm(dense(32, 1 << 22, DType::f32))).prefetch);
  CHECK_FALSE(split_row_of(plan_softmax(dense(32, 1 << 22, DType::f32), kH200)).prefetch);
  CHECK(split_row_of(single_slice_one_per_sm(dense(64, 1 << 21, DType::f32))).prefetch);
  CHECK_FALSE(split_row_of(plan_softmax(dense(64, 1 << 21, DType::f32), kH200)).prefetch);
  // M = 128, N = 2^20 on two blocks per SM (the family's first candidate): 7 rows of 4 MB =
  // 29.4 MB per wave: no prefetch (the lines would not last). One block per SM holds 6 rows at a
  // time (25.2 MB): prefetch. The default (two slices per block, 3 rows in flight) holds 25.2 MB
  // too, 40% of the H200's L2, within its 45%: prefetch.
  const SoftmaxPlan b =
      family_plans(SoftmaxFamily::split_row, dense(128, 1 << 20, DType::f32), kH200).front();
  CHECK(split_row_of(b).grid > kH200.sm_count);
  CHECK(b.rows_in_flight == 7);
  CHECK_FALSE(split_row_of(b).prefetch);
  const SoftmaxPlan b1 = single_slice_one_per_sm(dense(128, 1 << 20, DType::f32));
  CHECK(b1.rows_in_flight == 6);
  CHECK(split_row_of(b1).prefetch);
  const SoftmaxPlan b2 = plan_softmax(dense(128, 1 << 20, DType::f32), kH200);
  CHECK(split_row_of(b2).buffers == 2);
  CHECK(split_row_of(b2).prefetch);
  // Rows read twice: never.
  CHECK_FALSE(split_row_of(plan_softmax(dense(8, 1 << 24, DType::f32), kH200)).prefetch);
  // The other setting is always the second candidate, so the tuning run times both.
  for (const Problem& p : {dense(32, 1 << 22, DType::f32), dense(128, 1 << 20, DType::f32)}) {
    const auto plans = family_plans(SoftmaxFamily::split_row, p, kH200);
    REQUIRE(plans.size() >= 2);
    CHECK(split_row_of(plans[0]).prefetch != split_row_of(plans[1]).prefetch);
  }
}

TEST_CASE("dispatch: the pipelined split_row plans prefetch by the rows they hold against L2",
          "[dispatch]") {
  // Two slices a block hold twice the rows in flight. On the H200 (60 MiB L2) the defaults at
  // 2^19 and 2^20 (25.2 MB, 40%) and 1000003 (24 MB, 38%) prefetch; on the H100 (50 MiB) the same
  // plans hold 48% and 46%: none, and so no re-poll either.
  const DeviceLimits h100 = find_device_profile("h100")->limits;
  REQUIRE(h100.l2_bytes < kH200.l2_bytes);
  for (const Problem& p : {dense(256, 1 << 19, DType::f32), dense(128, 1 << 20, DType::f32),
                           dense(134, 1000003, DType::f32)}) {
    const SoftmaxPlan on = plan_softmax(p, kH200);
    const SoftmaxPlan off = plan_softmax(p, h100);
    INFO(summary(on) << " / " << summary(off));
    REQUIRE(split_row_of(on).buffers == 2);
    REQUIRE(split_row_of(off).buffers == 2);
    CHECK(on.rows_in_flight == off.rows_in_flight);
    CHECK(split_row_of(on).slice == split_row_of(off).slice);
    const double held = 2.0 * static_cast<double>(on.rows_in_flight * p.N * 4);
    CHECK(held <= 0.45 * static_cast<double>(kH200.l2_bytes));
    CHECK(held > 0.45 * static_cast<double>(h100.l2_bytes));
    CHECK(split_row_of(on).prefetch);
    CHECK_FALSE(split_row_of(off).prefetch);
    CHECK_FALSE(split_row_of(off).repoll);
    CHECK(off.why.find("prefetched") == std::string::npos);
  }
  // The one-slice plans keep their 41% of one wave: M = 64, N = 2^21 on one slice a block holds
  // 3 rows (25.2 MB): 40% of the H200's L2, prefetched; 48% of the H100's, not.
  const SoftmaxPlan h200_one = single_slice_one_per_sm(dense(64, 1 << 21, DType::f32));
  const SoftmaxPlan h100_one = single_slice_one_per_sm(dense(64, 1 << 21, DType::f32), h100);
  REQUIRE(h200_one.rows_in_flight == 3);
  REQUIRE(h100_one.rows_in_flight == 3);
  CHECK(split_row_of(h200_one).prefetch);
  CHECK_FALSE(split_row_of(h100_one).prefetch);
}

TEST_CASE("dispatch: fp32 block_row rows of 1000-4096 take the tiles measured fastest",
          "[dispatch]") {
  // Each of these tiles beat the smallest that holds the row on the H200; 8192 and 16384 stay on
  // the smallest, the wider ran slower there (results/h200/tuning/; docs/performance.md,
  // "block_row").
  for (const auto& [n, threads, vecs] : {std::tuple{1000, 96, 4}, std::tuple{1024, 96, 4},
                                         std::tuple{2048, 192, 4}, std::tuple{3000, 256, 4},
                                         std::tuple{4096, 384, 4}, std::tuple{8192, 512, 4},
                                         std::tuple{16384, 512, 8}}) {
    const SoftmaxPlan s = plan_softmax(dense((std::int64_t{1} << 27) / n, n), kH200);
    INFO("N = " << n << ": " << summary(s));
    CHECK(s.family() == SoftmaxFamily::block_row);
    CHECK(block_row_of(s).threads == threads);
    CHECK(block_row_of(s).vecs == vecs);
    // The smallest tile that holds the row stays a candidate beside it.
    std::int64_t smallest = 0;
    for (TileShape t : block_row_tiles(DType::f32)) {
      const std::int64_t cap = std::int64_t{t.threads_or_lanes} * t.vecs * 4;
      if (cap >= n && (smallest == 0 || cap < smallest)) smallest = cap;
    }
    const std::vector<SoftmaxPlan> c = family_plans(SoftmaxFamily::block_row, dense(64, n), kH200);
    REQUIRE(!c.empty());
    CHECK(block_row_of(c.front()).capacity == block_row_of(s).capacity);
    CHECK(std::any_of(c.begin(), c.end(),
                      [&](const SoftmaxPlan& q) { return block_row_of(q).capacity == smallest; }));
  }
  // 16-bit rows keep the smallest: bf16 2048 on 64 x 4.
  const SoftmaxPlan b = plan_softmax(dense(65536, 2048, DType::bf16), kH200);
  CHECK(block_row_of(b).threads == 64);
  CHECK(block_row_of(b).vecs == 4);
}

TEST_CASE("dispatch: warp_rows rows just past a power of two have a tile of 3 vectors a lane as "
          "a candidate", "[dispatch]") {
  // Rows just past a power of two at a stride of whole vectors fill a 3-vector tile about two
  // thirds where the default is half full: fp32 129 (16 x 3's 192, against 256) and 257 (32 x 3:
  // 384, against 512); 16-bit 129 (8 x 3's 192, against 256) and 257 (16 x 3: 384, against 512).
  // Candidates only: the default keeps its tile; none where the default is fuller (fp32 100,
  // 16-bit 197), nor at ld = N, where the power-of-two tile and one element a lane hold the row
  // (fp32 129 on 128, bf16 127 on 128).
  for (const auto& [p, lanes, default_cap] :
       {std::tuple{padded(4096, 129, DType::f32), 16, 256},
        std::tuple{padded(4096, 257, DType::f32), 32, 512},
        std::tuple{padded(4096, 129, DType::bf16), 8, 256},
        std::tuple{padded(4096, 257, DType::f16), 16, 512},
        std::tuple{padded(4096, 100, DType::f32), 0, 128},
        std::tuple{padded(4096, 197, DType::bf16), 0, 256},
        std::tuple{dense(4096, 129, DType::f32), 0, 128},
        std::tuple{dense(4096, 127, DType::bf16), 0, 128}}) {
    const SoftmaxPlan s = plan_softmax(p, kH200);
    INFO(to_string(p.dtype) << " N = " << p.N << ": " << summary(s));
    REQUIRE(s.family() == SoftmaxFamily::warp_rows);
    CHECK(warp_rows_of(s).capacity == default_cap);
    CHECK(warp_rows_of(s).vecs != 3);
    const std::vector<SoftmaxPlan> c = family_plans(SoftmaxFamily::warp_rows, p, kH200);
    const auto wide = std::count_if(c.begin(), c.end(), [](const SoftmaxPlan& q) {
      return warp_rows_of(q).vecs == 3;
    });
    CHECK(wide == (lanes > 0 ? 1 : 0));
    if (lanes > 0)
      CHECK(std::any_of(c.begin(), c.end(), [&, G = lanes](const SoftmaxPlan& q) {
        return warp_rows_of(q).lanes_per_row == G && warp_rows_of(q).vecs == 3;
      }));
  }
}

TEST_CASE("dispatch: 16-bit rows just past a power of two take the tile half again as wide",
          "[dispatch]") {
  // 4097 at a stride of whole vectors fills 192 x 4 (6144) two thirds where 256 x 4 (8192) is
  // half full: the default, 256 x 4 a candidate beside it; likewise 8193 on 384 x 4 (12288,
  // against 16384). Rows off 16-byte boundaries take the power-of-two tile instead: its vectors
  // and one element a thread past them hold a window of up to N + 7 (4097 and 4096 at a stride
  // of 4097 on 128 x 4; 1023 and 1025 on warp_rows' 32 x 4). 1025 or 1536 at a stride of whole
  // vectors fill 96 x 2 (1536) where 64 x 4 (2048) is half full: a candidate only (it ran
  // slower: tile_lists.hpp).
  const auto strided = [](std::int64_t N, std::int64_t ld, DType t) {
    Problem p = dense(4096, N, t);
    p.ld_x = p.ld_y = ld;
    return p;
  };
  const auto has_tile = [](const std::vector<SoftmaxPlan>& c, int threads, int vecs) {
    return std::any_of(c.begin(), c.end(), [&](const SoftmaxPlan& q) {
      return block_row_of(q).threads == threads && block_row_of(q).vecs == vecs;
    });
  };
  for (const DType t : {DType::bf16, DType::f16}) {
    for (const auto& [p, threads, vecs, cap] :
         {std::tuple{strided(4097, 4104, t), 192, 4, 6144},
          std::tuple{strided(6144, 6144, t), 192, 4, 6144},
          std::tuple{strided(8193, 8200, t), 384, 4, 12288}}) {
      const SoftmaxPlan s = plan_softmax(p, kH200);
      INFO(to_string(t) << " N = " << p.N << " ld = " << p.ld_x << ": " << summary(s));
      REQUIRE(s.family() == SoftmaxFamily::block_row);
      CHECK(block_row_of(s).threads == threads);
      CHECK(block_row_of(s).vecs == vecs);
      CHECK(block_row_of(s).capacity == cap);
      CHECK(has_tile(family_plans(SoftmaxFamily::block_row, p, kH200), threads * 4 / 3, 4));
    }
    // Aligned 4096 and 8192 keep the power-of-two tile that holds them exactly; so do rows off
    // boundaries up to 2^k + 25 (the tile's 128 or 256 extra elements hold the window's rest).
    for (const auto& [p, cap] :
         {std::tuple{strided(4096, 4096, t), 4096}, std::tuple{strided(8192, 8192, t), 8192},
          std::tuple{strided(4097, 4097, t), 4096}, std::tuple{strided(4096, 4097, t), 4096},
          std::tuple{strided(4121, 4121, t), 4096}, std::tuple{strided(8193, 8193, t), 8192},
          std::tuple{strided(8192, 8193, t), 8192}}) {
      const SoftmaxPlan s = plan_softmax(p, kH200);
      INFO(to_string(t) << " N = " << p.N << " ld = " << p.ld_x << ": " << summary(s));
      REQUIRE(s.family() == SoftmaxFamily::block_row);
      CHECK(block_row_of(s).capacity == cap);
    }
    for (const Problem& p :
         {strided(1025, 1025, t), strided(1023, 1023, t), strided(1024, 1025, t)}) {
      const SoftmaxPlan s = plan_softmax(p, kH200);
      INFO(to_string(t) << " N = " << p.N << " ld = " << p.ld_x << ": " << summary(s));
      REQUIRE(s.family() == SoftmaxFamily::warp_rows);
      CHECK(warp_rows_of(s).capacity == 1024);
      CHECK(warp_rows_of(s).lanes_per_row == 32);
    }
    for (const Problem& p : {strided(1025, 1032, t), strided(1536, 1536, t)}) {
      const SoftmaxPlan s = plan_softmax(p, kH200);
      INFO(to_string(t) << " N = " << p.N << " ld = " << p.ld_x << ": " << summary(s));
      REQUIRE(s.family() == SoftmaxFamily::block_row);
      CHECK(block_row_of(s).capacity == 2048);
      CHECK(has_tile(family_plans(SoftmaxFamily::block_row, p, kH200), 96, 2));
    }
    // No wide tile where it would not be fuller than the default: 1537 at a stride of whole
    // vectors on 64 x 4 (2048), and aligned 2048 (its own tile).
    for (const auto& [n, ld] : {std::pair<std::int64_t, std::int64_t>{1537, 1544}, {2048, 2048}}) {
      for (const SoftmaxPlan& q : family_plans(SoftmaxFamily::block_row, strided(n, ld, t), kH200))
        for (TileShape w : block_row_wide_tiles(t))
          CHECK_FALSE((block_row_of(q).threads == w.threads_or_lanes &&
                       block_row_of(q).vecs == w.vecs));
    }
  }
  CHECK(block_row_wide_tiles(DType::f32).empty());
}

TEST_CASE("dispatch: a candidate plan is found by its summary, and only a candidate",
          "[dispatch]") {
  const Problem p = dense(65536, 2048);
  for (const SoftmaxPlan& c : candidate_plans(p, kH200)) {
    const std::optional<SoftmaxPlan> f = find_candidate(p, kH200, summary(c));
    REQUIRE(f.has_value());
    CHECK(summary(*f) == summary(c));
  }
  const std::optional<SoftmaxPlan> wide = find_candidate(p, kH200, "block_row T=128 K=4 cap=2048");
  REQUIRE(wide.has_value());
  CHECK(block_row_of(*wide).threads == 128);
  CHECK(!find_candidate(p, kH200, "block_row T=128 K=4").has_value());  // the whole line only
  CHECK(!find_candidate(p, kH200, "block_row T=1024 K=8 cap=32768").has_value());  // not one
  CHECK(!find_candidate(dense(64, 100), kH200, "block_row T=128 K=4 cap=2048").has_value());
}

TEST_CASE("dispatch: warp_rows' reduction, two-pass for 16-bit rows, pairs merged for fp32",
          "[dispatch]") {
  for (const DType t : kDtypes)
    for (const std::int64_t n : {1, 32, 100, 128, 512, 1000}) {
      const Problem p = dense(4096, n, t);
      if (p.N > warp_rows_max_n(t)) continue;
      if (head_room(p) > 0 && p.N <= kWarpRowsStagedMaxN) continue;  // staged: two-pass always
      const SoftmaxPlan s = plan_softmax(p, kH200);
      INFO(to_string(t) << " N = " << n << ": " << summary(s));
      REQUIRE(s.family() == SoftmaxFamily::warp_rows);
      const WarpRowsPlan& w = warp_rows_of(s);
      CHECK(w.two_pass == (t != DType::f32));
      // The other reduction is a candidate of the same tile.
      const std::vector<SoftmaxPlan> c = candidate_plans(p, kH200);
      CHECK(std::any_of(c.begin(), c.end(), [&](const SoftmaxPlan& q) {
        if (q.family() != SoftmaxFamily::warp_rows) return false;
        const WarpRowsPlan& o = warp_rows_of(q);
        return o.lanes_per_row == w.lanes_per_row && o.vecs == w.vecs && o.grid == w.grid &&
               o.two_pass != w.two_pass;
      }));
    }
}

TEST_CASE("dispatch: warp_rows' rows off 16-byte boundaries, staged to N = 64 unpadded, else the "
          "tile of half the lanes and twice the vectors",
          "[dispatch]") {
  for (const DType t : kDtypes) {
    INFO(to_string(t));
    const std::int64_t V = vec_elems(t);
    for (std::int64_t n = 1; n <= warp_rows_max_n(t); ++n) {
      for (const std::int64_t ld : {n, n + 1, (n + V - 1) / V * V}) {
        const Problem p{4096, n, ld, ld, t};
        if (!tile_fits(p, warp_rows_max_n(t), 32)) continue;
        const SoftmaxPlan s = plan_softmax(p, kH200);
        INFO("N = " << n << ", ld = " << ld << ": " << summary(s));
        REQUIRE(s.family() == SoftmaxFamily::warp_rows);
        const WarpRowsPlan& w = warp_rows_of(s);
        CHECK_FALSE(w.packed);  // a candidate only
        CHECK((w.staged_rows > 0) ==
              (head_room(p) > 0 && n <= kWarpRowsStagedMaxN && ld == n));
        // Staged: whole rounds of 32 rows a trip where more than 32 fit.
        if (w.staged_rows > 32) CHECK(w.staged_rows % 32 == 0);
        if (w.staged_rows > 0) continue;
        // The first listed tile that holds the row (tile_fits); off boundaries its (G / 2, 2K)
        // twin where listed and where it holds the row too.
        const auto tiles = warp_rows_tiles(t);
        const auto holds = [&](TileShape x) {
          return tile_fits(p, std::int64_t{x.threads_or_lanes} * x.vecs * V, x.threads_or_lanes);
        };
        const auto first = std::find_if(tiles.begin(), tiles.end(), holds);
        REQUIRE(first != tiles.end());
        TileShape want = *first;
        const TileShape twin{first->threads_or_lanes / 2, first->vecs * 2};
        if (head_room(p) > 0 && std::find(tiles.begin(), tiles.end(), twin) != tiles.end() &&
            holds(twin))
          want = twin;
        CHECK(w.lanes_per_row == want.threads_or_lanes);
        CHECK(w.vecs == want.vecs);
      }
    }
  }
  // bf16 N = 31: 64 rows a trip, two whole rounds of one lane a row; the candidate that fills the
  // span with 65 (a third round for one row).
  const std::vector<SoftmaxPlan> c = candidate_plans(dense(541201, 31, DType::bf16), kH200);
  CHECK(summary(c.front()) == "warp_rows staged R=64 G=1 cap=2048");
  CHECK(std::any_of(c.begin(), c.end(), [](const SoftmaxPlan& s) {
    return summary(s) == "warp_rows staged R=65 G=1 cap=2048";
  }));
  // The shared ends: a candidate of dense rows off boundaries at least a vector long whose
  // default tile has fewer than 32 lanes and holds the window in its vectors -- that tile, the
  // ends shared; never the default.
  for (const DType t : kDtypes) {
    const std::int64_t V = vec_elems(t);
    for (std::int64_t n = 1; n <= warp_rows_max_n(t); n += (n < 300 ? 1 : 37)) {
      for (const Problem& p : {dense(1 << 16, n, t), Problem{1 << 16, n, n + 1, n + 1, t}}) {
        INFO(to_string(t) << " N = " << n << ", ld = " << p.ld_x);
        const std::vector<SoftmaxPlan> all = candidate_plans(p, kH200);
        const auto shared = std::find_if(all.begin(), all.end(), [](const SoftmaxPlan& s) {
          return s.family() == SoftmaxFamily::warp_rows && warp_rows_of(s).shared_ends;
        });
        const SoftmaxPlan def = plan_softmax(p, kH200);
        if (def.family() != SoftmaxFamily::warp_rows) {
          CHECK(shared == all.end());
          continue;
        }
        CHECK_FALSE(warp_rows_of(def).shared_ends);
        const WarpRowsPlan& d = warp_rows_of(def);
        const bool want = head_room(p) > 0 && p.ld_x == n && n >= V && d.staged_rows == 0 &&
                          d.lanes_per_row < 32 && n + V - 1 <= d.capacity;
        REQUIRE((shared != all.end()) == want);
        if (!want) continue;
        WarpRowsPlan same = d;
        same.shared_ends = true;
        CHECK(warp_rows_of(*shared) == same);
        CHECK(summary(*shared) == summary(def) + " shared-ends");
      }
    }
  }
  // The packed plan: a candidate of every dense row that divides a vector (fp32 N = 1, 2, 4;
  // 16-bit 1, 2, 4, 8), of no other; never the default.
  for (const DType t : kDtypes) {
    const std::int64_t V = vec_elems(t);
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{2}, std::int64_t{3},
                                 std::int64_t{4}, std::int64_t{8}, std::int64_t{16}}) {
      for (const Problem& p : {dense(1 << 20, n, t), Problem{1 << 20, n, n + 1, n + 1, t}}) {
        INFO(to_string(t) << " N = " << n << ", ld = " << p.ld_x);
        const std::vector<SoftmaxPlan> all = candidate_plans(p, kH200);
        const auto packed = std::find_if(all.begin(), all.end(), [](const SoftmaxPlan& s) {
          return s.family() == SoftmaxFamily::warp_rows && warp_rows_of(s).packed;
        });
        CHECK((packed != all.end()) == (n <= V && V % n == 0 && p.ld_x == n));
        if (packed != all.end())
          CHECK(summary(*packed) == "warp_rows packed K=" + std::to_string(kWarpRowsPackedVecs) +
                                        " cap=" + std::to_string(V));
        CHECK_FALSE(warp_rows_of(all.front()).packed);
      }
    }
  }
}

TEST_CASE("dispatch: warp_rows' grid, one block per rows but for 16-bit rows past 512",
          "[dispatch]") {
  const auto h_rows = [](std::int64_t n) { return (std::int64_t{1} << 27) / n; };
  for (const std::int64_t n : {32, 128, 512, 513, 1000, 1024}) {
    INFO("N = " << n);
    for (const DType t : {DType::bf16, DType::f16}) {
      const SoftmaxPlan h = plan_softmax(dense(h_rows(n), n, t), kH200);
      REQUIRE(h.family() == SoftmaxFamily::warp_rows);
      const std::int64_t rows_per_block = 8 * (32 / warp_rows_of(h).lanes_per_row);
      if (n > 512)
        CHECK(warp_rows_of(h).grid == 0);  // persistent: the launcher sizes it to the card
      else
        CHECK(warp_rows_of(h).grid == (h_rows(n) + rows_per_block - 1) / rows_per_block);
      // Padded rows (never staged) take the same grid.
      const SoftmaxPlan odd = plan_softmax(Problem{1000, n, n + 1, n + 1, t}, kH200);
      if (odd.family() == SoftmaxFamily::warp_rows && warp_rows_of(odd).staged_rows == 0)
        CHECK((warp_rows_of(odd).grid == 0) == (n > 512));
    }
    if (n <= warp_rows_max_n(DType::f32)) {
      const SoftmaxPlan f = plan_softmax(dense((std::int64_t{1} << 27) / n, n, DType::f32), kH200);
      REQUIRE(f.family() == SoftmaxFamily::warp_rows);
      CHECK(warp_rows_of(f).grid > 0);
    }
  }
}

// ---- The dispatch by device: every profile (kernels/device_profiles.hpp) ----------------------

namespace {

constexpr std::int64_t kProfileNs[] = {1,      32,     513,    1024,   1025,    4096,    16385,
                                       32768,  32769,  65536,  100000, 131072,  262144,  524288,
                                       917504, 1000003, 2097152, 4194304, 16777216};
constexpr std::int64_t kProfileMs[] = {1, 8, 64, 1000, 32768};

bool is_cluster_family(SoftmaxFamily f) {
  return f == SoftmaxFamily::cluster_tile || f == SoftmaxFamily::cluster_row;
}

// Every (dtype, N, M, stride) of the profile grid: the problem and whether the dispatch runs it.
template <class F>
void for_profile_grid(F&& f) {
  for (DType t : kDtypes)
    for (std::int64_t N : kProfileNs)
      for (std::int64_t M : kProfileMs)
        for (int pad : {0, 1}) {
          Problem p = dense(M, N, t);
          p.ld_x = p.ld_y = N + pad;
          f(p);
        }
}

}  // namespace

TEST_CASE("dispatch by device: each profile gets only the families it supports, and plans that fit "
          "it",
          "[dispatch][device]") {
  for (const DeviceProfile& prof : device_profiles()) {
    const DeviceLimits& d = prof.limits;
    INFO("profile " << prof.name);
    for_profile_grid([&](const Problem& p) {
      INFO("M = " << p.M << ", N = " << p.N << " " << to_string(p.dtype) << " ld = " << p.ld_x);
      if (std::optional<std::string> why = softmax_unsupported(p, d)) {
        // Only rows past block_row, only on cards without sm_90, and with the reason in words.
        CHECK(d.compute_capability() < 90);
        CHECK_FALSE(tile_fits(p, block_row_max_n(p.dtype), 32));
        CHECK(why->find("block_row") != std::string::npos);
        CHECK_THROWS_AS(plan_softmax(p, d, d.max_cluster), std::invalid_argument);
        return;
      }
      const SoftmaxPlan s = plan_softmax(p, d, d.max_cluster);
      CHECK(family_available(s.family(), d));
      if (!d.has_clusters()) {
        CHECK_FALSE(is_cluster_family(s.family()));
        CHECK(plan_cluster(s) <= 1);
      }
      CHECK(plan_cluster(s) <= std::max(1, d.max_cluster));
      // A block's registers fit the SM's: every tile family keeps a thread within 64 registers
      // (kTileThreadsPerSm), warp_rows' 256 threads and the slice families' 512 within theirs.
      CHECK(block_threads(s) >= 32);
      CHECK(std::int64_t{block_threads(s)} * 64 <= d.registers_per_sm);
      check_invariants(s, p, d);
      for (const SoftmaxPlan& c : candidate_plans(p, d, d.max_cluster)) {
        INFO("candidate " << summary(c));
        CHECK(family_available(c.family(), d));
        check_invariants(c, p, d);
      }
    });
  }
}

TEST_CASE("dispatch by device: sm_80 and sm_89 cards never get a cluster family or a bulk-copy "
          "family", "[dispatch][device]") {
  for (const char* name : {"t4", "a100", "rtx4090", "l4"}) {
    const DeviceProfile* prof = find_device_profile(name);
    REQUIRE(prof != nullptr);
    const DeviceLimits& d = prof->limits;
    INFO("profile " << name);
    CHECK_FALSE(d.has_clusters());
    for (SoftmaxFamily f : {SoftmaxFamily::cluster_tile, SoftmaxFamily::cluster_row,
                            SoftmaxFamily::block_hybrid, SoftmaxFamily::split_row})
      CHECK(family_unavailable(f, d).has_value());
    // Rows block_row holds run on block_row or warp_rows; longer ones are refused, by the dispatch
    // and by the registry entry, with the reason.
    for (DType t : kDtypes) {
      const Problem fits = dense(1000, 32768, t);
      CHECK(plan_softmax(fits, d).family() == SoftmaxFamily::block_row);
      const Problem longer = dense(1000, 131072, t);
      CHECK_THROWS_AS(plan_softmax(longer, d), std::invalid_argument);
      const KernelInfo* k = find_kernel("softmax");
      REQUIRE(k != nullptr);
      const std::optional<std::string> why = why_unsupported(*k, longer, d);
      REQUIRE(why.has_value());
      CHECK(why->find("sm_90") != std::string::npos);
      CHECK(family_plans(SoftmaxFamily::cluster_row, longer, d).empty());
      CHECK(family_plans(SoftmaxFamily::split_row, longer, d).empty());
    }
  }
}

TEST_CASE("dispatch by device: the GPU test's edge shapes reach every family each profile has",
          "[dispatch][device]") {
  // test_production.cpp's edge case runs these shapes on the card and checks that it hit every
  // family; this is the same count on every profile, so a dispatch change that leaves a family
  // unreached fails here, without a GPU.
  for (const DeviceProfile& prof : device_profiles()) {
    const DeviceLimits& d = prof.limits;
    for (const DType t : kDtypes) {
      INFO("profile " << prof.name << ", " << to_string(t));
      CHECK(test::family_names(test::families_hit(test::edge_shapes(t, d), d)) ==
            test::family_names(test::expected_families(t, d)));
    }
  }
}

TEST_CASE("dispatch by device: the H200 profile plans as the default limits do",
          "[dispatch][device]") {
  const DeviceProfile* h200 = find_device_profile("h200");
  REQUIRE(h200 != nullptr);
  for_profile_grid([&](const Problem& p) {
    INFO("M = " << p.M << ", N = " << p.N << " " << to_string(p.dtype) << " ld = " << p.ld_x);
    CHECK(summary(plan_softmax(p, h200->limits, h200->limits.max_cluster)) ==
          summary(plan_softmax(p, kH200)));
  });
}

TEST_CASE("dispatch by device: a sm_90 card without cluster launch gets no cluster",
          "[dispatch][device]") {
  DeviceLimits d;  // the defaults, clusters off
  d.cluster_launch = false;
  for_profile_grid([&](const Problem& p) {
    INFO("M = " << p.M << ", N = " << p.N << " " << to_string(p.dtype));
    const SoftmaxPlan s = plan_softmax(p, d, kMaxClusterSize);
    CHECK_FALSE(is_cluster_family(s.family()));
    CHECK(plan_cluster(s) <= 1);
    check_invariants(s, p, d);
  });
}

TEST_CASE("plans: each family's own form, compared field by field", "[dispatch]") {
  for (DType t : kDtypes)
    for (std::int64_t N : kProfileNs) {
      const Problem p = dense(64, N, t);
      const std::vector<SoftmaxPlan> plans = candidate_plans(p, kH200);
      for (std::size_t i = 0; i < plans.size(); ++i) {
        INFO(summary(plans[i]));
        // Candidates are listed once each: no two have the same form.
        for (std::size_t j = 0; j < i; ++j) CHECK_FALSE(plans[j].form == plans[i].form);
        // The reason is not part of the form; a field of the family is.
        SoftmaxPlan same = plans[i];
        same.why += " (again)";
        CHECK(same.form == plans[i].form);
        CHECK_FALSE(same == plans[i]);
        SoftmaxPlan other = plans[i];
        std::visit([](auto& f) { f.grid += 1; }, other.form);
        CHECK_FALSE(other.form == plans[i].form);
        CHECK_FALSE(other == plans[i]);
        CHECK(SoftmaxPlan(plans[i]) == plans[i]);
      }
    }
}
