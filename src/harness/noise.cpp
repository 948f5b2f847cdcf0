// The noise criterion: the median's distribution-free confidence interval and the stop rule.
#include "harness/noise.hpp"

#include <algorithm>
#include <cmath>

namespace smr {

namespace {
// 1.96 / 2: the normal approximation of Binomial(n, 1/2) at ~95%, in units of sqrt(n).
constexpr double kHalfZ95 = 0.98;
// A round of extra samples is at least this many (a few samples per round would spend the
// record's time on rounds, not samples) ...
constexpr int kMinRound = 8;
}  // namespace

MedianCiRanks median_ci_ranks(int n) {
  if (n < kMinSamplesForMedianCi) return {};
  const double half = 0.5 * n, spread = kHalfZ95 * std::sqrt(static_cast<double>(n));
  const int j = static_cast<int>(std::floor(half - spread));
  const int k = static_cast<int>(std::ceil(half + 1.0 + spread));
  if (j < 1 || k > n) return {};
  return {j, k};
}

double median_ci_halfwidth_rel(std::vector<double> v) {
  const int n = static_cast<int>(v.size());
  const MedianCiRanks r = median_ci_ranks(n);
  if (r.lower == 0) return std::numeric_limits<double>::infinity();
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size();
  const double median = m % 2 ? v[m / 2] : 0.5 * (v[m / 2 - 1] + v[m / 2]);
  if (!(median > 0)) return std::numeric_limits<double>::infinity();
  const double lo = v[static_cast<std::size_t>(r.lower - 1)];
  const double hi = v[static_cast<std::size_t>(r.upper - 1)];
  return 0.5 * (hi - lo) / median;
}

NoiseStats sample_until_quiet(std::vector<double>& samples, const StopRule& rule,
                              const std::function<void(int)>& take,
                              const std::function<double()>& seconds) {
  NoiseStats s;
  s.statistic = kMedianCiStatistic;
  s.target = rule.target;
  s.max_seconds = rule.max_seconds;
  const int max_samples = std::max(rule.max_samples, 1);
  take(std::clamp(rule.first_samples, 1, max_samples));
  for (;;) {
    s.value = median_ci_halfwidth_rel(samples);
    s.seconds = seconds();
    const int n = static_cast<int>(samples.size());
    s.converged = s.value <= rule.target;
    if (s.converged || s.seconds >= rule.max_seconds || n >= max_samples) break;
    // The interval shrinks as 1/sqrt(n): n (value / target)^2 samples would reach the target.
    // Ask for that (at least kMinRound, at most doubling n), within the time left at the rate so far.
    const double ratio = std::isfinite(s.value) ? s.value / rule.target : 2.0;
    double want = std::ceil(n * ratio * ratio) - n;
    want = std::clamp(want, static_cast<double>(kMinRound), static_cast<double>(std::max(n, kMinRound)));
    const double per_sample = n > 0 && s.seconds > 0 ? s.seconds / n : 0.0;
    if (per_sample > 0) want = std::min(want, std::ceil((rule.max_seconds - s.seconds) / per_sample));
    want = std::min(want, static_cast<double>(max_samples - n));
    take(std::max(1, static_cast<int>(want)));
  }
  return s;
}

}  // namespace smr
