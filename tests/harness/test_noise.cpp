// Host-only tests of the noise criterion (harness/noise.hpp) and of the clock tally
// (harness/clocks.hpp): a noisy sample set must not converge, a tight one must, and the stop rule
// must respect its target, its time cap and its sample cap.
#include <cmath>
#include <random>
#include <vector>

#include "catch.hpp"
#include "harness/clocks.hpp"
#include "harness/noise.hpp"

using namespace smr;

namespace {

// Samples around 100 us with a relative spread `rel` (uniform), plus `outliers` slow samples.
std::vector<double> synthetic(int n, double rel, int outliers, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-rel, rel);
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(100e-6 * (1.0 + u(rng)));
  for (int i = 0; i < outliers; ++i) v.push_back(700e-6);
  return v;
}

}  // namespace

TEST_CASE("median_ci_ranks: the order statistics of a ~95% interval of the median") {
  CHECK(median_ci_ranks(kMinSamplesForMedianCi - 1).lower == 0);
  const MedianCiRanks r8 = median_ci_ranks(kMinSamplesForMedianCi);
  CHECK(r8.lower == 1);
  CHECK(r8.upper == 8);
  // n = 100: 50 -+ 0.98 x 10 -> ranks 40 and 61 (the textbook table gives 40 and 61).
  const MedianCiRanks r100 = median_ci_ranks(100);
  CHECK(r100.lower == 40);
  CHECK(r100.upper == 61);
  // Coverage: the binomial probability that the interval holds the median is ~95% for many n.
  for (int n : {20, 50, 200, 1000}) {
    const MedianCiRanks r = median_ci_ranks(n);
    double cover = 0;  // P(lower <= #below < upper) for #below ~ Binomial(n, 1/2)
    for (int k = r.lower; k < r.upper; ++k)
      cover += std::exp(std::lgamma(n + 1.0) - std::lgamma(k + 1.0) - std::lgamma(n - k + 1.0) -
                        n * std::log(2.0));
    CHECK(cover >= 0.94);
    CHECK(cover <= 0.99);
  }
}

TEST_CASE("median_ci_halfwidth_rel: tight samples are sure, noisy ones are not") {
  const double tight = median_ci_halfwidth_rel(synthetic(40, 0.002, 0, 1));
  CHECK(tight < 0.005);
  const double noisy = median_ci_halfwidth_rel(synthetic(40, 0.10, 0, 2));
  CHECK(noisy > 0.005);
  // One slow outlier barely moves it (order statistics), where it would blow up the cv.
  const double with_outlier = median_ci_halfwidth_rel(synthetic(39, 0.002, 1, 1));
  CHECK(with_outlier < 0.005);
  CHECK(std::isinf(median_ci_halfwidth_rel({1.0, 1.0, 1.0})));
  CHECK(std::isinf(median_ci_halfwidth_rel(std::vector<double>(10, 0.0))));
  // A constant sample set is as sure as it gets.
  CHECK(median_ci_halfwidth_rel(std::vector<double>(10, 5e-6)) == 0.0);
}

namespace {

struct FakeRecord {
  double rel;           // the relative spread of the samples the fake card produces
  double seconds_each;  // fake wall time per sample
  std::mt19937 rng{7};
  std::vector<double>* out = nullptr;
  double clock = 0;
  int calls = 0;
  void take(int n) {
    ++calls;
    std::uniform_real_distribution<double> u(-rel, rel);
    for (int i = 0; i < n; ++i) {
      out->push_back(100e-6 * (1.0 + u(rng)));
      clock += seconds_each;
    }
  }
};

NoiseStats run(FakeRecord& f, std::vector<double>& v, const StopRule& rule) {
  f.out = &v;
  return sample_until_quiet(
      v, rule, [&](int n) { f.take(n); }, [&] { return f.clock; });
}

}  // namespace

TEST_CASE("sample_until_quiet: a tight record converges with the first samples") {
  FakeRecord f{0.002, 1e-3};
  std::vector<double> v;
  const NoiseStats s = run(f, v, StopRule{20, 0.005, 0.2, 10000});
  CHECK(s.converged);
  CHECK(v.size() == 20);
  CHECK(f.calls == 1);
  CHECK(s.value <= 0.005);
  CHECK(s.target == 0.005);
  CHECK(s.statistic == kMedianCiStatistic);
}

