// Host-only tests of the verification module: the fp64 reference, the special-value rules, the
// input generator, and that verify_output catches what it must.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <set>
#include <limits>
#include <vector>

#include "catch.hpp"
#include "harness/verify.hpp"

using namespace smr;

namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

std::vector<double> ref_of(const std::vector<float>& x) {
  std::vector<double> out(x.size());
  reference_row(x.data(), static_cast<std::int64_t>(x.size()), out.data());
  return out;
}

// Equal, or both NaN (make_input writes NaNs on purpose).
bool same_value(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

bool all_nan(const std::vector<double>& v) {
  return std::all_of(v.begin(), v.end(), [](double d) { return std::isnan(d); });
}

// What a perfect fp32 kernel would write: the reference rounded to float, padding left poisoned.
std::vector<float> perfect_output(const Problem& p, const std::vector<float>& x) {
  std::vector<float> y(static_cast<std::size_t>(p.M * p.ld_y), poison_value());
  std::vector<double> r(static_cast<std::size_t>(p.N));
  for (std::int64_t i = 0; i < p.M; ++i) {
    reference_row(x.data() + i * p.ld_x, p.N, r.data());
    for (std::int64_t j = 0; j < p.N; ++j)
      y[static_cast<std::size_t>(i * p.ld_y + j)] = static_cast<float>(r[static_cast<std::size_t>(j)]);
  }
  return y;
}

std::size_t idx(const Problem& p, std::int64_t i, std::int64_t j) {
  return static_cast<std::size_t>(i * p.ld_y + j);
}

// The first element of a row of the given kind in a mixed matrix.
std::int64_t first_row_of(InputKind kind, std::int64_t M) {
  for (std::int64_t i = 0; i < M; ++i)
    if (row_kind(InputKind::mixed, i) == kind) return i;
  return -1;
}

}  // namespace

TEST_CASE("reference: hand-computed rows", "[verify]") {
  using Catch::Matchers::WithinRel;
  SECTION("one element is 1") {
    const auto r = ref_of({7.0f});
    CHECK(r[0] == 1.0);
  }
  SECTION("two equal elements are one half each") {
    const auto r = ref_of({3.0f, 3.0f});
    CHECK(r[0] == 0.5);
    CHECK(r[1] == 0.5);
  }
  SECTION("five equal elements are 1/5, whatever their value") {
    for (const float v : {-1e4f, 0.0f, 12.5f}) {
      const auto r = ref_of(std::vector<float>(5, v));
      for (const double d : r) CHECK_THAT(d, WithinRel(0.2, 1e-15));
    }
  }
  SECTION("1, 2, 3") {
    const auto r = ref_of({1.0f, 2.0f, 3.0f});
    const double s = std::exp(-2.0) + std::exp(-1.0) + 1.0;
    CHECK_THAT(r[0], WithinRel(std::exp(-2.0) / s, 1e-15));
    CHECK_THAT(r[1], WithinRel(std::exp(-1.0) / s, 1e-15));
    CHECK_THAT(r[2], WithinRel(1.0 / s, 1e-15));
  }
  SECTION("0 and ln 3 give 1/4 and 3/4") {
    const auto r = ref_of({0.0f, static_cast<float>(std::log(3.0))});
    // ln 3 rounded to float: the exact answer for that float.
    const double e = std::exp(static_cast<double>(static_cast<float>(std::log(3.0))));
    CHECK_THAT(r[0], WithinRel(1.0 / (1.0 + e), 1e-15));
    CHECK_THAT(r[1], WithinRel(e / (1.0 + e), 1e-15));
    CHECK_THAT(r[1], WithinRel(0.75, 1e-7));
  }
  SECTION("large magnitudes do not overflow: the max is subtracted first") {
    const auto r = ref_of({1e4f, 1e4f - 1.0f});
    const double e = std::exp(-1.0);
    CHECK_THAT(r[0], WithinRel(1.0 / (1.0 + e), 1e-15));
    CHECK_THAT(r[1], WithinRel(e / (1.0 + e), 1e-15));
  }
  SECTION("outputs sum to 1") {
    std::vector<float> x(1000);
    for (std::size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i)) * 5);
    const auto r = ref_of(x);
    double s = 0;
    for (const double d : r) s += d;
    CHECK_THAT(s, WithinRel(1.0, 1e-13));
  }
}

