// The lab starter (src/kernels/lab/fused_row_starter.cu around the student's steps in
// fused_row_starter.cuh, registry entry `fused_starter`) against
// the fp64 CPU reference of harness/verify.hpp, the same checks every kernel goes through.
//
// Built only with -DSMR_BUILD_LAB=ON. It FAILS on the unfinished starter (the placeholders write
// nothing, so the poisoned output shows every element unwritten) and passes once the five TODOs
// are right -- as it does with the reference solution, built in the starter's place with
// -DSMR_LAB_SOLUTION=ON (docs/lab/answers/fused_row_solution.cuh). The same steps without a GPU:
// test_lab_cpu.cpp.
#include <cstdint>
#include <string>
#include <vector>

#include "catch.hpp"
#include "gpu_check.hpp"
#include "harness/verify.hpp"
#include "kernels/lab/fused_row.hpp"
#include "kernels/registry.hpp"

namespace smr {
namespace {

constexpr const char* kWhere =
    "lab exercise 03: the steps are src/kernels/lab/fused_row_starter.cuh (TODO 1-5), "
    "docs/lab/03-fuse-it.md";

const KernelInfo& starter() {
  const KernelInfo* k = find_kernel("fused_starter");
  REQUIRE(k != nullptr);
  return *k;
}

// Runs the starter on p the way every kernel test does (gpu_check.hpp: poisoned output, guard
// bands) and checks the output against the fp64 reference, the guards, the row padding of y and
// the input.
void check_against_reference(const Problem& p, InputKind kind, std::uint64_t case_index,
                             const test::Placement& at = {}) {
  const std::uint64_t base = test::base_seed();
  const std::uint64_t seed = test::case_seed(base, 5000 + case_index);
  INFO(kWhere);
  INFO("M = " << p.M << ", N = " << p.N << ", ld_x = " << p.ld_x << ", ld_y = " << p.ld_y
              << ", x offset " << at.x_offset << ", y offset " << at.y_offset << ", input "
              << to_string(kind) << ", seed " << seed << " (SMR_TEST_SEED=" << base << ")");
  const KernelInfo& k = starter();
  REQUIRE_FALSE(why_unsupported(k, p, DeviceLimits{}).has_value());

  const std::vector<float> x = make_input(p, seed, kind);
  const test::KernelRun run = test::run_kernel(k, p, x, at);
  INFO(run.guard_error.value_or("") << run.padding_error.value_or("")
                                    << run.input_error.value_or(""));
  CHECK_FALSE(run.guard_error.has_value());
  CHECK_FALSE(run.padding_error.has_value());
  CHECK_FALSE(run.input_error.has_value());
  const VerifyResult v = verify_output(p, x, run.y, kDefaultTolerance);
  INFO("max relative error " << v.max_rel_err << " (tolerance " << v.tolerance << "): "
                             << v.detail);
  REQUIRE(v.passed);
  CHECK(v.rows_checked == p.M);
}

TEST_CASE("fused_starter is registered like the fused kernel", "[lab][gpu]") {
  const KernelInfo& k = starter();
  CHECK(k.role == Role::lab);
  CHECK(k.traffic == TrafficModel::fused);
  CHECK(k.launch != nullptr);
  CHECK_FALSE(why_unsupported(k, dense(1, kFusedMaxN), DeviceLimits{}).has_value());
  CHECK(why_unsupported(k, dense(1, kFusedMaxN + 1), DeviceLimits{}).has_value());
}

TEST_CASE("fused_starter matches the fp64 reference on every tile and odd N", "[lab][gpu]") {
  // N on both sides of every tile boundary (powers of two from 128 to the cap), tiny rows, and
  // M around the multiples of the 9 row kinds of the mixed input so every kind is seen.
  const std::int64_t n = GENERATE(as<std::int64_t>{}, 1, 2, 3, 7, 31, 32, 33, 127, 128, 129, 255,
                                  257, 1000, 1023, 1024, 1025, 2047, 4095, 4097, 8191, 8193,
                                  16383, 16385, 30011, 32767, 32768);
  const std::int64_t m = n >= 8192 ? 18 : 133;
  check_against_reference(dense(m, n), InputKind::mixed, static_cast<std::uint64_t>(n));
}

TEST_CASE("fused_starter: every kind of row alone", "[lab][gpu]") {
  const InputKind kind =
      GENERATE(InputKind::normal, InputKind::outliers, InputKind::large, InputKind::all_equal,
               InputKind::some_neg_inf, InputKind::all_neg_inf, InputKind::has_nan,
               InputKind::has_pos_inf);
  const std::int64_t n = GENERATE(as<std::int64_t>{}, 5, 1000, 4097);
  const auto case_index =
      100000 + 100 * static_cast<std::uint64_t>(kind) + static_cast<std::uint64_t>(n);
  check_against_reference(dense(7, n), kind, case_index);
}

TEST_CASE("fused_starter: padded rows and misaligned buffers", "[lab][gpu]") {
  // ld = N + pad: pads 1 and 3 break the 16-byte alignment of most rows; the padding of x holds a
  // huge sentinel (read it and the row max is wrong), the padding of y must stay poisoned. An
  // offset of one float misaligns the whole buffer.
  const std::int64_t n = GENERATE(as<std::int64_t>{}, 33, 1000, 4096);
  const std::int64_t pad_x = GENERATE(as<std::int64_t>{}, 0, 1, 3, 64);
  const std::int64_t pad_y = GENERATE(as<std::int64_t>{}, 0, 5);
  const std::int64_t offset = GENERATE(as<std::int64_t>{}, 0, 1);
  const auto case_index =
      200000 + static_cast<std::uint64_t>(n * 1000 + pad_x * 10 + pad_y + offset * 7);
  check_against_reference(Problem{65, n, n + pad_x, n + pad_y, DType::f32}, InputKind::mixed,
                          case_index, test::Placement{offset, offset});
}

}  // namespace
}  // namespace smr
