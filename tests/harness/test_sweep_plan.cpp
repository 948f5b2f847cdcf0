// The sweep's memory plan (harness/sweep_plan.hpp) against made-up device memory sizes: shapes
// that fit run as given, the default sweep's M shrinks on a small card, other shapes too large are
// skipped with their reason, and configs too large for any card load (the check is the plan's).
#include <filesystem>

#include "catch.hpp"
#include "harness/config.hpp"
#include "harness/sweep_plan.hpp"
#include "kernels/device_profiles.hpp"

using namespace smr;

namespace {

constexpr std::int64_t kGB = 1'000'000'000;
constexpr std::int64_t kMiB = std::int64_t{1} << 20;

MemoryBudget card(std::int64_t free_bytes, std::int64_t l2_bytes) {
  MemoryBudget m;
  m.free_bytes = free_bytes;
  m.total_bytes = free_bytes;
  m.l2_bytes = l2_bytes;
  m.source = "test";
  return m;
}

const std::filesystem::path kTooBig =
    std::filesystem::path(SMR_SOURCE_DIR) / "tests" / "data" / "configs" / "too_big";

}  // namespace

TEST_CASE("shape_bytes: x, y with their strides and the fp32 intermediate", "[plan]") {
  CHECK(shape_bytes(Problem{4, 128, 128, 128, DType::f32}) == 4 * 128 * (4 + 4 + 4));
  CHECK(shape_bytes(Problem{4, 128, 160, 160, DType::bf16}) == 2 * 4 * 160 * 2 + 4 * 128 * 4);
  CHECK(shape_bytes(Problem{std::int64_t{1} << 62, 8, 8, 8, DType::f32}) == INT64_MAX);
}

TEST_CASE("the default sweep on cards of every size", "[plan]") {
  const SweepConfig cfg = default_config();
  REQUIRE(cfg.shrinkable.size() == cfg.problems.size());
  for (bool s : cfg.shrinkable) CHECK(s);  // M from sweep.elements

  SECTION("an H200 (141 GB) and a T4 (15 GB, 4 MB L2) run it as given") {
    for (const MemoryBudget& m : {card(140 * kGB, 60 * kMiB), card(15 * kGB, 4 * kMiB)}) {
      const auto plan = plan_shapes(cfg.problems, cfg.shrinkable, m);
      REQUIRE(plan.size() == cfg.problems.size());
      for (const PlannedShape& s : plan) {
        CHECK_FALSE(s.skipped());
        CHECK_FALSE(s.scaled());
      }
    }
  }
  SECTION("a 1.5 GB card: N kept, M halved until M x N fits with the margin") {
    const MemoryBudget m = card(1500 * kMiB, 4 * kMiB);
    const auto plan = plan_shapes(cfg.problems, cfg.shrinkable, m);
    for (std::size_t i = 0; i < plan.size(); ++i) {
      const PlannedShape& s = plan[i];
      INFO("N = " << s.problem.N);
      CHECK_FALSE(s.skipped());
      CHECK(s.scaled());
      CHECK(s.requested_M == cfg.problems[i].M);
      CHECK(s.problem.N == cfg.problems[i].N);
      CHECK(s.problem.M == s.requested_M / 2);  // 2^27 x 12 B = 1.6 GB: halved once
      CHECK(s.bytes + plan_margin_bytes(m) <= m.free_bytes);
    }
    const nlohmann::json j = plan_json(plan, m);
    CHECK(j["scaled"].size() == plan.size());
    CHECK(j["scaled"][0]["scaled_M"] == plan[0].problem.M);
    CHECK(j["skipped"].empty());
  }
  SECTION("no room at all: skipped, with the reason") {
    const auto plan = plan_shapes(cfg.problems, cfg.shrinkable, card(100 * kMiB, 4 * kMiB));
    for (const PlannedShape& s : plan) {
      CHECK(s.skipped());
      CHECK(s.problem.M == s.requested_M);
      CHECK(s.skip_reason.find("the device has 0.10 GB free") != std::string::npos);
    }
  }
}

TEST_CASE("explicit shapes too large for the card are skipped, the rest run", "[plan]") {
  const std::vector<Problem> problems{dense(4096, 4096), dense(65536, 1048576),
                                      dense(std::int64_t{1} << 20, 1 << 20)};
  const auto plan = plan_shapes(problems, {false, false}, card(80 * kGB, 50 * kMiB));
  REQUIRE(plan.size() == 3);
  CHECK_FALSE(plan[0].skipped());
  CHECK(plan[1].skipped());  // 824 GB: never shrunk, M is the config's own
  CHECK(plan[1].problem.M == 65536);
  CHECK(plan[1].skip_reason ==
        "needs 824.63 GB (x, y and the unfused intermediate, plus 0.53 GB kept free), the device "
        "has 80.00 GB free");
  CHECK(plan[2].skipped());  // no shrinkable entry: skipped
  const nlohmann::json j = plan_json(plan, card(80 * kGB, 50 * kMiB));
  CHECK(j["skipped"].size() == 2);
  CHECK(j["skipped"][0]["M"] == 65536);
  CHECK(j["scaled"].empty());
}

TEST_CASE("configs too large for any card load; the plan skips their shapes", "[plan][config]") {
  for (const char* name : {"too_big.yaml", "too_big.json", "intermediate_too_big.yaml",
                           "row_pad_too_big.yaml"}) {
    INFO(name);
    const SweepConfig cfg = load_config_file(kTooBig / name);
    const DeviceProfile* h200 = find_device_profile("h200");
    REQUIRE(h200 != nullptr);
    const auto plan = plan_shapes(cfg.problems, cfg.shrinkable, assumed_memory(h200->limits, "h200"));
    REQUIRE_FALSE(plan.empty());
    CHECK(plan.back().skipped());
    CHECK(plan.back().skip_reason.find("the device has 150.11 GB free") != std::string::npos);
    if (std::string(name) == "too_big.json") CHECK_FALSE(plan.front().skipped());  // 4096 x 4096
  }
}
