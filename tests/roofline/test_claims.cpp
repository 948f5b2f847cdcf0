// The claims on synthetic runs: for each claim a run where it holds, one where it does not, and
// one without counters (not measured, with the reason; what time alone says still given).
#include <cmath>
#include <cstdint>
#include <string>

#include "catch.hpp"
#include "core/metrics.hpp"
#include "roofline/claims.hpp"

using namespace smr;
using nlohmann::json;
using Catch::Matchers::WithinRel;

namespace {

constexpr const char* kNoCounters = "CUPTI_ERROR_INSUFFICIENT_PRIVILEGES: run as root";

// A successful record of `kernel` whose counters say it moved `byte_scale` x the model's DRAM
// bytes (reads `read_scale` x the model's reads when given), ran `flops_per_element` FP32 FLOP
// per element as FFMA + FADD, and took the time of `bw_fraction` of the DRAM ceiling.
struct Synth {
  std::string kernel;
  TrafficModel traffic;
  std::int64_t M, N;
  double byte_scale = 1.0;
  double read_scale = -1;  // < 0: same as byte_scale
  double bw_fraction = 0.9;
  bool counters = true;
  std::int64_t rows_in_flight = 0;
};

Record make(const Synth& s, const Ceilings& c) {
  Record r;
  r.kernel = s.kernel;
  r.M = s.M;
  r.N = s.N;
  r.ld_x = r.ld_y = s.N;
  r.model = predict(s.traffic, r.problem(), c, s.rows_in_flight);
  const double reads = r.model.dram_read_bytes * (s.read_scale >= 0 ? s.read_scale : s.byte_scale);
  const double writes = r.model.dram_write_bytes * s.byte_scale;
  const double elems = static_cast<double>(s.M * s.N);
  TimeStats t;
  t.median_s = (reads + writes) / (s.bw_fraction * c.dram_GBps * 1e9);
  t.min_s = t.max_s = t.mean_s = t.median_s;
  t.samples = 20;
  r.time = t;
  if (s.counters) {
    r.counters = {{"dram__bytes_read.sum", reads},
                  {"dram__bytes_write.sum", writes},
                  {"dram_bytes", reads + writes},
                  {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 1.0 * elems},
                  {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 1.0 * elems},
                  {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1.0 * elems},
                  {"flops_executed", 4.0 * elems},
                  {"smsp__inst_executed_pipe_xu.sum", elems / 32.0}};
  } else {
    r.counters_reason = kNoCounters;
  }
  return r;
}

RunResults run_of(std::initializer_list<Synth> recs) {
  RunResults run;
  run.ceilings = datasheet_h200();
  for (const Synth& s : recs) run.records.push_back(make(s, run.ceilings));
  return run;
}

const json& find_claim(const json& claims, const std::string& id) {
  for (const auto& c : claims)
    if (c["id"] == id) return c;
  FAIL("no claim " << id);
  return claims;
}

// Shapes: x = 512 MiB (far above the 60 MiB L2) and x = 4 MiB (x and tmp fit).
constexpr std::int64_t kBigM = 65536, kBigN = 2048;
constexpr std::int64_t kSmallM = 1024, kSmallN = 1024;

}  // namespace

TEST_CASE("claims: five, in order, each with the documented keys", "[claims]") {
  const json claims = evaluate_claims(run_of({}));
  REQUIRE(claims.is_array());
  REQUIRE(claims.size() == 5);
  const char* ids[] = {"fused_intensity", "traffic_ratio", "memory_bound", "online_second_read",
                       "model_traffic"};
  for (int i = 0; i < 5; ++i) {
    CAPTURE(i);
    CHECK(claims[i]["id"] == ids[i]);
    for (const char* k : {"title", "statement", "criterion", "verdict", "summary", "columns", "rows"})
      CHECK(claims[i].contains(k));
    // No records: nothing to measure, and the summary says so.
    CHECK(claims[i]["verdict"] == "not measured");
    CHECK(claims[i]["summary"].get<std::string>().find("no successful record") != std::string::npos);
  }
}

