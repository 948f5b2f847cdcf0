// GPU tests of the production softmax ([gpu][softmax]): the registry entry `softmax` and each of
// its kernel families, in fp32, bf16 and fp16, against the fp64 reference on the fp32-upcast
// inputs (harness/storage.hpp's recipe), at the dispatch's boundaries (each family at its edge
// N - 1 / N / N + 1), with every candidate plan of a shape, with padded and misaligned strides,
// and launched twice for bit-identical results. test_lab_kernels.cpp runs `softmax` (fp32) on its
// shape list as well.
//
// A hidden case, "[.tune]", times every candidate plan of the default sweep's shapes and prints a
// table (docs/performance.md, "Production softmax", says how to run it on the H200).
//
// Every case: fresh seeded input (hostile rows in `mixed`), the output poisoned and fenced by
// guard bands, every element checked (against the CPU oracle, or on the device for shapes past
// 2^22 elements: harness/verify_gpu.hpp), the row padding and guards checked untouched, the
// input checked unmodified. Failures print the seed; SMR_TEST_SEED=<base> reruns the same inputs.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "gpu_check.hpp"
#include "harness/device.hpp"
#include "harness/storage.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "kernels/registry.hpp"
#include "kernels/softmax_dispatch.hpp"
#include "kernels/softmax_families.hpp"

namespace {

using namespace smr;

constexpr DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};

// Shapes larger than this are verified on the device (every row; harness/verify_gpu.hpp, whose
// agreement with the CPU oracle test_gpu_verify.cpp shows), smaller ones against the CPU oracle.
constexpr std::int64_t kHostCheckElements = std::int64_t{1} << 22;

// Runs and checks through gpu_check.hpp, in p.dtype's storage.
using smr::test::KernelRun;
using smr::test::run_launch;

std::string describe(const Problem& p, std::int64_t x_off, std::int64_t y_off, InputKind kind) {
  std::ostringstream s;
  s << "M = " << p.M << ", N = " << p.N << ", ld_x = " << p.ld_x << ", ld_y = " << p.ld_y << ", "
    << to_string(p.dtype) << ", x offset " << x_off << ", y offset " << y_off << ", input "
    << to_string(kind);
  return s.str();
}

DeviceLimits device_limits() {
  static const DeviceLimits d = query_device().limits();
  return d;
}

// One case on the input x (make_input's layout, already rounded to p.dtype's storage): run,
// every check. `plan` empty: the registry entry (the production path).
void check_input(const Problem& p, const std::vector<float>& x,
                 const std::optional<SoftmaxPlan>& plan, std::int64_t x_off, std::int64_t y_off) {
  const KernelInfo* k = find_kernel("softmax");
  REQUIRE(k != nullptr);
  const SoftmaxPlan shown = plan ? *plan : plan_softmax(p, device_limits());
  INFO("plan: " << summary(shown) << " -- " << shown.why);
  const bool on_device = p.elements() > kHostCheckElements;
  KernelRun r;
  if (plan) {
    r = run_launch(
        p, x, [&](const Launch& l) { launch_plan(*plan, l); }, split_workspace_bytes(p),
        {x_off, y_off}, on_device);
  } else {
    r = run_launch(p, x, k->launch, k->workspace_bytes(p), {x_off, y_off}, on_device);
  }
  CHECK(r.guard_error.value_or("none") == "none");
  CHECK(r.padding_error.value_or("none") == "none");
  CHECK(r.input_error.value_or("none") == "none");
  const VerifyResult v = on_device ? *r.device : verify_storage_output(p, x, r.y);
  INFO("max error " << v.max_rel_err << " (tolerance " << v.tolerance << "), " << v.detail);
  CHECK(v.passed);
}

// One case: seeded input of `kind`, run, every check.
void check_case(const Problem& p, InputKind kind, std::uint64_t seed,
                const std::optional<SoftmaxPlan>& plan = std::nullopt, std::int64_t x_off = 0,
                std::int64_t y_off = 0) {
  INFO(describe(p, x_off, y_off, kind) << ", seed " << seed);
  std::vector<float> x = make_input(p, seed, kind);
  round_to_storage(x, p.dtype);
  check_input(p, x, plan, x_off, y_off);
}

std::uint64_t next_seed() {
  static std::uint64_t n = 0;
  return test::case_seed(test::base_seed() ^ 0x50F7A11u, n++);
}

std::int64_t vec_elems(DType t) { return kVectorBytes / dtype_bytes(t); }

// The split_row input that just exceeds what the card's shared memory can hold in one row.
std::int64_t first_two_read_n(DType t, const DeviceLimits& d) {
  for (std::int64_t n = std::int64_t{1} << 20;; n += n / 8) {
    if (plan_softmax(dense(1, n, t), d).traffic == TrafficModel::two_read) return n;
  }
}

// An fp32 row read twice on 16-byte boundaries whose streamed part spans several rounds of the
// interleaved layout (split_row.cu, interleaved_part) and then a piece per slice: half again the
// first row too long for the card, a whole number of vectors plus one more.
std::int64_t interleaved_n(const DeviceLimits& d) {
  return first_two_read_n(DType::f32, d) * 3 / 2 / 4 * 4 + 4;
}

// The candidate of p with the streamed parts interleaved.
SoftmaxPlan interleaved_plan(const Problem& p, const DeviceLimits& d) {
  for (const SoftmaxPlan& s : candidate_plans(p, d))
    if (s.interleaved) return s;
  FAIL("no interleaved candidate for " << p.M << " x " << p.N);
  return {};
}

}  // namespace

