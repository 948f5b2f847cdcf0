// The claims, evaluated from the records: claims.hpp states the format and every criterion.
#include "roofline/claims.hpp"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "core/metrics.hpp"
#include "roofline/model.hpp"

namespace smr {

using nlohmann::json;

namespace {

constexpr const char* kHolds = "holds";
constexpr const char* kFails = "does not hold";
constexpr const char* kPartly = "partly";
constexpr const char* kNotMeasured = "not measured";
constexpr const char* kNotDecidable = "not decidable here";
constexpr const char* kNoModel = "peer: no model of its own";

// ---- reading a record's counters (metric names: src/core/metrics.hpp) ----

std::optional<double> counter(const Record& r, std::string_view key) {
  if (!r.counters.is_object()) return std::nullopt;
  auto it = r.counters.find(std::string(key));
  if (it == r.counters.end() || !it->is_number()) return std::nullopt;
  const double v = it->get<double>();
  return std::isfinite(v) ? std::optional<double>(v) : std::nullopt;
}

std::optional<double> dram_read(const Record& r) { return counter(r, metric::kDramRead); }

std::optional<double> dram_total(const Record& r) {
  if (auto v = counter(r, "dram_bytes")) return v;
  auto rd = counter(r, metric::kDramRead), wr = counter(r, metric::kDramWrite);
  if (rd && wr) return *rd + *wr;
  return std::nullopt;
}

struct Fp32Counts {
  double fadd = 0, fmul = 0, ffma = 0;
  double flops() const { return fadd + fmul + 2.0 * ffma; }  // Nsight Compute's convention
};
std::optional<Fp32Counts> fp32_counts(const Record& r) {
  auto a = counter(r, metric::kFaddThreadInst);
  auto m = counter(r, metric::kFmulThreadInst);
  auto f = counter(r, metric::kFfmaThreadInst);
  if (!a || !m || !f) return std::nullopt;
  return Fp32Counts{*a, *m, *f};
}
std::optional<double> flops_executed(const Record& r) {
  if (auto v = counter(r, "flops_executed")) return v;
  if (auto c = fp32_counts(r)) return c->flops();
  return std::nullopt;
}
// Thread-level special-function instructions: the metric counts warp instructions.
std::optional<double> xu_thread_inst(const Record& r) {
  if (auto v = counter(r, "xu_thread_inst")) return v;
  if (auto v = counter(r, metric::kXuWarpInst)) return 32.0 * *v;
  return std::nullopt;
}

std::optional<double> median_time(const Record& r) {
  if (!r.time || !std::isfinite(r.time->median_s) || r.time->median_s <= 0) return std::nullopt;
  return r.time->median_s;
}

// ---- small helpers ----

bool is_ok(const Record& r) { return r.status == "ok"; }
double elements(const Record& r) { return static_cast<double>(r.M) * static_cast<double>(r.N); }
double x_over_l2(const Record& r, const Ceilings& c) {
  return c.l2_bytes > 0 ? x_bytes(r.problem()) / static_cast<double>(c.l2_bytes) : NAN;
}
json shape_row(const Record& r) {
  return {{"dtype", std::string(to_string(r.dtype))}, {"M", r.M}, {"N", r.N}};
}
// Sets row[key] only for a finite value: what was not measured is left out.
void put(json& row, const char* key, std::optional<double> v) {
  if (v && std::isfinite(*v)) row[key] = *v;
}

std::string not_measured_reason(const std::vector<const Record*>& recs) {
  for (const Record* r : recs)
    if (r->counters_reason && !r->counters_reason->empty()) return *r->counters_reason;
  // Counters read, but without metrics the device lacks (the harness's
  // extra.counters.unavailable: metric -> why).
  for (const Record* r : recs) {
    if (!r->extra.is_object() || !r->extra.contains("counters")) continue;
    const json& c = r->extra["counters"];
    if (!c.is_object() || !c.contains("unavailable") || !c["unavailable"].is_object() ||
        c["unavailable"].empty())
      continue;
    std::string list;
    for (const auto& [metric, why] : c["unavailable"].items())
      list += fmt::format("{}{} ({})", list.empty() ? "" : "; ", metric,
                          why.is_string() ? why.get<std::string>() : std::string("no reason"));
    return "unavailable on this device: " + list;
  }
  return "no counters in this run (counters off in the config, or not collected)";
}

std::string range(const std::vector<double>& v, const char* spec = "{:.4g}") {
  if (v.empty()) return "-";
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  const std::string a = fmt::format(fmt::runtime(spec), *lo), b = fmt::format(fmt::runtime(spec), *hi);
  return a == b ? a : a + " to " + b;
}

std::string overall(const json& rows) {
  int holds = 0, fails = 0;
  for (const auto& row : rows) {
    const std::string v = row.value("verdict", kNotMeasured);
    if (v == kHolds) ++holds;
    if (v == kFails) ++fails;
  }
  if (holds + fails == 0) return kNotMeasured;
  if (fails == 0) return kHolds;
  if (holds == 0) return kFails;
  return kPartly;
}

int count(const json& rows, const char* verdict) {
  return static_cast<int>(std::count_if(rows.begin(), rows.end(), [&](const json& row) {
    return row.value("verdict", "") == verdict;
  }));
}

json claim(const char* id, const char* title, std::string statement, std::string criterion,
           json columns) {
  return {{"id", id},
          {"title", title},
          {"statement", std::move(statement)},
          {"criterion", std::move(criterion)},
          {"columns", std::move(columns)},
          {"rows", json::array()}};
}

std::vector<const Record*> ok_records(const RunResults& run, const std::string& kernel) {
  std::vector<const Record*> out;
  for (const auto& r : run.records)
    if (r.kernel == kernel && is_ok(r)) out.push_back(&r);
  return out;
}

std::string no_records(const std::string& kernel) {
  return fmt::format("no successful record of the `{}` kernel in this run", kernel);
}

// ---- 1. fused intensity ----

json fused_intensity(const RunResults& run, const ClaimKernels& k) {
  json c = claim("fused_intensity", "Fused kernel: 0.375 FLOP per DRAM byte",
                 fmt::format("The fused kernel does 3 FLOP per element (subtract, exp, divide) over "
                             "one read and one write of the row: 3 FLOP / 8 B = 0.375 FLOP/byte in "
                             "fp32, measured on the DRAM bytes it really moved."),
                 fmt::format("3 FLOP per element over the measured DRAM bytes within {:g}% of the "
                             "model's intensity (0.375 FLOP/B for dense fp32)",
                             100 * kIntensityTolerance),
                 {"dtype", "M", "N", "x_over_L2", "dram_bytes", "model_dram_bytes", "intensity",
                  "model_intensity", "deviation_pct", "executed_flops_per_element",
                  "executed_intensity", "fadd_per_element", "fmul_per_element",
                  "ffma_per_element", "xu_per_element", "verdict"});
  const auto recs = ok_records(run, k.fused);
  if (recs.empty()) {
    c["verdict"] = kNotMeasured;
    c["summary"] = no_records(k.fused);
    return c;
  }
  std::vector<double> intensities, executed, fadd, fmul, ffma, xu;
  for (const Record* r : recs) {
    json row = shape_row(*r);
    put(row, "x_over_L2", x_over_l2(*r, run.ceilings));
    row["model_dram_bytes"] = r->model.dram_bytes;
    put(row, "model_intensity", r->model.intensity);
    const auto bytes = dram_total(*r);
    const double alg = kFlopsPerElement * elements(*r);
    if (!bytes || *bytes <= 0) {
      row["verdict"] = kNotMeasured;
      c["rows"].push_back(std::move(row));
      continue;
    }
    const double intensity = alg / *bytes;
    const double deviation = intensity / r->model.intensity - 1.0;
    row["dram_bytes"] = *bytes;
    row["intensity"] = intensity;
    put(row, "deviation_pct", 100.0 * deviation);
    intensities.push_back(intensity);
    if (auto fx = flops_executed(*r)) {
      row["executed_flops_per_element"] = *fx / elements(*r);
      row["executed_intensity"] = *fx / *bytes;
      executed.push_back(*fx / elements(*r));
    }
    if (auto f = fp32_counts(*r)) {
      row["fadd_per_element"] = f->fadd / elements(*r);
      row["fmul_per_element"] = f->fmul / elements(*r);
      row["ffma_per_element"] = f->ffma / elements(*r);
      fadd.push_back(f->fadd / elements(*r));
      fmul.push_back(f->fmul / elements(*r));
      ffma.push_back(f->ffma / elements(*r));
    }
    if (auto x = xu_thread_inst(*r)) {
      row["xu_per_element"] = *x / elements(*r);
      xu.push_back(*x / elements(*r));
    }
    row["verdict"] = std::abs(deviation) <= kIntensityTolerance ? kHolds : kFails;
    c["rows"].push_back(std::move(row));
  }
  c["verdict"] = overall(c["rows"]);
  if (intensities.empty()) {
    c["summary"] = fmt::format("DRAM bytes not measured: {}", not_measured_reason(recs));
    return c;
  }
  c["summary"] = fmt::format(
      "measured intensity {} FLOP/B over {} shape(s), {} within {:g}% of the model{}",
      range(intensities), intensities.size(), count(c["rows"], kHolds), 100 * kIntensityTolerance,
      executed.empty() ? std::string()
                       : fmt::format("; executed {} FP32 FLOP per element against 3 algorithmic",
                                     range(executed, "{:.3g}")));
  if (!executed.empty()) {
    // Why the hardware's count differs from the algorithm's: in words, with the counts behind it.
    std::string how = fmt::format(
        "The hardware ran {} FP32 FLOP per element against the 3 algorithmic ones", range(executed, "{:.3g}"));
    if (!fadd.empty())
      how += fmt::format(" ({} FADD, {} FMUL, {} FFMA per element)", range(fadd, "{:.3g}"),
                         range(fmul, "{:.3g}"), range(ffma, "{:.3g}"));
    how += ": the counters count the row sum's FADD per element (the row max runs as FMNMX, "
           "which they do not count) and the reduction steps across threads; exp is lowered to "
           "MUFU.EX2 on the special-function (XU) pipe, fed by an FFMA that folds the "
           "subtraction and the log2(e) scaling (counted as 2 FLOP) or by a longer accurate-expf "
           "sequence; the divide becomes either one reciprocal per row and an FMUL per element or "
           "a full IEEE division per element (MUFU.RCP with FFMA refinement)";
    if (!xu.empty()) {
      const double xu_mid = xu[xu.size() / 2];
      how += fmt::format(". {} XU instructions per element were measured, {}", range(xu, "{:.3g}"),
                         xu_mid < 1.5 ? "consistent with one MUFU.EX2 per element and the "
                                        "reciprocal taken once per row"
                                      : "consistent with an ex2 and a reciprocal per element "
                                        "(the divide done per element)");
    }
    c["explanation"] = how + ".";
  }
  return c;
}

// ---- 2. traffic ratio ----

bool same_shape(const Record& a, const Record& b) {
  return std::tie(a.dtype, a.M, a.N, a.ld_x, a.ld_y) == std::tie(b.dtype, b.M, b.N, b.ld_x, b.ld_y);
}

json traffic_ratio(const RunResults& run, const ClaimKernels& k) {
  json c = claim(
      "traffic_ratio", "Unfused moves 2.5x the DRAM bytes of fused",
      "The unfused 3-kernel pipeline moves 5 x 4MN bytes against the fused kernel's 2 x 4MN: a "
      "ratio of 2.5 where its intermediate does not fit in L2, falling toward 1.5 as x and the "
      "intermediate fit (the model's L2 rule), and its time follows.",
      fmt::format("measured DRAM bytes unfused / fused: {} within {:g}% where x >= {:g} x L2, "
                  "the model's ratio within {:g}% elsewhere",
                  kNominalTrafficRatio, 100 * kTrafficTolerance, kFarAboveL2,
                  100 * kTrafficModelTolerance),
      {"dtype", "M", "N", "x_over_L2", "regime", "model_ratio", "measured_ratio", "time_ratio",
       "verdict"});
  const auto fused = ok_records(run, k.fused);
  const auto unfused = ok_records(run, k.unfused);
  std::vector<const Record*> involved;
  std::vector<double> far_ratios, near_ratios, time_ratios;
  for (const Record* u : unfused) {
    auto f = std::find_if(fused.begin(), fused.end(), [&](const Record* r) { return same_shape(*r, *u); });
    if (f == fused.end()) continue;
    involved.push_back(u);
    involved.push_back(*f);
    json row = shape_row(*u);
    const double over = x_over_l2(*u, run.ceilings);
    const bool far = over >= kFarAboveL2;
    put(row, "x_over_L2", over);
    row["regime"] = far ? "far above L2" : "within reach of L2";
    const double model_ratio = u->model.dram_bytes / (*f)->model.dram_bytes;
    row["model_ratio"] = model_ratio;
    const auto tu = median_time(*u), tf = median_time(**f);
    if (tu && tf) {
      row["time_ratio"] = *tu / *tf;
      time_ratios.push_back(*tu / *tf);
    }
    const auto bu = dram_total(*u), bf = dram_total(**f);
    if (!bu || !bf || *bf <= 0) {
      row["verdict"] = kNotMeasured;
      c["rows"].push_back(std::move(row));
      continue;
    }
    const double ratio = *bu / *bf;
    row["measured_ratio"] = ratio;
    const double ref = far ? kNominalTrafficRatio : model_ratio;
    const double tol = far ? kTrafficTolerance : kTrafficModelTolerance;
    (far ? far_ratios : near_ratios).push_back(ratio);
    row["verdict"] = std::abs(ratio / ref - 1.0) <= tol ? kHolds : kFails;
    c["rows"].push_back(std::move(row));
  }
  c["verdict"] = overall(c["rows"]);
  if (c["rows"].empty()) {
    c["summary"] = fused.empty() ? no_records(k.fused)
                   : unfused.empty()
                       ? no_records(k.unfused)
                       : fmt::format("no shape has successful records of both `{}` and `{}`",
                                     k.unfused, k.fused);
    return c;
  }
  const std::string times =
      time_ratios.empty() ? std::string("no times")
                          : fmt::format("time ratio {}", range(time_ratios, "{:.3g}"));
  if (far_ratios.empty() && near_ratios.empty()) {
    c["summary"] = fmt::format("DRAM bytes not measured ({}); {} over {} shape(s)",
                               not_measured_reason(involved), times, c["rows"].size());
    return c;
  }
  std::vector<std::string> parts;
  if (!far_ratios.empty())
    parts.push_back(fmt::format("measured ratio {} where x >= {:g} x L2 ({} shape(s))",
                                range(far_ratios, "{:.3g}"), kFarAboveL2, far_ratios.size()));
  if (!near_ratios.empty())
    parts.push_back(fmt::format("{} nearer L2 ({} shape(s))", range(near_ratios, "{:.3g}"),
                                near_ratios.size()));
  parts.push_back(times);
  std::string s = parts[0];
  for (std::size_t i = 1; i < parts.size(); ++i) s += "; " + parts[i];
  c["summary"] = s + fmt::format("; {} of {} shape(s) hold", count(c["rows"], kHolds), c["rows"].size());
  return c;
}

// ---- 3. memory bound ----

json memory_bound(const RunResults& run, const ClaimKernels& k) {
  const Ceilings& ceil = run.ceilings;
  json c = claim(
      "memory_bound", "Every lab kernel is memory-bound",
      "Each lab kernel's achieved FLOP/s is far under the FP32 ceiling while its DRAM bandwidth is "
      "near the DRAM ceiling: softmax is limited by bytes, not arithmetic.",
      fmt::format("achieved FLOP/s (3 FLOP per element over the median time) under {:g}% of the "
                  "FP32 ceiling ({:.0f} GFLOP/s) and measured DRAM bandwidth at least {:g}% of "
                  "the DRAM ceiling ({:.0f} GB/s); the executed FLOP/s is shown beside it",
                  100 * kMemoryBoundMaxFlopFraction, ceil.fp32_GFLOPs,
                  100 * kMemoryBoundMinDramFraction, ceil.dram_GBps),
      {"kernel", "dtype", "M", "N", "achieved_GFLOPs", "flop_pct_of_fp32", "executed_GFLOPs",
       "executed_pct_of_fp32", "dram_GBps", "dram_pct", "verdict"});
  std::vector<const Record*> involved;
  std::vector<double> flop_pct, executed_pct, dram_pct;
  for (const std::string& name : {k.fused, k.unfused, k.online}) {
    for (const Record* r : ok_records(run, name)) {
      involved.push_back(r);
      json row = {{"kernel", r->kernel}};
      row.update(shape_row(*r));
      const auto t = median_time(*r);
      if (!t) {
        row["verdict"] = kNotMeasured;
        c["rows"].push_back(std::move(row));
        continue;
      }
      // From time alone: the algorithm's FLOPs are exact, so this needs no counters.
      const double gflops = kFlopsPerElement * elements(*r) / *t / 1e9;
      row["achieved_GFLOPs"] = gflops;
      row["flop_pct_of_fp32"] = 100.0 * gflops / ceil.fp32_GFLOPs;
      flop_pct.push_back(100.0 * gflops / ceil.fp32_GFLOPs);
      if (const auto fx = flops_executed(*r)) {
        row["executed_GFLOPs"] = *fx / *t / 1e9;
        row["executed_pct_of_fp32"] = 100.0 * *fx / *t / 1e9 / ceil.fp32_GFLOPs;
        executed_pct.push_back(100.0 * *fx / *t / 1e9 / ceil.fp32_GFLOPs);
      }
      const auto bytes = dram_total(*r);
      if (!bytes) {
        row["verdict"] = kNotMeasured;
        c["rows"].push_back(std::move(row));
        continue;
      }
      const double gbps = *bytes / *t / 1e9;
      row["dram_GBps"] = gbps;
      row["dram_pct"] = 100.0 * gbps / ceil.dram_GBps;
      dram_pct.push_back(100.0 * gbps / ceil.dram_GBps);
      const bool holds = gflops < kMemoryBoundMaxFlopFraction * ceil.fp32_GFLOPs &&
                         gbps >= kMemoryBoundMinDramFraction * ceil.dram_GBps;
      row["verdict"] = holds ? kHolds : kFails;
      c["rows"].push_back(std::move(row));
    }
  }
  c["verdict"] = overall(c["rows"]);
  if (c["rows"].empty()) {
    c["summary"] = fmt::format("no successful record of the lab kernels `{}`, `{}`, `{}` in this run",
                               k.fused, k.unfused, k.online);
    return c;
  }
  const std::string flops =
      fmt::format("achieved FLOP/s {}% of the FP32 ceiling", range(flop_pct, "{:.3g}"));
  const std::string executed =
      executed_pct.empty() ? std::string()
                           : fmt::format(" (executed: {}%)", range(executed_pct, "{:.3g}"));
  if (dram_pct.empty()) {
    c["summary"] = fmt::format("DRAM bandwidth not measured ({}); from time alone, {}",
                               not_measured_reason(involved), flops);
    return c;
  }
  c["summary"] = fmt::format("{}{}, DRAM bandwidth {}% of the DRAM ceiling; {} of {} record(s) hold",
                             flops, executed, range(dram_pct, "{:.3g}"), count(c["rows"], kHolds),
                             c["rows"].size());
  return c;
}

// ---- 4. online second read ----

// "L2", "DRAM", or "L2 for 40%" from the reads of x (1 = second read from L2, 2 = from DRAM).
std::string second_read_from(double reads) {
  const double from_l2 = std::clamp(2.0 - reads, 0.0, 1.0);
  if (from_l2 >= 0.9) return "L2";
  if (from_l2 <= 0.1) return "DRAM";
  return fmt::format("L2 for {:.0f}%", 100.0 * from_l2);
}

json online_second_read(const RunResults& run, const ClaimKernels& k) {
  json c = claim(
      "online_second_read", "Online kernel: where its second read comes from",
      "The online kernel reads each row twice; the second read is served by L2 when the rows in "
      "flight fit there (short rows) and by DRAM when they do not (long rows), as the model's L2 "
      "rule predicts for each shape.",
      fmt::format("measured DRAM reads of x (read bytes / bytes of x) within {:g} of the model's",
                  kSecondReadTolerance),
      {"dtype", "M", "N", "x_bytes", "model_reads", "measured_reads", "model_second_read",
       "second_read", "verdict"});
  const auto recs = ok_records(run, k.online);
  if (recs.empty()) {
    c["verdict"] = kNotMeasured;
    c["summary"] = no_records(k.online);
    return c;
  }
  std::vector<std::string> from_l2, from_dram;
  int measured = 0;
  for (const Record* r : recs) {
    json row = shape_row(*r);
    const double xb = x_bytes(r->problem());
    const double model_reads = r->model.dram_read_bytes / xb;
    row["x_bytes"] = xb;
    row["model_reads"] = model_reads;
    row["model_second_read"] = second_read_from(model_reads);
    const auto rd = dram_read(*r);
    if (!rd) {
      row["verdict"] = kNotMeasured;
      c["rows"].push_back(std::move(row));
      continue;
    }
    ++measured;
    const double reads = *rd / xb;
    row["measured_reads"] = reads;
    const std::string from = second_read_from(reads);
    row["second_read"] = from;
    (from == "L2" ? from_l2 : from_dram).push_back(fmt::format("N = {}", r->N));
    row["verdict"] = std::abs(reads - model_reads) <= kSecondReadTolerance ? kHolds : kFails;
    c["rows"].push_back(std::move(row));
  }
  c["verdict"] = overall(c["rows"]);
  if (measured == 0) {
    c["summary"] = fmt::format("DRAM read bytes not measured: {}", not_measured_reason(recs));
    return c;
  }
  auto list = [](const std::vector<std::string>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return v.empty() ? std::string("none") : s;
  };
  c["summary"] = fmt::format(
      "second read from L2 at {}; from DRAM (entirely or partly) at {}; {} of {} shape(s) as the "
      "model predicts",
      list(from_l2), list(from_dram), count(c["rows"], kHolds), measured);
  return c;
}

// ---- 5. every kernel against its own model ----

json model_traffic(const RunResults& run) {
  json c = claim(
      "model_traffic", "Every kernel moves the DRAM bytes its own model states",
      "Each kernel's traffic model (the registry's: passes over x and y, the L2 rule; cuDNN's from "
      "its measured passes) predicts the DRAM bytes it moves, whatever the dtype and shape: the "
      "production families and the peers included.",
      fmt::format("measured DRAM bytes (read + written) within {:g}% of the record's model where "
                  "x >= {:g} x L2; nearer L2 \"{}\": what stays in L2 across the flush and the "
                  "write-back of dirty lines after the launch decide the count there, beyond the "
                  "model's LRU rule and the counters' per-launch attribution",
                  100 * kModelTrafficTolerance, kFarAboveL2, kNotDecidable),
      {"kernel", "dtype", "M", "N", "x_over_L2", "model", "model_dram_bytes", "dram_bytes",
       "deviation_pct", "verdict"});
  std::vector<const Record*> involved;
  std::vector<double> far_dev;
  int undecided = 0, peers = 0;
  for (const auto& r : run.records) {
    if (!is_ok(r) || r.model.traffic == TrafficModel::compute || !(r.model.dram_bytes > 0)) continue;
    involved.push_back(&r);
    json row = {{"kernel", r.kernel}};
    row.update(shape_row(r));
    const double over = x_over_l2(r, run.ceilings);
    put(row, "x_over_L2", over);
    row["model"] = std::string(to_string(r.model.traffic));
    row["model_dram_bytes"] = r.model.dram_bytes;
    const auto bytes = dram_total(r);
    if (!bytes) {
      row["verdict"] = kNotMeasured;
      c["rows"].push_back(std::move(row));
      continue;
    }
    const double dev = *bytes / r.model.dram_bytes - 1.0;
    row["dram_bytes"] = *bytes;
    row["deviation_pct"] = 100.0 * dev;
    const bool peer = r.extra.is_object() && r.extra.contains("merged_from");
    if (peer) {
      // A peer has no model of its own: the fused floor is shown beside its measured bytes.
      row["verdict"] = kNoModel;
      ++peers;
    } else if (!(over >= kFarAboveL2)) {
      row["verdict"] = kNotDecidable;
      ++undecided;
    } else {
      row["verdict"] = std::abs(dev) <= kModelTrafficTolerance ? kHolds : kFails;
      far_dev.push_back(100.0 * dev);
    }
    c["rows"].push_back(std::move(row));
  }
  c["verdict"] = overall(c["rows"]);
  if (c["rows"].empty()) {
    c["summary"] = "no successful record with a traffic model in this run";
    return c;
  }
  if (far_dev.empty() && undecided == 0 && peers == 0) {
    c["summary"] = fmt::format("DRAM bytes not measured: {}", not_measured_reason(involved));
    return c;
  }
  c["summary"] = fmt::format(
      "{} of {} record(s) far above L2 within {:g}% of their model (deviation {}%); {} nearer L2 "
      "not decidable here; {} peer(s) measured against the fused floor",
      count(c["rows"], kHolds), far_dev.size(), 100 * kModelTrafficTolerance,
      range(far_dev, "{:+.2f}"), undecided, peers);
  return c;
}

}  // namespace

json evaluate_claims(const RunResults& run, const ClaimKernels& names) {
  return json::array({fused_intensity(run, names), traffic_ratio(run, names),
                      memory_bound(run, names), online_second_read(run, names),
                      model_traffic(run)});
}

}  // namespace smr
