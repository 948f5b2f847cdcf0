// report.md and the run directory's other outputs.
//
// report.md is plain GitHub-flavoured Markdown, readable in a terminal: the claims and their
// verdicts first, then the device and ceilings, the plots, one table per kernel, the records that
// did not run, and the config that produced the run. report.html is the same Markdown rendered by
// web/render.mjs, with each plot's image replaced by the interactive chart.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include "roofline/report.hpp"

extern char** environ;

namespace smr {

using nlohmann::json;

namespace {

constexpr const char* kMissing = "—";  // a value that was not measured
constexpr double kMB = 1e6;
constexpr double kMiB = 1024.0 * 1024.0;

const std::pair<const char*, const char*> kPlotTitles[] = {
    {"roofline", "Hierarchical roofline"},
    {"bandwidth", "Effective bandwidth against N"},
    {"traffic_ratio", "Unfused / fused DRAM traffic against problem size"},
    {"time", "Time against N"},
};

// Text for a table cell: one line, no pipes, no HTML.
std::string cell(std::string s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else if (ch == '\n' || ch == '\r') out += ' ';
    else if (ch == '<') out += "&lt;";
    else out += ch;
  }
  return out;
}

std::string opt(std::optional<double> v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string(kMissing);
}

std::string table_row(const std::vector<std::string>& cells) {
  std::string s = "|";
  for (const auto& c : cells) s += " " + c + " |";
  return s + "\n";
}

// A header row and its separator; `right` marks the numeric columns.
std::string table_head(const std::vector<std::string>& names, const std::vector<bool>& right) {
  std::string s = table_row(names) + "|";
  for (std::size_t i = 0; i < names.size(); ++i) s += (i < right.size() && right[i]) ? "---:|" : "---|";
  return s + "\n";
}

// A JSON value as it reads in a table: integers exact, other numbers to 4 significant digits.
std::string json_cell(const json& v) {
  if (v.is_null()) return kMissing;
  if (v.is_string()) return cell(v.get<std::string>());
  if (v.is_boolean()) return v.get<bool>() ? "yes" : "no";
  if (v.is_number_integer() || v.is_number_unsigned()) return v.dump();
  if (v.is_number_float()) return fmt::format("{:.4g}", v.get<double>());
  return cell(v.dump());
}

std::string string_at(const json& obj, const char* key, const std::string& fallback = "") {
  if (obj.is_object() && obj.contains(key) && obj[key].is_string()) return obj[key].get<std::string>();
  return fallback;
}

std::string verdict_cell(const std::string& v) { return v.empty() ? kMissing : "**" + cell(v) + "**"; }

// ---- sections ---------------------------------------------------------------------------------

void write_claims(std::ostringstream& md, const RunResults& run) {
  md << "## Claims\n\n";
  if (!run.claims.is_array() || run.claims.empty()) {
    md << "Not evaluated for this run: the claims need the counters' measurements (see "
          "docs/results-schema.md, `claims`).\n\n";
    return;
  }
  md << table_head({"claim", "verdict", "the numbers behind it"}, {});
  for (const auto& c : run.claims)
    md << table_row({cell(string_at(c, "title", string_at(c, "id", "?"))),
                     verdict_cell(string_at(c, "verdict")), cell(string_at(c, "summary"))});
  md << "\nEach claim's test and its numbers per shape: [Claims in detail](#claims-in-detail).\n\n";
}

void write_claim_details(std::ostringstream& md, const RunResults& run) {
  if (!run.claims.is_array() || run.claims.empty()) return;
  md << "## Claims in detail\n\n";
  for (const auto& c : run.claims) {
    md << "### " << cell(string_at(c, "title", string_at(c, "id", "?"))) << ": "
       << string_at(c, "verdict", "no verdict") << "\n\n";
    if (auto s = string_at(c, "statement"); !s.empty()) md << "Claim: " << cell(s) << "  \n";
    if (auto s = string_at(c, "criterion"); !s.empty()) md << "Test: " << cell(s) << "  \n";
    if (auto s = string_at(c, "summary"); !s.empty()) md << "Result: " << cell(s) << "\n";
    md << "\n";
    if (auto s = string_at(c, "explanation"); !s.empty()) md << cell(s) << "\n\n";
    const json& rows = c.contains("rows") ? c["rows"] : json();
    if (!rows.is_array() || rows.empty()) continue;
    std::vector<std::string> columns;
    if (c.contains("columns") && c["columns"].is_array())
      for (const auto& col : c["columns"])
        if (col.is_string() && col.get<std::string>() != "verdict") columns.push_back(col.get<std::string>());
    if (columns.empty())  // no display order given: the keys of the first row
      for (const auto& [k, v] : rows.front().items())
        if (k != "verdict") columns.push_back(k);
    std::vector<std::string> head = columns;
    head.push_back("verdict");
    std::vector<bool> numeric;  // right-aligned: the columns whose first value is a number
    for (const auto& col : columns) numeric.push_back(rows.front().contains(col) && rows.front()[col].is_number());
    md << table_head(head, numeric);
    for (const auto& row : rows) {
      std::vector<std::string> cells;
      for (const auto& col : columns) cells.push_back(row.contains(col) ? json_cell(row[col]) : kMissing);
      cells.push_back(verdict_cell(string_at(row, "verdict")));
      md << table_row(cells);
    }
    md << "\n";
  }
}

void flatten(const json& j, const std::string& prefix, std::vector<std::pair<std::string, std::string>>& out) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) flatten(v, prefix.empty() ? k : prefix + "." + k, out);
  } else {
    out.emplace_back(prefix, json_cell(j));
  }
}

