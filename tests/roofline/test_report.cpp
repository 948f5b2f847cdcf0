// The report writers: Vega-Lite specs and report.md, from runs built here in code (and the
// synthetic fixture under tests/data/results/sample-run). No GPU, no Node.js.
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>

#include "catch.hpp"
#include "roofline/model.hpp"
#include "roofline/report.hpp"
#include "roofline/results.hpp"

namespace {

using nlohmann::json;
using namespace smr;

constexpr double kMadeUpGBps = 3000;  // the bandwidth the test records' times are made from

struct Make {
  bool time = true;
  bool counters = true;
};

Record record(const std::string& kernel, TrafficModel traffic, std::int64_t M, std::int64_t N,
              const Ceilings& c, Make make = {}) {
  Record r;
  r.kernel = kernel;
  r.M = M, r.N = N, r.ld_x = N, r.ld_y = N;
  r.model = predict(traffic, r.problem(), c);
  if (make.time) {
    const double t = r.model.dram_bytes / (kMadeUpGBps * 1e9);
    TimeStats ts;
    ts.median_s = t, ts.min_s = 0.9 * t, ts.max_s = 1.1 * t, ts.mean_s = t, ts.stddev_s = 0.01 * t;
    ts.cv = 0.01, ts.samples = 10;
    r.time = ts;
    r.effective_GBps = r.problem().min_bytes() / t / 1e9;
    r.pct_of_copy = *r.effective_GBps / c.dram_GBps * 100;
    VerifyResult v;
    v.passed = true, v.max_rel_err = 1e-7, v.tolerance = 1e-5, v.rows_checked = 8;
    r.verify = v;
  }
  if (make.counters) {
    r.counters = json{{"dram__bytes_read.sum", r.model.dram_read_bytes},
                      {"dram__bytes_write.sum", r.model.dram_write_bytes},
                      {"lts__t_sectors_srcunit_tex.sum", r.model.l2_bytes / 32},
                      {"l1tex__t_bytes.sum", r.model.l2_bytes}};
  }
  return r;
}

Record not_run(const std::string& kernel, std::int64_t M, std::int64_t N, const char* status,
               const char* reason, const Ceilings& c) {
  Record r = record(kernel, TrafficModel::fused, M, N, c, {false, false});
  r.status = status;
  r.reason = reason;
  return r;
}

const std::int64_t kShapes[][2] = {{1 << 16, 1 << 10}, {1 << 14, 1 << 12}, {1 << 12, 1 << 14}};

// fused and unfused with time and counters, a timing-only peer, one skipped, one failed, and
// one ok record that has no time yet.
RunResults sample_run() {
  RunResults run;
  run.tool_version = "test";
  run.created = "2026-01-01T00:00:00Z";
  run.config = json{{"name", "report test"}};
  run.ceilings = datasheet_h200();
  for (const auto& [M, N] : kShapes) {
    run.records.push_back(record("unfused", TrafficModel::unfused, M, N, run.ceilings));
    run.records.push_back(record("fused", TrafficModel::fused, M, N, run.ceilings));
    run.records.push_back(record("torch.softmax", TrafficModel::fused, M, N, run.ceilings, {true, false}));
  }
  run.records.push_back(not_run("fused", 64, 1 << 20, "skipped", "N = 1048576 exceeds the one-tile cap", run.ceilings));
  run.records.push_back(not_run("online", 64, 1 << 20, "failed", "CUDA error: an illegal memory access", run.ceilings));
  run.records.push_back(record("online", TrafficModel::online, 1 << 16, 1 << 10, run.ceilings, {false, false}));
  run.claims = json::array({{{"id", "fused_intensity"},
                             {"title", "Fused intensity"},
                             {"statement", "3 FLOP / 8 B"},
                             {"verdict", "holds"},
                             {"summary", "0.375 FLOP/B"},
                             {"columns", {"M", "N", "intensity"}},
                             {"rows", {{{"M", 65536}, {"N", 1024}, {"intensity", 0.375}, {"verdict", "holds"}}}}}});
  return run;
}

json spec_named(const std::vector<std::pair<std::string, json>>& specs, const std::string& stem) {
  for (const auto& [s, spec] : specs)
    if (s == stem) return spec;
  FAIL("no spec " << stem);
  return {};
}

// Rows of a dataset; a layer without rows is left out of the spec with its dataset.
std::size_t rows_of(const json& spec, const char* dataset) {
  const json& d = spec.at("datasets");
  return d.contains(dataset) ? d[dataset].size() : 0;
}

// Every number in every dataset row of a spec: what a plot would draw.
void each_number(const json& j, const std::function<void(const std::string&, double)>& f,
                 const std::string& where = "") {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) each_number(v, f, where + "." + k);
  } else if (j.is_array()) {
    for (std::size_t i = 0; i < j.size(); ++i) each_number(j[i], f, where + "[" + std::to_string(i) + "]");
  } else if (j.is_number()) {
    f(where, j.get<double>());
  }
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

