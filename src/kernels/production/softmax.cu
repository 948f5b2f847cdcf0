// softmax: the production entry. It runs no kernel of its own: for each launch it asks the
// dispatch (softmax_dispatch.hpp, a pure host function of the shape, the dtype and the device's
// limits) for a plan and enqueues the family that plan names:
//
//   N <= 1024                  warp_rows.cu    a few lanes of a warp per row, rows in registers
//   N <= 32768                 block_row.cu    a block per row, the row in registers
//   N <= ~90K fp32, M >= SMs   block_hybrid.cu a block per row, 16384 or 32768 elements in
//                                              registers, the rest in shared memory; or a
//                                              cluster of such blocks per row, a slice each
//                                              (16-bit rows to ~1.06M, fp32 100000 and 2^18)
//   N <= 8 x 16384 fp32,       cluster_tile.cu a cluster of blocks per row, each slice in
//   M x C >= SMs                               registers, partials exchanged on chip
//   rows up to 16 x 112 KB,    cluster_row.cu  a cluster of up to 16 blocks per row, the row in
//   M x C >= SMs                               their shared memory, partials exchanged on chip
//   longer rows or fewer rows  split_row.cu    a row over many blocks of a co-resident grid,
//                                              partials through global memory, slices kept in
//                                              shared memory as long as the card can hold them
//
// Every family reads x once and writes y once (8 bytes per fp32 element, 4 per bf16/fp16), except
// split_row on rows longer than the card's shared memory can hold, which reads the part that does
// not fit twice (TrafficModel::two_read); traffic_for() tells the model which applies.
//
// Storage fp32, bf16 or fp16 (p.dtype), arithmetic fp32. Any row strides: 16-byte accesses from
// the 16-byte boundary at or below each row's start (its window, storage.cuh) wherever x's and
// y's rows are equally far past a boundary, one-element accesses elsewhere (same kernels).
#include <map>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>

#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/production/softmax_dispatch.hpp"
#include "kernels/production/softmax_families.hpp"