// How each ceiling was measured (the sweep stores it under device.ceiling_measurements): one row
// per measurement, not the flattened object.
void write_ceiling_measurements(std::ostringstream& md, const json& m) {
  if (!m.is_object() || m.empty()) return;
  auto num = [](const json& j, const char* key, const char* spec) {
    return j.contains(key) && j[key].is_number() ? fmt::format(fmt::runtime(spec), j[key].get<double>())
                                                 : std::string(kMissing);
  };
  md << "How the ceilings were measured, in this run:\n\n";
  md << table_head({"measurement", "rate", "median", "cv", "samples", "how"},
                   {false, true, true, true, true, false});
  for (const auto& [name, v] : m.items()) {
    if (!v.is_object()) continue;
    const json t = v.contains("time") ? v["time"] : json::object();
    std::string rate = v.contains("GBps") ? num(v, "GBps", "{:.0f} GB/s")
                       : v.contains("GFLOPs") ? num(v, "GFLOPs", "{:.0f} GFLOP/s") : std::string(kMissing);
    std::string how = v.contains("how") && v["how"].is_string() ? v["how"].get<std::string>() : "";
    if (v.contains("best_of") && v["best_of"].is_string()) how += (how.empty() ? "" : "; ") + std::string("best: ") + v["best_of"].get<std::string>();
    md << table_row({cell(name), rate, t.is_object() ? num(t, "median_s", "{:.4g} s") : std::string(kMissing),
                     t.is_object() ? num(t, "cv", "{:.3g}") : std::string(kMissing),
                     t.is_object() ? num(t, "samples", "{:.0f}") : std::string(kMissing), cell(how)});
  }
  md << "\n";
}

void write_device(std::ostringstream& md, const RunResults& run) {
  md << "## Device and ceilings\n\n";
  const Ceilings& c = run.ceilings;
  auto known = [](double v) { return v > 0 ? std::optional<double>(v) : std::nullopt; };
  md << "Ceilings: " << cell(c.source) << " values for " << cell(c.device) << ".\n\n";
  md << table_head({"ceiling", "value", "unit"}, {false, true, false});
  md << table_row({"DRAM copy bandwidth (bytes read + written)", opt(known(c.dram_GBps), "{:.1f}"), "GB/s"});
  md << table_row({"DRAM peak from memory clock x bus width", opt(known(c.peak_dram_GBps), "{:.1f}"), "GB/s"});
  md << table_row({"L2 bandwidth", opt(known(c.l2_GBps), "{:.1f}"), "GB/s"});
  md << table_row({"FP32 FMA throughput (FMA = 2 FLOP)", opt(known(c.fp32_GFLOPs), "{:.1f}"), "GFLOP/s"});
  md << table_row({"L2 size", opt(known(static_cast<double>(c.l2_bytes) / kMiB), "{:.1f}"), "MiB"});
  md << table_row({"SMs", c.sm_count > 0 ? std::to_string(c.sm_count) : kMissing, ""});
  md << "\n";
  if (run.device.is_object() && !run.device.empty()) {
    std::vector<std::pair<std::string, std::string>> rows;
    json device = run.device;
    device.erase("ceiling_measurements");
    device.erase("memory_plan");  // its own line above the claims (write_memory_plan)
    flatten(device, "", rows);
    md << table_head({"device", "value"}, {false, true});
    for (const auto& [k, v] : rows) md << table_row({cell(k), v});
    md << "\n";
    if (run.device.contains("ceiling_measurements"))
      write_ceiling_measurements(md, run.device["ceiling_measurements"]);
  } else {
    md << "No device recorded (the run did not use a GPU).\n\n";
  }
}

