// The counters pass of the sweep: a pass of its own after the timing pass, over the records that
// were timed and have no counters yet. One CounterSession for the whole pass (counters.hpp); each
// record's kernel is profiled on the shape's input with the L2 evicted inside the range.
#include <chrono>
#include <vector>

#include "harness/counters.hpp"
#include "harness/detail/sweep_parts.hpp"

namespace smr::detail {

using json = nlohmann::json;

namespace {

bool wants_counters(const Record& r) {
  return r.status == "ok" && r.counters.is_null() && !r.counters_reason;
}

void note_counters(Record& r, const std::string& why) { r.counters_reason = why; }

}  // namespace

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
        // Metrics this chip lacks: absent from r.counters, named here with why (never 0).
        if (!session->unavailable_metrics().empty())
          r.extra["counters"]["unavailable"] = session->unavailable_metrics();
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

}  // namespace smr::detail
