// The sweep driver (issue 4). Order of a run:
//   1. ceilings, measured on this card (reused from results.json on --resume)
//   2. per shape, per kernel: skip checks -> verify -> time (Google Benchmark, CUDA events) -> save
//   3. the counters pass (CUPTI), a separate pass over the records that were timed
//   4. peers merged, claims evaluated, report written
// Timing lives in timing.hpp, counting in counters.hpp; this file only orders the work and keeps
// the results safe: results.json is rewritten atomically after every record.
#include "harness/sweep.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <exception>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <stdexcept>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "harness/clocks.hpp"
#include "harness/counters.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "harness/verify_gpu.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/registry.hpp"
#include "roofline/claims.hpp"
#include "roofline/report.hpp"

namespace smr {

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

// ---- constants ----------------------------------------------------------------------------

constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = std::size_t{1} << 30;
// The copy ceiling is measured on 1 GiB read + 1 GiB written: far past the L2, long enough that
// launch latency is noise.
constexpr std::size_t kCeilingCopyBytes = kGiB;
// Device memory left free beyond what a record allocates (cuDNN, CUPTI and the driver need some).
constexpr std::size_t kMemoryMarginBytes = 256 * kMiB;

// ---- Ctrl-C -------------------------------------------------------------------------------

volatile std::sig_atomic_t g_interrupted = 0;

void on_sigint(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

// ---- small helpers ------------------------------------------------------------------------

double gb(double bytes) { return bytes / 1e9; }

std::string shape_text(const Problem& p) { return fmt::format("{}x{}", p.M, p.N); }

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(std::lround(std::max(seconds, 0.0)));
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

std::size_t buffer_bytes(std::int64_t rows, std::int64_t ld, DType t) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(ld) *
         static_cast<std::size_t>(dtype_bytes(t));
}

std::size_t free_device_bytes() {
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

// After a CUDA error: clear the error if it was not sticky and tell whether work can go on.
bool context_usable() {
  cudaGetLastError();
  if (cudaDeviceSynchronize() != cudaSuccess) return false;
  return cudaGetLastError() == cudaSuccess;
}

std::int64_t rows_in_flight(const KernelInfo& k, const Problem& p, const DeviceLimits& d) {
  return k.rows_in_flight ? k.rows_in_flight(p, d) : 0;
}

void upsert(RunResults& run, Record r) {
  const std::string key = r.key();
  for (auto& old : run.records)
    if (old.key() == key) {
      old = std::move(r);
      return;
    }
  run.records.push_back(std::move(r));
}

// The timing of one launcher, outside Google Benchmark (ceilings).
struct DirectTiming {
  TimeStats time;
  BatchPlan plan;
};
DirectTiming time_direct(const LaunchFn& launch, const TimingPolicy& policy, L2Flusher* flusher,
                         cudaStream_t stream) {
  const double single = calibrate(launch, flusher, stream, policy.warmup);
  // One buffer set only: the ceiling launches are long (1 GiB) or touch no data (FMA).
  SampleTimer timer(launch, plan_batch(single, 0, false, 0), flusher, stream);
  std::vector<double> t;
  const auto start = std::chrono::steady_clock::now();
  const NoiseStats noise = sample_until_quiet(
      t, stop_rule(policy, single * timer.plan().launches),
      [&](int n) {
        for (int i = 0; i < n; ++i) t.push_back(timer.sample());
      },
      [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); });
  DirectTiming out{summarize(std::move(t), timer.plan().launches,
                             flusher != nullptr && timer.plan().launches == 1),
                   timer.plan()};
  out.time.noise = noise;
  return out;
}

json time_json(const TimeStats& t) {
  json j = {{"median_s", t.median_s}, {"min_s", t.min_s},   {"max_s", t.max_s},
            {"cv", t.cv},             {"samples", t.samples}, {"launches_per_sample", t.launches_per_sample}};
  if (t.noise) {
    j["noise"] = {{"converged", t.noise->converged}, {"target", t.noise->target},
                  {"seconds", t.noise->seconds}};
    // +inf (too few samples for the interval) is not JSON: left out.
    if (std::isfinite(t.noise->value)) j["noise"]["value"] = t.noise->value;
  }
  return j;
}

// ---- Google Benchmark: the runner and its JSON -------------------------------------------

void init_google_benchmark() {
  static bool done = false;
  if (done) return;
  static char name[] = "softmax-bench";
  static char* argv[] = {name, nullptr};
  int argc = 1;
  benchmark::Initialize(&argc, argv);
  done = true;
}

// gbench.json: Google Benchmark's own JSON document, one entry per timed record, accumulated over
// the records (and over the runs of a --resume) from what its JSONReporter writes.
class GbenchLog {
 public:
  // `resume`: keep the entries of the run being continued; otherwise start empty (--force).
  GbenchLog(fs::path file, bool resume) : file_(std::move(file)) {
    if (!resume) return;
    std::ifstream in(file_);
    if (in) {
      try {
        doc_ = json::parse(in);
      } catch (const json::exception&) {
        doc_ = nullptr;  // a damaged file from an earlier run is rewritten from this run
      }
    }
  }
  void add(const std::string& reporter_output) {
    json j = json::parse(reporter_output);
    if (!doc_.is_object() || !doc_.contains("benchmarks")) {
      doc_ = std::move(j);
      return;
    }
    for (auto& b : j["benchmarks"]) {
      // A re-timed record replaces its earlier entry.
      auto& list = doc_["benchmarks"];
      for (auto it = list.begin(); it != list.end(); ++it)
        if ((*it).value("name", "") == b.value("name", "")) {
          list.erase(it);
          break;
        }
      list.push_back(b);
    }
  }
  void save() const {
    if (doc_.is_object()) write_file_atomic(file_, doc_.dump(2) + "\n");
  }