TEST_CASE("production softmax: each family at the dispatch's edges, fp32 / bf16 / fp16",
          "[gpu][softmax]") {
  const DeviceLimits d = device_limits();
  for (const DType t : kDtypes) {
    std::set<SoftmaxFamily> hit;
    std::vector<Problem> shapes;
    // warp_rows: every tile edge (the capacities 8, 16, ... 1024) and its neighbours.
    for (const TileShape s : warp_rows_tiles(t)) {
      const std::int64_t cap = std::int64_t{s.threads_or_lanes} * s.vecs * vec_elems(t);
      for (const std::int64_t n : {cap - 1, cap, cap + 1}) shapes.push_back(dense(133, n, t));
    }
    shapes.push_back(dense(131, 1, t));
    // block_row: its first and last N, and the tile edges in between.
    const std::int64_t block_max = block_row_max_n(t);
    for (const std::int64_t n : {kWarpRowsMaxN + 1, std::int64_t{2047}, std::int64_t{2048},
                                 std::int64_t{2049}, std::int64_t{8193}, block_max - 1, block_max})
      shapes.push_back(dense(40, n, t));
    // cluster_tile (fp32): its first N, its longest default row and one past it (cluster_row);
    // cluster_row: its first N (16-bit), its longest default row and one past it (split).
    const std::int64_t m16 = (d.sm_count + kMaxClusterSize - 1) / kMaxClusterSize;
    const std::int64_t m8 = (d.sm_count + kClusterRowDefaultMax - 1) / kClusterRowDefaultMax;
    shapes.push_back(dense(200, block_max + 1, t));  // block_hybrid's first N
    // block_hybrid's longest row (a whole number of vectors), one past it, and the first N on one
    // row too few (a cluster family).
    const std::int64_t hybrid_max = block_hybrid_max_n(t, d);
    shapes.push_back(dense(d.sm_count, hybrid_max, t));
    shapes.push_back(dense(d.sm_count, hybrid_max + 1, t));
    shapes.push_back(dense(d.sm_count - 1, block_max + 1, t));
    if (const std::int64_t tile_max_n = cluster_tile_max_n(t); tile_max_n > 0) {
      shapes.push_back(dense(m16 * 4, tile_max_n, t));
      shapes.push_back(dense(m16 * 4, tile_max_n + 1, t));
    }
    const std::int64_t cluster_max_n = cluster_row_max_n(t);
    shapes.push_back(dense(m8, cluster_max_n, t));
    shapes.push_back(dense(m8, cluster_max_n + 1, t));
    // Rows per wave: 256 KB rows take a cluster of C only with M x C >= SMs.
    const std::int64_t n256k = 256 * 1024 / dtype_bytes(t);
    const std::int64_t C = plan_softmax(dense(1024, n256k, t), d).cluster;
    const std::int64_t mC = (d.sm_count + C - 1) / C;
    shapes.push_back(dense(mC, n256k, t));
    shapes.push_back(dense(mC - 1, n256k, t));
    // split_row: the first row too long for the card's shared memory (two reads), few rows.
    shapes.push_back(dense(1, first_two_read_n(t, d), t));
    shapes.push_back(dense(3, 300007, t));

    for (const Problem& p : shapes) {
      hit.insert(plan_softmax(p, d).family);
      check_case(p, p.M >= 8 ? InputKind::mixed : InputKind::outliers, next_seed());
    }
    INFO("dtype " << to_string(t));
    // Every family the dispatch picks for this dtype was exercised (cluster_tile: fp32 only).
    CHECK(hit.size() == (t == DType::f32 ? 6u : 5u));
  }
}

TEST_CASE("production softmax: every candidate plan of a shape is correct",
          "[gpu][softmax][exhaustive]") {
  const DeviceLimits d = device_limits();
  // 40 x 250000 and 40 x 250001 (rows padded to 16 bytes, a partial vector at each row's end):
  // split_row blocks with several slices in turn, each copied in while the one before is written.
  // dense(40, 250001): the same on rows off 16-byte boundaries (each next slice's edges copied by
  // the threads, its vectors by the copy engine).
  // ld = N odd (3001, 50257, 1000003, 2000003): every family on rows read through their 16-byte
  // windows (storage.cuh), the row's offset from a boundary changing from row to row.
  // 24001 x 128 and 60013 x 36: more rows than the persistent warp_rows grid takes in one trip
  // (up to 3 trips a warp, the last partly past M; 36 bf16 is 72-byte rows, read through
  // windows).
  const Problem shapes[] = {dense(133, 100),  dense(64, 1000),  dense(37, 3001),
                            dense(20, 20000), dense(9, 65544),  dense(40, 250000),
                            Problem{40, 250001, 250004, 250008, DType::f32}, dense(40, 250001),
                            dense(2, 2000003),
                            dense(67, 1021),  dense(9, 50257),  dense(3, 1000003),
                            dense(24001, 128), dense(60013, 36)};
  for (const DType t : {DType::f32, DType::bf16}) {
    // Two rows too long for the card's shared memory (each read twice, the part past the slices'
    // shared memory streamed), the second starting off a 16-byte boundary: every candidate plan
    // of rows read twice.
    const Problem twice = dense(2, first_two_read_n(t, d) + 4099, t);
    REQUIRE(plan_softmax(twice, d).traffic == TrafficModel::two_read);
    std::vector<Problem> all(std::begin(shapes), std::end(shapes));
    all.push_back(twice);
    // Rows read twice on 16-byte boundaries (fp32: the interleaved candidate among them), the
    // second with a partial vector at each row's end (ld padded to whole vectors).
    const std::int64_t ni = interleaved_n(d);
    all.push_back(dense(2, ni, t));
    all.push_back(Problem{2, ni - 3, ni, ni + 4, t});
    for (Problem p : all) {
      p.dtype = t;
      for (const SoftmaxPlan& plan : candidate_plans(p, d)) {
        if (!prod::cluster_placeable(plan, t)) continue;  // the entry never picks it on this device
        check_case(p, InputKind::mixed, next_seed(), plan);
      }
    }
  }
}

