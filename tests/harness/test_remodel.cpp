// remodel_records: a saved run's records held to the registry's model of each kernel (what
// `softmax-bench report` does before the claims), the device limits a saved run recorded, and the
// FP32 peak the ceilings fall back on.
// Host only.
#include <stdexcept>

#include "catch.hpp"
#include "harness/sweep.hpp"
#include "kernels/registry.hpp"

using namespace smr;

TEST_CASE("remodel_records: cudnn's long rows get its measured 5-pass model, the rest stay", "[report]") {
  RunResults run;
  run.ceilings = datasheet_h200();
  const auto add = [&](const char* kernel, std::int64_t M, std::int64_t N) {
    Record r;
    r.kernel = kernel;
    r.M = M, r.N = N, r.ld_x = r.ld_y = N;
    r.model = predict(TrafficModel::fused, r.problem(), run.ceilings);
    TimeStats t;
    t.median_s = 1e-3;
    r.time = t;
    run.records.push_back(r);
  };
  add("cudnn", 32, std::int64_t{1} << 22);  // stored as fused, as runs made before the change are
  add("cudnn", 4096, 32768);                // fused is right here
  add("fused", 4096, 32768);
  add("torch.softmax", 32, std::int64_t{1} << 22);  // not in the registry: left alone
  const double stored = run.records[0].model.dram_bytes;
  CHECK(remodel_records(run) == 1);
  CHECK(run.records[0].model.traffic == TrafficModel::unfused);
  CHECK(run.records[0].model.dram_bytes > 2.4 * stored);
  CHECK(run.records[0].model.note.find("re-modelled") != std::string::npos);
  REQUIRE(run.records[0].model_GBps);
  CHECK(*run.records[0].model_GBps == run.records[0].model.dram_bytes / 1e9 / 1e-3);
  CHECK(run.records[1].model.traffic == TrafficModel::fused);
  CHECK(run.records[3].model.traffic == TrafficModel::fused);
  CHECK(remodel_records(run) == 0);  // idempotent
}

TEST_CASE("fp32_peak_GFLOPs: the card's own peak from its properties", "[ceilings]") {
  // T4: 40 SMs x 64 lanes x 2 x 1.59 GHz; A100: 108 x 64 x 2 x 1.41 GHz; H100 SXM: 132 x 128 x 2 x
  // 1.98 GHz (the datasheets' 8.1, 19.5 and 66.9 TFLOP/s).
  CHECK_THAT(fp32_peak_GFLOPs(7, 5, 40, 1590000), Catch::Matchers::WithinRel(8140.8, 1e-4));
  CHECK_THAT(fp32_peak_GFLOPs(8, 0, 108, 1410000), Catch::Matchers::WithinRel(19491.8, 1e-4));
  // L4: 128 lanes from 8.6 on.
  CHECK_THAT(fp32_peak_GFLOPs(8, 9, 58, 2040000), Catch::Matchers::WithinRel(30289.9, 1e-4));
  CHECK_THAT(fp32_peak_GFLOPs(9, 0, 132, 1980000), Catch::Matchers::WithinRel(66908.2, 1e-4));
  CHECK(fp32_peak_GFLOPs(9, 0, 132, 0) == 0);  // clock unknown: no number made up
}

TEST_CASE("run_device_limits: a saved run's card, its dispatch limits over the card's own",
          "[report][device]") {
  RunResults run;
  run.ceilings = datasheet_h200();
  SECTION("no device recorded: the fallback profile, with the ceilings' SMs and L2") {
    run.ceilings.sm_count = 40;
    run.ceilings.l2_bytes = 4 << 20;
    const DeviceLimits d = run_device_limits(run, "h100");
    CHECK(d.sm_count == 40);
    CHECK(d.l2_bytes == std::size_t{4} << 20);
    CHECK(d.global_bytes == 85017493504);  // the h100 profile's
  }
  SECTION("an older run that recorded only the card's name and sizes: its profile fills the rest") {
    run.device = {{"name", "NVIDIA H100 80GB HBM3"}, {"sm_count", 114}, {"l2_bytes", 52428800},
                  {"compute_capability", "9.0"}};
    const DeviceLimits d = run_device_limits(run, "t4");
    CHECK(d.sm_count == 114);
    CHECK(d.has_clusters());
    CHECK(d.shared_bytes_per_block == 232448);  // the h100 profile's, not the t4 fallback's
  }
  SECTION("a run restricted to the t4 profile on an H100: sm_75, no clusters, 64 KB") {
    run.device = {{"name", "NVIDIA H100 80GB HBM3"},
                  {"sm_count", 132},
                  {"l2_bytes", 52428800},
                  {"global_bytes", 85017493504},
                  {"compute_capability", "9.0"},
                  {"cluster_launch", true},
                  {"shared_per_block_optin_bytes", 232448},
                  {"dispatch_limits",
                   {{"compute_capability", "7.5"},
                    {"cluster_launch", false},
                    {"max_cluster", 1},
                    {"shared_per_block_bytes", 65536},
                    {"shared_per_sm_bytes", 65536},
                    {"registers_per_sm", 65536}}}};
    const DeviceLimits d = run_device_limits(run, "h200");
    CHECK(d.compute_capability() == 75);
    CHECK_FALSE(d.has_clusters());
    CHECK(d.max_cluster == 1);
    CHECK(d.shared_bytes_per_block == 65536);
    CHECK(d.sm_count == 132);
  }
  SECTION("an unknown fallback profile is an error, not a made-up card") {
    CHECK_THROWS_AS(run_device_limits(run, "no-such-card"), std::invalid_argument);
  }
}