 private:
  fs::path file_;
  json doc_;
};

// ---- the terminal progress line ----------------------------------------------------------

class Progress {
 public:
  Progress(int total, int already_done, bool quiet)
      : on_(!quiet && isatty(fileno(stderr))),
        total_(total),
        done_(already_done),
        start_(std::chrono::steady_clock::now()) {}
  void show(const std::string& kernel, const Problem& p) {
    if (!on_) return;
    const double elapsed = seconds();
    std::string eta = "--:--";
    if (done_here_ > 0) eta = clock_text(elapsed / done_here_ * (total_ - done_));
    std::fprintf(stderr, "\r\x1b[K%d/%d %s %s  elapsed %s  ETA %s", done_, total_, kernel.c_str(),
                 shape_text(p).c_str(), clock_text(elapsed).c_str(), eta.c_str());
    std::fflush(stderr);
  }
  void finished_one() {
    ++done_;
    ++done_here_;
  }
  void clear() {
    if (!on_) return;
    std::fprintf(stderr, "\r\x1b[K");
    std::fflush(stderr);
  }
  // For messages printed while the line is showing.
  void message(const std::string& text) {
    clear();
    std::fprintf(stderr, "%s\n", text.c_str());
  }
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }
  int done() const { return done_; }

 private:
  bool on_;
  int total_, done_, done_here_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// ---- one shape's data, shared by the kernels of the shape --------------------------------

// The input lives on the device only: made there from the run's seed (harness/verify_gpu.hpp),
// and verified there, every row of every record.
struct ShapeData {
  Problem p;
  std::uint64_t seed = 0;
  DeviceBuffer x, y;
};

ShapeData make_shape(const Problem& p, std::uint64_t seed, cudaStream_t stream) {
  ShapeData s;
  s.p = p;
  s.seed = seed;
  s.x = DeviceBuffer(buffer_bytes(p.M, p.ld_x, p.dtype));
  s.y = DeviceBuffer(buffer_bytes(p.M, p.ld_y, p.dtype));
  fill_input_device(s.x.get(), p, seed, InputKind::mixed, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return s;
}

// Everything the records of a run share.
struct Context {
  const SweepOptions& opt;
  const SweepConfig& cfg;
  DeviceInfo device;
  DeviceLimits limits;
  RunResults run;
  fs::path results_file;
  CudaStream stream;
  L2Flusher flusher;
  GbenchLog gbench;
  ClockWatch clocks;         // NVML's view of the SM clock; unavailable says why
  double timing_wall_s = 0;  // summed over the records timed in this run
  double verify_wall_s = 0;  // input made on the device, launch and the device's check, likewise

  Context(const SweepOptions& o, DeviceInfo d)
      : opt(o),
        cfg(o.config),
        device(std::move(d)),
        limits(device.limits()),
        results_file(o.dir / "results.json"),
        flusher(device.l2_bytes),
        gbench(o.dir / "gbench.json", o.resume) {}

  void save() {
    write_results(results_file, run);
    gbench.save();
  }
};

// ---- one record: skip checks, verification, timing ---------------------------------------

// Bytes a record needs on the device beyond what is already allocated for its shape.
std::size_t record_bytes(const KernelInfo& k, const Problem& p, bool shape_allocated) {
  std::size_t need = k.workspace_bytes ? k.workspace_bytes(p) : 0;
  if (!shape_allocated) need += buffer_bytes(p.M, p.ld_x, p.dtype) + buffer_bytes(p.M, p.ld_y, p.dtype);
  return need;
}

// Launch once on a freshly made input and a NaN-poisoned output, then check every row of the
// output on the device.
std::optional<VerifyResult> verify_record(const KernelInfo& k, ShapeData& s, void* workspace,
                                          const SweepConfig& cfg, cudaStream_t stream) {
  if (k.traffic == TrafficModel::compute) return std::nullopt;  // FMA: no output to check
  const Problem& p = s.p;
  // Made again for each kernel: a kernel that wrote into x must not hand the next one its damage.
  fill_input_device(s.x.get(), p, s.seed, InputKind::mixed, stream);
  poison_nan(s.y.get(), s.y.bytes(), stream);
  k.launch(Launch{s.x.get(), s.y.get(), p, workspace, stream});
  // The copy ceiling kernel's output must equal its input bit for bit.
  if (!k.is_softmax()) return verify_copy_device(p, s.x.get(), s.y.get(), stream);
  // fp32: the config's tolerance; 16-bit storage: the rounding of the stored output on top of it.
  if (p.dtype == DType::f32)
    return verify_output_device(p, s.x.get(), s.y.get(), cfg.tolerance, stream);
  return verify_storage_output_device(p, s.x.get(), s.y.get(), stream);
}

// One buffer set of a batched sample: input, output, workspace.
struct BufferSet {
  DeviceBuffer x, y, ws;
};

void time_record(const KernelInfo& k, ShapeData& s, DeviceBuffer& workspace, Record& r,
                 Context& ctx) {
  const Problem& p = s.p;
  const TimingPolicy& policy = ctx.cfg.timing;
  const auto wall_start = std::chrono::steady_clock::now();
  L2Flusher* flusher = policy.flush_l2 ? &ctx.flusher : nullptr;
  cudaStream_t stream = ctx.stream.get();

  // Set 0 is the shape's own buffers; more are made only for batched short launches.
  std::vector<const void*> xs{s.x.get()};
  std::vector<void*> ys{s.y.get()}, wss{workspace.get()};
  std::vector<BufferSet> extra_sets;
  const LaunchFn launch = [&](int set, cudaStream_t st) {
    k.launch(Launch{xs[static_cast<std::size_t>(set)], ys[static_cast<std::size_t>(set)], p,
                    wss[static_cast<std::size_t>(set)], st});
  };

  const double single = calibrate(launch, flusher, stream, policy.warmup);
  const std::size_t set_bytes = s.x.bytes() + s.y.bytes() + workspace.bytes();
  const std::size_t free_b = free_device_bytes();
  const std::size_t spare = free_b > kMemoryMarginBytes ? free_b - kMemoryMarginBytes : 0;
  const BatchPlan wanted = plan_batch(single, set_bytes, policy.flush_l2, spare);
  for (int i = 1; i < wanted.sets; ++i) {
    BufferSet b{DeviceBuffer(s.x.bytes()), DeviceBuffer(s.y.bytes()), DeviceBuffer(workspace.bytes())};
    CUDA_CHECK(cudaMemcpyAsync(b.x.get(), s.x.get(), s.x.bytes(), cudaMemcpyDeviceToDevice, stream));
    xs.push_back(b.x.get());
    ys.push_back(b.y.get());
    wss.push_back(b.ws.get());
    extra_sets.push_back(std::move(b));
  }
  SampleTimer timer(launch, wanted, flusher, stream);
  const BatchPlan& plan = timer.plan();
  // Google Benchmark runs the samples, in rounds (harness/noise.hpp's sample_until_quiet asks
  // for more until the median is sure enough or the record's time is up): one iteration = one
  // sample (flush, event, batch, event), its manual time = the sample's time per launch. Our
  // statistics come from the same samples. The SM clock is read between samples.
  std::vector<double> samples;
  std::exception_ptr failure;
  const std::string name = fmt::format("{}/{}/M:{}/N:{}", r.kernel, to_string(p.dtype), p.M, p.N);
  const double bytes_per_launch = p.min_bytes();
  ClockTally clocks;
  int round = 0;
  const auto take = [&](int iterations) {
    // Later rounds get their own gbench.json entries: name/round:2, ...
    const std::string entry = ++round == 1 ? name : fmt::format("{}/round:{}", name, round);
    benchmark::RegisterBenchmark(entry.c_str(), [&](benchmark::State& state) {
      for (auto _ : state) {
        try {
          const double t = timer.sample();
          samples.push_back(t);
          state.SetIterationTime(t);
          if (samples.size() % kClockReadEvery == 0) ctx.clocks.read(clocks);
        } catch (...) {
          failure = std::current_exception();
          state.SkipWithError("CUDA error while timing");
          break;
        }
      }
      state.SetBytesProcessed(static_cast<std::int64_t>(bytes_per_launch) * state.iterations());
      state.counters["launches_per_sample"] = plan.launches;
    })
        ->Iterations(iterations)
        ->UseManualTime()
        ->Unit(benchmark::kMicrosecond);
    std::ostringstream out, err;
    benchmark::JSONReporter reporter;
    reporter.SetOutputStream(&out);
    reporter.SetErrorStream(&err);
    benchmark::RunSpecifiedBenchmarks(&reporter);
    benchmark::ClearRegisteredBenchmarks();
    if (failure) std::rethrow_exception(failure);
    ctx.gbench.add(out.str());
  };
  ctx.clocks.read(clocks);
  const auto sampling_start = std::chrono::steady_clock::now();
  const NoiseStats noise = sample_until_quiet(
      samples, stop_rule(policy, single * plan.launches), take, [&] {
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - sampling_start)
            .count();
      });
  ctx.clocks.read(clocks);

  const bool every_launch_cold = policy.flush_l2 && plan.sets == plan.launches;
  r.time = summarize(std::move(samples), plan.launches, every_launch_cold);
  r.time->noise = noise;
  r.time->clocks = ctx.clocks.stats(clocks);
  const double median = r.time->median_s;
  r.effective_GBps = gb(p.min_bytes()) / median;
  r.pct_of_copy = *r.effective_GBps / ctx.run.ceilings.dram_GBps * 100.0;
  if (r.model.dram_bytes > 0) r.model_GBps = gb(r.model.dram_bytes) / median;
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  ctx.timing_wall_s += wall;
  if (!r.extra.is_object()) r.extra = json::object();
  r.extra["timing"] = {{"calibration_s", single},
                       {"launches_per_sample", plan.launches},
                       {"buffer_sets", plan.sets},
                       {"graph", plan.graph},
                       {"wall_s", wall}};
}

// Fills r (status, reason, verify, time ...) for one kernel on one shape. Throws CudaError.
void run_record(const KernelInfo& k, std::optional<ShapeData>& shape, const Problem& p, Record& r,
                Context& ctx) {
  if (auto why = why_unsupported(k, p, ctx.limits)) {
    r.status = "skipped";
    r.reason = *why;
    return;
  }
  const std::size_t need = record_bytes(k, p, shape.has_value());
  const std::size_t free_b = free_device_bytes();
  if (need + kMemoryMarginBytes > free_b) {
    r.status = "skipped";
    r.reason = fmt::format("needs {:.2f} GB of device memory (x, y, workspace), {:.2f} GB free",
                           gb(static_cast<double>(need)), gb(static_cast<double>(free_b)));
    return;
  }
  const auto verify_start = std::chrono::steady_clock::now();
  if (!shape) shape = make_shape(p, ctx.cfg.seed, ctx.stream.get());
  DeviceBuffer workspace(k.workspace_bytes ? k.workspace_bytes(p) : 0);

  r.verify = verify_record(k, *shape, workspace.get(), ctx.cfg, ctx.stream.get());
  ctx.verify_wall_s +=
      std::chrono::duration<double>(std::chrono::steady_clock::now() - verify_start).count();
  if (r.verify && !r.verify->passed) {
    r.status = "failed";
    r.reason = "verification failed: " + r.verify->detail;
    return;  // a wrong kernel is never timed
  }
  if (!r.verify) {
    if (!r.extra.is_object()) r.extra = json::object();
    r.extra["verify"] = "not applicable: the FMA ceiling kernel's output is not a softmax";
  }
  time_record(k, *shape, workspace, r, ctx);
  r.status = "ok";
}

Record base_record(const KernelInfo& k, const Problem& p, const Context& ctx) {
  Record r;
  r.kernel = k.name;
  r.dtype = p.dtype;
  r.M = p.M;
  r.N = p.N;
  r.ld_x = p.ld_x;
  r.ld_y = p.ld_y;
  r.model = predict(traffic_model(k, p, ctx.limits), p, ctx.run.ceilings,
                    rows_in_flight(k, p, ctx.limits));
  if (k.plan_for) {
    if (!r.extra.is_object()) r.extra = json::object();
    r.extra["plan"] = k.plan_for(p, ctx.limits);
  }
  return r;
}

// ---- the counters pass -------------------------------------------------------------------

bool wants_counters(const Record& r) {
  return r.status == "ok" && r.counters.is_null() && !r.counters_reason;
}

void note_counters(Record& r, const std::string& why) { r.counters_reason = why; }

// Returns false when interrupted.
bool counters_pass(Context& ctx) {
  std::vector<std::size_t> todo;
  for (std::size_t i = 0; i < ctx.run.records.size(); ++i)
    if (wants_counters(ctx.run.records[i]) && find_kernel(ctx.run.records[i].kernel)) todo.push_back(i);
  if (todo.empty()) return true;
  Progress progress(static_cast<int>(todo.size()), 0, ctx.opt.quiet);

  std::optional<CounterSession> session;
  std::string unavailable;
  try {
    session.emplace(ctx.cfg.counters.metrics);
    if (!session->available()) unavailable = session->unavailable_reason();
  } catch (const std::exception& e) {
    unavailable = e.what();
  }
  if (!unavailable.empty()) {
    progress.message("counters not measured: " + unavailable);
    for (std::size_t i : todo) note_counters(ctx.run.records[i], unavailable);
    ctx.save();
    return true;
  }

  L2Evictor evict(static_cast<std::size_t>(ctx.device.l2_bytes));
  std::optional<ShapeData> shape;
  for (std::size_t i : todo) {
    if (g_interrupted) return false;
    Record& r = ctx.run.records[i];
    const KernelInfo& k = *find_kernel(r.kernel);
    const Problem p = r.problem();
    const auto record_start = std::chrono::steady_clock::now();
    progress.show("counters: " + r.kernel, p);
    try {
      cudaStream_t stream = ctx.stream.get();
      // x is made on the device once per shape: every kernel takes it as const, and it is made
      // from the run's seed, so it is the input the timing pass verified each kernel on.
      if (!shape || shape->p.M != p.M || shape->p.N != p.N || shape->p.ld_x != p.ld_x ||
          shape->p.ld_y != p.ld_y || shape->p.dtype != p.dtype) {
        shape.reset();
        shape = make_shape(p, ctx.cfg.seed, stream);
      }
      DeviceBuffer workspace(k.workspace_bytes ? k.workspace_bytes(p) : 0);
      const CounterReading reading = session->measure(
          [&] {
            k.launch(Launch{shape->x.get(), shape->y.get(), p, workspace.get(), stream});
            CUDA_CHECK(cudaStreamSynchronize(stream));
          },
          [&] {
            evict(stream);
            CUDA_CHECK(cudaStreamSynchronize(stream));
          });
      if (reading.ok) {
        r.counters = json(reading.values);  // metric name -> number, as results.hpp wants it
        if (!r.extra.is_object()) r.extra = json::object();
        const std::chrono::duration<double> wall = std::chrono::steady_clock::now() - record_start;
        // wall_s: this record's share of the counters pass (input made on the device when the
        // shape changes, the passes, decoding); measure_s: the CUPTI measurement alone.
        r.extra["counters"] = {{"passes", reading.passes},
                               {"notes", reading.notes},
                               {"wall_s", wall.count()},
                               {"measure_s", reading.wall_ms / 1000.0}};
      } else {
        note_counters(r, reading.reason);
      }
    } catch (const CudaError& e) {
      note_counters(r, e.what());
      if (!context_usable()) {
        ctx.save();
        throw;
      }
    }
    ctx.save();
    progress.finished_one();
  }
  progress.clear();
  return true;
}

// ---- ceilings ------------------------------------------------------------------------------

std::int64_t find_rows_for(std::size_t bytes, std::int64_t cols) {
  return static_cast<std::int64_t>(bytes / sizeof(float)) / cols;
}

}  // namespace