TEST_CASE("reference: the special-value rules", "[verify]") {
  SECTION("-inf entries contribute 0, the rest is the softmax of the finite entries") {
    const auto r = ref_of({-kInf, 0.0f, -kInf, 0.0f});
    CHECK(r[0] == 0.0);
    CHECK(r[1] == 0.5);
    CHECK(r[2] == 0.0);
    CHECK(r[3] == 0.5);
  }
  SECTION("a row of -inf is NaN everywhere (as PyTorch)") {
    CHECK(all_nan(ref_of({-kInf})));
    CHECK(all_nan(ref_of({-kInf, -kInf, -kInf})));
  }
  SECTION("a NaN makes the whole row NaN") {
    CHECK(all_nan(ref_of({kNaN})));
    CHECK(all_nan(ref_of({1.0f, kNaN, 2.0f})));
    CHECK(all_nan(ref_of({-kInf, kNaN})));
  }
  SECTION("a +inf makes the whole row NaN (inf - inf reaches the sum; as PyTorch)") {
    CHECK(all_nan(ref_of({kInf})));
    CHECK(all_nan(ref_of({1.0f, kInf, 2.0f})));
    CHECK(all_nan(ref_of({kInf, kInf})));
    CHECK(all_nan(ref_of({-kInf, kInf})));
  }
}

TEST_CASE("make_input: deterministic, padded with the sentinel, every kind as described",
          "[verify]") {
  const Problem p{40, 300, 305, 300, DType::f32};
  const auto x = make_input(p, 42);
  REQUIRE(x.size() == static_cast<std::size_t>(p.M * p.ld_x));
  const auto again = make_input(p, 42);
  CHECK(std::equal(x.begin(), x.end(), again.begin(), again.end(), same_value));
  // A different seed gives a different matrix.
  const auto other = make_input(p, 43);
  CHECK(!std::equal(x.begin(), x.begin() + 300, other.begin()));
  // Row i depends only on (seed, i, kind): the first rows of a taller matrix are the same.
  const auto taller = make_input(Problem{80, 300, 305, 300, DType::f32}, 42);
  CHECK(std::equal(x.begin(), x.begin() + 5 * 305, taller.begin(), same_value));

  for (std::int64_t i = 0; i < p.M; ++i) {
    const float* r = x.data() + i * p.ld_x;
    for (std::int64_t j = p.N; j < p.ld_x; ++j) CHECK(r[j] == kPaddingSentinel);
    const InputKind kind = row_kind(InputKind::mixed, i);
    INFO("row " << i << ": " << to_string(kind));
    int nans = 0, pos_inf = 0, neg_inf = 0, finite = 0, above_15 = 0;
    float lo = kInf, hi = -kInf;
    for (std::int64_t j = 0; j < p.N; ++j) {
      const float v = r[j];
      if (std::isnan(v)) ++nans;
      else if (v == kInf) ++pos_inf;
      else if (v == -kInf) ++neg_inf;
      else {
        ++finite;
        lo = std::min(lo, v);
        hi = std::max(hi, v);
        above_15 += v > 15.0f;
      }
    }
    switch (kind) {
      case InputKind::normal: CHECK(finite == p.N); CHECK(hi < 10.0f); break;
      case InputKind::outliers: CHECK(finite == p.N); CHECK(above_15 >= 1); CHECK(above_15 <= 8); break;
      case InputKind::large: CHECK(finite == p.N); CHECK(hi - lo > 1e4f); CHECK(std::max(-lo, hi) <= 1e4f); break;
      case InputKind::all_equal: CHECK(finite == p.N); CHECK(lo == hi); break;
      case InputKind::some_neg_inf: CHECK(neg_inf >= 1); CHECK(finite >= 1); CHECK(neg_inf + finite == p.N); break;
      case InputKind::all_neg_inf: CHECK(neg_inf == p.N); break;
      case InputKind::has_nan: CHECK(nans == 1); CHECK(finite == p.N - 1); break;
      case InputKind::has_pos_inf: CHECK(pos_inf == 1); CHECK(finite == p.N - 1); break;
      case InputKind::mixed: FAIL("row_kind never returns mixed"); break;
    }
  }
  // mixed cycles through all eight kinds.
  std::set<InputKind> seen;
  for (std::int64_t i = 0; i < 8; ++i) seen.insert(row_kind(InputKind::mixed, i));
  CHECK(seen.size() == 8);
  // A single-kind matrix is that kind on every row; n = 1 rows stay well-defined.
  CHECK(row_kind(InputKind::large, 5) == InputKind::large);
  const auto one = make_input(dense(3, 1), 9, InputKind::some_neg_inf);
  for (const float v : one) CHECK(std::isfinite(v));
}

