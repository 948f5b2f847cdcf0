// GPU tests of the production softmax ([gpu][softmax]): the registry entry `softmax` and each of
// its kernel families, in fp32, bf16 and fp16, against the fp64 reference on the fp32-upcast
// inputs (harness/storage.hpp's recipe), at the dispatch's boundaries (each family at its edge
// N - 1 / N / N + 1), with every candidate plan of a shape, with padded and misaligned strides,
// and launched twice for bit-identical results. test_lab_kernels.cpp runs `softmax` (fp32) on its
// shape list as well.
//
// The tuning table, which times every candidate plan, is experiments/test_tuning.cpp's.
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
#include <limits>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include <cuda_runtime_api.h>

#include "catch.hpp"
#include "edge_shapes.hpp"
#include "gpu_check.hpp"
#include "harness/device.hpp"
#include "harness/storage.hpp"
#include "harness/verify.hpp"
#include "kernels/registry.hpp"
#include "kernels/production/softmax_dispatch.hpp"
#include "kernels/production/softmax_families.hpp"

namespace {

using namespace smr;

constexpr DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};

// Shapes larger than this are verified on the device (every row; harness/verify_gpu.hpp, whose
// agreement with the CPU oracle test_gpu_verify.cpp shows), smaller ones against the CPU oracle.
constexpr std::int64_t kHostCheckElements = std::int64_t{1} << 22;

// Runs and checks through gpu_check.hpp, in p.dtype's storage.
using smr::test::KernelRun;
using smr::test::run_launch;
using smr::test::first_two_read_n;

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
  if (!plan) {
    // A shape no family of this device runs (rows past block_row's on a card without sm_90, or
    // under SMR_DEVICE_PROFILE): the entry refuses it; said, not run.
    if (const auto why = softmax_unsupported(p, device_limits())) {
      WARN("not run on this device: " << *why);
      return;
    }
  }
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

// The cases that exercise the sm_90 families (block_hybrid, cluster_tile, cluster_row, split_row)
// directly say so and end where the device -- or the code loaded (an 80-virtual build), or
// SMR_DEVICE_PROFILE -- has none of them.
bool hopper_families(const DeviceLimits& d) {
  if (family_available(SoftmaxFamily::split_row, d)) return true;
  WARN("the sm_90 families are not on this device (" +
       family_unavailable(SoftmaxFamily::split_row, d).value_or("") + "): case not run");
  return false;
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
    if (const auto* r = std::get_if<SplitRowPlan>(&s.form); r && r->interleaved) return s;
  FAIL("no interleaved candidate for " << p.M << " x " << p.N);
  return {};
}

}  // namespace

TEST_CASE("production softmax: each family at the dispatch's edges, fp32 / bf16 / fp16",
          "[gpu][softmax]") {
  const DeviceLimits d = device_limits();
  for (const DType t : kDtypes) {
    const std::vector<Problem> shapes = test::edge_shapes(t, d);
    for (const Problem& p : shapes)
      check_case(p, p.M >= 8 ? InputKind::mixed : InputKind::outliers, next_seed());
    INFO("dtype " << to_string(t));
    // Every family the dispatch picks for this dtype was exercised (cluster_tile: fp32 only;
    // before sm_90, or restricted to such a profile, warp_rows and block_row). block_row's last N
    // on rows off 16-byte boundaries is past what it holds with a window's room: on sm_90
    // block_hybrid takes those rows, before it check_case says they are refused.
    CHECK(test::family_names(test::families_hit(shapes, d)) ==
          test::family_names(test::expected_families(t, d)));
    if (!family_available(SoftmaxFamily::split_row, d))
      CHECK(softmax_unsupported(dense(1, block_row_max_n(t) + 1, t), d).has_value());
  }
}