void write_plots(std::ostringstream& md, const std::vector<std::pair<std::string, json>>& specs) {
  md << "## Plots\n\n";
  md << "Vega-Lite specs with the data inlined: ";
  for (std::size_t i = 0; i < specs.size(); ++i)
    md << (i ? ", " : "") << "`" << specs[i].first << ".vl.json`";
  md << ". The SVGs and report.html are made from them by `scripts/render-report DIR`.\n\n";
  for (const auto& [stem, spec] : specs) {
    std::string title = stem;
    for (const auto& [s, t] : kPlotTitles)
      if (stem == s) title = t;
    md << "![" << title << "](" << stem << ".svg)\n\n";
  }
}

// What the run guarantees about its times: the noise criterion and the clocks, counted over the
// timed records (docs/timing.md, "What a run guarantees").
void write_guarantees(std::ostringstream& md, const RunResults& run) {
  int timed = 0, recorded = 0, converged = 0, watched = 0, fell = 0;
  double target = 0, max_seconds = 0;
  for (const auto& r : run.records) {
    if (r.status != "ok" || !r.time) continue;
    ++timed;
    if (r.time->noise) {
      ++recorded;
      converged += r.time->noise->converged ? 1 : 0;
      target = r.time->noise->target;
      max_seconds = r.time->noise->max_seconds;
    }
    if (r.time->clocks && r.time->clocks->available) {
      ++watched;
      fell += r.time->clocks->fell.value_or(false) ? 1 : 0;
    }
  }
  if (timed == 0) return;
  md << "## What the times guarantee\n\n";
  if (recorded == 0) {
    md << "Noise: not recorded (the run predates the noise criterion; each record's cv is its only "
          "spread).\n\n";
  } else {
    const std::string others =
        converged < recorded
            ? fmt::format(" The others stopped at the cap of {:.3g} s of samples and are marked \\* "
                          "in the tables below; their median is less sure than the target.",
                          max_seconds)
            : std::string();
    md << fmt::format(
        "Noise: {} of {} timed records converged ({:.0f}%): their median's ~95% distribution-free "
        "interval has a half-width within {:.2g}% of the median.{}{}\n\n",
        converged, recorded, 100.0 * converged / recorded, target * 100, others,
        recorded < timed ? fmt::format(" {} records (peers, older records) have no noise record.",
                                       timed - recorded)
                         : std::string());
  }
  const json clocks = run.device.is_object() && run.device.contains("clocks") ? run.device["clocks"]
                                                                              : json();
  if (watched > 0 && clocks.is_object()) {
    md << fmt::format(
        "Clocks: watched with NVML on {} records, never locked. Highest SM clock seen {:.0f} MHz; "
        "{} records had their SM clock fall more than {:.0f}% below it or a power/thermal "
        "throttle reason set (marked ↓ below).\n\n",
        watched, clocks.value("sm_clock_mhz_max", 0.0), fell, kClockFellFraction * 100);
  } else if (clocks.is_object() && clocks.contains("unavailable")) {
    md << "Clocks: not watched: " << cell(clocks.value("unavailable", std::string())) << ".\n\n";
  } else {
    md << "Clocks: not recorded.\n\n";
  }
}

// The noise cell: the statistic in %, \* when it did not converge; kMissing when not recorded.
std::string noise_cell(const Record& r) {
  if (!r.time || !r.time->noise) return kMissing;
  const NoiseStats& n = *r.time->noise;
  const std::string v = std::isfinite(n.value) ? fmt::format("±{:.2f}%", n.value * 100) : "±∞";
  return n.converged ? v : v + " \\*";
}