TEST_CASE("claim fused_intensity", "[claims]") {
  SECTION("holds: measured bytes 1% over 8MN") {
    const json c = find_claim(evaluate_claims(run_of({{"fused", TrafficModel::fused, kBigM, kBigN, 1.01}})),
                              "fused_intensity");
    CHECK(c["verdict"] == "holds");
    const json& row = c["rows"][0];
    CHECK_THAT(row["intensity"].get<double>(), WithinRel(0.375 / 1.01, 1e-12));
    CHECK(row["model_intensity"] == 0.375);
    CHECK_THAT(row["executed_flops_per_element"].get<double>(), WithinRel(4.0, 1e-12));
    CHECK_THAT(row["executed_intensity"].get<double>(), WithinRel(0.5 / 1.01, 1e-12));
    CHECK_THAT(row["xu_per_element"].get<double>(), WithinRel(1.0, 1e-12));
    REQUIRE(c.contains("explanation"));
    const std::string why = c["explanation"];
    CAPTURE(why);
    CHECK(why.find("MUFU.EX2") != std::string::npos);
    CHECK(why.find("reciprocal taken once per row") != std::string::npos);
  }
  SECTION("does not hold: 20% more bytes than one read and one write") {
    const json c = find_claim(evaluate_claims(run_of({{"fused", TrafficModel::fused, kBigM, kBigN, 1.2}})),
                              "fused_intensity");
    CHECK(c["verdict"] == "does not hold");
    CHECK(c["rows"][0]["verdict"] == "does not hold");
  }
  SECTION("partly: one shape of two off") {
    const json c = find_claim(evaluate_claims(run_of({{"fused", TrafficModel::fused, kBigM, kBigN, 1.0},
                                                      {"fused", TrafficModel::fused, kSmallM, kSmallN, 0.5}})),
                              "fused_intensity");
    CHECK(c["verdict"] == "partly");
  }
  SECTION("not measured without counters, with the reason; nothing left as 0") {
    const json c = find_claim(
        evaluate_claims(run_of({{"fused", TrafficModel::fused, kBigM, kBigN, 1.0, -1, 0.9, false}})),
        "fused_intensity");
    CHECK(c["verdict"] == "not measured");
    CHECK(c["summary"].get<std::string>().find(kNoCounters) != std::string::npos);
    const json& row = c["rows"][0];
    CHECK(row["verdict"] == "not measured");
    CHECK_FALSE(row.contains("intensity"));
    CHECK_FALSE(row.contains("dram_bytes"));
    CHECK_FALSE(row.contains("executed_intensity"));
    CHECK(row["model_intensity"] == 0.375);
  }
}

