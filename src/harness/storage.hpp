// Host-side bf16/fp16 storage: what the tests and the sweep driver use to upload inputs and read
// outputs of kernels whose x and y are 16-bit (the production `softmax`), and the tolerance a
// 16-bit output is verified with. Header-only; the conversions are CUDA's own host functions
// (cuda_bf16.h / cuda_fp16.h), round to nearest even like the kernels' stores.
//
// The recipe, for a problem p of dtype t (harness and tests alike):
//   std::vector<float> x = make_input(p, seed, kind);   // fp32, as for every kernel
//   round_to_storage(x, t);                              // x now holds exactly the 16-bit values
//   upload  to_storage(x, t)         (p.M * p.ld_x elements of dtype_bytes(t) bytes)
//   poison  the output with kPoisonByte (0xFFFF per 16-bit element: a NaN no arithmetic makes)
//   launch, download p.M * p.ld_y elements of dtype_bytes(t) bytes
//   std::vector<float> y = from_storage(bytes, t);       // 0xFFFF -> the fp32 poison pattern
//   verify_storage_output(p, x, y, rows)                 // the reference sees the rounded x
// For fp32 the first three steps are the identity and verify_storage_output is verify_output.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "harness/verify.hpp"
#include "core/problem.hpp"

namespace smr {

// fp32 -> the storage bytes of dtype t (element i at bytes [i * dtype_bytes(t), ...)).
inline std::vector<unsigned char> to_storage(const std::vector<float>& v, DType t) {
  const auto b = static_cast<std::size_t>(dtype_bytes(t));
  std::vector<unsigned char> out(v.size() * b);
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (t == DType::f32) {
      std::memcpy(&out[i * b], &v[i], b);
    } else if (t == DType::bf16) {
      const __nv_bfloat16_raw h = __float2bfloat16_rn(v[i]);
      std::memcpy(&out[i * b], &h.x, b);
    } else {
      const __half_raw h = __float2half_rn(v[i]);
      std::memcpy(&out[i * b], &h.x, b);
    }
  }
  return out;
}

// Storage bytes of dtype t -> fp32. The 16-bit poison pattern (all ones, what a byte-wise
// cudaMemset(kPoisonByte) leaves) becomes the fp32 poison, so that verify_output's "never
// written" checks work unchanged: no conversion of a computed value produces it (GPUs and these
// host conversions return the canonical NaN 0x7fff or 0x7fc0/0x7e00 patterns).
inline std::vector<float> from_storage(const unsigned char* bytes, std::size_t count, DType t) {
  std::vector<float> out(count);
  const auto b = static_cast<std::size_t>(dtype_bytes(t));
  for (std::size_t i = 0; i < count; ++i) {
    if (t == DType::f32) {
      std::memcpy(&out[i], bytes + i * b, b);
      continue;
    }
    std::uint16_t bits = 0;
    std::memcpy(&bits, bytes + i * b, b);
    if (bits == 0xFFFFu) {
      out[i] = poison_value();
    } else if (t == DType::bf16) {
      __nv_bfloat16_raw h;
      h.x = bits;
      out[i] = __bfloat162float(__nv_bfloat16(h));
    } else {
      __half_raw h;
      h.x = bits;
      out[i] = __half2float(__half(h));
    }
  }
  return out;
}
inline std::vector<float> from_storage(const std::vector<unsigned char>& bytes, DType t) {
  return from_storage(bytes.data(), bytes.size() / static_cast<std::size_t>(dtype_bytes(t)), t);
}

// Rounds every value to the nearest value of dtype t, in place: the inputs the reference sees
// are then exactly the inputs the kernel reads (softmax of fp32-upcast 16-bit values).
// kPaddingSentinel (1e30) becomes +inf in fp16: still a value no correct kernel reads.
inline void round_to_storage(std::vector<float>& v, DType t) {
  if (t == DType::f32) return;
  v = from_storage(to_storage(v, t), t);
}

// The verification tolerance for outputs stored in dtype t, on the error
//     |y - ref| / max(|ref|, storage_absolute_floor(t)).
// fp32: kDefaultTolerance (2^-15, docs/verification.md). A 16-bit output is the fp32 result
// rounded to nearest: relative error <= 2^-p for p significand bits (bf16 p = 8: 2^-8 = 3.9e-3;
// fp16 p = 11: 2^-11 = 4.9e-4), on top of the fp32 result's own error (within 2^-15); the
// tolerance is their sum with one more 2^-15 of slack: 2^-p + 2^-14.
inline double storage_tolerance(DType t) {
  switch (t) {
    case DType::f32: return kDefaultTolerance;
    case DType::bf16: return std::ldexp(1.0, -8) + std::ldexp(1.0, -14);
    case DType::f16: return std::ldexp(1.0, -11) + std::ldexp(1.0, -14);
  }
  throw std::invalid_argument("storage_tolerance: unknown dtype");
}

