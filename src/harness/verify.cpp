#include "harness/verify.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdio>
#include <limits>
#include <set>
#include <stdexcept>
#include <thread>

namespace smr {
namespace {

// splitmix64 (Steele, Lea and Flood 2014), for sample_rows' picks.
struct Rng {
  std::uint64_t state;
  std::uint64_t next() { return gen::mix64(state += gen::kGolden); }
  std::int64_t index(std::int64_t n) { return static_cast<std::int64_t>(next() % static_cast<std::uint64_t>(n)); }
};

std::string fmt_value(double v) {
  if (std::isnan(v)) return "NaN";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.9g", v);
  return buf;
}

std::string at(std::int64_t row, std::int64_t col) {
  return "row " + std::to_string(row) + ", column " + std::to_string(col);
}

}  // namespace

std::string_view to_string(InputKind k) {
  switch (k) {
    case InputKind::mixed: return "mixed";
    case InputKind::normal: return "normal";
    case InputKind::outliers: return "outliers";
    case InputKind::large: return "large";
    case InputKind::all_equal: return "all_equal";
    case InputKind::some_neg_inf: return "some_neg_inf";
    case InputKind::all_neg_inf: return "all_neg_inf";
    case InputKind::has_nan: return "has_nan";
    case InputKind::has_pos_inf: return "has_pos_inf";
  }
  return "?";
}

InputKind row_kind(InputKind kind, std::int64_t row) { return gen::row_kind(kind, row); }

float input_value(std::uint64_t seed, InputKind kind, std::int64_t row, std::int64_t n,
                  std::int64_t j) {
  return gen::input_value(seed, kind, row, n, j);
}

std::string describe_fault(FaultKind f, std::int64_t row, std::int64_t col, float got, double want,
                           double err, double tolerance) {
  const std::string where = at(row, col) + ": ";
  switch (f) {
    case FaultKind::unwritten:
      return where + "never written (still the NaN poison); expected " + fmt_value(want);
    case FaultKind::not_nan:
      return where + "expected NaN (the row holds a NaN, a +inf, or only -inf), got " +
             fmt_value(got);
    case FaultKind::not_finite:
      return where + "got " + fmt_value(got) + ", expected " + fmt_value(want);
    case FaultKind::too_far:
      return where + "relative error " + fmt_value(err) + " > tolerance " + fmt_value(tolerance) +
             " (got " + fmt_value(got) + ", expected " + fmt_value(want) + ")";
  }
  return where + "?";
}

std::string describe_padding_write(const Problem& p, std::int64_t row, std::int64_t col, float got) {
  return at(row, col) + " is row padding (N = " + std::to_string(p.N) + ", ld_y = " +
         std::to_string(p.ld_y) + ") and was written: " + fmt_value(got);
}

bool is_nan_row_kind(InputKind k) {
  return k == InputKind::all_neg_inf || k == InputKind::has_nan || k == InputKind::has_pos_inf;
}

float poison_value() { return std::bit_cast<float>(kPoisonBits); }
bool is_poison(float v) { return std::bit_cast<std::uint32_t>(v) == kPoisonBits; }

std::vector<float> make_input(const Problem& p, std::uint64_t seed, InputKind kind,
                              unsigned threads) {
  if (p.M < 0 || p.N < 0 || p.ld_x < p.N)
    throw std::invalid_argument("make_input: bad problem M = " + std::to_string(p.M) +
                                ", N = " + std::to_string(p.N) + ", ld_x = " + std::to_string(p.ld_x));
  std::vector<float> x(static_cast<std::size_t>(p.M * p.ld_x), kPaddingSentinel);
  auto fill_rows = [&](std::int64_t begin, std::int64_t end) {
    for (std::int64_t i = begin; i < end; ++i) {
      float* row = x.data() + i * p.ld_x;
      for (std::int64_t j = 0; j < p.N; ++j) row[j] = gen::input_value(seed, kind, i, p.N, j);
    }
  };
  // Every element is a function of (seed, row, kind, column) alone: rows can be filled in any
  // order, so a large matrix (the sweep's 2^27 elements) is filled by several threads and comes
  // out the same for any number of them.
  constexpr std::int64_t kParallelElements = std::int64_t{1} << 22;
  if (threads == 0)
    threads = p.M * p.N < kParallelElements ? 1 : std::max(1u, std::thread::hardware_concurrency());
  const auto workers = std::min<std::int64_t>(std::min<unsigned>(threads, 64), p.M);
  if (workers <= 1) {
    fill_rows(0, p.M);
    return x;
  }
  const std::int64_t chunk = (p.M + workers - 1) / workers;
  std::vector<std::thread> pool;
  for (std::int64_t begin = 0; begin < p.M; begin += chunk)
    pool.emplace_back(fill_rows, begin, std::min(p.M, begin + chunk));
  for (auto& t : pool) t.join();
  return x;
}

void reference_row(const float* x, std::int64_t n, double* out) {
  bool poisoned = false;  // a NaN or a +inf: the whole row is NaN
  double max = -std::numeric_limits<double>::infinity();
  for (std::int64_t j = 0; j < n; ++j) {
    const double v = x[j];
    if (std::isnan(v) || v == std::numeric_limits<double>::infinity()) poisoned = true;
    else max = std::max(max, v);
  }
  if (poisoned || max == -std::numeric_limits<double>::infinity()) {
    std::fill(out, out + n, std::numeric_limits<double>::quiet_NaN());
    return;
  }
  // In double the sum of up to 2^22 terms has a relative error below 2^22 * 2^-53 ~ 5e-10,
  // five orders of magnitude under the fp32 tolerance.
  double sum = 0.0;
  for (std::int64_t j = 0; j < n; ++j) {
    out[j] = std::exp(static_cast<double>(x[j]) - max);  // exp(-inf) = 0
    sum += out[j];
  }
  for (std::int64_t j = 0; j < n; ++j) out[j] /= sum;
}

namespace {

// What one chunk of rows found: the sums of the relative L2 error, the largest element error, and
// the faults (words for the first only: a broken kernel can have millions of them).
struct ChunkVerdict {
  double diff_sq = 0.0, ref_sq = 0.0, worst = 0.0;
  std::int64_t bad_elements = 0;  // wrong NaN pattern, unwritten, or over the tolerance
  std::string first_error;
};

void verify_rows(const Problem& p, const float* x, const float* y, double tolerance,
                 const std::int64_t* rows, std::size_t count, ChunkVerdict& v) {
  std::vector<double> ref(static_cast<std::size_t>(p.N));
  for (std::size_t k = 0; k < count; ++k) {
    const std::int64_t i = rows[k];
    reference_row(x + i * p.ld_x, p.N, ref.data());
    const float* yr = y + i * p.ld_y;
    for (std::int64_t j = 0; j < p.N; ++j) {
      const float got = yr[j];
      const double want = ref[static_cast<std::size_t>(j)];
      std::optional<FaultKind> fault;
      double e = 0.0;
      if (is_poison(got)) {
        fault = FaultKind::unwritten;
      } else if (std::isnan(want)) {
        if (!std::isnan(got)) fault = FaultKind::not_nan;
      } else if (!std::isfinite(got)) {
        fault = FaultKind::not_finite;
      } else {
        const double d = std::abs(static_cast<double>(got) - want);
        e = d / std::max(std::abs(want), kAbsoluteFloor);
        v.diff_sq += d * d;
        v.ref_sq += want * want;
        v.worst = std::max(v.worst, e);
        if (!(e <= tolerance)) fault = FaultKind::too_far;
      }
      if (!fault) continue;
      if (v.bad_elements++ == 0) v.first_error = describe_fault(*fault, i, j, got, want, e, tolerance);
    }
  }
}

// Rows are checked in chunks of about this many elements, by one thread per core for a large
// check. The chunks and the order their sums are added in depend only on the problem, so the
// verdict is the same, bit for bit, with any number of threads.
constexpr std::int64_t kChunkElements = std::int64_t{1} << 16;
constexpr std::int64_t kParallelCheckElements = std::int64_t{1} << 20;

}  // namespace

VerifyResult verify_output(const Problem& p, const std::vector<float>& x, const std::vector<float>& y,
                           double tolerance, const std::vector<std::int64_t>& rows) {
  if (p.M < 1 || p.N < 1 || p.ld_x < p.N || p.ld_y < p.N)
    throw std::invalid_argument("verify_output: bad problem M = " + std::to_string(p.M) +
                                ", N = " + std::to_string(p.N));
  const auto need_x = static_cast<std::size_t>((p.M - 1) * p.ld_x + p.N);
  const auto need_y = static_cast<std::size_t>((p.M - 1) * p.ld_y + p.N);
  if (x.size() < need_x || y.size() < need_y)
    throw std::invalid_argument("verify_output: x has " + std::to_string(x.size()) + " and y " +
                                std::to_string(y.size()) + " elements; the problem needs " +
                                std::to_string(need_x) + " and " + std::to_string(need_y));
  std::vector<std::int64_t> all;
  if (rows.empty()) {
    all.resize(static_cast<std::size_t>(p.M));
    for (std::int64_t i = 0; i < p.M; ++i) all[static_cast<std::size_t>(i)] = i;
  }
  const std::vector<std::int64_t>& check = rows.empty() ? all : rows;
  for (const std::int64_t i : check)
    if (i < 0 || i >= p.M)
      throw std::invalid_argument("verify_output: row " + std::to_string(i) + " is outside 0.." +
                                  std::to_string(p.M - 1));

  const auto n_rows = static_cast<std::int64_t>(check.size());
  const std::int64_t rows_per_chunk = std::max<std::int64_t>(1, kChunkElements / p.N);
  const std::int64_t n_chunks = (n_rows + rows_per_chunk - 1) / rows_per_chunk;
  std::vector<ChunkVerdict> chunks(static_cast<std::size_t>(n_chunks));
  auto run_chunk = [&](std::int64_t c) {
    const std::int64_t first = c * rows_per_chunk;
    const std::int64_t count = std::min(rows_per_chunk, n_rows - first);
    verify_rows(p, x.data(), y.data(), tolerance, check.data() + first,
                static_cast<std::size_t>(count), chunks[static_cast<std::size_t>(c)]);
  };
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const std::int64_t workers =
      n_rows * p.N < kParallelCheckElements ? 1 : std::min<std::int64_t>({cores, 64, n_chunks});
  if (workers <= 1) {
    for (std::int64_t c = 0; c < n_chunks; ++c) run_chunk(c);
  } else {
    std::atomic<std::int64_t> next{0};
    std::vector<std::thread> pool;
    for (std::int64_t w = 0; w < workers; ++w)
      pool.emplace_back([&] {
        for (std::int64_t c; (c = next.fetch_add(1)) < n_chunks;) run_chunk(c);
      });
    for (auto& t : pool) t.join();
  }

  VerifyResult r;
  r.tolerance = tolerance;
  double diff_sq = 0.0, ref_sq = 0.0, worst = 0.0;
  std::int64_t bad_elements = 0;
  std::string first_error;
  for (const ChunkVerdict& v : chunks) {  // in row order: the first fault is the first row's
    diff_sq += v.diff_sq;
    ref_sq += v.ref_sq;
    worst = std::max(worst, v.worst);
    if (v.bad_elements > 0 && bad_elements == 0) first_error = v.first_error;
    bad_elements += v.bad_elements;
  }
  r.rows_checked = n_rows;
  r.max_rel_err = worst;
  r.rel_l2_err = ref_sq > 0.0 ? std::sqrt(diff_sq / ref_sq) : 0.0;
  r.passed = bad_elements == 0;
  if (!r.passed) {
    r.detail = first_error;
    if (bad_elements > 1) r.detail += " (and " + std::to_string(bad_elements - 1) + " more)";
  }
  return r;
}

std::optional<std::string> check_padding_untouched(const Problem& p, const std::vector<float>& y) {
  if (y.size() < static_cast<std::size_t>(p.M * p.ld_y))
    throw std::invalid_argument("check_padding_untouched: y has " + std::to_string(y.size()) +
                                " elements; M x ld_y = " + std::to_string(p.M * p.ld_y));
  for (std::int64_t i = 0; i < p.M; ++i)
    for (std::int64_t j = p.N; j < p.ld_y; ++j)
      if (!is_poison(y[static_cast<std::size_t>(i * p.ld_y + j)]))
        return describe_padding_write(p, i, j, y[static_cast<std::size_t>(i * p.ld_y + j)]);
  return std::nullopt;
}

std::vector<std::int64_t> sample_rows(std::int64_t M, std::int64_t max_rows, std::uint64_t seed) {
  if (max_rows < 1) throw std::invalid_argument("sample_rows: max_rows must be >= 1");
  std::vector<std::int64_t> rows;
  if (M <= max_rows) {
    for (std::int64_t i = 0; i < M; ++i) rows.push_back(i);
    return rows;
  }
  std::set<std::int64_t> picked{0};
  if (max_rows >= 2) picked.insert(M - 1);
  Rng rng{seed};
  while (static_cast<std::int64_t>(picked.size()) < max_rows) picked.insert(rng.index(M));
  return {picked.begin(), picked.end()};
}

}  // namespace smr
