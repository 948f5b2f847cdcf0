// smr-counter-probe: one kernel, one shape, the harness's CUPTI counters as JSON.
//
//   smr-counter-probe selftest 4096 16384        # the profiler against a kernel of known counts
//   smr-counter-probe fused 16384 8192           # what CounterSession measures for one launch
//   smr-counter-probe fused 16384 8192 --ncu-ranges   # the same launches between
//       cudaProfilerStart/Stop pairs and no CUPTI, to run under `ncu --replay-mode app-range`
//   smr-counter-probe softmax 1048576 128 --dtype bf16  # 16-bit storage (default fp32)
//   smr-counter-probe softmax 65536 2048 --plan "block_row T=128 K=4 cap=2048"
//       # one of the dispatch's candidate plans (its summary, as the tuning table prints it)
//   smr-counter-probe softmax 64 1048576 --family block_hybrid
//       # the first plan of one family (family_plans), whatever the dispatch would pick
//   smr-counter-probe --attribute ranges.json    # attribute_counters() on values from elsewhere
//
// For the first GPU run and for scripts/ncu-compare; SMR_CUPTI_DEBUG=1 prints every CUPTI step.
// Exit codes: 0 ok, 1 error, 2 bad arguments, 3 no GPU, 4 counters unavailable (the JSON says why),
// 5 a selftest check failed.
#include <chrono>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <cuda_profiler_api.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/metrics.hpp"
#include "harness/counters.hpp"
#include "harness/device.hpp"
#include "harness/storage.hpp"
#include "kernels/registry.hpp"
#include "kernels/production/softmax_dispatch.hpp"