// The tolerance a record of dtype t is verified with in a sweep whose config asks for
// `config_tolerance` (verify.tolerance; kDefaultTolerance when it has none): fp32 outputs take the
// config's, 16-bit outputs storage_tolerance(t) (record_verify.cpp's verify_record). `softmax-bench
// verify-settings` prints it for each dtype, and scripts/peers.py judges the peers with it.
inline double verification_tolerance(DType t, double config_tolerance) {
  return t == DType::f32 ? config_tolerance : storage_tolerance(t);
}

// Outputs below this are compared absolutely. bf16 has fp32's exponent range: verify.hpp's
// kAbsoluteFloor (1e-20) holds. fp16's normal range ends at 2^-14 (6.1e-5): below it the spacing
// is a fixed 2^-24, the rounding error up to 2^-25 absolute, and softmax outputs under 3e-8 are 0;
// relative to 2^-14 that error is again <= 2^-11, so fp16 uses 2^-14 as its floor.
inline double storage_absolute_floor(DType t) {
  return t == DType::f16 ? std::ldexp(1.0, -14) : kAbsoluteFloor;
}

// The fp16 rule's fault text (verify_storage_output below; the GPU checker says the same).
inline std::string describe_fp16_fault(std::int64_t row, std::int64_t col, double err, double tol,
                                       double got, double want) {
  return "row " + std::to_string(row) + ", column " + std::to_string(col) + ": fp16 error " +
         std::to_string(err) + " > tolerance " + std::to_string(tol) + " (got " +
         std::to_string(got) + ", expected " + std::to_string(want) + ")";
}

// verify_output for outputs stored in p.dtype (x: the fp32 values of the 16-bit inputs, y: the
// output converted by from_storage) at tolerance `tol`. fp32 and bf16: verify_output. fp16:
// verify_output checks the NaN pattern, the poison and the finite elements with an unlimited
// tolerance, then every element's error is recomputed with fp16's absolute floor.
inline VerifyResult verify_storage_output_at(const Problem& p, const std::vector<float>& x,
                                             const std::vector<float>& y, double tol,
                                             const std::vector<std::int64_t>& rows = {}) {
  if (p.dtype != DType::f16) return verify_output(p, x, y, tol, rows);
  VerifyResult r = verify_output(p, x, y, HUGE_VAL, rows);
  r.tolerance = tol;
  if (!r.passed) return r;
  const double floor = storage_absolute_floor(p.dtype);
  std::vector<std::int64_t> all;
  const std::vector<std::int64_t>* which = &rows;
  if (rows.empty()) {
    for (std::int64_t i = 0; i < p.M; ++i) all.push_back(i);
    which = &all;
  }
  std::vector<double> ref(static_cast<std::size_t>(p.N));
  double worst = 0, diff_sq = 0, ref_sq = 0;
  for (const std::int64_t i : *which) {
    reference_row(&x[static_cast<std::size_t>(i * p.ld_x)], p.N, ref.data());
    for (std::int64_t j = 0; j < p.N; ++j) {
      const double want = ref[static_cast<std::size_t>(j)];
      if (std::isnan(want)) continue;  // the NaN pattern was checked above
      const double got = y[static_cast<std::size_t>(i * p.ld_y + j)];
      const double d = std::abs(got - want);
      const double e = d / std::max(std::abs(want), floor);
      diff_sq += d * d;
      ref_sq += want * want;
      if (e > worst) worst = e;
      if (!(e <= tol) && r.passed) {
        r.passed = false;
        r.detail = describe_fp16_fault(i, j, e, tol, got, want);
      }
    }
  }
  r.max_rel_err = worst;
  r.rel_l2_err = ref_sq > 0 ? std::sqrt(diff_sq / ref_sq) : 0.0;
  return r;
}

// The same at the storage's own tolerance (storage_tolerance): how every output is judged.
inline VerifyResult verify_storage_output(const Problem& p, const std::vector<float>& x,
                                          const std::vector<float>& y,
                                          const std::vector<std::int64_t>& rows = {}) {
  return verify_storage_output_at(p, x, y, storage_tolerance(p.dtype), rows);
}

}  // namespace smr
