// Writes tests/data/results/sample-run/results.json: a SYNTHETIC run for the report tests.
//
// Nothing here was measured. The model fields come from the real model (predict); the times,
// counters and errors are made up from a simple rule so that every plot and table has something
// to draw: time = modelled DRAM bytes / a made-up bandwidth per kernel, counters = the model's
// bytes x 1.01. The config's name and the device's name say "synthetic" so the document can never
// be taken for a measurement. Regenerate (after a model or schema change) with
//   cmake --build BUILD --target smr_make_sample_run
//   BUILD/tests/browser/smr_make_sample_run tests/data/results/sample-run/results.json
#include <cmath>
#include <cstdio>
#include <string>

#include <nlohmann/json.hpp>

#include "roofline/claims.hpp"
#include "roofline/model.hpp"
#include "roofline/results.hpp"

namespace {

using nlohmann::json;
using namespace smr;

constexpr double kSectorBytes = 32;

struct FakeKernel {
  const char* name;
  TrafficModel traffic;
  double made_up_GBps;  // the synthetic bandwidth its times are made from
  bool counted;         // counters made up for it (the harness's kernels; the peers are timing only)
};

const FakeKernel kKernels[] = {
    {"unfused", TrafficModel::unfused, 3000, true},  {"fused", TrafficModel::fused, 3800, true},
    {"online", TrafficModel::online, 3300, true},    {"softmax", TrafficModel::fused, 3900, true},
    {"cudnn", TrafficModel::fused, 3500, false},     {"torch.softmax", TrafficModel::fused, 3400, false},
    {"triton.fused", TrafficModel::fused, 3600, false},
};
constexpr std::int64_t kFusedCap = 32768;  // the synthetic one-tile cap: longer rows are skipped

Record make_record(const FakeKernel& k, std::int64_t M, std::int64_t N, const Ceilings& c) {
  Record r;
  r.kernel = k.name;
  r.M = M, r.N = N, r.ld_x = N, r.ld_y = N;
  const Problem p = r.problem();
  r.model = predict(k.traffic, p, c);
  const bool one_tile = k.traffic == TrafficModel::fused && std::string(k.name) != "softmax" &&
                        std::string(k.name) != "torch.softmax" && std::string(k.name) != "cudnn";
  if (one_tile && N > kFusedCap) {
    r.status = "skipped";
    r.reason = "N = " + std::to_string(N) + " exceeds the one-tile cap of " + std::to_string(kFusedCap);
    return r;
  }
  if (std::string(k.name) == "cudnn" && N == 16384) {
    r.status = "failed";
    r.reason = "synthetic failure: CUDNN_STATUS_NOT_SUPPORTED (made up for the report tests)";
    return r;
  }
  const double t = r.model.dram_bytes / (k.made_up_GBps * 1e9);
  TimeStats ts;
  ts.median_s = t, ts.min_s = 0.98 * t, ts.max_s = 1.06 * t, ts.mean_s = 1.01 * t;
  ts.stddev_s = 0.012 * t, ts.cv = ts.stddev_s / ts.mean_s, ts.samples = 20;
  r.time = ts;
  r.effective_GBps = p.min_bytes() / t / 1e9;
  r.pct_of_copy = *r.effective_GBps / c.dram_GBps * 100;
  r.model_GBps = r.model.dram_bytes / t / 1e9;
  if (std::string(k.name) != "softmax" || N != 16384) {  // one ok record left unverified
    VerifyResult v;
    v.passed = true, v.max_rel_err = 2.4e-7, v.rel_l2_err = 8.1e-8, v.tolerance = 1e-5;
    v.rows_checked = std::min<std::int64_t>(M, 64);
    r.verify = v;
  }
  if (k.counted) {
    const double read = r.model.dram_read_bytes * 1.01, write = r.model.dram_write_bytes * 1.01;
    const double elements = static_cast<double>(M * N);
    json cn{{"dram__bytes_read.sum", read},
            {"dram__bytes_write.sum", write},
            {"lts__t_sectors_srcunit_tex.sum", r.model.l2_bytes / kSectorBytes},
            {"l1tex__t_bytes.sum", r.model.l2_bytes * 1.5},
            {"smsp__sass_thread_inst_executed_op_fadd_pred_on.sum", 2 * elements},
            {"smsp__sass_thread_inst_executed_op_fmul_pred_on.sum", 2 * elements},
            {"smsp__sass_thread_inst_executed_op_ffma_pred_on.sum", 1 * elements},
            {"smsp__inst_executed_pipe_xu.sum", 2 * elements / 32},
            {"gpu__time_duration.sum", t * 1e9}};
    cn["dram_bytes"] = read + write;
    cn["l1_l2_bytes"] = r.model.l2_bytes;
    cn["flops_executed"] = 6 * elements;
    cn["xu_thread_inst"] = 2 * elements;
    r.counters = cn;
  } else {
    r.counters_reason = "synthetic: counters are not read for peers outside the harness";
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s OUT/results.json\n", argv[0]);
    return 2;
  }
  RunResults run;
  run.tool_version = "synthetic";
  run.created = "2026-01-01T00:00:00Z";
  run.command = "smr_make_sample_run (synthetic fixture, nothing was run)";
  run.complete = true;
  run.ceilings = datasheet_h200();
  run.config = json{{"name", "synthetic fixture for tests"},
                    {"description",
                     "SYNTHETIC: made-up times and counters for the report and browser tests "
                     "(tests/browser/make_sample_run.cpp). Not a measurement."},
                    {"kernels", json::array()},
                    {"dtypes", {"fp32"}}};
  for (const auto& k : kKernels) run.config["kernels"].push_back(k.name);
  run.device = json{{"name", "synthetic fixture: no device was measured"}, {"sm", "9.0"},
                    {"SMs", 132}, {"L2_bytes", 62914560}};

  // A default-like sweep (M x N = 2^24, N = 2^8 .. 2^16) and an L2-regime sweep of the two
  // kernels of the traffic claim (N = 1024, x from 4 MiB to 1 GiB; no shape twice).
  for (int logN = 8; logN <= 16; logN += 2)
    for (const auto& k : kKernels)
      run.records.push_back(make_record(k, (std::int64_t{1} << 24) >> logN, std::int64_t{1} << logN, run.ceilings));
  for (std::int64_t M : {1024, 4096, 8192, 65536, 262144})  // 16384 is in the sweep above
    for (const auto& k : kKernels)
      if (std::string(k.name) == "unfused" || std::string(k.name) == "fused")
        run.records.push_back(make_record(k, M, 1024, run.ceilings));
  run.claims = evaluate_claims(run);
  write_results(argv[1], run);
  std::printf("wrote %s (%zu records, synthetic)\n", argv[1], run.records.size());
  return 0;
}
