// Verification: a double-precision CPU reference, input generators with hostile values, and the
// comparison every kernel's output goes through before it may be timed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "roofline/problem.hpp"
#include "roofline/results.hpp"

namespace smr {

// What the rows of a generated input look like. `mixed` cycles through all the others row by row
// (so every matrix with enough rows contains each kind); the rest fill every row the same way.
enum class InputKind {
  mixed,
  normal,        // N(0, 1)
  outliers,      // N(0, 1) with a few values +20 above the rest
  large,         // uniform in [-1e4, 1e4]
  all_equal,     // every value the same
  some_neg_inf,  // N(0, 1) with a few -inf entries
  all_neg_inf,   // the whole row -inf: output row is NaN (as PyTorch; docs/verification.md)
  has_nan,       // one NaN: that row only becomes NaN
  has_pos_inf,   // one +inf: NaN where x = +inf? see docs/verification.md for the defined result
};

// Host-side fp32 matrix of p.M rows with stride p.ld_x (padding elements are filled with a
// sentinel value that must never be read into a result). Deterministic in (seed, kind).
std::vector<float> make_input(const Problem& p, std::uint64_t seed, InputKind kind = InputKind::mixed);

// Reference softmax of one row, computed in double.
void reference_row(const float* x, std::int64_t n, double* out);

// Compares y (host copy, stride p.ld_y, fp32) with the reference on the given rows (all rows when
// `rows` is empty). Checks every element was written (the output was poisoned with NaN before the
// run: a NaN where the reference is finite fails), the NaN pattern, and the relative error.
VerifyResult verify_output(const Problem& p, const std::vector<float>& x, const std::vector<float>& y,
                           double tolerance, const std::vector<std::int64_t>& rows = {});

// Rows to check for a large problem: all when M <= max_rows, else first, last and a seeded sample.
std::vector<std::int64_t> sample_rows(std::int64_t M, std::int64_t max_rows, std::uint64_t seed);

}  // namespace smr
