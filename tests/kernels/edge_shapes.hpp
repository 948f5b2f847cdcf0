// The production dispatch's edge shapes: for each family the device has, its first and last N and
// their neighbours, so that every family the dispatch picks for a dtype is hit. The GPU test
// (test_production.cpp) runs each shape against the fp64 reference; the host test
// (test_dispatch.cpp) checks, for every device profile, that the list hits exactly the families
// the profile has -- so a dispatch change that leaves a family unreached fails on the CPU first.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "core/problem.hpp"
#include "kernels/production/softmax_dispatch.hpp"

namespace smr::test {

// The first row length the dispatch reads twice (too long for the card's shared memory).
inline std::int64_t first_two_read_n(DType t, const DeviceLimits& d) {
  for (std::int64_t n = std::int64_t{1} << 20;; n += n / 8) {
    if (plan_softmax(dense(1, n, t), d).traffic == TrafficModel::two_read) return n;
  }
}

// warp_rows and block_row: every tile edge and its neighbours. These run on every device.
inline std::vector<Problem> portable_edge_shapes(DType t) {
  std::vector<Problem> shapes;
  const std::int64_t vec = kVectorBytes / dtype_bytes(t);
  // warp_rows: every tile edge (the capacities 8, 16, ... 1024) and its neighbours.
  for (const TileShape s : warp_rows_tiles(t)) {
    const std::int64_t cap = std::int64_t{s.threads_or_lanes} * s.vecs * vec;
    for (const std::int64_t n : {cap - 1, cap, cap + 1}) shapes.push_back(dense(133, n, t));
  }
  shapes.push_back(dense(131, 1, t));
  // block_row: its first and last N, and the tile edges in between.
  const std::int64_t block_max = block_row_max_n(t);
  for (const std::int64_t n : {kWarpRowsMaxN + 1, std::int64_t{2047}, std::int64_t{2048},
                               std::int64_t{2049}, std::int64_t{8193}, block_max - 1, block_max})
    shapes.push_back(dense(40, n, t));
  return shapes;
}

// block_hybrid, cluster_tile, cluster_row, split_row: their first and longest rows and one past,
// and the rows-per-wave edges. Only for a device with the sm_90 families.
inline std::vector<Problem> hopper_edge_shapes(DType t, const DeviceLimits& d) {
  std::vector<Problem> shapes;
  const std::int64_t block_max = block_row_max_n(t);
  // cluster_tile (fp32): its first N, its longest default row and one past it (cluster_row);
  // cluster_row: its first N (16-bit), its longest default row and one past it (split).
  const std::int64_t m16 = (d.sm_count + kMaxClusterSize - 1) / kMaxClusterSize;
  const std::int64_t m8 = (d.sm_count + kClusterRowDefaultMax - 1) / kClusterRowDefaultMax;
  shapes.push_back(dense(200, block_max + 1, t));  // block_hybrid's first N
  // block_hybrid's longest row (a whole number of vectors), one past it, and the first N on one
  // row too few (a cluster family at a stride of whole vectors; at ld = N, block_row's tile and
  // its extra element a thread hold it).
  const std::int64_t hybrid_max = block_hybrid_max_n(t, d);
  shapes.push_back(dense(d.sm_count, hybrid_max, t));
  shapes.push_back(dense(d.sm_count, hybrid_max + 1, t));
  shapes.push_back(dense(d.sm_count - 1, block_max + 1, t));  // block_row's: an extra element
  Problem past_block = dense(d.sm_count - 1, block_max + 1, t);  // a stride of whole vectors
  past_block.ld_x = past_block.ld_y = block_max + kVectorBytes / dtype_bytes(t);
  shapes.push_back(past_block);
  if (const std::int64_t tile_max_n = cluster_tile_max_n(t); tile_max_n > 0) {
    shapes.push_back(dense(m16 * 4, tile_max_n, t));
    shapes.push_back(dense(m16 * 4, tile_max_n + 1, t));
  }
  const std::int64_t cluster_max_n = cluster_row_max_n(t);
  shapes.push_back(dense(m8, cluster_max_n, t));
  shapes.push_back(dense(m8, cluster_max_n + 1, t));
  // Rows per wave: 256 KB rows take a cluster of C only with M x C >= SMs.
  const std::int64_t n256k = 256 * 1024 / dtype_bytes(t);
  const std::int64_t C = plan_cluster(plan_softmax(dense(1024, n256k, t), d));
  const std::int64_t mC = (d.sm_count + C - 1) / C;
  shapes.push_back(dense(mC, n256k, t));
  shapes.push_back(dense(mC - 1, n256k, t));
  // split_row: the first row too long for the card's shared memory (two reads), few rows.
  shapes.push_back(dense(1, first_two_read_n(t, d), t));
  shapes.push_back(dense(3, 300007, t));
  return shapes;
}

// Every edge shape of dtype t the device has families for: the portable ones, and the sm_90
// families' where the device (or its profile) has them.
inline std::vector<Problem> edge_shapes(DType t, const DeviceLimits& d) {
  std::vector<Problem> shapes = portable_edge_shapes(t);
  if (family_available(SoftmaxFamily::split_row, d)) {
    const std::vector<Problem> hopper = hopper_edge_shapes(t, d);
    shapes.insert(shapes.end(), hopper.begin(), hopper.end());
  }
  return shapes;
}

// The families the dispatch picks for these shapes on d. A shape no family of d runs (block_row's
// last N on rows off 16-byte boundaries, before sm_90) counts for none.
inline std::set<SoftmaxFamily> families_hit(const std::vector<Problem>& shapes,
                                            const DeviceLimits& d) {
  std::set<SoftmaxFamily> hit;
  for (const Problem& p : shapes)
    if (!softmax_unsupported(p, d)) hit.insert(plan_softmax(p, d).family());
  return hit;
}

// The families the dispatch picks for dtype t on device d: cluster_tile is fp32's alone, and
// before sm_90 (or under such a profile) only warp_rows and block_row exist.
inline std::set<SoftmaxFamily> expected_families(DType t, const DeviceLimits& d) {
  std::set<SoftmaxFamily> all;
  for (const SoftmaxFamily f :
       {SoftmaxFamily::warp_rows, SoftmaxFamily::block_row, SoftmaxFamily::block_hybrid,
        SoftmaxFamily::cluster_tile, SoftmaxFamily::cluster_row, SoftmaxFamily::split_row}) {
    if (f == SoftmaxFamily::cluster_tile && t != DType::f32) continue;
    if (family_available(f, d)) all.insert(f);
  }
  return all;
}

// "warp_rows block_row ...": a set of families as Catch prints it when a check fails.
inline std::string family_names(const std::set<SoftmaxFamily>& families) {
  std::string out;
  for (const SoftmaxFamily f : families) {
    if (!out.empty()) out += ' ';
    out += to_string(f);
  }
  return out;
}

}  // namespace smr::test