namespace {

using nlohmann::json;

constexpr int kExitError = 1, kExitUsage = 2, kExitNoGpu = 3, kExitUnavailable = 4,
              kExitCheckFailed = 5;
constexpr std::uint64_t kSeed = 2026;

std::vector<std::string> split_list(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

json to_json(const std::map<std::string, double>& m) {
  json j = json::object();
  for (const auto& [k, v] : m) j[k] = v;
  return j;
}

// What the selftest kernel must show: exact instruction counts, bytes within 1%.
struct Expectation {
  std::string metric;
  double value;
  double rel_tolerance;
};
std::vector<Expectation> selftest_expectations(double n) {
  return {
      {std::string(smr::metric::kDramRead), 4 * n, 0.01},
      {std::string(smr::metric::kDramWrite), 4 * n, 0.01},
      // 4n loaded + 4n stored, 32-B sectors
      {std::string(smr::metric::kL2SectorsFromL1), 8 * n / 32, 0.01},
      {std::string(smr::metric::kL1Bytes), 8 * n, 0.01},
      {std::string(smr::metric::kFfmaThreadInst), n, 0.0},
      {std::string(smr::metric::kFaddThreadInst), 0, 0.0},
      {std::string(smr::metric::kFmulThreadInst), 0, 0.0},
  };
}

json check_selftest(const smr::CounterReading& r, double n, bool& all_pass) {
  json checks = json::array();
  all_pass = true;
  for (const auto& e : selftest_expectations(n)) {
    const auto it = r.values.find(e.metric);
    if (it == r.values.end()) continue;  // not in this metric set
    const double err =
        e.value == 0 ? std::abs(it->second) : std::abs(it->second - e.value) / e.value;
    const bool pass = e.value == 0 ? it->second == 0 : err <= e.rel_tolerance;
    all_pass = all_pass && pass;
    checks.push_back({{"metric", e.metric}, {"expected", e.value}, {"measured", it->second},
                      {"rel_error", e.value == 0 ? json(nullptr) : json(err)},
                      {"tolerance", e.rel_tolerance}, {"pass", pass}});
  }
  return checks;
}

int attribute_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) {
    std::cerr << "smr-counter-probe: cannot read " << path << "\n";
    return kExitUsage;
  }
  json j;
  try {
    j = json::parse(in);
    const auto range = j.at("range_values").get<std::map<std::string, double>>();
    const auto evict = j.at("eviction_values").get<std::map<std::string, double>>();
    const smr::Attribution a = smr::attribute_counters(range, evict);
    std::cout << json{{"values", to_json(a.values)}, {"notes", a.notes}}.dump(2) << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "smr-counter-probe: " << path << ": " << e.what()
              << " (expected {\"range_values\": {...}, \"eviction_values\": {...}})\n";
    return kExitUsage;
  }
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Measure one kernel launch with the harness's CUPTI counters; JSON on stdout"};
  std::string kernel;
  std::int64_t M = 0, N = 0;
  std::string metrics_list;
  std::string attribute;
  bool ncu_ranges = false;
  std::string dtype_name = "fp32";
  std::string plan_text;
  std::string family_name;
  int repeat = 1;
  int evict_multiple = 4;
  app.add_option("kernel", kernel, "registry name (softmax-bench list), or `selftest`");
  app.add_option("M", M, "rows")->check(CLI::PositiveNumber);
  app.add_option("N", N, "columns")->check(CLI::PositiveNumber);
  app.add_option("--dtype", dtype_name, "storage of x and y: fp32, bf16 or fp16 (default fp32)");
  app.add_option("--plan", plan_text,
                 "softmax only: run this candidate plan, named by its summary as the tuning table "
                 "prints it (default: the dispatch's plan)");
  app.add_option("--family", family_name,
                 "softmax only: run the first plan of this family (warp_rows, block_row, "
                 "block_hybrid, cluster_tile, cluster_row, split_row); exit 2 when it cannot run "
                 "the shape");
  app.add_option("--metrics", metrics_list,
                 "comma-separated CUPTI metrics (default: the harness's set)");
  app.add_flag("--ncu-ranges", ncu_ranges,
               "no CUPTI: run the profiled sequence between cudaProfilerStart/Stop pairs (range 1: "
               "work + eviction, range 2: eviction), for ncu --replay-mode app-range");
  app.add_option("--repeat", repeat,
                 "measurements to take (profiling cost and stability); with --ncu-ranges, times "
                 "to run the two ranges")
      ->check(CLI::Range(1, 1000));
  app.add_option("--evict-multiple", evict_multiple, "eviction buffer size in multiples of L2")
      ->check(CLI::Range(1, 64));
  app.add_option("--attribute", attribute,
                 "attribute range values measured elsewhere (JSON with range_values and "
                 "eviction_values) and exit");
  CLI11_PARSE(app, argc, argv);

  if (!attribute.empty()) return attribute_file(attribute);
  if (kernel.empty() || M <= 0 || N <= 0) {
    std::cerr << "smr-counter-probe: KERNEL M N are required (or --attribute FILE); --help\n";
    return kExitUsage;
  }
  const std::optional<smr::DType> dtype = smr::parse_dtype(dtype_name);
  if (!dtype) {
    std::cerr << "smr-counter-probe: --dtype " << dtype_name << ": not fp32, bf16 or fp16\n";
    return kExitUsage;
  }
  const bool selftest = kernel == "selftest";
  if (selftest && *dtype != smr::DType::f32) {
    std::cerr << "smr-counter-probe: the selftest kernel is fp32 only (--dtype " << dtype_name
              << ")\n";
    return kExitUsage;
  }
  if (!family_name.empty() && (kernel != "softmax" || !plan_text.empty())) {
    std::cerr << "smr-counter-probe: --family picks a plan of the softmax entry, and not together "
                 "with --plan\n";
    return kExitUsage;
  }
  if (!plan_text.empty() && kernel != "softmax") {
    std::cerr << "smr-counter-probe: --plan names a plan of the softmax entry, not of " << kernel
              << "\n";
    return kExitUsage;
  }
  const smr::KernelInfo* k = selftest ? nullptr : smr::find_kernel(kernel);
  if (!selftest && !k) {
    std::cerr << "smr-counter-probe: unknown kernel \"" << kernel
              << "\" (softmax-bench list names them; or `selftest`)\n";
    return kExitUsage;
  }
  if (!smr::gpu_available()) {
    std::cerr << "smr-counter-probe: no CUDA device: the probe needs a GPU\n";
    return kExitNoGpu;
  }

