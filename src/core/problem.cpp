#include "core/problem.hpp"

namespace smr {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::f32: return "fp32";
    case DType::bf16: return "bf16";
    case DType::f16: return "fp16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  if (s == "fp32") return DType::f32;
  if (s == "bf16") return DType::bf16;
  if (s == "fp16") return DType::f16;
  return std::nullopt;
}

int dtype_bytes(DType t) { return t == DType::f32 ? 4 : 2; }

}  // namespace smr