// ---- public --------------------------------------------------------------------------------

fs::path fresh_run_dir(const fs::path& parent, const std::string& name) {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%dT%H%M%SZ", &tm);
  const std::string base = (name.empty() ? std::string("run") : name) + "-" + stamp;
  fs::path dir = parent / base;
  for (int i = 2; fs::exists(dir); ++i) dir = parent / fmt::format("{}-{}", base, i);
  return dir;
}

Ceilings measure_ceilings(const DeviceInfo& device, const TimingPolicy& policy, json& detail) {
  Ceilings c = datasheet_h200();
  c.source = "measured";
  c.device = device.name;
  c.peak_dram_GBps = device.peak_dram_GBps();
  c.l2_bytes = device.l2_bytes;
  c.sm_count = device.sm_count;
  detail = json::object();
  detail["peak_dram_GBps"] = {{"GBps", c.peak_dram_GBps},
                              {"how", "2 x memory clock x bus width / 8 (cudaDevAttrMemoryClockRate)"}};

  CudaStream stream;
  L2Flusher flusher(device.l2_bytes);
  const DeviceLimits limits = device.limits();

  // DRAM copy: cudaMemcpyAsync device to device, and the registry's copy kernel.
  {
    DeviceBuffer src(kCeilingCopyBytes), dst(kCeilingCopyBytes);
    CUDA_CHECK(cudaMemsetAsync(src.get(), 0, src.bytes(), stream.get()));
    const DirectTiming memcpy_t = time_direct(
        [&](int, cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kCeilingCopyBytes,
                                     cudaMemcpyDeviceToDevice, s));
        },
        policy, &flusher, stream.get());
    const double memcpy_GBps = 2.0 * gb(static_cast<double>(kCeilingCopyBytes)) / memcpy_t.time.median_s;
    detail["memcpy_d2d"] = {{"GBps", memcpy_GBps},
                            {"bytes_each_way", kCeilingCopyBytes},
                            {"time", time_json(memcpy_t.time)}};
    double best = memcpy_GBps;
    std::string best_of = "memcpy_d2d";

    constexpr std::int64_t kCopyCols = 4096;
    const Problem p = dense(find_rows_for(kCeilingCopyBytes, kCopyCols), kCopyCols);
    const KernelInfo* copy = find_kernel("copy");
    std::optional<std::string> why;
    if (!copy || !copy->launch) why = "no `copy` entry with a launcher in the registry";
    else why = why_unsupported(*copy, p, limits);
    if (why) {
      detail["copy_kernel"] = {{"not_measured", *why}};
    } else {
      DeviceBuffer ws(copy->workspace_bytes ? copy->workspace_bytes(p) : 0);
      const DirectTiming copy_t = time_direct(
          [&](int, cudaStream_t s) { copy->launch(Launch{src.get(), dst.get(), p, ws.get(), s}); },
          policy, &flusher, stream.get());
      const double copy_GBps = gb(p.min_bytes()) / copy_t.time.median_s;
      detail["copy_kernel"] = {{"GBps", copy_GBps},
                               {"M", p.M},
                               {"N", p.N},
                               {"time", time_json(copy_t.time)}};
      if (copy_GBps > best) {
        best = copy_GBps;
        best_of = "copy_kernel";
      }
    }
    c.dram_GBps = best;
    detail["dram_GBps"] = {{"GBps", best}, {"best_of", best_of},
                           {"how", "bytes read + bytes written / median time, L2 flushed"}};
  }

  // FP32 FMA throughput: the registry's fma kernel, kFmaFlopsPerElement FLOPs per element
  // (kernels/ceilings/ceilings.hpp). 2^20 elements: ~8.6 GFLOP, a launch of ~0.1 ms on an H200.
  {
    const KernelInfo* fma = find_kernel("fma");
    const Problem p = dense(1024, 1024);
    std::optional<std::string> why;
    if (!fma || !fma->launch) why = "no `fma` entry with a launcher in the registry";
    else why = why_unsupported(*fma, p, limits);
    if (why) {
      detail["fp32_GFLOPs"] = {{"not_measured", *why}, {"GFLOPs", c.fp32_GFLOPs}, {"source", "datasheet"}};
    } else {
      const double flops = ceilings::kFmaFlopsPerElement * static_cast<double>(p.elements());
      DeviceBuffer x(buffer_bytes(p.M, p.ld_x, p.dtype)), y(buffer_bytes(p.M, p.ld_y, p.dtype));
      DeviceBuffer ws(fma->workspace_bytes ? fma->workspace_bytes(p) : 0);
      CUDA_CHECK(cudaMemsetAsync(x.get(), 0, x.bytes(), stream.get()));
      const DirectTiming t = time_direct(
          [&](int, cudaStream_t s) { fma->launch(Launch{x.get(), y.get(), p, ws.get(), s}); },
          policy, nullptr, stream.get());
      c.fp32_GFLOPs = flops / t.time.median_s / 1e9;
      detail["fp32_GFLOPs"] = {{"GFLOPs", c.fp32_GFLOPs},
                               {"flops_per_launch", flops},
                               {"M", p.M},
                               {"N", p.N},
                               {"how", "FMA counted as 2 FLOP; no L2 flush (no data to speak of)"},
                               {"time", time_json(t.time)}};
    }
  }

  // L2: a buffer well inside it, re-read.
  {
    const L2Measurement m = measure_l2_read(device, policy, stream.get());
    c.l2_GBps = m.GBps;
    detail["l2_GBps"] = {{"GBps", m.GBps},
                         {"buffer_bytes", m.buffer_bytes},
                         {"passes", m.passes},
                         {"how", "reads only, L1 bypassed (ld.global.cg), buffer = L2 / 4"},
                         {"time", time_json(m.time)}};
  }
  return c;
}