  try {
    const smr::DeviceInfo dev = smr::query_device(0);
    const smr::Problem p = smr::dense(M, N, *dtype);
    if (k) {
      if (auto why = smr::why_unsupported(*k, p, dev.limits())) {
        std::cerr << "smr-counter-probe: " << kernel << " cannot run M=" << M << " N=" << N << ": "
                  << *why << "\n";
        return kExitUsage;
      }
      if (!k->launch) {
        std::cerr << "smr-counter-probe: " << kernel << " has no launcher in this build\n";
        return kExitUsage;
      }
    }
    std::optional<smr::SoftmaxPlan> plan;
    if (!family_name.empty()) {
      std::optional<smr::SoftmaxFamily> family;
      for (smr::SoftmaxFamily f :
           {smr::SoftmaxFamily::warp_rows, smr::SoftmaxFamily::block_row,
            smr::SoftmaxFamily::block_hybrid, smr::SoftmaxFamily::cluster_tile,
            smr::SoftmaxFamily::cluster_row, smr::SoftmaxFamily::split_row})
        if (smr::to_string(f) == family_name) family = f;
      if (!family) {
        std::cerr << "smr-counter-probe: --family " << family_name << ": not a softmax family\n";
        return kExitUsage;
      }
      const std::vector<smr::SoftmaxPlan> plans = smr::family_plans(*family, p, dev.limits());
      if (plans.empty()) {
        std::cerr << "smr-counter-probe: family " << family_name << " cannot run M=" << M
                  << " N=" << N << " " << dtype_name << " on this device\n";
        return kExitUsage;
      }
      plan = plans.front();
    }
    if (!plan_text.empty()) {
      plan = smr::find_candidate(p, dev.limits(), plan_text);
      if (!plan) {
        std::string names;
        for (const smr::SoftmaxPlan& c : smr::candidate_plans(p, dev.limits()))
          names += (names.empty() ? "" : "; ") + smr::summary(c);
        std::cerr << "smr-counter-probe: --plan \"" << plan_text << "\": not a candidate plan for M="
                  << M << " N=" << N << " " << dtype_name << " (candidates: " << names << ")\n";
        return kExitUsage;
      }
    }

    // Buffers and a seeded N(0,1) input (the values only need to be real data, not zeros).
    const std::size_t x_elems = static_cast<std::size_t>(p.M * p.ld_x);
    const std::size_t y_elems = static_cast<std::size_t>(p.M * p.ld_y);
    const std::size_t elem_bytes = static_cast<std::size_t>(smr::dtype_bytes(p.dtype));
    smr::DeviceBuffer x(x_elems * elem_bytes), y(y_elems * elem_bytes);
    smr::DeviceBuffer workspace(k && k->workspace_bytes ? k->workspace_bytes(p) : 0);
    {
      std::vector<float> host(x_elems);
      std::mt19937_64 rng(kSeed);
      std::normal_distribution<float> normal(0.0f, 1.0f);
      for (auto& v : host) v = normal(rng);
      const std::vector<unsigned char> stored = smr::to_storage(host, p.dtype);
      CUDA_CHECK(cudaMemcpy(x.get(), stored.data(), x.bytes(), cudaMemcpyHostToDevice));
    }
    smr::L2Evictor evict(static_cast<std::size_t>(dev.l2_bytes), evict_multiple);

    smr::Launch l;
    l.x = x.get();
    l.y = y.get();
    l.p = p;
    l.workspace = workspace.get();
    l.stream = nullptr;
    const std::function<void()> work = [&] {
      if (selftest)
        smr::launch_counter_selftest(x.as<const float>(), y.as<float>(), x_elems, nullptr);
      else if (plan)
        smr::launch_plan(*plan, l);
      else
        k->launch(l);
    };
    const std::function<void()> evict_l2 = [&] { evict(nullptr); };

    json out{{"tool", "smr-counter-probe"}, {"kernel", kernel}, {"M", M}, {"N", N},
             {"dtype", std::string(smr::to_string(p.dtype))}, {"device", dev.to_json()},
             {"eviction_bytes", evict.bytes()},
             {"plan", plan ? json(smr::summary(*plan)) : json(nullptr)}};

    if (ncu_ranges) {
      // The sequence CounterSession::measure runs, for Nsight Compute: a warm-up, an unprofiled
      // eviction, then two ranges.
      // eviction, then two ranges; the whole `repeat` times (the first profiled range of a process
      // reads high on writes under ncu too: scripts/ncu-compare uses the last repetition).
      work();
      CUDA_CHECK(cudaDeviceSynchronize());
      for (int i = 0; i < repeat; ++i) {
        evict_l2();
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaProfilerStart());
        work();
        CUDA_CHECK(cudaDeviceSynchronize());
        evict_l2();
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaProfilerStop());
        CUDA_CHECK(cudaProfilerStart());
        evict_l2();
        CUDA_CHECK(cudaDeviceSynchronize());
        CUDA_CHECK(cudaProfilerStop());
      }
      out["ranges"] = {"work+evict", "evict"};
      out["repeat"] = repeat;
      std::cout << out.dump(2) << "\n";
      return 0;
    }

    const auto metrics = split_list(metrics_list);
    const auto t_setup = std::chrono::steady_clock::now();
    smr::CounterSession session(metrics);
    const double setup_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t_setup).count();
    out["available"] = session.available();
    out["reason"] = session.available() ? json(nullptr) : json(session.unavailable_reason());
    out["chip"] = session.chip();
    out["metrics"] = session.metrics();
    // Metrics of the set this chip lacks, with why: measured without them, their checks left out.
    out["unavailable_metrics"] = session.unavailable_metrics();
    out["expected_passes"] = session.expected_passes();
    out["setup_s"] = setup_s;
    if (!session.available()) {
      std::cout << out.dump(2) << "\n";
      std::cerr << "smr-counter-probe: counters unavailable: " << session.unavailable_reason()
                << "\n";
      return kExitUnavailable;
    }

    json runs = json::array();
    smr::CounterReading last;
    for (int i = 0; i < repeat; ++i) {
      const auto t0 = std::chrono::steady_clock::now();
      last = session.measure(work, evict_l2);
      const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - t0;
      runs.push_back({{"ok", last.ok},
                      {"reason", last.ok ? json(nullptr) : json(last.reason)},
                      {"passes", last.passes},
                      {"wall_s", wall.count()},
                      {"values", to_json(last.values)},
                      {"range_values", to_json(last.range_values)},
                      {"eviction_values", to_json(last.eviction_values)},
                      {"notes", last.notes}});
      if (!last.ok) break;
    }
    out["measurements"] = runs;

    int rc = last.ok ? 0 : kExitUnavailable;
    if (selftest && last.ok) {
      bool pass = false;
      out["selftest"] = {{"checks", check_selftest(last, static_cast<double>(x_elems), pass)},
                         {"pass", pass}};
      if (!pass) rc = kExitCheckFailed;
    }
    std::cout << out.dump(2) << "\n";
    if (!last.ok) std::cerr << "smr-counter-probe: measurement failed: " << last.reason << "\n";
    if (rc == kExitCheckFailed)
      std::cerr << "smr-counter-probe: a selftest check failed (see \"selftest\")\n";
    return rc;
  } catch (const std::exception& e) {
    std::cerr << "smr-counter-probe: " << e.what() << "\n";
    return kExitError;
  }
}