// The clock cell: min–max MHz, ↓ when it fell or was throttled; kMissing when not recorded.
std::string clock_cell(const Record& r) {
  if (!r.time || !r.time->clocks) return kMissing;
  const ClockStats& c = *r.time->clocks;
  if (!c.available) return "n/a";
  std::string s = c.sm_mhz_min == c.sm_mhz_max ? fmt::format("{:.0f}", c.sm_mhz_max)
                                               : fmt::format("{:.0f}–{:.0f}", c.sm_mhz_min, c.sm_mhz_max);
  if (c.fell.value_or(c.throttled)) s += " ↓";
  return s;
}

struct KernelGroup {
  std::string kernel;
  DType dtype;
  std::vector<const Record*> records;
};

void write_kernel_tables(std::ostringstream& md, const RunResults& run) {
  md << "## Results per kernel\n\n";
  std::vector<KernelGroup> groups;  // in run order
  for (const auto& r : run.records) {
    if (r.status != "ok") continue;
    auto it = std::find_if(groups.begin(), groups.end(),
                           [&](const KernelGroup& g) { return g.kernel == r.kernel && g.dtype == r.dtype; });
    if (it == groups.end()) it = groups.insert(groups.end(), KernelGroup{r.kernel, r.dtype, {}});
    it->records.push_back(&r);
  }
  if (groups.empty()) {
    md << "No record ran successfully.\n\n";
    return;
  }
  md << "Time: median of the timed samples (µs); spread: min to max, and the coefficient of "
        "variation. Noise: half-width of the median's ~95% interval, relative; \\* not converged. "
        "SM clock: lowest–highest reading during the samples (MHz); ↓ it fell or was throttled. "
        "GB/s: effective bandwidth, 2 x elements x dtype bytes / median time. DRAM: MB "
        "(1e6 bytes) read + written, measured by the counters and predicted by the model. "
     << kMissing << ": not measured.\n\n";
  for (auto& g : groups) {
    std::stable_sort(g.records.begin(), g.records.end(), [](const Record* a, const Record* b) {
      return a->N != b->N ? a->N < b->N : a->M < b->M;
    });
    md << "### " << cell(g.kernel) << " (" << to_string(g.dtype) << ")\n\n";
    md << table_head({"N", "M", "median time (µs)", "spread (µs)", "CV", "noise", "SM clock",
                      "GB/s", "% of copy", "DRAM MB measured", "DRAM MB model", "measured / model",
                      "verify max rel err"},
                     std::vector<bool>(13, true));
    for (const Record* r : g.records) {
      const auto t = median_time_s(*r);
      std::string spread = kMissing, cv = kMissing;
      if (r->time && r->time->min_s > 0 && r->time->max_s > 0)
        spread = fmt::format("{:.4g} – {:.4g}", r->time->min_s * 1e6, r->time->max_s * 1e6);
      if (r->time && r->time->cv > 0) cv = fmt::format("{:.2f}%", r->time->cv * 100);
      const auto measured = measured_traffic(*r).dram_bytes;
      std::optional<double> model;
      if (r->model.dram_bytes > 0) model = r->model.dram_bytes;
      std::optional<double> ratio;
      if (measured && model) ratio = *measured / *model;
      std::string verify = kMissing;
      if (r->verify)
        verify = fmt::format("{:.2e}{}", r->verify->max_rel_err, r->verify->passed ? "" : " FAILED");
      md << table_row({std::to_string(r->N), std::to_string(r->M),
                       opt(t ? std::optional<double>(*t * 1e6) : std::nullopt, "{:.4g}"), spread, cv,
                       noise_cell(*r), clock_cell(*r), opt(r->effective_GBps, "{:.1f}"), opt(r->pct_of_copy, "{:.1f}"),
                       opt(measured ? std::optional<double>(*measured / kMB) : std::nullopt, "{:.1f}"),
                       opt(model ? std::optional<double>(*model / kMB) : std::nullopt, "{:.1f}"),
                       opt(ratio, "{:.3f}"),
                       verify});
    }
    md << "\n";
  }
}

void write_not_run(std::ostringstream& md, const RunResults& run) {
  md << "## Skipped and failed\n\n";
  std::vector<const Record*> rows;
  for (const auto& r : run.records)
    if (r.status != "ok") rows.push_back(&r);
  if (rows.empty()) {
    md << "None: every record ran.\n\n";
    return;
  }
  md << table_head({"kernel", "dtype", "M", "N", "status", "reason"}, {false, false, true, true, false, false});
  for (const Record* r : rows)
    md << table_row({cell(r->kernel), std::string(to_string(r->dtype)), std::to_string(r->M),
                     std::to_string(r->N), cell(r->status), r->reason.empty() ? kMissing : cell(r->reason)});
  md << "\n";
}

