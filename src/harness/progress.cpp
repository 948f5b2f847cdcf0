// The terminal progress line of the sweep: records done of all, the one running, elapsed time and
// an ETA, on stderr when it is a terminal and the run is not --quiet.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"

namespace smr::detail {

namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(std::lround(std::max(seconds, 0.0)));
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{}:{:02}", s / 60, s % 60);
}

}  // namespace

Progress::Progress(int total, int already_done, bool quiet)
    : on_(!quiet && isatty(fileno(stderr))),
      total_(total),
      done_(already_done),
      start_(std::chrono::steady_clock::now()) {}

void Progress::show(const std::string& kernel, const Problem& p) {
  if (!on_) return;
  const double elapsed = seconds();
  std::string eta = "--:--";
  if (done_here_ > 0) eta = clock_text(elapsed / done_here_ * (total_ - done_));
  std::fprintf(stderr, "\r\x1b[K%d/%d %s %s  elapsed %s  ETA %s", done_, total_, kernel.c_str(),
               shape_text(p).c_str(), clock_text(elapsed).c_str(), eta.c_str());
  std::fflush(stderr);
}

void Progress::finished_one() {
  ++done_;
  ++done_here_;
}

void Progress::clear() {
  if (!on_) return;
  std::fprintf(stderr, "\r\x1b[K");
  std::fflush(stderr);
}

void Progress::message(const std::string& text) {
  clear();
  std::fprintf(stderr, "%s\n", text.c_str());
}

double Progress::seconds() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

}  // namespace smr::detail
