// Host-only checks of harness/storage.hpp: the bf16/fp16 conversions the production softmax's
// tests (and the sweep driver) upload and download with, and the 16-bit tolerances.
#include <cmath>
#include <cstdint>
#include <vector>

#include "catch.hpp"
#include "harness/storage.hpp"
#include "harness/verify.hpp"

using namespace smr;

TEST_CASE("storage: round to nearest even, exact round trips, the poison survives", "[storage]") {
  // bf16 keeps 8 significant bits: 1 + 2^-8 is halfway between 1 and 1 + 2^-7 and rounds to the
  // even 1; 1 + 3 * 2^-9 rounds up to 1 + 2^-7.
  std::vector<float> v{1.0f + std::ldexp(1.0f, -8), 1.0f + 3 * std::ldexp(1.0f, -9), -2.5f,
                       INFINITY, -INFINITY};
  round_to_storage(v, DType::bf16);
  CHECK(v[0] == 1.0f);
  CHECK(v[1] == 1.0f + std::ldexp(1.0f, -7));
  CHECK(v[2] == -2.5f);
  CHECK(v[3] == INFINITY);
  CHECK(v[4] == -INFINITY);
  // fp16: 11 significant bits, largest finite 65504; the padding sentinel 1e30 becomes +inf.
  std::vector<float> h{1.0f + std::ldexp(1.0f, -11), 65504.0f, kPaddingSentinel, 1e-7f};
  round_to_storage(h, DType::f16);
  CHECK(h[0] == 1.0f);
  CHECK(h[1] == 65504.0f);
  CHECK(h[2] == INFINITY);
  CHECK(h[3] == std::ldexp(1.0f, -23));  // 1e-7 is nearest to 2 x 2^-24, a subnormal
  // Rounded values survive another round trip unchanged, in every dtype.
  for (const DType t : {DType::f32, DType::bf16, DType::f16}) {
    std::vector<float> w{0.1f, -3.75f, 1234.5f, 6e-5f};
    round_to_storage(w, t);
    const std::vector<float> again = from_storage(to_storage(w, t), t);
    CHECK(again == w);
    CHECK(to_storage(w, t).size() == w.size() * static_cast<std::size_t>(dtype_bytes(t)));
  }
  // A 16-bit element the kernel never wrote (cudaMemset 0xFF) reads back as the fp32 poison.
  const std::vector<unsigned char> poisoned(8, kPoisonByte);
  for (const DType t : {DType::bf16, DType::f16})
    for (const float f : from_storage(poisoned, t)) CHECK(is_poison(f));
  // A computed NaN is not the poison.
  CHECK_FALSE(is_poison(from_storage(to_storage({NAN}, DType::bf16), DType::bf16)[0]));
  CHECK(std::isnan(from_storage(to_storage({NAN}, DType::f16), DType::f16)[0]));
}

TEST_CASE("storage: the 16-bit tolerances accept rounding and reject real errors", "[storage]") {
  // One row: softmax([0, -20, 1, 2]) has an output of ~2e-9, which fp16 rounds to 0.
  const Problem p16 = dense(1, 4, DType::f16);
  const std::vector<float> x{0.0f, -20.0f, 1.0f, 2.0f};
  std::vector<double> ref(4);
  reference_row(x.data(), 4, ref.data());
  std::vector<float> y(ref.begin(), ref.end());
  round_to_storage(y, DType::f16);
  CHECK(y[1] == 0.0f);
  // Relative to fp16's normal range the rounding is within 2^-11; against a 1e-20 floor it is 1.
  CHECK(verify_storage_output(p16, x, y).passed);
  CHECK_FALSE(verify_output(p16, x, y, storage_tolerance(DType::f16)).passed);
  std::vector<float> bad = y;
  bad[3] *= 1.01f;
  CHECK_FALSE(verify_storage_output(p16, x, bad).passed);

  // bf16: the rounded reference passes; two bf16 steps off does not.
  const Problem pb = dense(1, 4, DType::bf16);
  std::vector<float> yb(ref.begin(), ref.end());
  round_to_storage(yb, DType::bf16);
  CHECK(verify_storage_output(pb, x, yb).passed);
  yb[3] *= 1.0f + std::ldexp(1.0f, -6);
  CHECK_FALSE(verify_storage_output(pb, x, yb).passed);

  CHECK(storage_tolerance(DType::f32) == kDefaultTolerance);
  CHECK(storage_tolerance(DType::bf16) > std::ldexp(1.0, -8));
  CHECK(storage_tolerance(DType::bf16) < std::ldexp(1.0, -7));
  CHECK(storage_tolerance(DType::f16) > std::ldexp(1.0, -11));
  CHECK(storage_tolerance(DType::f16) < std::ldexp(1.0, -10));
}