int merge_peers(RunResults& run, const std::vector<Record>& peers) {
  int n = 0;
  for (Record r : peers) {
    if (r.effective_GBps && run.ceilings.dram_GBps > 0)
      r.pct_of_copy = *r.effective_GBps / run.ceilings.dram_GBps * 100.0;
    // peers.py writes no model (null numbers): a peer is held against the fused model, one read
    // of x and one write of y, the floor for any softmax.
    if (!(r.model.dram_bytes > 0)) {
      r.model = predict(TrafficModel::fused, r.problem(), run.ceilings);
      r.model.note = "peer, held against the fused model (one read of x, one write of y): " +
                     r.model.note;
    }
    if (r.time && r.time->median_s > 0) r.model_GBps = gb(r.model.dram_bytes) / r.time->median_s;
    if (!r.extra.is_object()) r.extra = json::object();
    r.extra["merged_from"] = "scripts/peers.py";
    upsert(run, std::move(r));
    ++n;
  }
  return n;
}

int remodel_records(RunResults& run) {
  DeviceLimits limits;  // the H200's, with the size facts of the run's ceilings (as `model` does)
  limits.sm_count = run.ceilings.sm_count;
  limits.l2_bytes = static_cast<std::size_t>(run.ceilings.l2_bytes);
  int n = 0;
  for (Record& r : run.records) {
    const KernelInfo* k = find_kernel(r.kernel);
    if (!k || (r.extra.is_object() && r.extra.contains("merged_from"))) continue;
    const Problem p = r.problem();
    const TrafficModel now = traffic_model(*k, p, limits);
    if (now == r.model.traffic) continue;
    const std::string was(to_string(r.model.traffic));
    r.model = predict(now, p, run.ceilings, rows_in_flight(*k, p, limits));
    r.model.note = fmt::format("re-modelled by `report` (the run stored the {} model): {}", was,
                               r.model.note);
    if (r.time && r.time->median_s > 0) r.model_GBps = gb(r.model.dram_bytes) / r.time->median_s;
    ++n;
  }
  return n;
}