TEST_CASE("verify_output passes a correctly rounded output and reports its error", "[verify]") {
  const Problem p{64, 257, 260, 263, DType::f32};
  const auto x = make_input(p, 7);
  const auto y = perfect_output(p, x);
  const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
  INFO(v.detail);
  CHECK(v.passed);
  CHECK(v.detail.empty());
  CHECK(v.rows_checked == p.M);
  CHECK(v.tolerance == kDefaultTolerance);
  // Rounding the fp64 reference to float: at most half an ulp, 2^-24 relative.
  CHECK(v.max_rel_err > 0.0);
  CHECK(v.max_rel_err <= 0x1p-24 * 1.0001);
  CHECK(v.rel_l2_err > 0.0);
  CHECK(v.rel_l2_err <= 0x1p-24);
}

TEST_CASE("verify_output catches a wrong element", "[verify]") {
  const Problem p = dense(16, 100);
  const auto x = make_input(p, 3, InputKind::normal);
  auto y = perfect_output(p, x);
  SECTION("6e-5 off fails, 1.5e-5 off passes: the tolerance is 2^-15 ~ 3.05e-5 relative") {
    y[idx(p, 5, 17)] *= 1.0f + 6e-5f;
    VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
    CHECK(!v.passed);
    CHECK(v.detail.find("row 5, column 17") != std::string::npos);
    CHECK(v.detail.find("relative error") != std::string::npos);
    CHECK(v.max_rel_err > kDefaultTolerance);

    y = perfect_output(p, x);
    y[idx(p, 5, 17)] *= 1.0f + 1.5e-5f;
    v = verify_output(p, x, y, kDefaultTolerance);
    CHECK(v.passed);
    CHECK(v.max_rel_err > 1e-5);
  }
  SECTION("the L2 error sees a perturbation of every element") {
    for (float& f : y) f *= 1.0f + 1e-3f;
    const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
    CHECK(!v.passed);
    CHECK_THAT(v.rel_l2_err, Catch::Matchers::WithinRel(1e-3, 1e-3));
    CHECK(v.detail.find("more") != std::string::npos);  // counts the other bad elements
  }
  SECTION("a wrong element in a row that is not checked is not seen") {
    y[idx(p, 9, 0)] = 0.5f;
    CHECK(!verify_output(p, x, y, kDefaultTolerance).passed);
    const VerifyResult v = verify_output(p, x, y, kDefaultTolerance, {0, 1, 15});
    CHECK(v.passed);
    CHECK(v.rows_checked == 3);
  }
  SECTION("an infinite output fails") {
    y[idx(p, 0, 0)] = kInf;
    CHECK(!verify_output(p, x, y, kDefaultTolerance).passed);
  }
}

TEST_CASE("verify_output: a large check, done in chunks by several threads, names the first fault",
          "[verify]") {
  // 2^21 elements: past the size where the rows are checked in parallel chunks of 2^16.
  const Problem p = dense(512, 4096);
  const auto x = make_input(p, 5, InputKind::normal);
  auto y = perfect_output(p, x);
  const VerifyResult clean = verify_output(p, x, y, kDefaultTolerance);
  CHECK(clean.passed);
  CHECK(clean.rows_checked == 512);
  // Faults in chunks far apart, planted last row first: the lowest row is named, all are counted.
  for (const std::int64_t row : {500, 301, 17}) y[idx(p, row, 9)] *= 1.5f;
  const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
  CHECK(!v.passed);
  CHECK(v.detail.rfind("row 17, column 9:", 0) == 0);
  CHECK(v.detail.find("(and 2 more)") != std::string::npos);
  // The same rows through the serial path (a check below the parallel size) agree on the worst.
  const VerifyResult few = verify_output(p, x, y, kDefaultTolerance, {17, 301, 500});
  CHECK(few.max_rel_err == v.max_rel_err);
  // Bit for bit the same verdict run after run.
  const VerifyResult again = verify_output(p, x, y, kDefaultTolerance);
  CHECK(again.rel_l2_err == v.rel_l2_err);
  CHECK(again.detail == v.detail);
}

