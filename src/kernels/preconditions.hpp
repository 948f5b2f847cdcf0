// Preconditions the kernels' registry entries share (host-only). Each returns why a problem
// cannot be run, in one line, or nullopt.
#pragma once

#include <climits>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/problem.hpp"

namespace smr {

// A problem no kernel can run: empty, or a row stride shorter than the row.
inline std::optional<std::string> invalid_problem(const Problem& p) {
  if (p.M < 1 || p.N < 1)
    return "invalid problem: M = " + std::to_string(p.M) + ", N = " + std::to_string(p.N) +
           " (both must be >= 1)";
  if (p.ld_x < p.N || p.ld_y < p.N)
    return "invalid problem: row strides ld_x = " + std::to_string(p.ld_x) +
           ", ld_y = " + std::to_string(p.ld_y) + " must be >= N = " + std::to_string(p.N);
  return std::nullopt;
}

// Kernels with one block per row launch M blocks: gridDim.x is at most 2^31 - 1.
inline std::optional<std::string> too_many_rows(const Problem& p, std::string_view kernel) {
  if (p.M > INT_MAX)
    return "M = " + std::to_string(p.M) + " exceeds the " + std::string(kernel) +
           " kernel's one-block-per-row grid limit of " + std::to_string(INT_MAX) + " rows";
  return std::nullopt;
}

}  // namespace smr
