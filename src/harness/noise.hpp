// The noise criterion of a timed record: how sure the median is, and when to stop sampling.
// Pure host code (no CUDA), tested in tests/harness/test_noise.cpp. docs/timing.md, "When a
// record stops sampling", is the prose.
//
// The statistic: the half-width of a distribution-free ~95% confidence interval of the median,
// divided by the median. Sorted samples x_(1) <= ... <= x_(n); the number of samples below the
// true median is Binomial(n, 1/2), so [x_(j), x_(k)] with j = floor(n/2 - 0.98 sqrt(n)) and
// k = ceil(n/2 + 1 + 0.98 sqrt(n)) (1-based; 0.98 = 1.96 / 2, the normal approximation of the
// binomial) covers it with probability ~95% whatever the distribution of the samples: one slow
// outlier moves it by at most one order statistic, where it would move the mean and the cv.
#pragma once

#include <functional>
#include <limits>
#include <vector>

#include "roofline/results.hpp"

namespace smr {

// Fewest samples for which the interval above exists inside the sample (j >= 1, k <= n).
inline constexpr int kMinSamplesForMedianCi = 8;
// The statistic's name, as results.json's time.noise.statistic records it.
inline constexpr const char* kMedianCiStatistic = "median_ci95_halfwidth_rel";

// (x_(k) - x_(j)) / 2 / median over `samples` (any order). +infinity when there are fewer than
// kMinSamplesForMedianCi samples or the median is not positive: such a sample set never converges.
double median_ci_halfwidth_rel(std::vector<double> samples);

// The 1-based ranks (j, k) of the interval's ends for n samples; (0, 0) below kMinSamplesForMedianCi.
struct MedianCiRanks {
  int lower = 0, upper = 0;
};
MedianCiRanks median_ci_ranks(int n);

// When to stop sampling one record.
struct StopRule {
  int first_samples = 20;     // taken before the criterion is looked at (samples_needed today)
  double target = 0.005;      // stop once median_ci_halfwidth_rel <= target
  double max_seconds = 0.2;   // or once this much wall time went into the record's samples
  int max_samples = 10000;    // or at this many samples
};

// take(n) appends n new per-launch times to `samples`; seconds() is the wall time spent so far on
// this record's samples. Takes rule.first_samples, then more in rounds sized from the statistic's
// 1/sqrt(n) shrinkage, until the target, the time cap or the sample cap. Returns what
// results.json records as time.noise (samples: samples.size()).
NoiseStats sample_until_quiet(std::vector<double>& samples, const StopRule& rule,
                              const std::function<void(int)>& take,
                              const std::function<double()>& seconds);

}  // namespace smr
