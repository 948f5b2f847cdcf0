// Everything a run directory holds next to results.json: the Vega-Lite specs (the JSON roofline
// plots), report.md, and -- when the Vega toolchain is installed -- report.html and SVG/PNG files.
//
// Rendering (report.html, <stem>.svg, <stem>.png) is done by web/render.mjs in Node.js with the
// packages pinned in web/package-lock.json. write_report finds web/ through the environment
// variable SMR_WEB_DIR when set, otherwise through the source tree the library was built from
// (compile definition SMR_WEB_DIR_DEFAULT). Setting SMR_WEB_DIR to a folder without the packages
// turns rendering off (the tests do that).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/results.hpp"

namespace smr {

// Vega-Lite v5 specs with the data inlined, keyed by file stem:
// "roofline", "bandwidth", "traffic_ratio", "time".
std::vector<std::pair<std::string, nlohmann::json>> make_plot_specs(const RunResults& run);

std::string make_report_markdown(const RunResults& run);

struct ReportOutcome {
  std::vector<std::filesystem::path> written;  // every file written
  bool rendered = false;                       // report.html and SVGs were made
  std::string render_hint;                     // when not rendered: why, and the one command that would
};

// Writes specs and report.md into `dir` (atomically, file by file), then renders report.html,
// SVGs (and PNGs where rsvg-convert exists) when Node.js and the project's web/ packages are there.
ReportOutcome write_report(const RunResults& run, const std::filesystem::path& dir);

// ---- What the plots and the report read from a record (shared by plots.cpp and report.cpp) ----

// Bytes and instructions a record's `counters` report, each absent when not measured (or 0).
// `counters` is an object of metric name -> number (src/harness/counters.hpp, with the raw metrics
// named in src/core/metrics.hpp): the derived keys dram_bytes, l1_l2_bytes, flops_executed when
// present, else the raw CUPTI metrics they come from.
struct MeasuredTraffic {
  std::optional<double> dram_read_bytes, dram_write_bytes, dram_bytes;
  std::optional<double> l2_bytes;        // L1 <-> L2
  std::optional<double> l1_bytes;        // metric::kL1Bytes (src/core/metrics.hpp)
  std::optional<double> executed_flops;  // fadd + fmul + 2 x ffma, as the hardware ran them
};
MeasuredTraffic measured_traffic(const Record& r);

// Median time of an ok record's timing, absent when not timed.
std::optional<double> median_time_s(const Record& r);

// Algorithmic FLOPs of a record: the model's (3 per element); absent where it has none (copy) or
// did not model them (the FMA ceiling).
std::optional<double> algorithmic_flops(const Record& r);

}  // namespace smr