namespace smr {

namespace {

// What the dispatch needs to know about the current device, read once per device.
DeviceLimits current_limits() {
  static std::mutex mu;
  static std::map<int, DeviceLimits> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mu);
  if (auto it = cache.find(device); it != cache.end()) return it->second;
  const DeviceLimits d = read_device_limits(device);
  cache.emplace(device, d);
  return d;
}

// The plan for p on the current device: plan_softmax, with the cluster size lowered while the
// device cannot place a cluster that large (cudaOccupancyMaxActiveClusters says 0). Cached per
// (device, shape): the launch path costs a map lookup, not a plan.
SoftmaxPlan plan_on_device(const Problem& p) {
  using Key = std::tuple<int, std::int64_t, std::int64_t, std::int64_t, std::int64_t, int>;
  static std::mutex mu;
  static std::map<Key, SoftmaxPlan> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const Key key{device, p.M, p.N, p.ld_x, p.ld_y, static_cast<int>(p.dtype)};
  {
    const std::lock_guard<std::mutex> lock(mu);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  const DeviceLimits limits = current_limits();
  SoftmaxPlan plan = plan_softmax(p, limits, limits.max_cluster);
  while (!prod::cluster_placeable(plan, p.dtype)) {
    plan = plan_softmax(p, limits, plan_cluster(plan) / 2);
    plan.why += " (the device could not place a larger cluster)";
  }
  const std::lock_guard<std::mutex> lock(mu);
  cache.emplace(key, plan);
  return plan;
}

}  // namespace

void launch_plan(const SoftmaxPlan& plan, const Launch& l) {
  const PlanForm& form = plan.form;
  switch (plan.family()) {
    case SoftmaxFamily::warp_rows: prod::launch_warp_rows(std::get<WarpRowsPlan>(form), l); return;
    case SoftmaxFamily::block_row: prod::launch_block_row(std::get<BlockRowPlan>(form), l); return;
    case SoftmaxFamily::block_hybrid:
      prod::launch_block_hybrid(std::get<BlockHybridPlan>(form), l);
      return;
    case SoftmaxFamily::cluster_row:
      prod::launch_cluster_row(std::get<ClusterRowPlan>(form), l);
      return;
    case SoftmaxFamily::cluster_tile:
      prod::launch_cluster_tile(std::get<ClusterTilePlan>(form), l);
      return;
    case SoftmaxFamily::split_row: prod::launch_split_row(std::get<SplitRowPlan>(form), l); return;
  }
  throw std::invalid_argument("launch_plan: unknown kernel family");
}

int prod::active_clusters(const SoftmaxPlan& plan, DType t) {
  const PlanForm& form = plan.form;
  if (const auto* c = std::get_if<ClusterRowPlan>(&form)) return cluster_row_active_clusters(*c, t);
  if (const auto* c = std::get_if<ClusterTilePlan>(&form))
    return cluster_tile_active_clusters(*c, t);
  if (const auto* c = std::get_if<BlockHybridPlan>(&form); c && c->cluster > 1)
    return block_hybrid_active_clusters(*c, t);
  return -1;
}

int prod::max_active_clusters(const void* kernel, int threads, std::size_t smem, int cluster) {
  cudaLaunchAttribute attr[1];  // one cluster's worth of blocks
  const cudaLaunchConfig_t cfg =
      cluster_launch_config(cluster, threads, smem, cluster, nullptr, attr);
  int clusters = 0;
  if (cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  return clusters;
}

bool prod::cluster_placeable(const SoftmaxPlan& plan, DType t) {
  return plan_cluster(plan) <= 1 || active_clusters(plan, t) != 0;
}

std::int64_t prod::resident_blocks(const void* kernel, int threads, std::size_t smem) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
  return static_cast<std::int64_t>(sms) * per_sm;
}

namespace entries {

KernelInfo softmax() {
  KernelInfo k;
  k.name = "softmax";
  k.description =
      "production: warp_rows / block_row / block_hybrid / cluster_tile / cluster_row / split_row "
      "picked per shape and dtype "
      "(softmax_dispatch.hpp), 16-byte accesses, x read once while the row fits on chip";
  k.role = Role::production;
  k.traffic = TrafficModel::fused;  // for most shapes; traffic_for() says which
  k.dtypes = {DType::f32, DType::bf16, DType::f16};
  k.unsupported = [](const Problem& p, const DeviceLimits& d) -> std::optional<std::string> {
    if (auto bad = invalid_problem(p)) return bad;
    // Rows longer than block_row's tile on a card without sm_90 (softmax_dispatch.hpp).
    if (auto why = softmax_unsupported(p, d)) return why;
    // The plan's grid within the 2^31 - 1 blocks a 1-D grid allows (one block, or a cluster,
    // a row for the row families; the launchers check the same).
    const SoftmaxPlan plan = plan_softmax(p, d);
    if (const std::int64_t blocks = plan_grid(plan); blocks > 0x7fffffff)
      return "M = " + std::to_string(p.M) + " needs a grid of " + std::to_string(blocks) +
             " blocks (" + summary(plan) + "), over the 2^31 - 1 a grid allows";
    return std::nullopt;
  };
  k.workspace_bytes = [](const Problem& p) { return split_workspace_bytes(p); };
  k.launch = [](const Launch& l) { launch_plan(plan_on_device(l.p), l); };
  // (A shape the device cannot run has no plan: the entry's unsupported() says why.)
  k.rows_in_flight = [](const Problem& p, const DeviceLimits& d) -> std::int64_t {
    if (softmax_unsupported(p, d)) return d.sm_count;
    const SoftmaxPlan plan = plan_softmax(p, d);
    return plan.rows_in_flight > 0 ? plan.rows_in_flight : d.sm_count;
  };
  k.traffic_for = [](const Problem& p, const DeviceLimits& d) {
    return softmax_unsupported(p, d) ? TrafficModel::fused : plan_softmax(p, d).traffic;
  };
  k.plan_for = [](const Problem& p, const DeviceLimits& d) {
    if (std::optional<std::string> why = softmax_unsupported(p, d)) return *why;
    return plan_softmax(p, d).why;
  };
  return k;
}

}  // namespace entries

}  // namespace smr
