// Timing of one record: calibration, batching of short launches over extra buffer sets, samples
// taken through Google Benchmark (one iteration = one sample) until the median is sure enough,
// the SM clock read between samples; and the direct timing the ceilings use. The timers
// themselves are timing.hpp's.
#include <chrono>
#include <cmath>
#include <exception>
#include <sstream>
#include <vector>

#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"

namespace smr::detail {

using json = nlohmann::json;

namespace {

// One buffer set of a batched sample: input, output, workspace.
struct BufferSet {
  DeviceBuffer x, y, ws;
};

}  // namespace

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

}  // namespace smr::detail