TEST_CASE("claim traffic_ratio", "[claims]") {
  SECTION("holds: 2.5 far above L2, the model's 1.5 where x and tmp fit") {
    const json c = find_claim(evaluate_claims(run_of({
                                  {"fused", TrafficModel::fused, kBigM, kBigN},
                                  {"unfused", TrafficModel::unfused, kBigM, kBigN},
                                  {"fused", TrafficModel::fused, kSmallM, kSmallN},
                                  {"unfused", TrafficModel::unfused, kSmallM, kSmallN},
                              })),
                              "traffic_ratio");
    CHECK(c["verdict"] == "holds");
    REQUIRE(c["rows"].size() == 2);
    const json& far = c["rows"][0];
    CHECK(far["regime"] == "far above L2");
    CHECK_THAT(far["measured_ratio"].get<double>(), WithinRel(2.5, 0.01));
    CHECK_THAT(far["time_ratio"].get<double>(), WithinRel(2.5, 0.01));  // same bandwidth, 2.5x the bytes
    const json& near = c["rows"][1];
    CHECK(near["regime"] == "within reach of L2");
    CHECK_THAT(near["measured_ratio"].get<double>(), WithinRel(1.5, 0.01));
    CHECK(near["verdict"] == "holds");
  }
  SECTION("does not hold: unfused moving only 1.8x far above L2") {
    const json c = find_claim(evaluate_claims(run_of({
                                  {"fused", TrafficModel::fused, kBigM, kBigN},
                                  {"unfused", TrafficModel::unfused, kBigM, kBigN, 1.8 / 2.5},
                              })),
                              "traffic_ratio");
    CHECK(c["verdict"] == "does not hold");
    CHECK_THAT(c["rows"][0]["measured_ratio"].get<double>(), WithinRel(1.8, 0.01));
  }
  SECTION("not measured without counters, but the time ratio is still there") {
    const json c = find_claim(evaluate_claims(run_of({
                                  {"fused", TrafficModel::fused, kBigM, kBigN, 1.0, -1, 0.9, false},
                                  {"unfused", TrafficModel::unfused, kBigM, kBigN, 1.0, -1, 0.9, false},
                              })),
                              "traffic_ratio");
    CHECK(c["verdict"] == "not measured");
    const json& row = c["rows"][0];
    CHECK_FALSE(row.contains("measured_ratio"));
    CHECK_THAT(row["time_ratio"].get<double>(), WithinRel(2.5, 0.01));
    CHECK_THAT(row["model_ratio"].get<double>(), WithinRel(2.5, 0.01));
    const std::string s = c["summary"];
    CAPTURE(s);
    CHECK(s.find(kNoCounters) != std::string::npos);
    CHECK(s.find("time ratio 2.5") != std::string::npos);
  }
}

TEST_CASE("a metric the device lacks is unavailable, named in the claims, never 0", "[claims]") {
  RunResults run = run_of({{"fused", TrafficModel::fused, kBigM, kBigN},
                           {"unfused", TrafficModel::unfused, kBigM, kBigN}});
  const std::string why = "not on chip TU104: the metric does not exist on this chip";
  for (Record& r : run.records) {
    // What the harness stores for a chip without DRAM read counters: the other metrics, and the
    // missing one named under extra.counters.unavailable.
    r.counters.erase(std::string(metric::kDramRead));
    r.counters.erase("dram_bytes");
    r.extra = {{"counters", {{"unavailable", {{std::string(metric::kDramRead), why}}}}}};
  }
  const json claims = evaluate_claims(run);
  for (const char* id : {"traffic_ratio", "model_traffic"}) {
    const json& c = find_claim(claims, id);
    CAPTURE(id, c.dump());
    CHECK(c["verdict"] == "not measured");
    const std::string s = c["summary"];
    CHECK(s.find("unavailable on this device: " + std::string(metric::kDramRead) + " (" + why + ")") !=
          std::string::npos);
    for (const json& row : c["rows"]) {
      CHECK_FALSE(row.contains("measured_ratio"));
      CHECK_FALSE(row.contains("dram_bytes"));
    }
  }
}

TEST_CASE("the L2 regime is the run's L2, not the H200's", "[claims]") {
  // x = 4 MiB: within reach of a 60 MiB L2, far above a 256 KiB one.
  RunResults run;
  run.ceilings = datasheet_h200();
  run.ceilings.l2_bytes = 256 * 1024;
  for (const Synth& s : {Synth{"fused", TrafficModel::fused, kSmallM, kSmallN},
                         Synth{"unfused", TrafficModel::unfused, kSmallM, kSmallN}})
    run.records.push_back(make(s, run.ceilings));
  const json c = find_claim(evaluate_claims(run), "traffic_ratio");
  REQUIRE(c["rows"].size() == 1);
  CHECK(c["rows"][0]["regime"] == "far above L2");
  CHECK_THAT(c["rows"][0]["x_over_L2"].get<double>(), WithinRel(16.0, 1e-9));
  CHECK_THAT(c["rows"][0]["model_ratio"].get<double>(), WithinRel(2.5, 0.01));
}