TEST_CASE("verify_output catches an unwritten (still NaN-poisoned) element", "[verify]") {
  const Problem p = dense(16, 64);
  const auto x = make_input(p, 11);  // mixed: has NaN rows too
  auto y = perfect_output(p, x);
  CHECK(verify_output(p, x, y, kDefaultTolerance).passed);
  SECTION("in a finite row") {
    const std::int64_t row = first_row_of(InputKind::outliers, p.M);
    y[idx(p, row, 63)] = poison_value();
    const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
    CHECK(!v.passed);
    CHECK(v.detail.find("never written") != std::string::npos);
  }
  SECTION("in a row whose correct output is NaN: the poison is not just any NaN") {
    const std::int64_t row = first_row_of(InputKind::has_nan, p.M);
    // A kernel's NaN (the canonical GPU NaN) is fine there...
    y[idx(p, row, 0)] = std::bit_cast<float>(0x7fffffffu);
    CHECK(verify_output(p, x, y, kDefaultTolerance).passed);
    // ...the poison is not.
    y[idx(p, row, 1)] = poison_value();
    const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
    CHECK(!v.passed);
    CHECK(v.detail.find("never written") != std::string::npos);
  }
  CHECK(is_poison(poison_value()));
  CHECK(std::isnan(poison_value()));
  CHECK(!is_poison(kNaN));
  CHECK(!is_poison(std::bit_cast<float>(0x7fffffffu)));
}

TEST_CASE("verify_output catches a wrong NaN pattern", "[verify]") {
  const Problem p = dense(24, 50);
  const auto x = make_input(p, 5);
  auto y = perfect_output(p, x);
  SECTION("a finite value where the row must be NaN") {
    for (const InputKind kind : {InputKind::all_neg_inf, InputKind::has_nan, InputKind::has_pos_inf}) {
      INFO(to_string(kind));
      y = perfect_output(p, x);
      y[idx(p, first_row_of(kind, p.M), 3)] = 0.02f;
      const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
      CHECK(!v.passed);
      CHECK(v.detail.find("expected NaN") != std::string::npos);
    }
  }
  SECTION("a NaN where the reference is finite (e.g. the -inf - -inf trap)") {
    y[idx(p, first_row_of(InputKind::some_neg_inf, p.M), 10)] = kNaN;
    const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
    CHECK(!v.passed);
    CHECK(v.detail.find("got NaN") != std::string::npos);
  }
  SECTION("a NaN row is not counted in the error norms") {
    const VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
    CHECK(v.passed);
    CHECK(std::isfinite(v.max_rel_err));
    CHECK(std::isfinite(v.rel_l2_err));
  }
}

TEST_CASE("verify_output: tiny outputs are compared against the absolute floor", "[verify]") {
  // exp(-60) ~ 8.8e-27: below the 1e-20 floor, so writing 0 there is an error of ~1e-6 * tol.
  const Problem p = dense(1, 2);
  const std::vector<float> x = {0.0f, -60.0f};
  std::vector<float> y = perfect_output(p, x);
  y[1] = 0.0f;
  VerifyResult v = verify_output(p, x, y, kDefaultTolerance);
  CHECK(v.passed);
  CHECK(v.max_rel_err < 1e-6);
  // Above the floor (exp(-20) ~ 2e-9) a flushed output is a 100% error.
  const std::vector<float> x2 = {0.0f, -20.0f};
  y = perfect_output(p, x2);
  y[1] = 0.0f;
  v = verify_output(p, x2, y, kDefaultTolerance);
  CHECK(!v.passed);
  CHECK_THAT(v.max_rel_err, Catch::Matchers::WithinRel(1.0, 1e-6));
}

TEST_CASE("verify_output rejects buffers too small for the problem and rows out of range",
          "[verify]") {
  const Problem p = dense(4, 10);
  const auto x = make_input(p, 1);
  const auto y = perfect_output(p, x);
  CHECK_THROWS_AS(verify_output(p, x, std::vector<float>(39), kDefaultTolerance), std::invalid_argument);
  CHECK_THROWS_AS(verify_output(p, std::vector<float>(5), y, kDefaultTolerance), std::invalid_argument);
  CHECK_THROWS_AS(verify_output(p, x, y, kDefaultTolerance, {4}), std::invalid_argument);
  CHECK_THROWS_AS(verify_output(dense(0, 10), x, y, kDefaultTolerance), std::invalid_argument);
}

