// The tuning table (hidden; run with "[.tune]"): every candidate plan of the production softmax
// (candidate_plans: the default first, then the other tiles and neighbouring families that can run
// the shape) timed on the default sweep's shapes, each plan's output verified on sampled rows, one
// line a plan with its time relative to the default, and (SMR_TUNE_JSON=path) the same as JSON.
// The dispatch's thresholds are read from these tables (results/h200/tuning/). Environment:
// SMR_TUNE_DTYPES (e.g. "fp32" or "bf16,fp16"), SMR_TUNE_N=LO-HI, SMR_TUNE_LD_PAD=k,
// SMR_TUNE_INPUT=normal|mixed, SMR_TUNE_CONFIG=path (another sweep config's shapes). The
// executable skips visibly (exit 77) without a GPU.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "catch.hpp"
#include "kernels/gpu_check.hpp"
#include "harness/config.hpp"
#include "harness/device.hpp"
#include "harness/storage.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "kernels/registry.hpp"
#include "kernels/production/softmax_dispatch.hpp"
#include "kernels/production/softmax_families.hpp"

namespace {

using namespace smr;

DeviceLimits device_limits() {
  static const DeviceLimits d = query_device().limits();
  return d;
}

}  // namespace

namespace {

// Every hidden case's input: 2^27 elements, the default sweep's M x N.
constexpr std::int64_t kTuneElements = std::int64_t{1} << 27;

struct TuneShape {
  std::int64_t M, N;
};

// The shapes the hidden cases take: the default sweep's, or SMR_TUNE_CONFIG=path: each (M, N) of
// that sweep config, in its order (configs/odd-rows.yaml: odd N, dense, so that the staged plan
// and the register tiles are timed on the rows the odd-rows sweep runs; SMR_TUNE_LD_PAD still
// sets the stride).
std::vector<TuneShape> tune_shapes() {
  std::vector<TuneShape> s;
  if (const char* path = std::getenv("SMR_TUNE_CONFIG")) {
    SweepConfig c;
    try {
      c = load_config_file(path);
    } catch (const std::exception& e) {
      FAIL("SMR_TUNE_CONFIG=" << path << ": " << e.what());
    }
    for (const Problem& p : c.problems)
      if (std::none_of(s.begin(), s.end(),
                       [&](const TuneShape& o) { return o.M == p.M && o.N == p.N; }))
        s.push_back({p.M, p.N});
    return s;
  }
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
// 16- and 32-byte boundaries.
std::int64_t tune_ld_pad() {
  const char* e = std::getenv("SMR_TUNE_LD_PAD");
  if (e == nullptr) return 0;
  char* end = nullptr;
  const long long k = std::strtoll(e, &end, 10);
  if (end == e || *end != '\0' || k < 0 || k > 1024)
    FAIL("SMR_TUNE_LD_PAD=" << e << ": expected an integer from 0 to 1024");
  return k;
}

// The tuning case's input, 2^27 elements shared by every shape (each a dense view of it): N(0, 1)
// rows, or SMR_TUNE_INPUT=mixed: the sweep's cycle of row kinds (verify.hpp's InputKind::mixed,
// hostile rows among them) over rows of 1024 elements, so that a shape's rows take the kinds in
// runs of 1024 / N (N <= 1024) or several a row (whether the sweep's input moves a plan's time).
// Prints which.
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

// The tuning case's view of an M x N shape at SMR_TUNE_LD_PAD's stride (ld = N + pad, x and y
// alike) inside the 2^27-element input: as many of the M rows as fit (the table's M column says
// how many); nothing, with a line saying so, where not one row fits.
std::optional<Problem> padded_view(std::int64_t M, std::int64_t N, DType t, std::int64_t pad) {
  Problem p = dense(M, N, t);
  p.ld_x = p.ld_y = N + pad;
  p.M = std::min(M, kTuneElements / p.ld_x);
  if (p.M >= 1) return p;
  std::printf("%-6s %9lld %9lld  skipped: ld = %lld does not fit the 2^27-element input\n",
              std::string(to_string(t)).c_str(), static_cast<long long>(M),
              static_cast<long long>(N), static_cast<long long>(p.ld_x));
  return std::nullopt;
}

// The tuning case's input on the device in one dtype: x rounded to its storage (the reference's
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
          "[.tune][gpu][experiments]") {
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