void write_config(std::ostringstream& md, const RunResults& run) {
  md << "## Run configuration\n\n";
  if (run.config.is_null()) {
    md << "Not recorded.\n\n";
    return;
  }
  const std::string text = run.config.dump(2);
  std::string fence = "```";  // longer than any run of backticks inside
  while (text.find(fence) != std::string::npos) fence += '`';
  md << fence << "json\n" << text << "\n" << fence << "\n";
}

// ---- rendering --------------------------------------------------------------------------------

std::filesystem::path web_dir() {
  if (const char* env = std::getenv("SMR_WEB_DIR"); env && *env) return env;
#ifdef SMR_WEB_DIR_DEFAULT
  return SMR_WEB_DIR_DEFAULT;
#else
  return {};
#endif
}

std::optional<std::filesystem::path> find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (!path) return std::nullopt;
  std::stringstream dirs(path);
  for (std::string d; std::getline(dirs, d, ':');) {
    if (d.empty()) continue;
    std::filesystem::path p = std::filesystem::path(d) / name;
    if (::access(p.c_str(), X_OK) == 0) return p;
  }
  return std::nullopt;
}

// Runs argv, waits, returns its exit status (-1 when it could not be started).
int run_process(const std::vector<std::string>& args) {
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  int status = 0;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The shapes the sweep fitted to the device's memory (the harness's device.memory_plan): one line
// when any shape's M was scaled down or any shape was skipped, nothing otherwise.
void write_memory_plan(std::ostringstream& md, const RunResults& run) {
  if (!run.device.is_object() || !run.device.contains("memory_plan")) return;
  const nlohmann::json& plan = run.device["memory_plan"];
  const auto list = [&](const char* key) {
    return plan.contains(key) && plan[key].is_array() ? plan[key] : nlohmann::json::array();
  };
  const nlohmann::json scaled = list("scaled"), skipped = list("skipped");
  if (scaled.empty() && skipped.empty()) return;
  std::vector<std::string> parts;
  for (const auto& s : scaled)
    parts.push_back(fmt::format("{} M {} -> {} at N = {}", s.value("dtype", "?"),
                                s.value("M", std::int64_t{0}), s.value("scaled_M", std::int64_t{0}),
                                s.value("N", std::int64_t{0})));
  for (const auto& s : skipped)
    parts.push_back(fmt::format("{} {}x{} skipped ({})", s.value("dtype", "?"),
                                s.value("M", std::int64_t{0}), s.value("N", std::int64_t{0}),
                                s.value("reason", std::string("no reason given"))));
  std::string joined;
  for (const auto& p : parts) joined += (joined.empty() ? "" : "; ") + p;
  md << "> Memory: " << scaled.size() << " shape(s) scaled down and " << skipped.size()
     << " skipped to fit " << cell(plan.value("source", std::string("the device")))
     << ": " << cell(joined) << "\n\n";
}

// A run whose dispatch was restricted to a smaller card's profile (SMR_DEVICE_PROFILE, the
// harness's device.dispatch_limits): one line saying so, nothing otherwise.
void write_profile_restriction(std::ostringstream& md, const RunResults& run) {
  if (!run.device.is_object() || !run.device.contains("dispatch_limits")) return;
  const nlohmann::json& d = run.device["dispatch_limits"];
  if (!d.is_object() || !d.contains("restricted_to_profile") ||
      !d["restricted_to_profile"].is_string())
    return;
  md << "> Dispatch restricted to the `" << cell(d["restricted_to_profile"].get<std::string>())
     << "` device profile (SMR_DEVICE_PROFILE): compute capability "
     << cell(d.value("compute_capability", std::string("?")))
     << (d.value("cluster_launch", false) ? ", clusters" : ", no clusters") << ", "
     << d.value("shared_per_block_bytes", std::int64_t{0}) / 1024
     << " KB of shared memory per block; the timings are this card's.\n\n";
}

}  // namespace