TEST_CASE("sample_until_quiet: a moderately noisy record samples more and converges") {
  FakeRecord f{0.05, 1e-4};  // needs a few hundred samples for 0.5%
  std::vector<double> v;
  const NoiseStats s = run(f, v, StopRule{20, 0.005, 1.0, 10000});
  CHECK(s.converged);
  CHECK(v.size() > 20);
  CHECK(s.value <= 0.005);
  CHECK(s.seconds < 1.0);
}

TEST_CASE("sample_until_quiet: a noisy record stops at the time cap, not converged") {
  FakeRecord f{0.5, 1e-3};
  std::vector<double> v;
  const NoiseStats s = run(f, v, StopRule{20, 0.005, 0.2, 10000});
  CHECK_FALSE(s.converged);
  CHECK(s.value > 0.005);
  CHECK(s.seconds >= 0.2);
  CHECK(s.seconds <= 0.2 + 1e-3 * 8 + 1e-9);  // the last round ends near the cap
  CHECK(s.max_seconds == 0.2);
}

TEST_CASE("sample_until_quiet: the sample cap and a zero time cap hold") {
  FakeRecord f{0.5, 1e-6};
  std::vector<double> v;
  const NoiseStats capped = run(f, v, StopRule{20, 0.005, 100.0, 300});
  CHECK_FALSE(capped.converged);
  CHECK(v.size() == 300);
  FakeRecord g{0.5, 1e-3};
  std::vector<double> w;
  const NoiseStats none = run(g, w, StopRule{20, 0.005, 0.0, 10000});
  CHECK_FALSE(none.converged);
  CHECK(w.size() == 20);  // the first samples always, nothing past them
}

TEST_CASE("ClockTally: min, max, reasons, and throttling by power or heat only") {
  ClockTally t;
  CHECK_FALSE(t.stats("NVML not loaded").available);
  CHECK(t.stats("NVML not loaded").unavailable == "NVML not loaded");
  t.add(1980, clock_reason::kGpuIdle);
  t.add(1755, 0);
  ClockStats s = t.stats("");
  CHECK(s.available);
  CHECK(s.sm_mhz_min == 1755);
  CHECK(s.sm_mhz_max == 1980);
  CHECK(s.readings == 2);
  CHECK_FALSE(s.throttled);  // idle is not a throttle
  REQUIRE(s.reasons.size() == 1);
  CHECK(s.reasons[0] == "gpu_idle");
  t.add(1600, clock_reason::kSwThermalSlowdown | (std::uint64_t{1} << 40));
  s = t.stats("");
  CHECK(s.throttled);
  CHECK(s.reasons == std::vector<std::string>{"gpu_idle", "sw_thermal_slowdown", "0x10000000000"});
}

TEST_CASE("mark_clock_drops: fell against the run's highest clock, or throttled") {
  RunResults run;
  const auto add = [&](double lo, double hi, bool throttled) {
    Record r;
    r.time = TimeStats{};
    ClockStats c;
    c.available = true;
    c.sm_mhz_min = lo;
    c.sm_mhz_max = hi;
    c.readings = 3;
    c.throttled = throttled;
    r.time->clocks = c;
    run.records.push_back(r);
  };
  add(1980, 1980, false);
  add(1900, 1980, false);  // 4% below: within kClockFellFraction
  add(1800, 1980, false);  // 9% below: fell
  add(1980, 1980, true);
  Record old;  // a record without clocks (an older run, a peer) is left alone
  old.time = TimeStats{};
  run.records.push_back(old);
  mark_clock_drops(run);
  CHECK_FALSE(*run.records[0].time->clocks->fell);
  CHECK_FALSE(*run.records[1].time->clocks->fell);
  CHECK(*run.records[2].time->clocks->fell);
  CHECK(*run.records[3].time->clocks->fell);
  CHECK_FALSE(run.records[4].time->clocks);
  CHECK(run.device["clocks"]["records_fell"] == 2);
  CHECK(run.device["clocks"]["records_watched"] == 4);
  CHECK(run.device["clocks"]["sm_clock_mhz_max"] == 1980.0);
}

TEST_CASE("ClockWatch: unavailable is said, never zeros") {
  ClockWatch w;  // on a machine without the driver (or without a GPU) NVML is unavailable
  ClockTally t;
  w.read(t);
  const ClockStats s = w.stats(t);
  if (!w.available()) {
    CHECK_FALSE(s.available);
    CHECK_FALSE(s.unavailable.empty());
  } else {
    CHECK(s.available);
    CHECK(s.sm_mhz_max > 0);
  }
}
