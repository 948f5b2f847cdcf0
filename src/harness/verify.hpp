// Verification: a double-precision CPU reference, input generators with hostile values, and the
// comparison every kernel's output goes through before it may be timed.
//
// The rules (docs/verification.md, "Kernel correctness"), the same for every kernel and the
// reference:
//   - out = exp(x - max) / sum exp(x - max), -inf entries contribute 0;
//   - a row with a NaN, or with a +inf, is NaN everywhere (IEEE evaluation of the formula:
//     +inf - +inf = NaN reaches the sum; as PyTorch);
//   - a row that is entirely -inf is NaN everywhere (-inf - (-inf) = NaN; as PyTorch).
// The error of an element is |y - ref| / max(|ref|, kAbsoluteFloor): relative, with an absolute
// floor so that outputs below 1e-20 are compared absolutely (their relative error says nothing
// about the kernel); a row's error is its largest element error.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "harness/input_gen.hpp"  // InputKind, kPaddingSentinel, the generator itself
#include "core/problem.hpp"
#include "roofline/results.hpp"

namespace smr {

std::string_view to_string(InputKind k);
// The kind of row `row` in a matrix generated with `kind` (for mixed: the cycle, in the order
// of the enum, normal first).
InputKind row_kind(InputKind kind, std::int64_t row);
// Kinds whose rows are NaN by definition (all_neg_inf, has_nan, has_pos_inf).
bool is_nan_row_kind(InputKind k);

// The tolerance docs/verification.md derives: 2^-15 (~3.05e-5, 512 fp32 unit roundoffs) on the
// per-element error above, for rows up to 2^22 elements.
inline constexpr double kDefaultTolerance = 1.0 / 32768.0;
// Outputs smaller than this are compared absolutely: |y - ref| / kAbsoluteFloor.
inline constexpr double kAbsoluteFloor = 1e-20;

// The output is filled with this bit pattern before every run (a negative quiet NaN with a full
// payload: a byte-wise cudaMemset(0xFF) writes it, and no arithmetic produces it -- GPUs return
// the canonical NaN 0x7fffffff). An element that still holds it was never written.
inline constexpr std::uint32_t kPoisonBits = 0xFFFFFFFFu;
inline constexpr unsigned char kPoisonByte = 0xFF;
float poison_value();
bool is_poison(float v);

// Host-side fp32 matrix of p.M rows with stride p.ld_x (p.M * p.ld_x elements; padding elements
// are filled with kPaddingSentinel, which must never be read into a result). Element (i, j) is
// gen::input_value(seed, kind, i, p.N, j) (harness/input_gen.hpp): it depends only on
// (seed, i, kind, j), so any row or element can be regenerated alone, and the device's fill
// (harness/verify_gpu.hpp) writes the same values. `threads`: 0 = one per core for large matrices
// (the rows are independent, so the result is the same for any number).
std::vector<float> make_input(const Problem& p, std::uint64_t seed, InputKind kind = InputKind::mixed,
                              unsigned threads = 0);

// Element (row, j) of make_input(p, seed, kind) for rows of n elements (0 <= j < n).
float input_value(std::uint64_t seed, InputKind kind, std::int64_t row, std::int64_t n,
                  std::int64_t j);

// Reference softmax of one row, computed in double.
void reference_row(const float* x, std::int64_t n, double* out);

// Compares y (host copy, stride p.ld_y, fp32) with the reference on the given rows (all rows when
// `rows` is empty). Checks every element was written (the output was poisoned with NaN before the
// run: a NaN where the reference is finite fails, the poison pattern fails everywhere), the NaN
// pattern, and the relative error. Throws std::invalid_argument when x or y is too small for p or
// a row is out of range.
VerifyResult verify_output(const Problem& p, const std::vector<float>& x, const std::vector<float>& y,
                           double tolerance, const std::vector<std::int64_t>& rows = {});

// The row padding of y (elements N .. ld_y - 1 of every row) must still hold the poison: a kernel
// writes nothing outside its (M, N) output. nullopt when untouched, else the first violation.
std::optional<std::string> check_padding_untouched(const Problem& p, const std::vector<float>& y);

// The one-line texts of the faults verify_output reports (row, column: what is wrong), shared
// with the GPU checker (harness/verify_gpu.hpp) so that both say the same thing.
enum class FaultKind { unwritten, not_nan, not_finite, too_far };
std::string describe_fault(FaultKind f, std::int64_t row, std::int64_t col, float got, double want,
                           double err, double tolerance);
// check_padding_untouched's text for a write of `got` into y's row padding at (row, col).
std::string describe_padding_write(const Problem& p, std::int64_t row, std::int64_t col, float got);

// Rows to check for a large problem: all when M <= max_rows, else first, last and a seeded sample
// (max_rows rows in all, sorted, distinct). max_rows must be >= 1.
std::vector<std::int64_t> sample_rows(std::int64_t M, std::int64_t max_rows, std::uint64_t seed);

}  // namespace smr
