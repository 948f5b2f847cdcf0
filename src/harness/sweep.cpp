// The sweep driver (issue 4). Order of a run:
//   0. the shapes planned against the device's free memory (shrunk or skipped where they do not fit)
//   1. ceilings, measured on this card (reused from results.json on --resume)
//   2. per shape, per kernel: skip checks -> verify -> time (Google Benchmark, CUDA events) -> save
//   3. the counters pass (CUPTI), a separate pass over the records that were timed
//   4. peers merged, claims evaluated, report written
// This file only orders the work and keeps the results safe: results.json is rewritten atomically
// after every record. The work itself lives beside it:
//   resume.cpp            the run directory, a continued run's saved records and ceilings
//   ceilings_measure.cpp  the ceilings measured on this card
//   shape_data.cpp        one shape's input and output on the device, shared by its kernels
//   sweep_record.cpp      one record: skip checks, then verification and timing
//   record_verify.cpp     verification of one record on the device
//   record_timing.cpp     timing of one record through Google Benchmark (timers: timing.hpp)
//   gbench_log.cpp        gbench.json, Google Benchmark's own record of the timing
//   counters_pass.cpp     the counters pass (the profiler: counters.hpp)
//   merge_records.cpp     peers merged into the run, records re-modelled by `report`
//   progress.cpp          the terminal progress line
//   sweep_plan.cpp        which shapes fit the device's memory (pure: tested without a GPU)
// Their shared pieces are declared in harness/detail/sweep_parts.hpp.
#include "harness/sweep.hpp"

#include <chrono>
#include <csignal>
#include <cstdio>
#include <map>
#include <optional>

#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"
#include "harness/sweep_plan.hpp"
#include "roofline/claims.hpp"
#include "roofline/report.hpp"

namespace smr {

namespace detail {

volatile std::sig_atomic_t g_interrupted = 0;

}  // namespace detail

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace detail;  // the sweep's own pieces (harness/detail/sweep_parts.hpp)

namespace {

void on_sigint(int) {
  g_interrupted = 1;
  std::signal(SIGINT, SIG_DFL);  // a second Ctrl-C ends the process at once
}

}  // namespace

int run_sweep(const SweepOptions& opt) {
  const SweepConfig& cfg = opt.config;
  g_interrupted = 0;
  std::signal(SIGINT, on_sigint);
  fs::create_directories(opt.dir);

  Context ctx(opt, query_device());
  RunResults& run = ctx.run;
  const bool reuse_ceilings = start_run(ctx);

  // 0. The shapes that fit the device's memory: the default sweep's M shrinks on a small card,
  // any other shape too large is skipped with its reason (harness/sweep_plan.hpp).
  const MemoryBudget budget = device_memory(ctx.device);
  const std::vector<PlannedShape> plan = plan_shapes(cfg.problems, cfg.shrinkable, budget);
  run.device["memory_plan"] = plan_json(plan, budget);
  std::vector<Problem> problems;
  int shapes_scaled = 0, shapes_skipped = 0;
  for (const PlannedShape& s : plan) {
    problems.push_back(s.problem);
    shapes_scaled += s.scaled() ? 1 : 0;
    shapes_skipped += s.skipped() ? 1 : 0;
  }
  if (!opt.quiet && (shapes_scaled > 0 || shapes_skipped > 0))
    std::fprintf(stderr, "memory: %d shape(s) with M scaled down to fit, %d skipped (%.2f GB free "
                 "on %s; results.json's device.memory_plan lists them)\n",
                 shapes_scaled, shapes_skipped, gb(static_cast<double>(budget.free_bytes)),
                 ctx.device.name.c_str());

  const int total = static_cast<int>(problems.size() * cfg.kernels.size());
  // key -> status, from the run being resumed
  const std::map<std::string, std::string> have = saved_statuses(run);

  if (!opt.quiet && !ctx.device.restricted_to_profile.empty())
    std::fprintf(stderr, "dispatch restricted to the %s device profile (SMR_DEVICE_PROFILE): "
                 "compute capability %d.%d, %s, %zu KB of shared memory per block\n",
                 ctx.device.restricted_to_profile.c_str(), ctx.device.dispatch.cc_major,
                 ctx.device.dispatch.cc_minor,
                 ctx.device.dispatch.has_clusters() ? "clusters" : "no clusters",
                 ctx.device.dispatch.shared_bytes_per_block / 1024);

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
  Progress progress(total, records_done(problems, cfg.kernels, have), opt.quiet);

  const auto say_resume = [&](const std::string& why) {
    progress.message(resume_hint(why, progress.done(), total, ctx));
  };

  // 2. Verify and time, shape by shape (the input of a shape is generated once for its kernels).
  for (const PlannedShape& planned : plan) {
    const Problem& p = planned.problem;
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
      if (planned.scaled()) {
        if (!r.extra.is_object()) r.extra = json::object();
        r.extra["requested_M"] = planned.requested_M;  // the config's M, scaled down to fit
      }
      bool sticky = false;
      try {
        if (planned.skipped()) {
          r.status = "skipped";
          r.reason = planned.skip_reason;
        } else {
          run_record(*k, shape, p, r, ctx);
        }
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