TEST_CASE("production softmax: every candidate plan of a shape is correct",
          "[gpu][softmax][exhaustive]") {
  const DeviceLimits d = device_limits();
  if (!hopper_families(d)) return;
  // 40 x 250000 and 40 x 250001 (rows padded to 16 bytes, a partial vector at each row's end):
  // split_row blocks with several slices in turn, each copied in while the one before is written.
  // dense(40, 250001): the same on rows off 16-byte boundaries (each next slice's edges copied by
  // the threads, its vectors by the copy engine).
  // ld = N odd (3001, 50257, 1000003, 2000003): every family on rows read through their 16-byte
  // windows (storage.cuh), the row's offset from a boundary changing from row to row.
  // 24001 x 128 and 60013 x 36: more rows than the persistent warp_rows grid takes in one trip
  // (up to 3 trips a warp, the last partly past M; 36 bf16 is 72-byte rows, read through
  // windows). 131 x 300: block_row's 16-bit tiles of one vector a thread (64 x 1 holds a bf16
  // row of 300 through its window), candidates against warp_rows. 67 x 1021, 11 x 4097 and
  // 5 x 8193: block_row's 16-bit tiles half again as wide as a power of two (96 x 2 a candidate
  // beside the half-full 64 x 4; 192 x 4 and 384 x 4 the defaults, the half-full power-of-two
  // tiles beside them); 97 x 129 and 41 x 257: warp_rows' tiles of 3 vectors a lane.
  const Problem shapes[] = {dense(133, 100),  dense(64, 1000),  dense(37, 3001),
                            dense(20, 20000), dense(9, 65544),  dense(40, 250000),
                            Problem{40, 250001, 250004, 250008, DType::f32}, dense(40, 250001),
                            dense(2, 2000003),
                            dense(67, 1021),  dense(9, 50257),  dense(3, 1000003),
                            dense(24001, 128), dense(60013, 36), dense(131, 300),
                            dense(11, 4097),  dense(5, 8193),   dense(97, 129),
                            dense(41, 257)};
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

// Rows whose weight sits at the edges of the parts of the row a plan keeps in shared memory
// (split_row, cluster_row, block_hybrid): the elements on either side of each boundary b (b - 1 and
// b: multiples of the slice and of its resident part, where slices and their resident parts begin,
// and where a resident part ends in a row read twice; block_hybrid's capacity past each slice's
// start, where its register tile ends, and the V before it; the row's first and last elements) are
// -5 + N(0, 1) / 4, every other element -14 + N(0, 1). A boundary element is then ~e^9 times any
// other: at N = 10^6 the other elements sum to ~200 of them, so a boundary element missing from the
// sum moves every output of the row by more than 1/(200 + boundaries), ~100 tolerances; a window
// position outside the slice counted as anything but -inf (0, or what shared memory held) wins the
// row's max and moves them all. (Where two boundaries coincide -- resident = slice for rows on chip
// -- an element is marked twice: -5 + (-5 + 14) / 4 ~ -2.75, heavier still.)
std::vector<float> slice_edge_input(const Problem& p, const SoftmaxPlan& plan, std::uint64_t seed) {
  std::vector<float> x = make_input(p, seed, InputKind::normal);
  // Boundaries b: elements [b - before, b] are marked.
  std::vector<std::pair<std::int64_t, std::int64_t>> edges{{0, 1}, {p.N, 1}};
  // A block's slice and the part of it in shared memory (cluster_row: all of it).
  std::int64_t slice = 0, resident = 0;
  if (const auto* r = std::get_if<SplitRowPlan>(&plan.form)) {
    slice = r->slice;
    resident = r->resident;
  } else if (const auto* c = std::get_if<ClusterRowPlan>(&plan.form)) {
    slice = resident = c->slice;
  } else if (const auto* h = std::get_if<BlockHybridPlan>(&plan.form)) {
    slice = h->slice;
    resident = h->resident;
  }
  for (const std::int64_t step : {slice, resident})
    for (std::int64_t b = step; step > 0 && b < p.N; b += step) edges.emplace_back(b, 1);
  // A row read twice: where each slice's resident part ends and its streamed part begins.
  if (slice > resident && resident > 0)
    for (std::int64_t b = resident; b < p.N; b += slice) edges.emplace_back(b, 1);
  // block_hybrid's shared-memory part starts up to V - 1 elements before the tile's capacity,
  // in each block's slice (one a row, or one per block of a cluster).
  if (const auto* h = std::get_if<BlockHybridPlan>(&plan.form))
    for (std::int64_t b = 0; b < p.N; b += h->slice)
      edges.emplace_back(b + h->capacity, vec_elems(p.dtype));
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
  if (!hopper_families(d)) return;
  {
    // The input can fail a kernel: row 0 of an fp32 1000003 split_row plan's input with one
    // boundary element dropped (-inf), or with a 0 beside it (a pad counted as 0), has reference
    // outputs more than 10 tolerances from its own.
    const Problem p = dense(1, 1000003);
    const auto plans = candidate_plans(p, d);
    const auto split = std::find_if(plans.begin(), plans.end(), [](const SoftmaxPlan& s) {
      const auto* r = std::get_if<SplitRowPlan>(&s.form);
      return r && r->slices > 1;
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
    dropped[static_cast<std::size_t>(std::get<SplitRowPlan>(split->form).slice)] =
        -std::numeric_limits<float>::infinity();
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
        if (plan.family() != SoftmaxFamily::split_row &&
            plan.family() != SoftmaxFamily::cluster_row &&
            plan.family() != SoftmaxFamily::block_hybrid)
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
  if (!hopper_families(d)) return;
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
  if (!hopper_families(d)) return;
  for (const DType t : {DType::f32, DType::bf16}) {
    const std::int64_t V = vec_elems(t);
    const Problem p = dense(7, 1 << 20, t);
    const Problem padded{9, 1 << 20, (1 << 20) + V, (1 << 20) + 2 * V, t};
    int rings = 0;
    for (const SoftmaxPlan& plan : candidate_plans(p, d)) {
      if (const auto* r = std::get_if<SplitRowPlan>(&plan.form); !r || !r->ring) continue;
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

TEST_CASE("production softmax: register tiles' extra element a lane, where a row's window "
          "overflows the vectors", "[gpu][softmax]") {
  // Rows at ld = N whose window (up to N + V - 1 elements) is longer than the tile's vectors: the
  // last elements are each lane's extra one (row_tile.cuh). N = C - 1 (the window overflows for
  // most rows), C + 1 (2^k + 1) and C + 32 - (V - 1) (every extra element of a 32-lane tile in
  // use for the row farthest past its boundary), on warp_rows' and block_row's tiles; then with
  // y's rows at other offsets (ld_y = N + 1: the scalar path, its extra elements past the
  // vectors). The default plan must be such a tile: a test that stops reaching the extra
  // elements fails here.
  for (const DType t : kDtypes) {
    const std::int64_t V = vec_elems(t);
    const std::int64_t w = t == DType::f32 ? 512 : 1024;  // warp_rows' 32 x 4 tile
    for (const std::int64_t n : {std::int64_t{127}, std::int64_t{129}, w - 1, w + 1, w + 33 - V,
                                 std::int64_t{4095}, std::int64_t{4097}, std::int64_t{8193},
                                 std::int64_t{32768 + 33} - V}) {
      const Problem p{std::clamp<std::int64_t>((std::int64_t{1} << 22) / n, 3, 257), n, n, n, t};
      const SoftmaxPlan s = plan_softmax(p, device_limits());
      INFO(to_string(t) << " N = " << n << ": " << summary(s));
      // (fp32 block_row takes a tile the row fills to 65%, not the fullest: no overflow there.)
      if (const auto* r = std::get_if<WarpRowsPlan>(&s.form); r && r->staged_rows == 0)
        CHECK(r->capacity < n + V - 1);
      else if (const auto* b = std::get_if<BlockRowPlan>(&s.form); b && t != DType::f32)
        CHECK(b->capacity < n + V - 1);
      check_case(p, InputKind::mixed, next_seed());
      check_case(Problem{p.M, n, n, n + 1, t}, InputKind::mixed, next_seed());
    }
    // Every kind of hostile row through a tile of extra elements (bf16 1023 on 32 x 4).
    for (const InputKind kind : {InputKind::all_neg_inf, InputKind::some_neg_inf,
                                 InputKind::has_nan, InputKind::has_pos_inf, InputKind::large})
      check_case(Problem{37, w - 1, w - 1, w - 1, t}, kind, next_seed());
  }
}

TEST_CASE("production softmax: warp_rows' staged rows on every length, stride and offset",
          "[gpu][softmax]") {
  // The staged plan (warp_rows.cu, "Staged rows") of each shape: odd N, N = 2^k + 1, a row of one
  // element; dense rows (each row's offset from a 16-byte boundary its own), rows padded off and
  // on boundaries, a stride longer than the span (one row a trip); x and y at different offsets
  // or strides (the element-wise stores); enough rows for several trips a warp on the persistent
  // grid, and fewer than one trip's.
  const DeviceLimits d = device_limits();
  int plans = 0;
  for (const DType t : kDtypes) {
    const std::int64_t V = vec_elems(t);
    const std::int64_t last = warp_rows_max_n(t);
    for (const std::int64_t n : {std::int64_t{1}, std::int64_t{3}, std::int64_t{31},
                                 std::int64_t{33}, std::int64_t{127}, std::int64_t{129},
                                 std::int64_t{197}, std::int64_t{257}, last - V + 1, last - 1}) {
      struct Layout {
        std::int64_t ld_x, ld_y, x_off, y_off;
      };
      const Layout layouts[] = {{n, n, 0, 0},         {n + 1, n + 1, 0, 0}, {n + 3, n + 3, 1, 1},
                                {n + V, n + V, 1, 0}, {n + 1, n + 2, 0, 0}, {3000, 3000, 0, 0}};
      for (const Layout& l : layouts) {
        // (Dense rows: 3 x 2^22 elements, several trips a warp at every N; else 2^22 elements.)
        const std::int64_t many = l.ld_x == n ? (std::int64_t{3} << 22) / n
                                              : (std::int64_t{1} << 22) / l.ld_x;
        for (const std::int64_t m : {std::int64_t{1}, std::int64_t{7}, many}) {
          const Problem p{m, n, l.ld_x, l.ld_y, t};
          const std::vector<SoftmaxPlan> all = candidate_plans(p, d);
          const auto staged = std::find_if(all.begin(), all.end(), [](const SoftmaxPlan& s) {
            const auto* w = std::get_if<WarpRowsPlan>(&s.form);
            return w && w->staged_rows > 0;
          });
          REQUIRE(staged != all.end());
          ++plans;
          check_case(p, InputKind::mixed, next_seed(), *staged, l.x_off, l.y_off);
        }
      }
    }
    // Every kind of hostile row through the staged kernel (dense, odd N).
    for (const InputKind kind :
         {InputKind::large, InputKind::all_equal, InputKind::some_neg_inf, InputKind::all_neg_inf,
          InputKind::has_nan, InputKind::has_pos_inf})
      check_case(dense(4099, 37, t), kind, next_seed());
  }
  CHECK(plans == 3 * 10 * 6 * 3);
}

TEST_CASE("production softmax: warp_rows' packed rows on every divisor of a vector, row count "
          "and offset",
          "[gpu][softmax]") {
  // The packed plan (warp_rows.cu, "Packed rows") of each dense N that divides a 16-byte vector
  // (1, 2, 4 fp32; 1, 2, 4, 8 bf16 and fp16): row counts whose last rows end mid-vector (1, 7,
  // 31, 33, 4097, the prime 1000003) and enough for several trips a lane; x and y on 16-byte
  // boundaries (16-byte vectors), both off them and one off (one row a lane, element by element);
  // and every kind of hostile row.
  const DeviceLimits d = device_limits();
  const auto packed_plan = [&](const Problem& p) {
    const std::vector<SoftmaxPlan> all = candidate_plans(p, d);
    const auto packed = std::find_if(all.begin(), all.end(), [](const SoftmaxPlan& s) {
      const auto* w = std::get_if<WarpRowsPlan>(&s.form);
      return w && w->packed;
    });
    REQUIRE(packed != all.end());
    return *packed;
  };
  int plans = 0;
  for (const DType t : kDtypes) {
    for (std::int64_t n = 1; n <= vec_elems(t); n *= 2) {
      const std::int64_t many = (std::int64_t{3} << 22) / n + 1;
      for (const std::int64_t m : {std::int64_t{1}, std::int64_t{7}, std::int64_t{31},
                                   std::int64_t{33}, std::int64_t{4097}, std::int64_t{1000003},
                                   many}) {
        const Problem p = dense(m, n, t);
        const SoftmaxPlan plan = packed_plan(p);
        for (const auto& [x_off, y_off] : {std::pair{0, 0}, std::pair{1, 1}, std::pair{0, 1}}) {
          ++plans;
          check_case(p, InputKind::mixed, next_seed(), plan, x_off, y_off);
        }
      }
      for (const InputKind kind :
           {InputKind::large, InputKind::all_equal, InputKind::some_neg_inf,
            InputKind::all_neg_inf, InputKind::has_nan, InputKind::has_pos_inf})
        check_case(dense(4099, n, t), kind, next_seed(), packed_plan(dense(4099, n, t)));
    }
  }
  CHECK(plans == (3 + 4 + 4) * 7 * 3);
}

TEST_CASE("production softmax: warp_rows' shared ends on dense rows off 16-byte boundaries",
          "[gpu][softmax]") {
  // The candidate that stores the 16-byte vector two consecutive rows share once, whole
  // (row_tile.cuh, store_tile_shared_ends): dense odd rows and rows of 2^k + 1 in every dtype it
  // is offered for, one row (no neighbour), a few (the last group of a trip without a next row),
  // and many; x and y one, three and seven elements past a boundary, and y at another offset than
  // x (the ordinary path runs there); every kind of hostile row.
  const DeviceLimits d = device_limits();
  int plans = 0;
  for (const DType t : kDtypes) {
    for (const std::int64_t n : {std::int64_t{65}, std::int64_t{100}, std::int64_t{127},
                                 std::int64_t{129}, std::int64_t{197}, std::int64_t{255},
                                 std::int64_t{257}, std::int64_t{383}, std::int64_t{509}}) {
      // The candidate of the shape, if it has one.
      const auto shared_plan = [&](const Problem& p) -> std::optional<SoftmaxPlan> {
        for (const SoftmaxPlan& s : candidate_plans(p, d))
          if (const auto* w = std::get_if<WarpRowsPlan>(&s.form); w && w->shared_ends) return s;
        return std::nullopt;
      };
      if (!shared_plan(dense(1001, n, t))) continue;
      for (const std::int64_t m : {std::int64_t{1}, std::int64_t{3}, std::int64_t{33},
                                   (std::int64_t{3} << 22) / n}) {
        const Problem p = dense(m, n, t);
        const std::optional<SoftmaxPlan> plan = shared_plan(p);
        REQUIRE(plan.has_value());
        for (const auto& [x_off, y_off] : {std::pair{0, 0}, std::pair{1, 1}, std::pair{3, 3},
                                           std::pair{7, 7}, std::pair{0, 1}}) {
          ++plans;
          check_case(p, InputKind::mixed, next_seed(), *plan, x_off, y_off);
        }
      }
      for (const InputKind kind :
           {InputKind::large, InputKind::all_equal, InputKind::some_neg_inf,
            InputKind::all_neg_inf, InputKind::has_nan, InputKind::has_pos_inf})
        check_case(dense(1001, n, t), kind, next_seed(), *shared_plan(dense(1001, n, t)), 1, 1);
    }
  }
  CHECK(plans > 0);
}

TEST_CASE("production softmax: repeated launches give bit-identical outputs", "[gpu][softmax]") {
  // A missing barrier or a race on the cross-block partials shows as a result that moves.
  const DeviceLimits d = device_limits();
  if (!hopper_families(d)) return;
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