std::string read_text(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

TEST_CASE("specs are Vega-Lite v5 JSON with their data inlined", "[report]") {
  const auto specs = make_plot_specs(sample_run());
  REQUIRE(specs.size() == 4);
  const char* stems[] = {"roofline", "bandwidth", "traffic_ratio", "time"};
  for (std::size_t i = 0; i < specs.size(); ++i) {
    const auto& [stem, spec] = specs[i];
    CAPTURE(stem);
    CHECK(stem == stems[i]);
    const json reparsed = json::parse(spec.dump(2));  // what the .vl.json file holds
    CHECK(reparsed == spec);
    CHECK(spec.at("$schema") == "https://vega.github.io/schema/vega-lite/v5.json");
    REQUIRE(spec.at("layer").is_array());
    for (const auto& layer : spec["layer"]) {
      CAPTURE(layer.dump());
      CHECK(layer.at("name").is_string());
      CHECK(spec.at("datasets").contains(layer.at("data").at("name").get<std::string>()));  // inlined
    }
    CHECK(spec.at("title").at("text").get<std::string>().find("no data") == std::string::npos);
  }
}

TEST_CASE("each plot gets one data value per measured record", "[report]") {
  const auto specs = make_plot_specs(sample_run());
  // 3 shapes x (unfused, fused) with counters at three levels; torch.softmax is timing only.
  const json roofline = spec_named(specs, "roofline");
  CHECK(rows_of(roofline, "measured") == 3 * 2 * 3);
  CHECK(rows_of(roofline, "model") == 3 * 3);  // every timed record with a model
  std::set<std::string> levels;
  for (const auto& row : roofline["datasets"]["measured"]) levels.insert(row["point"].get<std::string>());
  CHECK(levels == std::set<std::string>{"DRAM", "L2", "L1"});
  // DRAM copy (= peak from clocks in the datasheet) and the FP32 roof: two points each.
  CHECK(rows_of(roofline, "ceilings") == 2 * 2);

  const json bandwidth = spec_named(specs, "bandwidth");
  CHECK(rows_of(bandwidth, "bandwidth") == 9);
  CHECK(rows_of(bandwidth, "copy_ceiling") == 1);
  CHECK(bandwidth["datasets"]["copy_ceiling"][0]["effective_GBps"] == datasheet_h200().dram_GBps);

  const json ratio = spec_named(specs, "traffic_ratio");
  CHECK(rows_of(ratio, "measured_ratio") == 3);
  CHECK(rows_of(ratio, "time_ratio") == 3);
  CHECK(rows_of(ratio, "model_ratio") == 3);
  CHECK(rows_of(ratio, "reference") == 1);
  CHECK(ratio["datasets"]["reference"][0]["ratio"] == 2.5);
  CHECK(rows_of(ratio, "l2_size") == 1);
  for (const auto& row : ratio["datasets"]["measured_ratio"]) {
    // Far above L2 the counters here are the model's bytes: the measured ratio is the model's.
    const Problem p = dense(row["M"].get<std::int64_t>(), row["N"].get<std::int64_t>());
    REQUIRE_THAT(row["ratio"].get<double>(), Catch::Matchers::WithinRel(predicted_traffic_ratio(p, datasheet_h200()), 1e-12));
  }

  const json time = spec_named(specs, "time");
  CHECK(rows_of(time, "time") == 9);
  CHECK(rows_of(time, "spread") == 9);
  for (const auto& row : time["datasets"]["time"]) CHECK(row["kernel"] != "online");  // not timed
}

TEST_CASE("values that were not measured are left out, never drawn as 0", "[report]") {
  RunResults run = sample_run();
  for (auto& r : run.records) {  // timing only, and one record without its bandwidth
    r.counters = nullptr;
    r.counters_reason = "counters off";
  }
  run.records[0].effective_GBps.reset();
  run.records[1].time->min_s = 0;  // no spread recorded
  const auto specs = make_plot_specs(run);
  const json roofline = spec_named(specs, "roofline");
  CHECK(rows_of(roofline, "measured") == 0);
  CHECK(rows_of(roofline, "model") == 9);
  CHECK(roofline["title"]["subtitle"].dump().find("no counters") != std::string::npos);
  CHECK(rows_of(spec_named(specs, "traffic_ratio"), "measured_ratio") == 0);
  CHECK(rows_of(spec_named(specs, "traffic_ratio"), "time_ratio") == 3);
  CHECK(rows_of(spec_named(specs, "bandwidth"), "bandwidth") == 8);
  CHECK(rows_of(spec_named(specs, "time"), "spread") == 8);
  for (const auto& [stem, spec] : specs)
    each_number(spec["datasets"], [&](const std::string& where, double v) {
      INFO(stem << where << " = " << v);
      CHECK(v != 0);
      CHECK(std::isfinite(v));
    });
  const json bandwidth = spec_named(specs, "bandwidth");
  REQUIRE(bandwidth["datasets"]["bandwidth"].size() == 8);
  for (const auto& row : bandwidth["datasets"]["bandwidth"]) {
    CHECK(row.contains("effective_GBps"));
    CHECK((row["kernel"] != "unfused" || row["M"] != kShapes[0][0]));  // the record without it
  }
}

TEST_CASE("several dtypes: each kernel and dtype is a series of its own", "[report]") {
  RunResults run = sample_run();
  Record half = record("fused", TrafficModel::fused, 1 << 16, 1 << 10, run.ceilings);
  half.dtype = DType::bf16;
  half.model = predict(TrafficModel::fused, half.problem(), run.ceilings);
  run.records.push_back(half);
  std::set<std::string> series;
  const json bandwidth = spec_named(make_plot_specs(run), "bandwidth");
  for (const auto& row : bandwidth["datasets"]["bandwidth"]) series.insert(row["series"].get<std::string>());
  CHECK(series == std::set<std::string>{"fused (fp32)", "fused (bf16)", "unfused (fp32)", "torch.softmax (fp32)"});
  const std::string md = make_report_markdown(run);
  CHECK(md.find("\n### fused (bf16)\n") != std::string::npos);
}

TEST_CASE("a plot without data says so in its title", "[report]") {
  RunResults run;
  run.config = json{{"name", "empty"}};
  run.records.push_back(not_run("fused", 64, 1 << 20, "skipped", "too long", run.ceilings));
  for (const auto& [stem, spec] : make_plot_specs(run)) {
    CAPTURE(stem);
    CHECK(spec["title"]["text"].get<std::string>().find("no data") != std::string::npos);
    REQUIRE(spec.at("layer").size() >= 1);  // still a valid spec: the ceilings, or a line of text
    for (const auto& layer : spec["layer"]) CHECK_FALSE(spec["datasets"][layer["data"]["name"].get<std::string>()].empty());
  }
  CHECK(spec_named(make_plot_specs(run), "time")["layer"][0]["name"] == "no_data");
  const std::string md = make_report_markdown(run);
  CHECK(md.find("No record ran successfully") != std::string::npos);
  CHECK(md.find("Not evaluated") != std::string::npos);  // claims null
}

TEST_CASE("report.md: claims first, a row per ok record, the records that did not run", "[report]") {
  RunResults run = sample_run();
  run.complete = false;
  const std::string md = make_report_markdown(run);
  INFO(md);
  // The first section is the claims, with their verdicts.
  const auto claims = md.find("\n## Claims\n");
  REQUIRE(claims != std::string::npos);
  CHECK(md.find("\n## ") == claims);
  CHECK(claims < md.find("\n## Device and ceilings\n"));
  CHECK(md.find("\n## Device and ceilings\n") < md.find("\n## Results per kernel\n"));
  CHECK(md.find("\n## Results per kernel\n") < md.find("\n## Skipped and failed\n"));
  CHECK(md.find("| Fused intensity | **holds** | 0.375 FLOP/B |") < md.find("\n## Device"));
  CHECK(md.find("Partial run") < claims);

  // One table row per ok record: "| N | M | ..." under its kernel's heading.
  for (const auto& r : run.records) {
    if (r.status != "ok") continue;
    CAPTURE(r.key());
    const auto section = md.find("\n### " + r.kernel + " (fp32)\n");
    REQUIRE(section != std::string::npos);
    const auto next = md.find("\n### ", section + 1);
    const std::string table = md.substr(section, next - section);
    CHECK(count(table, "\n| " + std::to_string(r.N) + " | " + std::to_string(r.M) + " |") == 1);
  }
  // The ok record without a time has its row, with its values shown as missing, not as 0.
  const auto online = md.find("\n### online (fp32)\n");
  const std::string online_row = md.substr(md.find("\n| 1024 | 65536 |", online) + 1);
  CHECK(online_row.substr(0, online_row.find('\n')) ==
        "| 1024 | 65536 | — | — | — | — | — | — | — | — | 536.9 | — | — |");
  // Timing only: torch.softmax has no measured DRAM bytes.
  const auto torch = md.find("\n### torch.softmax (fp32)\n");
  CHECK(md.find("| 3000.0 | 62.5 | — | 536.9 | — |", torch) != std::string::npos);

  const std::string not_run = md.substr(md.find("\n## Skipped and failed\n"));
  CHECK(not_run.find("| fused | fp32 | 64 | 1048576 | skipped | N = 1048576 exceeds the one-tile cap |") != std::string::npos);
  CHECK(not_run.find("| online | fp32 | 64 | 1048576 | failed | CUDA error: an illegal memory access |") != std::string::npos);
  // Every plot is linked by its SVG.
  for (const char* stem : {"roofline", "bandwidth", "traffic_ratio", "time"})
    CHECK(md.find(std::string("](") + stem + ".svg)") != std::string::npos);
  CHECK(md.find("```json\n{\n  \"name\": \"report test\"\n}\n```") != std::string::npos);
}

TEST_CASE("report.md: the shapes scaled or skipped to fit the device's memory, one line", "[report]") {
  RunResults run = sample_run();
  run.device = json::object();
  run.device["name"] = "made-up card";
  CHECK(make_report_markdown(run).find("> Memory:") == std::string::npos);  // no plan: no line
  run.device["memory_plan"] = {
      {"source", "the device at hand (made-up card)"},
      {"free_bytes", 1500000000},
      {"scaled", json::array({{{"dtype", "fp32"}, {"M", 1024}, {"N", 131072}, {"scaled_M", 512}}})},
      {"skipped", json::array({{{"dtype", "bf16"}, {"M", 65536}, {"N", 1048576},
                                {"reason", "needs 274.88 GB, the device has 1.50 GB free"}}})}};
  const std::string md = make_report_markdown(run);
  INFO(md);
  CHECK(md.find("> Memory: 1 shape(s) scaled down and 1 skipped to fit the device at hand "
                "(made-up card): fp32 M 1024 -> 512 at N = 131072; bf16 65536x1048576 skipped "
                "(needs 274.88 GB, the device has 1.50 GB free)") < md.find("\n## Claims\n"));
  CHECK(md.find("memory_plan") == std::string::npos);  // not repeated in the device table
  run.device["memory_plan"]["scaled"] = json::array();
  run.device["memory_plan"]["skipped"] = json::array();
  CHECK(make_report_markdown(run).find("> Memory:") == std::string::npos);  // all fit: no line
}

TEST_CASE("report.md: a metric the device lacks is named unavailable, not shown as 0", "[report]") {
  RunResults run = sample_run();
  for (Record& r : run.records) {
    if (r.status != "ok" || !r.counters.is_object()) continue;
    if (!r.extra.is_object()) r.extra = json::object();
    r.extra["counters"]["unavailable"] = {{"lts__made_up_metric.sum", "not on chip TU104"}};
  }
  const std::string md = make_report_markdown(run);
  INFO(md);
  CHECK(count(md, "> Counters: lts__made_up_metric.sum is unavailable on this device (not on chip "
                  "TU104): not measured") == 1);
}

TEST_CASE("report.md: noise and clocks per record, and what the run guarantees", "[report]") {
  RunResults run = sample_run();
  // Older records have neither field: the table says not recorded, and no guarantee is claimed.
  std::string md = make_report_markdown(run);
  CHECK(md.find("Noise: not recorded") != std::string::npos);
  CHECK(md.find("\\*") == md.find("\\* not converged"));  // only the legend has the mark
  // Mark the first two timed records: one converged on a steady clock, one not, with a clock drop.
  int marked = 0;
  for (Record& r : run.records) {
    if (r.status != "ok" || !r.time || marked == 2) continue;
    const bool first = marked++ == 0;
    r.time->noise = NoiseStats{"median_ci95_halfwidth_rel", first ? 0.0012 : 0.031, 0.005, first,
                               first ? 0.05 : 0.2, 0.2};
    ClockStats c;
    c.available = true;
    c.sm_mhz_min = first ? 1980 : 1700;
    c.sm_mhz_max = 1980;
    c.readings = 3;
    r.time->clocks = c;
  }
  REQUIRE(marked == 2);
  {
    // Every recorded median converged: no sentence about the others.
    RunResults all = run;
    for (Record& r : all.records)
      if (r.time && r.time->noise) r.time->noise->converged = true;
    const std::string m = make_report_markdown(all);
    CHECK(m.find("Noise: 2 of 2 timed records converged (100%)") != std::string::npos);
    CHECK(m.find("The others stopped") == std::string::npos);
  }
  mark_clock_drops(run);
  md = make_report_markdown(run);
  INFO(md);
  CHECK(md.find("Noise: 1 of 2 timed records converged (50%)") != std::string::npos);
  CHECK(md.find("The others stopped at the cap of 0.2 s") != std::string::npos);
  CHECK(md.find("Highest SM clock seen 1980 MHz; 1 records") != std::string::npos);
  CHECK(md.find("| ±0.12% | 1980 |") != std::string::npos);
  CHECK(md.find("| ±3.10% \\* | 1700–1980 ↓ |") != std::string::npos);
  CHECK(md.find("\n## What the times guarantee\n") < md.find("\n## Device and ceilings\n"));
}

TEST_CASE("table cells cannot break the table or inject HTML", "[report]") {
  RunResults run;
  run.records.push_back(not_run("fused", 64, 1 << 20, "skipped", "a | b\n<script>", run.ceilings));
  const std::string md = make_report_markdown(run);
  CHECK(md.find("| a \\| b &lt;script> |") != std::string::npos);
  CHECK(md.find("<script>") == std::string::npos);
}

TEST_CASE("write_report writes the specs and report.md and says how to render the rest", "[report]") {
  const auto dir = std::filesystem::temp_directory_path() / ("smr-report-test-" + std::to_string(::getpid()));
  std::filesystem::remove_all(dir);
  const char* before = std::getenv("SMR_WEB_DIR");
  const std::string saved = before ? before : "";
  ::setenv("SMR_WEB_DIR", (dir / "no-web-here").c_str(), 1);  // no renderer: the hint path
  const ReportOutcome out = write_report(sample_run(), dir / "run");
  if (before) ::setenv("SMR_WEB_DIR", saved.c_str(), 1);
  else ::unsetenv("SMR_WEB_DIR");

  CHECK_FALSE(out.rendered);
  CHECK(out.render_hint.find("scripts/render-report " + (dir / "run").string()) != std::string::npos);
  std::set<std::string> names;
  for (const auto& f : out.written) names.insert(f.filename().string());
  CHECK(names == std::set<std::string>{"roofline.vl.json", "bandwidth.vl.json", "traffic_ratio.vl.json",
                                       "time.vl.json", "report.md"});
  for (const auto& entry : std::filesystem::directory_iterator(dir / "run"))
    CHECK(names.count(entry.path().filename().string()) == 1);  // nothing else, no temporaries
  CHECK(json::parse(read_text(dir / "run" / "roofline.vl.json")) == make_plot_specs(sample_run())[0].second);
  CHECK(read_text(dir / "run" / "report.md") == make_report_markdown(sample_run()));
  std::filesystem::remove_all(dir);
}

TEST_CASE("the synthetic fixture reads back, says it is synthetic, and fills every plot", "[report]") {
  const RunResults run = read_results(std::filesystem::path(SMR_SOURCE_DIR) / "tests/data/results/sample-run/results.json");
  CHECK(run.config.at("name").get<std::string>().find("synthetic") != std::string::npos);
  CHECK(run.device.at("name").get<std::string>().find("synthetic") != std::string::npos);
  std::size_t ok = 0, with_bandwidth = 0;
  for (const auto& r : run.records) {
    ok += r.status == "ok";
    with_bandwidth += r.status == "ok" && r.effective_GBps.has_value();
  }
  const auto specs = make_plot_specs(run);
  CHECK(rows_of(spec_named(specs, "bandwidth"), "bandwidth") == with_bandwidth);
  for (const auto& [stem, spec] : specs) {
    CAPTURE(stem);
    CHECK(spec["title"]["text"].get<std::string>().find("no data") == std::string::npos);
  }
  CHECK(rows_of(spec_named(specs, "roofline"), "measured") > 0);
  CHECK(rows_of(spec_named(specs, "traffic_ratio"), "measured_ratio") > 0);
  const std::string md = make_report_markdown(run);
  CHECK(md.find("synthetic fixture for tests") != std::string::npos);
  CHECK(md.find("\n## Skipped and failed\n") != std::string::npos);
  CHECK(count(md, "| skipped |") + count(md, "| failed |") == run.records.size() - ok);
}
