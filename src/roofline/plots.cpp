// The JSON roofline plots: Vega-Lite v5 specs with a run's data inlined.
//
// Every spec keeps its data in top-level `datasets` and draws it in named layers (a layer draws
// one dataset, one mark per row), so a reader -- or the browser test -- can match the marks a
// layer drew with the rows behind it. A layer with no rows is left out.
// A row is made only from a record whose status is ok and that has the values the plot needs:
// a value that was not measured is left out, never drawn as 0. A plot without any row says so in
// its title.
#include <algorithm>
#include <cmath>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "core/metrics.hpp"
#include "roofline/claims.hpp"
#include "roofline/report.hpp"

namespace smr {

using nlohmann::json;

namespace {

constexpr const char* kVegaLiteSchema = "https://vega.github.io/schema/vega-lite/v5.json";
constexpr double kReferenceTrafficRatio = kNominalTrafficRatio;  // 5 passes over 4MN bytes against 2
constexpr double kMiB = 1024.0 * 1024.0;
constexpr int kWidth = 640, kHeight = 400;

// A positive, finite number, or nothing: zeros and NaNs never reach a plot.
std::optional<double> positive(std::optional<double> v) {
  if (v && std::isfinite(*v) && *v > 0) return v;
  return std::nullopt;
}

std::optional<double> number_at(const json& obj, std::string_view key) {
  if (!obj.is_object()) return std::nullopt;
  auto it = obj.find(std::string(key));
  if (it == obj.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

bool many_dtypes(const RunResults& run) {
  std::set<DType> seen;
  for (const auto& r : run.records) seen.insert(r.dtype);
  return seen.size() > 1;
}

// What colour a record gets: its kernel, and its dtype too when the run has several.
std::string series_of(const Record& r, bool by_dtype) {
  return by_dtype ? fmt::format("{} ({})", r.kernel, to_string(r.dtype)) : r.kernel;
}

// The fields every row of every plot carries, for tooltips and grouping.
json base_row(const Record& r, bool by_dtype) {
  return json{{"series", series_of(r, by_dtype)},
              {"kernel", r.kernel},
              {"dtype", std::string(to_string(r.dtype))},
              {"M", r.M},
              {"N", r.N},
              {"elements", r.M * r.N}};
}

void put(json& row, const char* key, std::optional<double> v) {
  if (v) row[key] = *v;
}

json quantitative(const char* field, const std::string& title, bool log_scale, int base = 10) {
  json e{{"field", field}, {"type", "quantitative"}, {"title", title}};
  if (log_scale) e["scale"] = json{{"type", "log"}, {"base", base}};
  return e;
}

json tooltip(const char* field, const char* title, const char* format = nullptr,
             const char* type = "quantitative") {
  json t{{"field", field}, {"type", type}, {"title", title}};
  if (format) t["format"] = format;
  return t;
}

json record_tooltips() {
  return json::array({tooltip("kernel", "kernel", nullptr, "nominal"),
                      tooltip("dtype", "dtype", nullptr, "nominal"), tooltip("M", "M", ",d"),
                      tooltip("N", "N", ",d")});
}

// x = N on a log2 axis, labelled 2^k when every N is a power of two.
json n_axis(const std::set<std::int64_t>& ns) {
  json x = quantitative("N", "N (row length, elements)", true, 2);
  bool powers = !ns.empty();
  for (auto n : ns) powers = powers && n > 0 && (n & (n - 1)) == 0;
  if (powers) {
    x["axis"] = json{{"values", json(std::vector<std::int64_t>(ns.begin(), ns.end()))},
                     {"labelExpr", "'2^' + format(log(datum.value) / log(2), 'd')"}};
  }
  return x;
}

json title_of(const std::string& text, bool has_data, const std::string& why_empty,
              const RunResults& run, const std::vector<std::string>& notes = {}) {
  std::string shown = has_data ? text : fmt::format("{} -- no data: {}", text, why_empty);
  std::string who = run.config.is_object() && run.config.contains("name") &&
                            run.config["name"].is_string()
                        ? run.config["name"].get<std::string>()
                        : std::string("unnamed config");
  json subtitle = json::array({fmt::format("{} on {}; ceilings: {}", who, run.ceilings.device,
                                           run.ceilings.source)});
  for (const auto& n : notes) subtitle.push_back(n);
  return json{{"text", shown}, {"subtitle", subtitle}, {"anchor", "start"}};
}

json base_spec(const std::string& description) {
  return json{{"$schema", kVegaLiteSchema},
              {"description", description},
              {"width", kWidth},
              {"height", kHeight},
              {"datasets", json::object()},
              {"layer", json::array()},
              {"resolve", json{{"scale", json{{"color", "shared"}}}}}};
}

// One layer drawing one dataset; its marks are named "<name>_marks" by Vega-Lite. Every layer of
// a spec encodes a channel with the same field definition (same title), so the axes merge cleanly.
json layer(const char* name, const char* dataset, json mark, json encoding) {
  return json{{"name", name},
              {"data", json{{"name", dataset}}},
              {"mark", std::move(mark)},
              {"encoding", std::move(encoding)}};
}

json color_by_series() { return json{{"field", "series"}, {"type", "nominal"}, {"title", "kernel"}}; }

// ---- (a) hierarchical roofline ----------------------------------------------------------------

json roofline_spec(const RunResults& run) {
  const bool by_dtype = many_dtypes(run);
  const Ceilings& c = run.ceilings;
  json measured = json::array(), model = json::array();

  for (const auto& r : run.records) {
    if (r.status != "ok") continue;
    const auto t = median_time_s(r);
    const auto algorithmic = algorithmic_flops(r);  // none for the copy ceiling: not on a roofline
    if (!t || !algorithmic) continue;
    const double flops = *algorithmic;
    const double gflops = flops / *t / 1e9;
    const MeasuredTraffic m = measured_traffic(r);
    const std::pair<const char*, std::optional<double>> levels[] = {
        {"DRAM", m.dram_bytes}, {"L2", m.l2_bytes}, {"L1", m.l1_bytes}};
    for (const auto& [level, bytes] : levels) {
      if (!bytes) continue;
      json row = base_row(r, by_dtype);
      row["point"] = level;
      row["intensity"] = flops / *bytes;
      row["GFLOPs"] = gflops;
      row["time_us"] = *t * 1e6;
      row["bytes"] = *bytes;
      row["GBps"] = *bytes / *t / 1e9;
      put(row, "effective_GBps", positive(r.effective_GBps));
      put(row, "executed_GFLOPs",
          m.executed_flops ? std::optional<double>(*m.executed_flops / *t / 1e9) : std::nullopt);
      measured.push_back(std::move(row));
    }
    const auto model_bytes = positive(r.model.dram_bytes);
    const auto model_time = positive(r.model.bound_time_s);
    if (model_bytes && model_time) {
      json row = base_row(r, by_dtype);
      row["point"] = "DRAM, model";
      row["intensity"] = flops / *model_bytes;
      row["GFLOPs"] = flops / *model_time / 1e9;
      row["time_us"] = *model_time * 1e6;
      row["bytes"] = *model_bytes;
      row["GBps"] = *model_bytes / *model_time / 1e9;
      model.push_back(std::move(row));
    }
  }

  // The ceilings as lines: each bandwidth rises along FLOP/s = bandwidth x intensity up to the
  // FP32 roof; the roof runs flat from the lowest ridge to the right edge.
  double lo = 0.05, hi = 1.0;  // FLOP/byte: around softmax's 0.15 - 0.375, widened to the data
  for (const auto* rows : {&measured, &model})
    for (const auto& row : *rows) {
      lo = std::min(lo, row["intensity"].get<double>() / 3);
      hi = std::max(hi, row["intensity"].get<double>() * 3);
    }
  const double roof = c.fp32_GFLOPs;
  struct Line { std::string label, kind; double GBps; };
  std::vector<Line> slopes;
  const std::string& measured_kind = c.source;  // "measured", or "datasheet" without a GPU
  if (c.dram_GBps > 0)
    slopes.push_back({fmt::format("DRAM copy {:.0f} GB/s", c.dram_GBps), measured_kind, c.dram_GBps});
  if (c.l2_GBps > 0)
    slopes.push_back({fmt::format("L2 {:.0f} GB/s", c.l2_GBps), measured_kind, c.l2_GBps});
  if (c.peak_dram_GBps > 0 && c.peak_dram_GBps != c.dram_GBps)
    slopes.push_back({fmt::format("DRAM peak from clocks {:.0f} GB/s", c.peak_dram_GBps),
                      "peak from clocks", c.peak_dram_GBps});
  else if (c.peak_dram_GBps > 0)  // the same line: one label says both
    slopes.front().label = fmt::format("DRAM copy = peak from clocks {:.0f} GB/s", c.dram_GBps);
  json ceilings = json::array(), labels = json::array();
  double lowest_ridge = hi;
  for (const auto& s : slopes) {
    const double ridge = roof > 0 ? roof / s.GBps : hi;
    lowest_ridge = std::min(lowest_ridge, ridge);
    hi = std::max(hi, ridge * 2);
    ceilings.push_back({{"ceiling", s.label}, {"kind", s.kind}, {"intensity", lo}, {"GFLOPs", s.GBps * lo}});
    ceilings.push_back({{"ceiling", s.label}, {"kind", s.kind}, {"intensity", ridge}, {"GFLOPs", s.GBps * ridge}});
    // The peak from clocks runs just above the copy line (on the H200: results/h200/default/):
    // its label goes far along its line, right of the points, so the two labels do not overprint.
    const double at = lo * (s.kind == "peak from clocks" ? 30.0 : 1.3);
    labels.push_back({{"text", s.label}, {"intensity", at}, {"GFLOPs", s.GBps * at}});
  }
  if (roof > 0) {
    const std::string label = fmt::format("FP32 FMA {:.0f} GFLOP/s", roof);
    ceilings.push_back({{"ceiling", label}, {"kind", measured_kind}, {"intensity", lowest_ridge}, {"GFLOPs", roof}});
    ceilings.push_back({{"ceiling", label}, {"kind", measured_kind}, {"intensity", hi}, {"GFLOPs", roof}});
    labels.push_back({{"text", label}, {"intensity", lowest_ridge * 1.3}, {"GFLOPs", roof}});
  }

  std::vector<std::string> notes{"FLOPs are algorithmic (3 per element); intensity = FLOPs / bytes at each level"};
  if (measured.empty() && !model.empty())
    notes.push_back("no counters in this run: only the model's points are drawn");

  json spec = base_spec("Hierarchical roofline: achieved FLOP/s against arithmetic intensity at "
                        "each memory level, measured and modelled, under the run's ceilings");
  spec["title"] = title_of("Hierarchical roofline", !measured.empty() || !model.empty(),
                           "no ok record with a time", run, notes);
  spec["datasets"] = {{"ceilings", ceilings}, {"ceiling_labels", labels}, {"measured", measured}, {"model", model}};

  json x = quantitative("intensity", "arithmetic intensity (FLOP/byte)", true);
  x["scale"]["domain"] = json::array({lo, hi});
  json y = quantitative("GFLOPs", "GFLOP/s", true);
  const json shape{{"field", "point"}, {"type", "nominal"}, {"title", "point"},
                   {"scale", json{{"domain", {"DRAM", "L2", "L1", "DRAM, model"}},
                                  {"range", {"circle", "square", "triangle-up", "diamond"}}}}};
  json point_tips = record_tooltips();
  point_tips.push_back(tooltip("point", "level", nullptr, "nominal"));
  point_tips.push_back(tooltip("time_us", "time (µs)", ".4~g"));
  point_tips.push_back(tooltip("bytes", "bytes", ".4~s"));
  point_tips.push_back(tooltip("GBps", "GB/s at this level", ".1f"));
  point_tips.push_back(tooltip("intensity", "FLOP/byte", ".4~g"));
  point_tips.push_back(tooltip("GFLOPs", "GFLOP/s", ".4~g"));
  json measured_tips = point_tips;
  measured_tips.push_back(tooltip("effective_GBps", "effective GB/s", ".1f"));
  measured_tips.push_back(tooltip("executed_GFLOPs", "executed GFLOP/s", ".4~g"));

  json kinds = json::array(), dashes = json::array();  // solid for the ceilings, dashed from clocks
  for (const auto& row : ceilings)
    if (std::find(kinds.begin(), kinds.end(), row["kind"]) == kinds.end()) {
      kinds.push_back(row["kind"]);
      dashes.push_back(row["kind"] == "peak from clocks" ? json::array({6, 4}) : json::array({1, 0}));
    }
  spec["layer"] = json::array({
      layer("ceilings", "ceilings", json{{"type", "line"}, {"color", "#888"}, {"clip", true}},
            json{{"x", x},
                 {"y", y},
                 {"detail", json{{"field", "ceiling"}, {"type", "nominal"}}},
                 {"strokeDash", json{{"field", "kind"}, {"type", "nominal"}, {"title", "ceiling"},
                                     {"scale", json{{"domain", kinds}, {"range", dashes}}}}}}),
      layer("ceiling_labels", "ceiling_labels",
            json{{"type", "text"}, {"align", "left"}, {"baseline", "bottom"}, {"dy", -4},
                 {"color", "#555"}, {"fontSize", 10}},
            json{{"x", x}, {"y", y}, {"text", json{{"field", "text"}}}}),
      layer("measured", "measured",
            json{{"type", "point"}, {"filled", true}, {"size", 60}, {"opacity", 0.9}},
            json{{"x", x}, {"y", y}, {"color", color_by_series()}, {"shape", shape},
                 {"tooltip", measured_tips}}),
      layer("model", "model", json{{"type", "point"}, {"filled", false}, {"size", 90}, {"opacity", 0.6}},
            json{{"x", x}, {"y", y}, {"color", color_by_series()}, {"shape", shape},
                 {"tooltip", point_tips}}),
  });
  return spec;
}

// ---- (b) effective bandwidth against N --------------------------------------------------------

json bandwidth_spec(const RunResults& run) {
  const bool by_dtype = many_dtypes(run);
  json rows = json::array();
  std::set<std::int64_t> ns;
  for (const auto& r : run.records) {
    const auto gbps = positive(r.effective_GBps);
    if (r.status != "ok" || !gbps) continue;
    json row = base_row(r, by_dtype);
    row["effective_GBps"] = *gbps;
    put(row, "pct_of_copy", positive(r.pct_of_copy));
    const auto t = median_time_s(r);
    put(row, "time_us", t ? std::optional<double>(*t * 1e6) : std::nullopt);
    rows.push_back(std::move(row));
    ns.insert(r.N);
  }
  json ceiling = json::array();
  if (run.ceilings.dram_GBps > 0)
    ceiling.push_back({{"effective_GBps", run.ceilings.dram_GBps},
                       {"text", fmt::format("DRAM copy ceiling ({}) {:.0f} GB/s", run.ceilings.source,
                                            run.ceilings.dram_GBps)}});

  json spec = base_spec("Effective bandwidth (one read of x, one write of y, over the median "
                        "time) against row length, for every kernel and peer");
  spec["title"] = title_of("Effective bandwidth against N", !rows.empty(),
                           "no ok record with a time", run,
                           {"effective bandwidth = 2 x elements x dtype bytes / median time"});
  spec["datasets"] = {{"bandwidth", rows}, {"copy_ceiling", ceiling}};
  json tips = record_tooltips();
  tips.push_back(tooltip("time_us", "time (µs)", ".4~g"));
  tips.push_back(tooltip("effective_GBps", "GB/s", ".1f"));
  tips.push_back(tooltip("pct_of_copy", "% of copy", ".1f"));
  const json x = n_axis(ns);
  const json y = quantitative("effective_GBps", "effective bandwidth (GB/s)", false);
  spec["layer"] = json::array({
      layer("copy_ceiling", "copy_ceiling", json{{"type", "rule"}, {"color", "#888"}, {"strokeDash", {6, 4}}},
            json{{"y", y}}),
      layer("copy_label", "copy_ceiling",
            json{{"type", "text"}, {"align", "left"}, {"baseline", "bottom"}, {"dy", -4}, {"x", 4},
                 {"color", "#555"}, {"fontSize", 10}},
            json{{"y", y}, {"text", json{{"field", "text"}}}}),
      layer("bandwidth_lines", "bandwidth", json{{"type", "line"}, {"opacity", 0.6}},
            json{{"x", x}, {"y", y}, {"color", color_by_series()},
                 {"detail", json{{"field", "elements"}, {"type", "nominal"}}}}),
      layer("bandwidth", "bandwidth", json{{"type", "point"}, {"filled", true}, {"size", 50}},
            json{{"x", x}, {"y", y}, {"color", color_by_series()}, {"tooltip", tips}}),
  });
  return spec;
}

// ---- (c) unfused / fused DRAM traffic against problem size ------------------------------------

json traffic_ratio_spec(const RunResults& run) {
  // Pair the two kernels of the claim on the same problem.
  const ClaimKernels names;  // the registry names of the claim's two kernels
  struct Pair { const Record* unfused = nullptr; const Record* fused = nullptr; };
  std::vector<std::pair<std::string, Pair>> pairs;  // keyed by dtype/M/N/strides, in run order
  for (const auto& r : run.records) {
    if (r.status != "ok" || (r.kernel != names.unfused && r.kernel != names.fused)) continue;
    const std::string key = fmt::format("{}/{}/{}/{}/{}", to_string(r.dtype), r.M, r.N, r.ld_x, r.ld_y);
    auto it = std::find_if(pairs.begin(), pairs.end(), [&](const auto& p) { return p.first == key; });
    if (it == pairs.end()) it = pairs.insert(pairs.end(), {key, Pair{}});
    (r.kernel == names.unfused ? it->second.unfused : it->second.fused) = &r;
  }

  json measured = json::array(), time_ratio = json::array(), model = json::array();
  for (const auto& [key, p] : pairs) {
    const Record& any = p.unfused ? *p.unfused : *p.fused;
    json row{{"dtype", std::string(to_string(any.dtype))},
             {"M", any.M},
             {"N", any.N},
             {"x_MiB", x_bytes(any.problem()) / kMiB}};
    json m = row;
    m["series"] = "DRAM bytes, model";
    m["ratio"] = predicted_traffic_ratio(any.problem(), run.ceilings);
    if (positive(m["ratio"].get<double>())) model.push_back(std::move(m));
    if (!p.unfused || !p.fused) continue;
    const auto bu = measured_traffic(*p.unfused).dram_bytes, bf = measured_traffic(*p.fused).dram_bytes;
    if (positive(bu) && positive(bf)) {
      json b = row;
      b["series"] = "DRAM bytes, measured";
      b["ratio"] = *bu / *bf;
      b["unfused_bytes"] = *bu;
      b["fused_bytes"] = *bf;
      measured.push_back(std::move(b));
    }
    const auto tu = median_time_s(*p.unfused), tf = median_time_s(*p.fused);
    if (tu && tf) {
      json t = row;
      t["series"] = "time, measured";
      t["ratio"] = *tu / *tf;
      t["unfused_time_us"] = *tu * 1e6;
      t["fused_time_us"] = *tf * 1e6;
      time_ratio.push_back(std::move(t));
    }
  }

  const double l2_MiB = static_cast<double>(run.ceilings.l2_bytes) / kMiB;
  std::vector<std::string> notes{"problem size = bytes of x; the intermediate fits in L2 left of the L2 line"};
  if (measured.empty() && (!model.empty() || !time_ratio.empty()))
    notes.push_back("no DRAM counters for both kernels: the measured bytes ratio is absent");

  json spec = base_spec("DRAM bytes moved by the unfused pipeline over the fused kernel, measured "
                        "and modelled, against problem size; the time ratio beside it");
  spec["title"] = title_of("Unfused / fused DRAM traffic against problem size",
                           !measured.empty() || !time_ratio.empty() || !model.empty(),
                           "no ok pair of unfused and fused records", run, notes);
  const json reference = json::array({{{"ratio", kReferenceTrafficRatio},
                                 {"text", fmt::format("{} = 5 passes / 2 passes", kReferenceTrafficRatio)}}});
  json l2 = json::array();
  if (run.ceilings.l2_bytes > 0)
    l2.push_back({{"x_MiB", l2_MiB}, {"text", fmt::format("L2 = {:.0f} MiB", l2_MiB)}});
  spec["datasets"] = {{"model_ratio", model}, {"measured_ratio", measured}, {"time_ratio", time_ratio},
                      {"reference", reference}, {"l2_size", l2}};

  const json x = quantitative("x_MiB", "problem size: bytes of x (MiB)", true, 2);
  const json y = quantitative("ratio", "unfused / fused", false);
  const json color{{"field", "series"},
                   {"type", "nominal"},
                   {"title", "unfused / fused"},
                   {"scale", json{{"domain", {"DRAM bytes, measured", "DRAM bytes, model", "time, measured"}}}}};
  json tips = json::array({tooltip("series", "ratio of", nullptr, "nominal"),
                           tooltip("dtype", "dtype", nullptr, "nominal"), tooltip("M", "M", ",d"),
                           tooltip("N", "N", ",d"), tooltip("x_MiB", "size of x (MiB)", ".4~g"),
                           tooltip("ratio", "ratio", ".3f")});
  json measured_tips = tips;
  measured_tips.push_back(tooltip("unfused_bytes", "unfused DRAM bytes", ".4~s"));
  measured_tips.push_back(tooltip("fused_bytes", "fused DRAM bytes", ".4~s"));
  json time_tips = tips;
  time_tips.push_back(tooltip("unfused_time_us", "unfused time (µs)", ".4~g"));
  time_tips.push_back(tooltip("fused_time_us", "fused time (µs)", ".4~g"));
  spec["layer"] = json::array({
      layer("reference", "reference", json{{"type", "rule"}, {"color", "#888"}, {"strokeDash", {6, 4}}},
            json{{"y", y}}),
      layer("reference_label", "reference",
            json{{"type", "text"}, {"align", "right"}, {"baseline", "bottom"}, {"dy", -4},
                 {"x", kWidth - 4}, {"color", "#555"}, {"fontSize", 10}},
            json{{"y", y}, {"text", json{{"field", "text"}}}}),
      layer("l2_size", "l2_size", json{{"type", "rule"}, {"color", "#b55"}, {"strokeDash", {2, 2}}},
            json{{"x", x}}),
      layer("l2_label", "l2_size",
            json{{"type", "text"}, {"align", "left"}, {"dx", 4}, {"y", 8}, {"color", "#b55"},
                 {"fontSize", 10}},
            json{{"x", x}, {"text", json{{"field", "text"}}}}),
      layer("model_ratio", "model_ratio", json{{"type", "line"}, {"strokeDash", {4, 2}}},
            json{{"x", x}, {"y", y}, {"color", color},
                 {"detail", json{{"field", "dtype"}, {"type", "nominal"}}}, {"tooltip", tips}}),
      layer("measured_ratio", "measured_ratio", json{{"type", "point"}, {"filled", true}, {"size", 60}},
            json{{"x", x}, {"y", y}, {"color", color}, {"tooltip", measured_tips}}),
      layer("time_ratio", "time_ratio",
            json{{"type", "point"}, {"filled", false}, {"size", 60}, {"shape", "square"}},
            json{{"x", x}, {"y", y}, {"color", color}, {"tooltip", time_tips}}),
  });
  return spec;
}

// ---- (d) time against N -----------------------------------------------------------------------

json time_spec(const RunResults& run) {
  const bool by_dtype = many_dtypes(run);
  json points = json::array(), spread = json::array();
  std::set<std::int64_t> ns;
  for (const auto& r : run.records) {
    const auto t = median_time_s(r);
    if (r.status != "ok" || !t) continue;
    json row = base_row(r, by_dtype);
    row["time_us"] = *t * 1e6;
    const auto lo = positive(r.time->min_s), hi = positive(r.time->max_s);
    put(row, "min_us", lo ? std::optional<double>(*lo * 1e6) : std::nullopt);
    put(row, "max_us", hi ? std::optional<double>(*hi * 1e6) : std::nullopt);
    put(row, "cv", positive(r.time->cv));
    put(row, "effective_GBps", positive(r.effective_GBps));
    if (lo && hi) spread.push_back(row);
    points.push_back(std::move(row));
    ns.insert(r.N);
  }
  json spec = base_spec("Median kernel time against row length, per kernel, with the min-max "
                        "spread of the timed samples");
  spec["title"] = title_of("Time against N", !points.empty(), "no ok record with a time", run,
                           {"median of the timed samples; bars: min to max"});
  spec["datasets"] = {{"spread", spread}, {"time", points}};
  json tips = record_tooltips();
  tips.push_back(tooltip("time_us", "median time (µs)", ".4~g"));
  tips.push_back(tooltip("min_us", "min (µs)", ".4~g"));
  tips.push_back(tooltip("max_us", "max (µs)", ".4~g"));
  tips.push_back(tooltip("cv", "CV", ".2%"));
  tips.push_back(tooltip("effective_GBps", "GB/s", ".1f"));
  const json x = n_axis(ns);
  const json y = quantitative("time_us", "median time (µs)", true);
  json low = y;
  low["field"] = "min_us";
  spec["layer"] = json::array({
      layer("spread", "spread", json{{"type", "rule"}, {"opacity", 0.6}},
            json{{"x", x}, {"y", low}, {"y2", json{{"field", "max_us"}}}, {"color", color_by_series()}}),
      layer("time_lines", "time", json{{"type", "line"}, {"opacity", 0.6}},
            json{{"x", x}, {"y", y}, {"color", color_by_series()},
                 {"detail", json{{"field", "elements"}, {"type", "nominal"}}}}),
      layer("time", "time", json{{"type", "point"}, {"filled", true}, {"size", 50}},
            json{{"x", x}, {"y", y}, {"color", color_by_series()}, {"tooltip", tips}}),
  });
  return spec;
}

// A layer without rows draws nothing but makes Vega warn about empty extents: leave it out, and its
// dataset with it. A plot left with no layer at all gets one line of text saying so (its title
// already does).
json without_empty_layers(json spec) {
  json kept = json::array(), datasets = json::object();
  for (auto& l : spec["layer"]) {
    const std::string name = l["data"]["name"];
    if (spec["datasets"][name].empty()) continue;
    datasets[name] = spec["datasets"][name];
    kept.push_back(std::move(l));
  }
  if (kept.empty()) {
    datasets["no_data"] = json::array({{{"text", "no data"}}});
    kept.push_back(layer("no_data", "no_data", json{{"type", "text"}, {"fontSize", 16}, {"color", "#888"}},
                         json{{"x", json{{"value", kWidth / 2}}},
                              {"y", json{{"value", kHeight / 2}}},
                              {"text", json{{"field", "text"}}}}));
  }
  spec["layer"] = std::move(kept);
  spec["datasets"] = std::move(datasets);
  return spec;
}

}  // namespace

MeasuredTraffic measured_traffic(const Record& r) {
  MeasuredTraffic m;
  const json& c = r.counters;
  if (!c.is_object()) return m;
  m.dram_read_bytes = positive(number_at(c, metric::kDramRead));
  m.dram_write_bytes = positive(number_at(c, metric::kDramWrite));
  m.dram_bytes = positive(number_at(c, "dram_bytes"));
  if (!m.dram_bytes && m.dram_read_bytes && m.dram_write_bytes)
    m.dram_bytes = *m.dram_read_bytes + *m.dram_write_bytes;

  m.l2_bytes = positive(number_at(c, "l1_l2_bytes"));
  if (!m.l2_bytes)
    if (auto sectors = positive(number_at(c, metric::kL2SectorsFromL1)))
      m.l2_bytes = *sectors * kSectorBytes;

  m.l1_bytes = positive(number_at(c, metric::kL1Bytes));

  m.executed_flops = positive(number_at(c, "flops_executed"));
  if (!m.executed_flops) {
    const auto fadd = number_at(c, metric::kFaddThreadInst);
    const auto fmul = number_at(c, metric::kFmulThreadInst);
    const auto ffma = number_at(c, metric::kFfmaThreadInst);
    if (fadd && fmul && ffma) m.executed_flops = positive(*fadd + *fmul + 2 * *ffma);
  }
  return m;
}

std::optional<double> median_time_s(const Record& r) {
  if (!r.time) return std::nullopt;
  return positive(r.time->median_s);
}

std::optional<double> algorithmic_flops(const Record& r) { return positive(r.model.flops); }

std::vector<std::pair<std::string, json>> make_plot_specs(const RunResults& run) {
  return {{"roofline", without_empty_layers(roofline_spec(run))},
          {"bandwidth", without_empty_layers(bandwidth_spec(run))},
          {"traffic_ratio", without_empty_layers(traffic_ratio_spec(run))},
          {"time", without_empty_layers(time_spec(run))}};
}

}  // namespace smr
