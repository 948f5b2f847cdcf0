// Everything a run directory holds next to results.json: the Vega-Lite specs (the JSON roofline
// plots), report.md, and -- when the Vega toolchain is installed -- report.html and SVG/PNG files.
#pragma once

#include <filesystem>
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

}  // namespace smr
