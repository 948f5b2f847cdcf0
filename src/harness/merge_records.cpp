// Records changed after the sweep: peer records (scripts/peers.py) merged into a run against its
// ceilings, and a saved run's records re-modelled with the registry's traffic models
// (`softmax-bench report`) for the device the run recorded.
#include <stdexcept>
#include <string>

#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"
#include "kernels/device_profiles.hpp"
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

namespace {

// "9.0" -> {9, 0}; false when the text is not MAJOR.MINOR.
bool parse_capability(const std::string& s, int& major, int& minor) {
  const std::size_t dot = s.find('.');
  if (dot == std::string::npos || dot == 0 || dot + 1 == s.size()) return false;
  try {
    std::size_t a = 0, b = 0;
    const int ma = std::stoi(s.substr(0, dot), &a), mi = std::stoi(s.substr(dot + 1), &b);
    if (a != dot || b != s.size() - dot - 1 || ma < 1 || mi < 0) return false;
    major = ma;
    minor = mi;
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

}  // namespace

DeviceLimits run_device_limits(const RunResults& run, std::string_view fallback_profile) {
  const json& dev = run.device;
  const std::string name = dev.is_object() ? dev.value("name", std::string{}) : std::string{};
  const DeviceProfile* base = profile_named_in(name);
  if (!base) base = find_device_profile(fallback_profile);
  if (!base)
    throw std::invalid_argument(fmt::format("no device profile '{}'", fallback_profile));
  DeviceLimits d = base->limits;
  // The run's ceilings carry the size facts every run records, older ones included.
  if (run.ceilings.sm_count > 0) d.sm_count = run.ceilings.sm_count;
  if (run.ceilings.l2_bytes > 0) d.l2_bytes = static_cast<std::size_t>(run.ceilings.l2_bytes);
  if (!dev.is_object()) return d;
  const auto number = [](const json& j, const char* key, auto& field) {
    if (j.contains(key) && j[key].is_number() && j[key].template get<double>() > 0)
      field = j[key].template get<std::remove_reference_t<decltype(field)>>();
  };
  const auto flag = [](const json& j, const char* key, bool& field) {
    if (j.contains(key) && j[key].is_boolean()) field = j[key].get<bool>();
  };
  const auto capability = [&d](const json& j) {
    if (j.contains("compute_capability") && j["compute_capability"].is_string())
      parse_capability(j["compute_capability"].get<std::string>(), d.cc_major, d.cc_minor);
  };
  number(dev, "sm_count", d.sm_count);
  number(dev, "l2_bytes", d.l2_bytes);
  number(dev, "global_bytes", d.global_bytes);
  number(dev, "shared_per_block_optin_bytes", d.shared_bytes_per_block);
  number(dev, "shared_per_sm_bytes", d.shared_bytes_per_sm);
  number(dev, "registers_per_sm", d.registers_per_sm);
  number(dev, "peak_dram_GBps", d.dram_GBps);
  capability(dev);
  flag(dev, "cluster_launch", d.cluster_launch);
  if (dev.contains("dispatch_limits") && dev["dispatch_limits"].is_object()) {
    const json& dl = dev["dispatch_limits"];
    capability(dl);
    flag(dl, "cluster_launch", d.cluster_launch);
    number(dl, "max_cluster", d.max_cluster);
    number(dl, "shared_per_block_bytes", d.shared_bytes_per_block);
    number(dl, "shared_per_sm_bytes", d.shared_bytes_per_sm);
    number(dl, "registers_per_sm", d.registers_per_sm);
  }
  if (!d.has_clusters()) d.max_cluster = 1;
  return d;
}

int remodel_records(RunResults& run) {
  // The registry's models for the card the run measured (its recorded limits).
  const DeviceLimits limits = run_device_limits(run, kModelDefaultProfile);
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
