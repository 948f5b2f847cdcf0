// Writes a run directory's report (specs, report.md and, with the web packages installed,
// report.html and SVGs) from a results.json: what the browser test opens.
//   smr_make_report RESULTS.json OUT_DIR
// Exit 0 when rendered, 1 when not (the hint says why): tests/browser/run-browser-test checks that
// Node.js, Chromium and the web packages are there before it calls this.
#include <cstdio>
#include <exception>

#include "roofline/report.hpp"
#include "roofline/results.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: %s RESULTS.json OUT_DIR\n", argv[0]);
    return 2;
  }
  try {
    const auto outcome = smr::write_report(smr::read_results(argv[1]), argv[2]);
    for (const auto& f : outcome.written) std::printf("wrote %s\n", f.c_str());
    if (!outcome.rendered) {
      std::fprintf(stderr, "smr_make_report: %s\n", outcome.render_hint.c_str());
      return 1;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "smr_make_report: %s\n", e.what());
    return 1;
  }
}