// Rows whose weight sits at the edges of the parts of the row a plan keeps in shared memory:
// the elements on either side of each boundary b (b - 1 and b: multiples of plan.slice and of
// plan.resident, where slices and their resident parts begin, and where a resident part ends in
// a row read twice; block_hybrid's plan.capacity past each slice's start, where its register
// tile ends, and the V before it; the row's first and last elements) are -5 + N(0, 1) / 4, every other
// element -14 + N(0, 1). A boundary element is then ~e^9 times any other: at N = 10^6 the other
// elements sum to ~200 of them, so a boundary element missing from the sum moves every output of
// the row by more than 1/(200 + boundaries), ~100 tolerances; a window position outside the
// slice counted as anything but -inf (0, or what shared memory held) wins the row's max and moves
// them all. (Where two boundaries coincide -- resident = slice for rows on chip -- an element is
// marked twice: -5 + (-5 + 14) / 4 ~ -2.75, heavier still.)
std::vector<float> slice_edge_input(const Problem& p, const SoftmaxPlan& plan, std::uint64_t seed) {
  std::vector<float> x = make_input(p, seed, InputKind::normal);
  // Boundaries b: elements [b - before, b] are marked.
  std::vector<std::pair<std::int64_t, std::int64_t>> edges{{0, 1}, {p.N, 1}};
  for (const std::int64_t step : {plan.slice, plan.resident})
    for (std::int64_t b = step; step > 0 && b < p.N; b += step) edges.emplace_back(b, 1);
  // A row read twice: where each slice's resident part ends and its streamed part begins.
  if (plan.slice > plan.resident && plan.resident > 0)
    for (std::int64_t b = plan.resident; b < p.N; b += plan.slice) edges.emplace_back(b, 1);
  // block_hybrid's shared-memory part starts up to V - 1 elements before the tile's capacity,
  // in each block's slice (one a row, or one per block of a cluster).
  if (plan.family == SoftmaxFamily::block_hybrid)
    for (std::int64_t b = 0; b < p.N; b += plan.slice)
      edges.emplace_back(b + plan.capacity, vec_elems(p.dtype));
  for (std::int64_t i = 0; i < p.M; ++i) {
    float* row = x.data() + i * p.ld_x;
    for (std::int64_t j = 0; j < p.N; ++j) row[j] -= 14.0f;
    for (const auto& [b, before] : edges)
      for (std::int64_t j = std::max<std::int64_t>(b - before, 0); j <= b && j < p.N; ++j)
        row[j] = -5.0f + (row[j] + 14.0f) / 4.0f;
  }
  round_to_storage(x, p.dtype);
  return x;
}

TEST_CASE("production softmax: the edges of slices off 16-byte boundaries carry the row",
          "[gpu][softmax][edges][exhaustive]") {
  // split_row, cluster_row and block_hybrid keep parts of a row in shared memory as 16-byte
  // windows (row_slice.cuh): a part starting off a boundary has a head edge and a tail edge
  // (partial vectors), copied by the threads element by element, not the copy engine. Each
  // candidate plan of these families on rows where those edges hold the row's weight
  // (slice_edge_input):
  // ld = N odd (each row's offset from a boundary its own), and x and y one element off every
  // boundary; fp32 and bf16; a row read twice (the resident parts' edges).
  const DeviceLimits d = device_limits();
  {
    // The input can fail a kernel: row 0 of an fp32 1000003 split_row plan's input with one
    // boundary element dropped (-inf), or with a 0 beside it (a pad counted as 0), has reference
    // outputs more than 10 tolerances from its own.
    const Problem p = dense(1, 1000003);
    const auto plans = candidate_plans(p, d);
    const auto split = std::find_if(plans.begin(), plans.end(), [](const SoftmaxPlan& s) {
      return s.family == SoftmaxFamily::split_row && s.slices > 1;
    });
    REQUIRE(split != plans.end());
    const std::vector<float> x = slice_edge_input(p, *split, next_seed());
    std::vector<double> ref(x.size()), other(x.size() + 1);
    reference_row(x.data(), p.N, ref.data());
    const auto moved = [&](const std::vector<float>& y) {  // output 1 (not a boundary) moved
      reference_row(y.data(), static_cast<std::int64_t>(y.size()), other.data());
      return std::abs(other[1] - ref[1]) / ref[1];
    };
    std::vector<float> dropped = x;
    dropped[static_cast<std::size_t>(split->slice)] = -std::numeric_limits<float>::infinity();
    CHECK(moved(dropped) > 10 * kDefaultTolerance);
    std::vector<float> padded = x;
    padded.push_back(0.0f);
    CHECK(moved(padded) > 10 * kDefaultTolerance);
  }
  for (const DType t : {DType::f32, DType::bf16}) {
    struct Shape {
      Problem p;
      std::int64_t off;
    };
    const Shape shapes[] = {{dense(9, 50257, t), 0},    {dense(40, 250001, t), 0},
                            {dense(3, 1000003, t), 0},  {dense(40, 250000, t), 1},
                            {dense(3, 1 << 20, t), 1},
                            {dense(2, first_two_read_n(t, d) + 4099, t), 0}};
    int plans = 0;
    for (const Shape& s : shapes) {
      for (const SoftmaxPlan& plan : candidate_plans(s.p, d)) {
        if (plan.family != SoftmaxFamily::split_row && plan.family != SoftmaxFamily::cluster_row &&
            plan.family != SoftmaxFamily::block_hybrid)
          continue;
        if (!prod::cluster_placeable(plan, t)) continue;
        ++plans;
        const std::uint64_t seed = next_seed();
        INFO(describe(s.p, s.off, s.off, InputKind::normal) << " (slice edges), seed " << seed);
        check_input(s.p, slice_edge_input(s.p, plan, seed), plan, s.off, s.off);
      }
    }
    CHECK(plans >= 12);
  }
}

TEST_CASE("production softmax: bf16 and fp16 on every kind of hostile row", "[gpu][softmax]") {
  constexpr InputKind kinds[] = {InputKind::normal,       InputKind::outliers,
                                 InputKind::large,        InputKind::all_equal,
                                 InputKind::some_neg_inf, InputKind::all_neg_inf,
                                 InputKind::has_nan,      InputKind::has_pos_inf};
  for (const DType t : {DType::bf16, DType::f16})
    for (const InputKind kind : kinds)
      for (const std::int64_t n : {std::int64_t{1000}, std::int64_t{5000}, std::int64_t{40000},
                                   std::int64_t{600000}})
        check_case(dense(3, n, t), kind, next_seed());
}

TEST_CASE("production softmax: fp32 rows read twice, streamed parts interleaved, on every kind "
          "of hostile row",
          "[gpu][softmax]") {
  const DeviceLimits d = device_limits();
  const std::int64_t ni = interleaved_n(d);
  for (const Problem& p : {dense(2, ni), Problem{2, ni - 1, ni + 4, ni + 8, DType::f32}}) {
    const SoftmaxPlan plan = interleaved_plan(p, d);
    for (const InputKind kind :
         {InputKind::large, InputKind::all_equal, InputKind::some_neg_inf, InputKind::all_neg_inf,
          InputKind::has_nan, InputKind::has_pos_inf})
      check_case(p, kind, next_seed(), plan);
  }
}