TEST_CASE("claim memory_bound", "[claims]") {
  SECTION("holds: 90% of the DRAM ceiling, a fraction of a percent of FP32") {
    const json c = find_claim(evaluate_claims(run_of({
                                  {"fused", TrafficModel::fused, kBigM, kBigN},
                                  {"unfused", TrafficModel::unfused, kBigM, kBigN},
                                  {"online", TrafficModel::online, kBigM, kBigN},
                              })),
                              "memory_bound");
    CHECK(c["verdict"] == "holds");
    REQUIRE(c["rows"].size() == 3);
    for (const auto& row : c["rows"]) {
      CHECK_THAT(row["dram_pct"].get<double>(), WithinRel(90.0, 1e-9));
      CHECK(row["flop_pct_of_fp32"].get<double>() < 5.0);
      // 4 executed FLOP per element against 3 algorithmic.
      CHECK_THAT(row["executed_GFLOPs"].get<double>(),
                 WithinRel(row["achieved_GFLOPs"].get<double>() * 4.0 / 3.0, 1e-12));
    }
  }
  SECTION("does not hold: a kernel at 30% of the DRAM ceiling") {
    const json c = find_claim(
        evaluate_claims(run_of({{"fused", TrafficModel::fused, kBigM, kBigN, 1.0, -1, 0.3}})),
        "memory_bound");
    CHECK(c["verdict"] == "does not hold");
  }
  SECTION("does not hold: FP32 units this fast would make it compute-bound") {
    RunResults run = run_of({{"fused", TrafficModel::fused, kBigM, kBigN}});
    run.ceilings.fp32_GFLOPs = 20000;  // 3 FLOP per element at 90% of 4.8 TB/s is ~1600 GFLOP/s
    const json c = find_claim(evaluate_claims(run), "memory_bound");
    CHECK(c["rows"][0]["flop_pct_of_fp32"].get<double>() > 5.0);
    CHECK(c["verdict"] == "does not hold");
  }
  SECTION("not measured without counters; the FLOP/s from time alone is given") {
    const json c = find_claim(
        evaluate_claims(run_of({{"fused", TrafficModel::fused, kBigM, kBigN, 1.0, -1, 0.9, false}})),
        "memory_bound");
    CHECK(c["verdict"] == "not measured");
    const json& row = c["rows"][0];
    CHECK(row.contains("achieved_GFLOPs"));
    CHECK(row.contains("flop_pct_of_fp32"));
    CHECK_FALSE(row.contains("dram_GBps"));
    CHECK_FALSE(row.contains("executed_GFLOPs"));
    const std::string s = c["summary"];
    CAPTURE(s);
    CHECK(s.find("from time alone, achieved FLOP/s") != std::string::npos);
    CHECK(c["summary"].get<std::string>().find(kNoCounters) != std::string::npos);
  }
}

TEST_CASE("claim online_second_read", "[claims]") {
  // N = 2048: 132 rows in flight fit in L2, the second read hits. N = 2^22, M = 32: it does not.
  constexpr std::int64_t kLongM = 32, kLongN = std::int64_t{1} << 22;
  SECTION("holds: L2 for short rows, DRAM for long rows, as modelled") {
    const json c = find_claim(evaluate_claims(run_of({
                                  {"online", TrafficModel::online, kBigM, kBigN, 1.02},
                                  {"online", TrafficModel::online, kLongM, kLongN, 0.99},
                              })),
                              "online_second_read");
    CHECK(c["verdict"] == "holds");
    CHECK(c["rows"][0]["second_read"] == "L2");
    CHECK(c["rows"][0]["model_second_read"] == "L2");
    CHECK_THAT(c["rows"][0]["measured_reads"].get<double>(), WithinRel(1.02, 1e-9));
    CHECK(c["rows"][1]["second_read"] == "DRAM");
    CHECK_THAT(c["rows"][1]["model_reads"].get<double>(), WithinRel(2.0, 1e-12));
  }
  SECTION("does not hold: a second read from DRAM where the model says L2") {
    const json c = find_claim(evaluate_claims(run_of({
                                  {"online", TrafficModel::online, kBigM, kBigN, 1.0, 2.0},
                              })),
                              "online_second_read");
    CHECK(c["verdict"] == "does not hold");
    CHECK(c["rows"][0]["second_read"] == "DRAM");
    CHECK(c["rows"][0]["model_second_read"] == "L2");
  }
  SECTION("not measured without counters") {
    const json c = find_claim(
        evaluate_claims(run_of({{"online", TrafficModel::online, kBigM, kBigN, 1.0, -1, 0.9, false}})),
        "online_second_read");
    CHECK(c["verdict"] == "not measured");
    CHECK_FALSE(c["rows"][0].contains("measured_reads"));
    CHECK(c["rows"][0]["model_second_read"] == "L2");
    CHECK(c["summary"].get<std::string>().find(kNoCounters) != std::string::npos);
  }
}

