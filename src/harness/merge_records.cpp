// Records changed after the sweep: peer records (scripts/peers.py) merged into a run against its
// ceilings, and a saved run's records re-modelled with the registry's traffic models
// (`softmax-bench report`).
#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"
#include "roofline/model.hpp"

namespace smr {

using json = nlohmann::json;
using detail::gb;
using detail::rows_in_flight;
using detail::upsert;

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

}  // namespace smr