TEST_CASE("production softmax: split_row's ring of chunk slots on every kind of hostile row",
          "[gpu][softmax]") {
  // Rows on chip, each block taking several rows in turn, so that every slot of the ring is
  // reused: 7 x 2^20 fp32 on 4 rows at a time (7 slots, 2 slices a block), 2 rows (14 slots) and
  // one (16 slots: each block's 28 chunks around the ring almost twice); bf16 likewise. Then the
  // ring's plans on rows it does not take (one element off a 16-byte boundary: the one-slice
  // kernel runs them), and on a padded stride (ld a whole number of vectors more than N).
  // (40 x 250000 fp32, 20 rows at a time on 5 slots, is among the candidate plans' shapes.)
  const DeviceLimits d = device_limits();
  for (const DType t : {DType::f32, DType::bf16}) {
    const std::int64_t V = vec_elems(t);
    const Problem p = dense(7, 1 << 20, t);
    const Problem padded{9, 1 << 20, (1 << 20) + V, (1 << 20) + 2 * V, t};
    int rings = 0;
    for (const SoftmaxPlan& plan : candidate_plans(p, d)) {
      if (!plan.ring) continue;
      ++rings;
      INFO(summary(plan));
      for (const InputKind kind : {InputKind::large, InputKind::all_neg_inf, InputKind::has_nan})
        check_case(p, kind, next_seed(), plan);
      check_case(p, InputKind::mixed, next_seed(), plan, 1, 1);
      check_case(padded, InputKind::some_neg_inf, next_seed(), plan);
    }
    CHECK(rings == 3);
  }
}

TEST_CASE("production softmax: padded and misaligned strides, windows and the scalar path",
          "[gpu][softmax]") {
  for (const DType t : kDtypes) {
    const std::int64_t V = vec_elems(t);
    for (const std::int64_t n : {std::int64_t{33}, std::int64_t{1000}, std::int64_t{3001},
                                 std::int64_t{20000}, std::int64_t{70001}, std::int64_t{600000}}) {
      const std::int64_t m = std::clamp<std::int64_t>((std::int64_t{1} << 21) / n, 2, 150);
      // ld = N + 1: rows start off 16-byte boundaries, x's and y's alike (16-byte windows).
      check_case(Problem{m, n, n + 1, n + 1, t}, InputKind::mixed, next_seed());
      // x's and y's rows at different offsets (ld_y = N + 2): the tiles' scalar path, the
      // slices' windows with element-wise stores.
      check_case(Problem{m, n, n + 1, n + 2, t}, InputKind::mixed, next_seed());
      // 16-byte-multiple padding, aligned pointers: the vector path on padded rows.
      const std::int64_t ld = (n + V - 1) / V * V + V;
      check_case(Problem{m, n, ld, ld + V, t}, InputKind::mixed, next_seed());
      // Aligned strides but misaligned base pointers, x and y separately (the scalar path), and
      // both by one element (windows that line up, where the plan, made for aligned rows, has
      // room for them; the scalar path where it has not).
      check_case(Problem{m, n, ld, ld, t}, InputKind::mixed, next_seed(), std::nullopt, 1, 0);
      check_case(Problem{m, n, ld, ld, t}, InputKind::mixed, next_seed(), std::nullopt, 0, 1);
      check_case(Problem{m, n, ld, ld, t}, InputKind::mixed, next_seed(), std::nullopt, 1, 1);
    }
  }
}

TEST_CASE("production softmax: repeated launches give bit-identical outputs", "[gpu][softmax]") {
  // A missing barrier or a race on the cross-block partials shows as a result that moves.
  const DeviceLimits d = device_limits();
  const KernelInfo* k = find_kernel("softmax");
  REQUIRE(k != nullptr);
  // (M = 1, N = 2^26 fp32: the interleaved streamed parts, the dispatch's plan there; M = 3,
  // N = 2^22: the ring of chunk slots.)
  for (const Problem& p : {dense(5, 1 << 20), dense(200, 1 << 17), dense(2, first_two_read_n(DType::f32, d)),
                           dense(1, 1 << 26), dense(3, 1 << 22), dense(300, 5000, DType::bf16)}) {
    INFO(summary(plan_softmax(p, d)));
    std::vector<float> x = make_input(p, next_seed(), InputKind::normal);
    const KernelRun a = run_launch(p, x, k->launch, k->workspace_bytes(p));
    const KernelRun b = run_launch(p, x, k->launch, k->workspace_bytes(p));
    REQUIRE(a.y.size() == b.y.size());
    CHECK(std::memcmp(a.y.data(), b.y.data(), a.y.size() * sizeof(float)) == 0);
  }
}

// ---- Tuning: time every candidate plan (hidden; run with "[.tune]") ---------------------------

