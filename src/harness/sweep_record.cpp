// One record of the sweep: its base (key, traffic model, plan), then the skip checks (the kernel's
// preconditions, the device memory it needs), verification, and timing for those that pass.
#include <chrono>

#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"
#include "roofline/model.hpp"

namespace smr::detail {

using json = nlohmann::json;

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

}  // namespace smr::detail