int run_sweep(const SweepOptions& opt) {
  const SweepConfig& cfg = opt.config;
  g_interrupted = 0;
  std::signal(SIGINT, on_sigint);
  fs::create_directories(opt.dir);

  Context ctx(opt, query_device());
  RunResults& run = ctx.run;
  bool reuse_ceilings = false;
  if (opt.resume) {
    run = read_results(ctx.results_file);
    reuse_ceilings = run.ceilings.source == "measured" && run.device.is_object() &&
                     run.device.value("name", "") == ctx.device.name;
  }
  run.tool_version = SMR_VERSION;
  if (run.created.empty()) run.created = utc_now_iso8601();
  run.command = opt.command;
  run.config = cfg.normalized;
  run.complete = false;
  json device = ctx.device.to_json();
  if (reuse_ceilings && run.device.contains("ceiling_measurements"))
    device["ceiling_measurements"] = run.device["ceiling_measurements"];
  run.device = device;

  const int total = static_cast<int>(cfg.problems.size() * cfg.kernels.size());
  std::map<std::string, std::string> have;  // key -> status, from the run being resumed
  for (const Record& r : run.records) have[r.key()] = r.status;

  // 1. Ceilings.
  if (!reuse_ceilings) {
    if (!opt.quiet) std::fprintf(stderr, "measuring ceilings on %s ...\n", ctx.device.name.c_str());
    json detail;
    run.ceilings = measure_ceilings(ctx.device, cfg.timing, detail);
    run.device["ceiling_measurements"] = detail;
  }
  ctx.save();
  if (!opt.quiet)
    std::fprintf(stderr, "ceilings: copy %.0f GB/s, peak %.0f GB/s, L2 %.0f GB/s, FP32 %.0f GFLOP/s\n",
                 run.ceilings.dram_GBps, run.ceilings.peak_dram_GBps, run.ceilings.l2_GBps,
                 run.ceilings.fp32_GFLOPs);

  init_google_benchmark();
  int already = 0;
  for (const Problem& p : cfg.problems)
    for (const auto& name : cfg.kernels) {
      Record probe;
      probe.kernel = name;
      probe.dtype = p.dtype;
      probe.M = p.M;
      probe.N = p.N;
      probe.ld_x = p.ld_x;
      probe.ld_y = p.ld_y;
      auto it = have.find(probe.key());
      if (it != have.end() && it->second != "failed") ++already;
    }
  Progress progress(total, already, opt.quiet);

  const auto say_resume = [&](const std::string& why) {
    progress.message(fmt::format(
        "{}; {} of {} records saved in {}\ncontinue with: softmax-bench run {}--resume {}", why,
        progress.done(), total, ctx.results_file.string(),
        opt.config_arg.empty() ? std::string() : opt.config_arg + " ", opt.dir.string()));
  };

  // 2. Verify and time, shape by shape (the input of a shape is generated once for its kernels).
  for (const Problem& p : cfg.problems) {
    std::optional<ShapeData> shape;
    for (const std::string& name : cfg.kernels) {
      if (g_interrupted) {
        ctx.save();
        say_resume("interrupted");
        return 130;
      }
      const KernelInfo* k = find_kernel(name);
      if (!k) continue;  // the config loader only lets registry names through
      Record r = base_record(*k, p, ctx);
      auto it = have.find(r.key());
      if (it != have.end() && it->second != "failed") continue;  // done in the run resumed
      progress.show(name, p);
      bool sticky = false;
      try {
        run_record(*k, shape, p, r, ctx);
      } catch (const CudaError& e) {
        r.status = "failed";
        r.reason = e.what();
        r.time.reset();
        r.effective_GBps.reset();
        r.pct_of_copy.reset();
        r.model_GBps.reset();
        sticky = !context_usable();
        if (sticky) r.reason += " (the CUDA context is no longer usable)";
        progress.message(fmt::format("{} {}: failed: {}", name, shape_text(p), r.reason));
      } catch (const std::exception& e) {
        r.status = "failed";
        r.reason = e.what();
        r.time.reset();
        progress.message(fmt::format("{} {}: failed: {}", name, shape_text(p), r.reason));
      }
      upsert(run, std::move(r));
      ctx.save();
      progress.finished_one();
      if (sticky) {
        say_resume("stopped: a CUDA error left the context unusable");
        return 1;
      }
    }
  }
  progress.clear();
  const double timing_pass_s = ctx.timing_wall_s;

  // 3. Counters, a pass of their own (its wall time printed beside the timing pass's: issue 5
  // bounds it at 2x).
  double counters_pass_s = 0;
  const auto counters_start = std::chrono::steady_clock::now();
  if (opt.counters && cfg.counters.enabled) {
    try {
      if (!counters_pass(ctx)) {
        ctx.save();
        say_resume("interrupted during the counters pass");
        return 130;
      }
    } catch (const CudaError& e) {
      ctx.save();
      say_resume(fmt::format("stopped in the counters pass: {}", e.what()));
      return 1;
    }
    counters_pass_s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - counters_start).count();
  }

  // 4. Peers, clock summary, claims, report.
  const int merged = merge_peers(run, opt.peers);
  mark_clock_drops(run);
  try {
    run.claims = evaluate_claims(run);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "softmax-bench: claims not evaluated: %s\n", e.what());
  }
  run.complete = true;
  ctx.save();
  int rc = 0;
  std::string report_line;
  try {
    const ReportOutcome out = write_report(run, opt.dir);
    report_line = out.rendered ? "report.md, report.html and plots written"
                               : "report.md and plot specs written (" + out.render_hint + ")";
  } catch (const std::exception& e) {
    std::fprintf(stderr, "softmax-bench: report not written: %s\n", e.what());
    rc = 1;
  }

  if (!opt.quiet) {
    int ok = 0, skipped = 0, failed = 0;
    for (const Record& r : run.records)
      (r.status == "ok" ? ok : r.status == "skipped" ? skipped : failed)++;
    const std::string from_peers = merged ? fmt::format(", {} from peers", merged) : std::string();
    std::printf("%d records (%d ok, %d skipped, %d failed%s) in %s\n", ok + skipped + failed, ok,
                skipped, failed, from_peers.c_str(), opt.dir.string().c_str());
    std::printf("this run: timing %.1f s, verification %.1f s, counters pass %.1f s, %.1f s in "
                "all; %s\n",
                timing_pass_s, ctx.verify_wall_s, counters_pass_s, progress.seconds(),
                report_line.c_str());
  }
  return rc;
}

}  // namespace smr