namespace {

// Every hidden case's input: 2^27 elements, the default sweep's M x N.
constexpr std::int64_t kTuneElements = std::int64_t{1} << 27;

struct TuneShape {
  std::int64_t M, N;
};

std::vector<TuneShape> tune_shapes() {
  std::vector<TuneShape> s;
  for (int k = 5; k <= 22; ++k) s.push_back({kTuneElements >> k, std::int64_t{1} << k});
  for (const std::int64_t n : {1000, 3000, 50257, 100000, 1000003})
    s.push_back({kTuneElements / n, n});
  s.push_back({1, std::int64_t{1} << 26});
  s.push_back({8, std::int64_t{1} << 24});
  return s;
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// The dtypes the hidden cases time: fp32 and bf16, or SMR_TUNE_DTYPES (e.g. "fp32" or "bf16,fp16").
std::vector<DType> tune_dtypes() {
  std::vector<DType> dtypes{DType::f32, DType::bf16};
  if (const char* e = std::getenv("SMR_TUNE_DTYPES")) {
    dtypes.clear();
    std::stringstream ss(e);
    for (std::string tok; std::getline(ss, tok, ',');)
      if (auto t = parse_dtype(tok)) dtypes.push_back(*t);
  }
  return dtypes;
}

// The row lengths the hidden cases take: all, or SMR_TUNE_N=LO-HI (e.g. "32768-262144"): only the
// shapes with LO <= N <= HI.
std::pair<std::int64_t, std::int64_t> tune_n_range() {
  std::int64_t n_lo = 1, n_hi = std::int64_t{1} << 40;
  if (const char* e = std::getenv("SMR_TUNE_N")) {
    long long lo = 0, hi = 0;
    if (std::sscanf(e, "%lld-%lld", &lo, &hi) != 2 || lo < 1 || hi < lo)
      FAIL("SMR_TUNE_N=" << e << ": expected LO-HI, two positive integers with LO <= HI");
    n_lo = lo;
    n_hi = hi;
  }
  return {n_lo, n_hi};
}

// The tuning case's row padding: 0, or SMR_TUNE_LD_PAD=k: each shape's rows k elements apart more
// than N (ld = N + k, x and y alike), so that the same rows can be timed at other offsets from
// 16- and 32-byte boundaries (docs/performance.md, session 17).
std::int64_t tune_ld_pad() {
  const char* e = std::getenv("SMR_TUNE_LD_PAD");
  if (e == nullptr) return 0;
  char* end = nullptr;
  const long long k = std::strtoll(e, &end, 10);
  if (end == e || *end != '\0' || k < 0 || k > 1024)
    FAIL("SMR_TUNE_LD_PAD=" << e << ": expected an integer from 0 to 1024");
  return k;
}

// The hidden cases' input, 2^27 elements shared by every shape (each a dense view of it): N(0, 1)
// rows, or SMR_TUNE_INPUT=mixed: the sweep's cycle of row kinds (verify.hpp's InputKind::mixed,
// hostile rows among them) over rows of 1024 elements, so that a shape's rows take the kinds in
// runs of 1024 / N (N <= 1024) or several a row (docs/performance.md, session 24: whether the
// sweep's input moves a plan's time). Prints which.
std::vector<float> tune_input() {
  InputKind kind = InputKind::normal;
  if (const char* e = std::getenv("SMR_TUNE_INPUT")) {
    if (to_string(InputKind::mixed) == e) kind = InputKind::mixed;
    else if (to_string(InputKind::normal) != e)
      FAIL("SMR_TUNE_INPUT=" << e << ": expected normal or mixed");
  }
  std::printf("input: %s, in rows of 1024 elements (SMR_TUNE_INPUT=normal|mixed)\n",
              std::string(to_string(kind)).c_str());
  return make_input(dense(kTuneElements >> 10, 1 << 10), test::base_seed(), kind);
}

// The hidden cases' view of an M x N shape at SMR_TUNE_LD_PAD's stride (ld = N + pad, x and y
// alike) inside the 2^27-element input; nothing, with a line saying so, where it does not fit.
std::optional<Problem> padded_view(std::int64_t M, std::int64_t N, DType t, std::int64_t pad) {
  Problem p = dense(M, N, t);
  p.ld_x = p.ld_y = N + pad;
  if (p.M * p.ld_x <= kTuneElements) return p;
  std::printf("%-6s %9lld %9lld  skipped: ld = %lld does not fit the 2^27-element input\n",
              std::string(to_string(t)).c_str(), static_cast<long long>(M),
              static_cast<long long>(N), static_cast<long long>(p.ld_x));
  return std::nullopt;
}

// The hidden cases' input on the device in one dtype: x rounded to its storage (the reference's
// input), dx the stored copy, dy as large for the output.
struct DeviceInput {
  std::vector<float> x;
  DeviceBuffer dx, dy;
};
DeviceInput upload(const std::vector<float>& x0, DType t) {
  std::vector<float> x = x0;
  round_to_storage(x, t);
  const std::vector<unsigned char> xs = to_storage(x, t);
  DeviceInput in{std::move(x), DeviceBuffer(xs.size()), DeviceBuffer(xs.size())};
  CUDA_CHECK(cudaMemcpy(in.dx.get(), xs.data(), xs.size(), cudaMemcpyHostToDevice));
  return in;
}

// A launch of p (a dense view of the input) on the stream, with the workspace.
Launch device_launch(const Problem& p, const DeviceInput& in, const DeviceBuffer& ws,
                     const CudaStream& stream) {
  Launch l;
  l.x = in.dx.get();
  l.y = in.dy.get();
  l.p = p;
  l.workspace = ws.get();
  l.stream = stream.get();
  return l;
}

// The output in dy (p's layout, p.dtype's storage) verified against x on 4 seeded rows.
VerifyResult verify_sampled_rows(const Problem& p, const std::vector<float>& x,
                                 const DeviceBuffer& dy) {
  const auto b = static_cast<std::size_t>(dtype_bytes(p.dtype));
  const std::vector<std::int64_t> rows = sample_rows(p.M, 4, test::base_seed());
  std::vector<float> y(static_cast<std::size_t>(p.M * p.ld_y), poison_value());
  std::vector<unsigned char> row_bytes(static_cast<std::size_t>(p.N) * b);
  for (const std::int64_t r : rows) {
    CUDA_CHECK(cudaMemcpy(row_bytes.data(), dy.as<unsigned char>() + r * p.ld_y * b,
                          row_bytes.size(), cudaMemcpyDeviceToHost));
    const std::vector<float> yr = from_storage(row_bytes, p.dtype);
    std::copy(yr.begin(), yr.end(), y.begin() + r * p.ld_y);
  }
  return verify_storage_output(p, x, y, rows);
}

}  // namespace

TEST_CASE("production softmax: time every candidate plan of the default sweep's shapes",
          "[.tune][gpu][softmax]") {
  const DeviceLimits d = device_limits();
  constexpr int kWarmup = 3, kSamples = 15;
  const std::vector<DType> dtypes = tune_dtypes();
  const auto [n_lo, n_hi] = tune_n_range();
  const std::int64_t pad = tune_ld_pad();
  nlohmann::json out = nlohmann::json::array();
  const char* const json_path = std::getenv("SMR_TUNE_JSON");  // rewritten after every plan
  L2Flusher flusher(static_cast<std::int64_t>(d.l2_bytes));
  CudaStream stream;

  const std::vector<float> x = tune_input();
  for (const DType t : dtypes) {
    const DeviceInput in = upload(x, t);
    const std::vector<float>& xt = in.x;
    std::printf("\n%-6s %9s %9s  %-78s %10s %9s %6s\n", "dtype", "M", "N", "plan", "median_us",
                "GB/s", "vs_def");
    for (const TuneShape& s : tune_shapes()) {
      if (s.N < n_lo || s.N > n_hi) continue;
      const std::optional<Problem> view = padded_view(s.M, s.N, t, pad);
      if (!view) continue;
      const Problem& p = *view;
      DeviceBuffer dws(split_workspace_bytes(p));
      double default_us = 0;
      const std::vector<SoftmaxPlan> plans = candidate_plans(p, d);
      for (std::size_t pi = 0; pi < plans.size(); ++pi) {
        const SoftmaxPlan& plan = plans[pi];
        if (!prod::cluster_placeable(plan, t)) continue;
        nlohmann::json rec = {{"dtype", to_string(t)}, {"M", p.M}, {"N", p.N}, {"ld", p.ld_x},
                              {"plan", summary(plan)}, {"default", pi == 0}, {"why", plan.why}};
        const auto row = [&](const std::string& cells) {
          std::printf("%-6s %9lld %9lld  %-78s %s\n", std::string(to_string(t)).c_str(),
                      static_cast<long long>(p.M), static_cast<long long>(p.N),
                      summary(plan).c_str(), cells.c_str());
          std::fflush(stdout);
        };
        // A plan that cannot be launched or timed is reported and the table goes on: one bad
        // candidate must not cost the others' times (nor the JSON, written after every plan).
        try {
          Launch l = device_launch(p, in, dws, stream);
          for (int i = 0; i < kWarmup; ++i) launch_plan(plan, l);
          // The sweep's sample (harness/timing.hpp): flush, the GPU held while the launch is
          // enqueued, then the events around the launch alone -- so that the host's work in a
          // launch (a plan's checks, a cudaMemsetAsync) is not timed here either.
          SampleTimer timer([&](int, cudaStream_t st) { l.stream = st; launch_plan(plan, l); },
                            BatchPlan{}, &flusher, stream.get());
          std::vector<double> us;
          for (int i = 0; i < kSamples; ++i) us.push_back(timer.sample() * 1e6);
          const double med = median(us);
          // Verify a sample of rows of this plan's output; no time is reported for a plan whose
          // output failed.
          const VerifyResult v = verify_sampled_rows(p, xt, in.dy);
          CHECK(v.passed);
          rec["verified"] = v.passed;
          if (!v.passed) {
            row("VERIFY FAILED (" + v.detail + ")");
          } else {
            if (pi == 0) default_us = med;
            const double gbps = p.min_bytes() / (med * 1e-6) / 1e9;
            // Clusters the device holds at once (cudaOccupancyMaxActiveClusters): with the
            // plan's cluster size, how many of the card's SMs a wave of clusters can keep busy
            // (-1: a plan without clusters, printed as nothing).
            const int clusters = prod::active_clusters(plan, t);
            const std::string placed =
                clusters > 0 ? " clusters=" + std::to_string(clusters) : std::string{};
            char ratio[16] = "     -";  // the default's time missing (its plan failed)
            if (default_us > 0) std::snprintf(ratio, sizeof ratio, "%6.3f", default_us / med);
            char cells[96];
            std::snprintf(cells, sizeof cells, "%10.1f %9.0f %s%s", med, gbps, ratio,
                          placed.c_str());
            row(cells);
            rec["median_us"] = med;
            rec["min_us"] = *std::min_element(us.begin(), us.end());
            rec["effective_GBps"] = gbps;
            rec["active_clusters"] = std::max(clusters, 0);
          }
        } catch (const std::exception& e) {
          (void)cudaGetLastError();  // a launch's error, not the next plan's
          row(std::string("LAUNCH FAILED: ") + e.what());
          rec["error"] = e.what();
          FAIL_CHECK(summary(plan) << ": " << e.what());
        }
        out.push_back(rec);
        if (json_path != nullptr) {
          std::ofstream f(json_path);
          f << out.dump(1) << "\n";
        }
      }
    }
  }
}

// ---- Tracing: where a split_row trip spends its time (hidden; run with "[.trace]") -----------

namespace {

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

// For the split_row shapes of the default sweep, N = 1000003 and the rows too long for the card
// (M = 1, N = 2^26; M = 8, N = 2^24), fp32 and bf16 (SMR_TUNE_DTYPES chooses; SMR_TUNE_N
// narrows the shapes, SMR_TUNE_LD_PAD pads the rows and SMR_TUNE_INPUT picks the input as for
// the tuning case), the default plan
// and the other split_row forms on one block per SM with the rows on chip (one slice per block,
// the pipelined exchange's two or three, the ring of chunk slots), and for rows read twice the
// default's twin with its streamed parts laid out the other way (interleaved or not, fp32): one
// launch, L2 flushed before it, with thread 0 of every block stamping the SM clock at four points
// of every loop trip (trace_split_row; the stamp buffer zeroed first, and every stamp checked to
// be set). Printed per plan, over all trips: the median and 90th percentile of each phase --
// statistics (the slice's copy waited for and its statistics taken; pipelined: the next slice's),
// exchange (the row's partials waited for and merged), write (the slice written and the next
// one's copies issued) -- in microseconds at the device's clock rate, and each phase's share of
// the summed trips; beside them the launch's time and the clock its busiest block's stamps imply
// (span / time). A second line lays the blocks on the global timer: the span from the first
// block's entry to the last one's exit against the launch's time, and per block the time before
// its first trip, in its trips and after its last, with the mean of each phase. A third compares
// how far apart a row's blocks end each trip with how far apart a whole wave's do (the row's
// coupling). The traced launch's output is verified on sampled rows.
TEST_CASE("production softmax: where split_row's loop trips spend their time",
          "[.trace][gpu][softmax]") {
  const DeviceLimits d = device_limits();
  int clock_khz = 0, device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
  REQUIRE(clock_khz > 0);
  const double cycles_per_us = clock_khz / 1000.0;
  const std::vector<DType> dtypes = tune_dtypes();
  const auto [n_lo, n_hi] = tune_n_range();
  const std::int64_t pad = tune_ld_pad();
  // (M, N): the default sweep's split_row shapes and N = 1000003 at M x N = 2^27, then the rows
  // too long for the card (read twice: one trip per block at M = 1).
  std::vector<std::pair<std::int64_t, std::int64_t>> shapes;
  for (int k = 18; k <= 22; ++k) shapes.emplace_back(kTuneElements >> k, std::int64_t{1} << k);
  shapes.emplace_back(kTuneElements / 1000003, 1000003);
  shapes.emplace_back(1, std::int64_t{1} << 26);
  shapes.emplace_back(8, std::int64_t{1} << 24);
  const std::vector<float> x0 = tune_input();
  L2Flusher flusher(static_cast<std::int64_t>(d.l2_bytes));
  CudaStream stream;
  std::printf("\nclock %.0f MHz (cudaDevAttrClockRate); phases in us per trip: median / p90 (share "
              "of all trips' time)\n",
              cycles_per_us);
  std::printf("%-5s %8s %8s  %-66s %6s %20s %20s %20s %9s %8s\n", "dtype", "M", "N", "plan",
              "trips", "statistics", "exchange", "write", "launch_us", "span_MHz");
  for (const DType t : dtypes) {
    const DeviceInput in = upload(x0, t);
    const std::vector<float>& x = in.x;
    for (const auto& [m, n] : shapes) {
      if (n < n_lo || n > n_hi) continue;
      const std::optional<Problem> view = padded_view(m, n, t, pad);
      if (!view) continue;
      const Problem& p = *view;
      const SoftmaxPlan def = plan_softmax(p, d);
      if (def.family != SoftmaxFamily::split_row) continue;
      // The default, then each other form on one block per SM with the rows on chip: one slice
      // per block, two or three (the pipelined exchange), these with and without the L2
      // prefetch, and with it also with the early re-poll of unpublished partials.
      std::vector<SoftmaxPlan> plans{def};
      for (const SoftmaxPlan& s : family_plans(SoftmaxFamily::split_row, p, d)) {
        const bool new_form = std::none_of(plans.begin(), plans.end(), [&](const SoftmaxPlan& q) {
          return q.buffers == s.buffers && q.ring == s.ring &&
                 (s.buffers == 1 ||
                  (q.prefetch == s.prefetch && q.repoll == s.repoll));
        });
        if (s.grid <= d.sm_count && s.resident == s.slice && new_form) plans.push_back(s);
        // Rows read twice: the default's twin with the streamed parts laid out the other way
        // (interleaved or not).
        if (def.resident < def.slice && s.interleaved != def.interleaved &&
            s.slices == def.slices && s.prefetch == def.prefetch &&
            s.tagged_partials == def.tagged_partials)
          plans.push_back(s);
      }
      DeviceBuffer dws(split_workspace_bytes(p));
      for (const SoftmaxPlan& plan : plans) {
        const std::int64_t items = p.M * plan.slices;
        const std::int64_t words = prod::split_trace_words(items, plan.grid);
        DeviceBuffer dtrace(static_cast<std::size_t>(words) * 8);
        Launch l = device_launch(p, in, dws, stream);
        // Warm-up, traced too: the first trace launch's one-time set-up (the shared memory
        // limits of the trace instantiations) stays out of the timed one.
        prod::trace_split_row(plan, l, dtrace.as<std::uint64_t>());
        // Zeroed, so that a stamp the timed launch missed reads 0, not the warm-up's.
        CUDA_CHECK(cudaMemsetAsync(dtrace.get(), 0, dtrace.bytes(), stream.get()));
        flusher.flush(stream.get());
        CudaEvent start, stop;
        CUDA_CHECK(cudaEventRecord(start.get(), stream.get()));
        prod::trace_split_row(plan, l, dtrace.as<std::uint64_t>());
        CUDA_CHECK(cudaEventRecord(stop.get(), stream.get()));
        CUDA_CHECK(cudaStreamSynchronize(stream.get()));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get()));
        std::vector<std::uint64_t> stamps(static_cast<std::size_t>(words));
        CUDA_CHECK(cudaMemcpy(stamps.data(), dtrace.get(), stamps.size() * 8,
                              cudaMemcpyDeviceToHost));
        // Every trip stamped every point, every block that had an item its entry and exit.
        const std::int64_t blocks = std::min<std::int64_t>(plan.grid, items);
        CHECK(std::count(stamps.begin(),
                         stamps.begin() + items * prod::kSplitTracePoints +
                             blocks * prod::kSplitBlockTracePoints,
                         std::uint64_t{0}) == 0);
        std::vector<double> phase[3];
        double total[3] = {0, 0, 0};
        for (std::int64_t i = 0; i < items; ++i) {
          const std::uint64_t* s = stamps.data() + i * prod::kSplitTracePoints;
          for (int k = 0; k < 3; ++k) {
            REQUIRE(s[k + 1] >= s[k]);  // one block's clock: each stamp after the one before
            const double us = static_cast<double>(s[k + 1] - s[k]) / cycles_per_us;
            phase[k].push_back(us);
            total[k] += us;
          }
        }
        const double all = total[0] + total[1] + total[2];
        const auto at = [&](std::int64_t item, int point) {
          return stamps[static_cast<std::size_t>(item * prod::kSplitTracePoints + point)];
        };
        // The blocks on one time line (the global timer): the launch's time outside the blocks,
        // and per block its time before the first trip, in its trips and after the last (each
        // block's SM clock converted at the rate its own entry and exit stamps give).
        const auto block_at = [&](std::int64_t blk, int k) {
          return stamps[static_cast<std::size_t>(items * prod::kSplitTracePoints +
                                                 blk * prod::kSplitBlockTracePoints + k)];
        };
        std::uint64_t first_entry = UINT64_MAX, last_entry = 0, first_exit = UINT64_MAX,
                      last_exit = 0;
        std::vector<double> before, trips, after, mhz;
        // The clock the stamps ran at, as far as the launch shows it: the busiest block's span
        // (its first trip's start to its last trip's end, in cycles) over the launch's time.
        std::uint64_t span = 0;
        // Each item's trip end on the global timer (ns), for the coupling line below.
        std::vector<double> end_ns(static_cast<std::size_t>(items));
        for (std::int64_t blk = 0; blk < blocks; ++blk) {
          const std::uint64_t ns0 = block_at(blk, 0), clk0 = block_at(blk, 1);
          const std::uint64_t ns1 = block_at(blk, 2), clk1 = block_at(blk, 3);
          REQUIRE(ns1 > ns0);
          REQUIRE(clk1 > clk0);
          first_entry = std::min(first_entry, ns0);
          last_entry = std::max(last_entry, ns0);
          first_exit = std::min(first_exit, ns1);
          last_exit = std::max(last_exit, ns1);
          const double cycles_per_ns =
              static_cast<double>(clk1 - clk0) / static_cast<double>(ns1 - ns0);
          const std::int64_t last = blk + (items - 1 - blk) / plan.grid * plan.grid;
          REQUIRE(at(blk, 0) >= clk0);
          REQUIRE(clk1 >= at(last, 3));
          span = std::max(span, at(last, 3) - at(blk, 0));
          const auto us = [&](std::uint64_t cycles) {
            return static_cast<double>(cycles) / cycles_per_ns / 1000.0;
          };
          before.push_back(us(at(blk, 0) - clk0));
          trips.push_back(us(at(last, 3) - at(blk, 0)));
          after.push_back(us(clk1 - at(last, 3)));
          mhz.push_back(cycles_per_ns * 1000.0);
          for (std::int64_t i = blk; i < items; i += plan.grid)
            end_ns[static_cast<std::size_t>(i)] =
                static_cast<double>(ns0) + static_cast<double>(at(i, 3) - clk0) / cycles_per_ns;
        }
        char cell[3][32];
        for (int k = 0; k < 3; ++k)
          std::snprintf(cell[k], sizeof cell[k], "%.2f / %.2f (%2.0f%%)", percentile(phase[k], 0.5),
                        percentile(phase[k], 0.9), 100.0 * total[k] / all);
        std::printf("%-5s %8lld %8lld  %-66s %6lld %20s %20s %20s %9.1f %8.0f\n",
                    std::string(to_string(t)).c_str(), static_cast<long long>(p.M),
                    static_cast<long long>(p.N), summary(plan).c_str(),
                    static_cast<long long>(items / plan.grid), cell[0], cell[1], cell[2],
                    ms * 1000.0, static_cast<double>(span) / (ms * 1000.0));
        const auto ns_us = [](std::uint64_t span_ns) {
          return static_cast<double>(span_ns) / 1000.0;
        };
        const double n_items = static_cast<double>(items);
        const auto max_of = [](const std::vector<double>& v) {
          return *std::max_element(v.begin(), v.end());
        };
        std::printf("      blocks: span %.1f us of the launch's %.1f (entries within %.1f us, exits "
                    "within %.1f); per block, median / max: before the first trip %.2f / %.2f us, "
                    "trips %.1f / %.1f us, after the last %.2f / %.2f us; SM clock %.0f MHz; "
                    "phase means %.2f / %.2f / %.2f us\n",
                    ns_us(last_exit - first_entry), ms * 1000.0, ns_us(last_entry - first_entry),
                    ns_us(last_exit - first_exit),
                    percentile(before, 0.5), max_of(before), percentile(trips, 0.5),
                    max_of(trips), percentile(after, 0.5), max_of(after), percentile(mhz, 0.5),
                    total[0] / n_items, total[1] / n_items, total[2] / n_items);
        {
          // The row's coupling: how far apart a row's S blocks end their trip over its item
          // (items row x S ... row x S + S - 1), against how far apart all the blocks end the
          // same trip (a wave: items w x grid ... , the R rows in flight), each over every row
          // or wave; beside them a trip's time. A row's spread well under its wave's says the
          // row's blocks trip in step (their DRAM reads and writes idle together); as wide as
          // the wave's, that they do not.
          const auto spread_us = [&](std::int64_t first, std::int64_t last) {
            const auto [lo, hi] =
                std::minmax_element(end_ns.begin() + first, end_ns.begin() + last);
            return (*hi - *lo) / 1000.0;
          };
          std::vector<double> row_spread, wave_spread, trip_us;
          for (std::int64_t r = 0; r < p.M; ++r)
            row_spread.push_back(spread_us(r * plan.slices, (r + 1) * plan.slices));
          for (std::int64_t w = 0; w * plan.grid < items; ++w)
            wave_spread.push_back(spread_us(w * plan.grid, std::min(items, (w + 1) * plan.grid)));
          for (std::size_t i = 0; i < phase[0].size(); ++i)
            trip_us.push_back(phase[0][i] + phase[1][i] + phase[2][i]);
          std::printf("      coupling: a row's %lld blocks end its trip within %.2f / %.2f us "
                      "(median / p90 over %lld rows), a wave's %lld blocks within %.2f / %.2f us "
                      "(over %zu waves); a trip %.2f us (median)\n",
                      static_cast<long long>(plan.slices), percentile(row_spread, 0.5),
                      percentile(row_spread, 0.9), static_cast<long long>(p.M),
                      static_cast<long long>(std::min(plan.grid, items)),
                      percentile(wave_spread, 0.5), percentile(wave_spread, 0.9),
                      wave_spread.size(), percentile(trip_us, 0.5));
        }
        if (plan.buffers > 1) {
          // The partials as the trips found them (the pipelined kernel's counters).
          std::int64_t early = 0, late = 0, early_threads = 0, late_threads = 0;
          const std::size_t base = static_cast<std::size_t>(items * prod::kSplitTracePoints +
                                                            plan.grid * prod::kSplitBlockTracePoints);
          for (std::int64_t i = 0; i < items; ++i) {
            const std::uint64_t at_load = stamps[base + static_cast<std::size_t>(i) * 2];
            const std::uint64_t at_need = stamps[base + static_cast<std::size_t>(i) * 2 + 1];
            REQUIRE(at_load <= static_cast<std::uint64_t>(plan.slices));
            REQUIRE(at_need <= static_cast<std::uint64_t>(plan.slices));
            early += at_load > 0;
            late += at_need > 0;
            early_threads += static_cast<std::int64_t>(at_load);
            late_threads += static_cast<std::int64_t>(at_need);
          }
          std::printf("      partials: unpublished at the trip's first load in %.1f%% of trips "
                      "(%.2f slots a trip), still when needed in %.1f%% (%.2f slots a trip)\n",
                      100.0 * static_cast<double>(early) / n_items,
                      static_cast<double>(early_threads) / n_items,
                      100.0 * static_cast<double>(late) / n_items,
                      static_cast<double>(late_threads) / n_items);
        }
        std::fflush(stdout);
        // The traced launch computed softmax like any other.
        CHECK(verify_sampled_rows(p, x, in.dy).passed);
      }
    }
  }
}