TEST_CASE("check_padding_untouched finds a write into the row padding", "[verify]") {
  const Problem p{5, 10, 10, 13, DType::f32};
  const auto x = make_input(p, 2);
  auto y = perfect_output(p, x);
  CHECK(!check_padding_untouched(p, y));
  y[idx(p, 4, 12)] = 0.0f;  // the last row's padding
  const auto why = check_padding_untouched(p, y);
  REQUIRE(why);
  CHECK(why->find("row 4, column 12") != std::string::npos);
}

TEST_CASE("sample_rows: all rows when few, else first, last and a seeded sample", "[verify]") {
  CHECK(sample_rows(5, 10, 1) == std::vector<std::int64_t>{0, 1, 2, 3, 4});
  const auto s = sample_rows(1'000'000, 64, 99);
  REQUIRE(s.size() == 64);
  CHECK(s.front() == 0);
  CHECK(s.back() == 999'999);
  CHECK(std::is_sorted(s.begin(), s.end()));
  CHECK(std::adjacent_find(s.begin(), s.end()) == s.end());
  CHECK(sample_rows(1'000'000, 64, 99) == s);
  CHECK(sample_rows(1'000'000, 64, 100) != s);
  CHECK(sample_rows(100, 1, 3) == std::vector<std::int64_t>{0});
  CHECK_THROWS_AS(sample_rows(100, 0, 3), std::invalid_argument);
}

TEST_CASE("the tolerance is the derived 2^-15 with a 1e-20 floor", "[verify]") {
  CHECK(kDefaultTolerance == std::ldexp(1.0, -15));
  CHECK(kAbsoluteFloor == 1e-20);
}

TEST_CASE("make_input gives the same matrix for any number of threads", "[verify]") {
  // Every row's generator depends only on (seed, row, kind), so the threads' split of the rows
  // must not show in the result: one thread, seven (uneven chunks), and the default.
  for (const Problem& p : {dense(4096, 1024), Problem{1000, 333, 335, 333, DType::f32}}) {
    CAPTURE(p.M, p.N, p.ld_x);
    const std::vector<float> serial = make_input(p, 7, InputKind::mixed, 1);
    for (unsigned threads : {7u, 0u}) {
      CAPTURE(threads);
      const std::vector<float> parallel = make_input(p, 7, InputKind::mixed, threads);
      REQUIRE(parallel.size() == serial.size());
      CHECK(std::memcmp(parallel.data(), serial.data(), serial.size() * sizeof(float)) == 0);
    }
  }
}

TEST_CASE("input generator: each kind has its documented distribution", "[verify]") {
  // 64 rows of 4096: 2^18 values of each kind.
  const Problem p = dense(64, 4096);
  const auto stats = [&](InputKind kind) {
    const std::vector<float> x = make_input(p, 2026, kind);
    struct {
      double mean = 0, var = 0, lo = HUGE_VAL, hi = -HUGE_VAL;
      std::int64_t finite = 0, neg_inf = 0, pos_inf = 0, nans = 0;
    } s;
    double sum = 0, sum_sq = 0;
    for (const float v : x) {
      if (std::isnan(v)) ++s.nans;
      else if (v == kInf) ++s.pos_inf;
      else if (v == -kInf) ++s.neg_inf;
      else {
        ++s.finite;
        sum += v;
        sum_sq += static_cast<double>(v) * v;
        s.lo = std::min<double>(s.lo, v);
        s.hi = std::max<double>(s.hi, v);
      }
    }
    s.mean = sum / static_cast<double>(s.finite);
    s.var = sum_sq / static_cast<double>(s.finite) - s.mean * s.mean;
    return s;
  };
  SECTION("normal: mean 0, variance 1, bounded by 2 sqrt(3) (Irwin-Hall of four uniforms)") {
    const auto s = stats(InputKind::normal);
    CHECK(s.finite == p.M * p.N);
    CHECK(std::abs(s.mean) < 0.01);
    CHECK(std::abs(s.var - 1.0) < 0.01);
    CHECK(s.hi <= 2 * std::sqrt(3.0));
    CHECK(s.lo >= -2 * std::sqrt(3.0));
    CHECK(s.hi > 2.5);  // the tails are reached
  }
  SECTION("large: uniform in [-1e4, 1e4], variance 1e8 / 3") {
    const auto s = stats(InputKind::large);
    CHECK(s.finite == p.M * p.N);
    CHECK(s.lo >= -1e4);
    CHECK(s.hi <= 1e4);
    CHECK(std::abs(s.mean) < 50.0);
    CHECK_THAT(s.var, Catch::Matchers::WithinRel(1e8 / 3, 0.02));
  }
  SECTION("some_neg_inf: about 1/8 of the entries -inf") {
    const auto s = stats(InputKind::some_neg_inf);
    const double frac = static_cast<double>(s.neg_inf) / static_cast<double>(p.M * p.N);
    CHECK(frac > 0.12);
    CHECK(frac < 0.13);
    CHECK(s.neg_inf + s.finite == p.M * p.N);
  }
  SECTION("outliers: 8 a row at N = 4096 (fewer where two land on one element), 20 + normal") {
    const std::vector<float> x = make_input(p, 2026, InputKind::outliers);
    for (std::int64_t i = 0; i < p.M; ++i) {
      int high = 0;
      for (std::int64_t j = 0; j < p.N; ++j) {
        const float v = x[static_cast<std::size_t>(i * p.N + j)];
        if (v > 10.0f) {
          ++high;
          CHECK(std::abs(v - 20.0f) <= 3.47f);
        }
      }
      CHECK(high >= 6);
      CHECK(high <= 8);
    }
  }
  SECTION("all_equal: one level a row, uniform in [-10, 10], different rows different levels") {
    const std::vector<float> x = make_input(p, 2026, InputKind::all_equal);
    std::set<float> levels;
    for (std::int64_t i = 0; i < p.M; ++i) {
      const float v = x[static_cast<std::size_t>(i * p.N)];
      CHECK(std::abs(v) <= 10.0f);
      levels.insert(v);
    }
    CHECK(levels.size() == static_cast<std::size_t>(p.M));
  }
  SECTION("has_nan, has_pos_inf: exactly one a row, the rest normal") {
    CHECK(stats(InputKind::has_nan).nans == p.M);
    CHECK(stats(InputKind::has_pos_inf).pos_inf == p.M);
    CHECK(stats(InputKind::all_neg_inf).neg_inf == p.M * p.N);
  }
  SECTION("some_neg_inf on two elements: one -inf, one finite") {
    for (std::int64_t i = 0; i < 50; ++i) {
      const std::vector<float> x = make_input(dense(1, 2), static_cast<std::uint64_t>(i), InputKind::some_neg_inf);
      CHECK(std::isinf(x[0]) != std::isinf(x[1]));
    }
  }
}

TEST_CASE("input generator: an element is the same whichever rows, columns or strides are generated",
          "[verify]") {
  const Problem p{200, 1000, 1003, 1000, DType::f32};
  const std::vector<float> x = make_input(p, 77);
  const auto bits = [](float v) { return std::bit_cast<std::uint32_t>(v); };
  // Element by element, in any order, from the one function.
  for (std::int64_t i = p.M - 1; i >= 0; i -= 7)
    for (std::int64_t j = p.N - 1; j >= 0; j -= 13)
      REQUIRE(bits(input_value(77, InputKind::mixed, i, p.N, j)) ==
              bits(x[static_cast<std::size_t>(i * p.ld_x + j)]));
  // Another stride, and a taller matrix: the rows are the same.
  const std::vector<float> dense_x = make_input(Problem{400, 1000, 1000, 1000, DType::f32}, 77);
  for (std::int64_t i = 0; i < p.M; ++i)
    REQUIRE(std::memcmp(dense_x.data() + i * 1000, x.data() + i * p.ld_x, 1000 * sizeof(float)) == 0);
  // A single-kind matrix's rows are those of that kind in a mixed one (the key is the row's kind).
  const std::vector<float> outl = make_input(dense(16, 1000), 77, InputKind::outliers);
  const std::int64_t row = first_row_of(InputKind::outliers, 16);
  CHECK(std::memcmp(outl.data() + row * 1000, x.data() + row * p.ld_x, 1000 * sizeof(float)) == 0);
  // The 64 x 64 -> high 64 multiply the positions use.
  __extension__ using u128 = unsigned __int128;
  for (const std::uint64_t a : {0ull, 1ull, 0xFFFFFFFFFFFFFFFFull, 0x9E3779B97F4A7C15ull, 0x123456789ull})
    for (const std::uint64_t b : {1ull, 3ull, 1000003ull, 0xFFFFFFFFFFFFFFFFull, 0xDEADBEEFCAFEull})
      CHECK(gen::mulhi64(a, b) == static_cast<std::uint64_t>((static_cast<u128>(a) * b) >> 64));
}
