// The problem every part of the project talks about: one row-wise softmax of an (M, N)
// matrix in a given storage type, with its row strides. Pure host code.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace smr {

// Storage type of x and y. Arithmetic is always fp32.
enum class DType { f32, bf16, f16 };

std::string_view to_string(DType t);                  // "fp32", "bf16", "fp16"
std::optional<DType> parse_dtype(std::string_view s);  // inverse of to_string
int dtype_bytes(DType t);                             // 4, 2, 2

struct Problem {
  std::int64_t M = 0;     // rows
  std::int64_t N = 0;     // columns (softmax runs over these)
  std::int64_t ld_x = 0;  // row stride of the input, in elements (>= N)
  std::int64_t ld_y = 0;  // row stride of the output, in elements (>= N)
  DType dtype = DType::f32;

  std::int64_t elements() const { return M * N; }
  // Bytes of one read of x plus one write of y: the floor for any softmax that writes its output.
  double min_bytes() const { return 2.0 * static_cast<double>(M * N) * dtype_bytes(dtype); }
};

// A dense problem: strides equal to N.
inline Problem dense(std::int64_t M, std::int64_t N, DType t = DType::f32) {
  return Problem{M, N, N, N, t};
}

}  // namespace smr