TEST_CASE("claim model_traffic: every kernel against its own model", "[claims]") {
  SECTION("far above L2: within 5% holds, 20% over does not, any kernel or dtype") {
    RunResults run = run_of({{"softmax", TrafficModel::two_read, 1, std::int64_t{1} << 26, 1.02},
                             {"cudnn", TrafficModel::unfused, 32, std::int64_t{1} << 22, 1.2}});
    const json c = find_claim(evaluate_claims(run), "model_traffic");
    REQUIRE(c["rows"].size() == 2);
    CHECK(c["rows"][0]["verdict"] == "holds");
    CHECK(c["rows"][0]["model"] == "two_read");
    CHECK_THAT(c["rows"][0]["deviation_pct"].get<double>(), WithinRel(2.0, 1e-9));
    CHECK(c["rows"][1]["verdict"] == "does not hold");
    CHECK(c["verdict"] == "partly");
  }
  SECTION("inside L2: not decidable here, and it does not count") {
    const json c = find_claim(evaluate_claims(run_of({{"fused", TrafficModel::fused, kSmallM, kSmallN, 1.3},
                                                      {"fused", TrafficModel::fused, kBigM, kBigN, 1.01}})),
                              "model_traffic");
    CHECK(c["rows"][0]["verdict"] == "not decidable here");
    CHECK(c["rows"][1]["verdict"] == "holds");
    CHECK(c["verdict"] == "holds");
    CHECK(c["summary"].get<std::string>().find("1 nearer L2 not decidable here") != std::string::npos);
  }
  SECTION("a peer is shown against the fused floor, without a verdict of its own") {
    RunResults run = run_of({{"torch.softmax", TrafficModel::fused, 32, std::int64_t{1} << 22, 1.5}});
    run.records[0].extra = {{"merged_from", "scripts/peers.py"}};
    const json c = find_claim(evaluate_claims(run), "model_traffic");
    CHECK(c["rows"][0]["verdict"] == "peer: no model of its own");
    CHECK_THAT(c["rows"][0]["deviation_pct"].get<double>(), WithinRel(50.0, 1e-9));
  }
  SECTION("without counters: not measured") {
    Synth s{"softmax", TrafficModel::fused, kBigM, kBigN};
    s.counters = false;
    const json c = find_claim(evaluate_claims(run_of({s})), "model_traffic");
    CHECK(c["verdict"] == "not measured");
    CHECK(c["summary"].get<std::string>().find(kNoCounters) != std::string::npos);
  }
}

TEST_CASE("claims: only successful records count", "[claims]") {
  RunResults run = run_of({{"fused", TrafficModel::fused, kBigM, kBigN, 1.5}});
  run.records[0].status = "failed";
  run.records[0].reason = "verification failed";
  const json c = find_claim(evaluate_claims(run), "fused_intensity");
  CHECK(c["verdict"] == "not measured");
  CHECK(c["rows"].empty());
}