std::string make_report_markdown(const RunResults& run) {
  std::ostringstream md;
  const std::string name = string_at(run.config, "name", "unnamed config");
  md << "# softmax-roofline report: " << cell(name) << "\n\n";
  std::size_t ok = 0, skipped = 0, failed = 0, counted = 0;
  for (const auto& r : run.records) {
    ok += r.status == "ok";
    skipped += r.status == "skipped";
    failed += r.status == "failed";
    counted += r.status == "ok" && measured_traffic(r).dram_bytes.has_value();
  }
  md << "Run " << (run.created.empty() ? kMissing : cell(run.created)) << " with softmax-bench "
     << (run.tool_version.empty() ? kMissing : cell(run.tool_version));
  if (!run.command.empty()) md << ": `" << run.command << "`";
  md << ".  \n";
  md << fmt::format("{} records: {} ok, {} skipped, {} failed; counters measured for {} of the {} ok.",
                    run.records.size(), ok, skipped, failed, counted, ok)
     << "\n\n";
  if (!run.complete)
    md << "> **Partial run**: the sweep had not finished when these results were written "
          "(interrupted, or still running). Every table shows only what was measured.\n\n";
  std::set<std::string> counter_reasons;
  for (const auto& r : run.records)
    if (r.counters_reason && !r.counters_reason->empty()) counter_reasons.insert(*r.counters_reason);
  for (const auto& why : counter_reasons) md << "> Counters: " << cell(why) << "\n\n";
  // Metrics the device lacks (the harness's extra.counters.unavailable): left out of every
  // table and claim, never shown as 0.
  std::map<std::string, std::string> unavailable;
  for (const auto& r : run.records) {
    if (!r.extra.is_object() || !r.extra.contains("counters")) continue;
    const json& c = r.extra["counters"];
    if (c.is_object() && c.contains("unavailable") && c["unavailable"].is_object())
      for (const auto& [metric, why] : c["unavailable"].items())
        unavailable.emplace(metric, why.is_string() ? why.get<std::string>() : "no reason given");
  }
  for (const auto& [metric, why] : unavailable)
    md << "> Counters: " << cell(metric) << " is unavailable on this device (" << cell(why)
       << "): not measured, left out of the tables and claims\n\n";
  write_memory_plan(md, run);
  write_profile_restriction(md, run);

  write_claims(md, run);
  write_guarantees(md, run);
  write_device(md, run);
  write_plots(md, make_plot_specs(run));
  write_claim_details(md, run);
  write_kernel_tables(md, run);
  write_not_run(md, run);
  write_config(md, run);
  return md.str();
}

ReportOutcome write_report(const RunResults& run, const std::filesystem::path& dir) {
  ReportOutcome out;
  std::filesystem::create_directories(dir);
  const auto specs = make_plot_specs(run);
  for (const auto& [stem, spec] : specs) {
    const auto file = dir / (stem + ".vl.json");
    write_file_atomic(file, spec.dump(2) + "\n");
    out.written.push_back(file);
  }
  const auto md = dir / "report.md";
  write_file_atomic(md, make_report_markdown(run));
  out.written.push_back(md);

  const std::string command = "scripts/render-report " + dir.string();  // from the source tree's root
  const auto web = web_dir();
  const auto node = find_on_path("node");
  std::string missing;
  if (!node) missing = "Node.js (node) is not on PATH";
  else if (web.empty() || !std::filesystem::exists(web / "render.mjs"))
    missing = "web/render.mjs was not found (set SMR_WEB_DIR to the project's web/ folder)";
  else
    for (const char* package : {"vega", "vega-lite", "vega-embed", "marked"})
      if (missing.empty() && !std::filesystem::exists(web / "node_modules" / package))
        missing = fmt::format("the web packages are not installed ({} is missing)",
                              (web / "node_modules" / package).string());
  if (!missing.empty()) {
    out.render_hint = fmt::format("report.html and SVGs not rendered: {}; render them with: {}", missing, command);
    return out;
  }

  const int rc = run_process({node->string(), (web / "render.mjs").string(), dir.string()});
  if (rc != 0) {
    out.render_hint = fmt::format("report.html and SVGs not rendered: {} exited with {}; retry with: {}",
                                  (web / "render.mjs").string(), rc, command);
    return out;
  }
  out.rendered = true;
  for (const auto& [stem, spec] : specs)
    for (const char* ext : {".svg", ".png"})
      if (auto f = dir / (stem + ext); std::filesystem::exists(f)) out.written.push_back(f);
  out.written.push_back(dir / "report.html");
  return out;
}

}  // namespace smr
