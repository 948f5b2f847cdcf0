// The input generator, one definition for the host (make_input, the CPU tests) and the device (the
// sweep's fill kernel, harness/verify_gpu.cu): element (row, j) of a matrix generated with
// (seed, kind) is a pure function of (seed, row, kind, j), so any element or row can be made on
// its own, in any order, on either side, and both sides agree bit for bit.
//
// How a value is made, with no libm call and no rounding that could differ between host and
// device:
//   - hashes: the splitmix64 finalizer (Steele, Lea and Flood 2014) of a counter mixed with a
//     per-row key; the key hashes (seed, row, kind);
//   - "normal": Irwin-Hall of four 16-bit uniforms taken from one 64-bit hash, centred and scaled
//     to unit variance: an integer sum converted to float exactly, then one fp32 multiply (one
//     rounding). Approximately N(0, 1): mean 0, variance 1, bounded by 2 sqrt(3) ~ 3.46;
//   - "uniform in [-A, A]": an odd 25-bit integer times A / 2^24, again one fp32 multiply;
//   - special positions (outlier indices, the kept finite entry, the NaN or +inf index): hashes
//     of (key, k) reduced to [0, n) by a 64 x 64 -> high-64 multiply.
// Every fp32 operation is an explicit round-to-nearest multiply or add (__fmul_rn / __fadd_rn on
// the device, which nvcc never contracts into an FMA; plain operators on the host, where the
// project builds ISO C++ without FMA contraction).
//
// Header-only and free of other project headers, so that kernels' code can include it too.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__CUDACC__)
#define SMR_GEN_HD __host__ __device__ __forceinline__
#else
#define SMR_GEN_HD inline
#endif

namespace smr {

// What the rows of a generated input look like. `mixed` cycles through all the others row by row
// (so every matrix with enough rows contains each kind); the rest fill every row the same way.
// The values of each kind: docs/verification.md, "Inputs".
enum class InputKind : int {
  mixed,
  normal,        // approximately N(0, 1) (Irwin-Hall of four uniforms, |x| <= 3.47)
  outliers,      // normal, with 1 to 8 values 20 + normal (a few values +20 above the rest)
  large,         // uniform in [-1e4, 1e4]
  all_equal,     // every value the same, uniform in [-10, 10]
  some_neg_inf,  // normal with ~1/8 of the entries -inf (at least one; never all: one stays finite)
  all_neg_inf,   // the whole row -inf: output row is NaN (as PyTorch; docs/verification.md)
  has_nan,       // one NaN: that row only becomes NaN
  has_pos_inf,   // one +inf: that row only becomes NaN (IEEE, as PyTorch; docs/verification.md)
};

// Input row padding (elements N .. ld_x - 1) holds this: a kernel that reads it gets a huge max
// or an infinite exp, and fails verification visibly.
inline constexpr float kPaddingSentinel = 1e30f;

namespace gen {

inline constexpr std::uint64_t kGolden = 0x9E3779B97F4A7C15ull;
inline constexpr int kMixedKinds = 8;  // mixed cycles through normal .. has_pos_inf

SMR_GEN_HD std::uint64_t mix64(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// The high 64 bits of a * b.
SMR_GEN_HD std::uint64_t mulhi64(std::uint64_t a, std::uint64_t b) {
#if defined(__CUDA_ARCH__)
  return __umul64hi(a, b);
#else
  const std::uint64_t a_lo = a & 0xFFFFFFFFull, a_hi = a >> 32;
  const std::uint64_t b_lo = b & 0xFFFFFFFFull, b_hi = b >> 32;
  const std::uint64_t lo_lo = a_lo * b_lo, hi_lo = a_hi * b_lo, lo_hi = a_lo * b_hi;
  const std::uint64_t cross = (lo_lo >> 32) + (hi_lo & 0xFFFFFFFFull) + lo_hi;
  return a_hi * b_hi + (hi_lo >> 32) + (cross >> 32);
#endif
}

SMR_GEN_HD float mul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  return a * b;
#endif
}

SMR_GEN_HD float add_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fadd_rn(a, b);
#else
  return a + b;
#endif
}

SMR_GEN_HD float from_bits(std::uint32_t bits) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(bits);
#else
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
#endif
}

inline constexpr std::uint32_t kNegInfBits = 0xFF800000u;
inline constexpr std::uint32_t kPosInfBits = 0x7F800000u;
// std::numeric_limits<float>::quiet_NaN()
inline constexpr std::uint32_t kQuietNaNBits = 0x7FC00000u;

// sqrt(3) / 2^16: the sum of four uniforms (u + 1/2) / 2^16 has variance 4/12 = 1/3.
inline constexpr float kNormalScale = 1.7320508075688772f / 65536.0f;
// Four 16-bit uniforms, centred: sum(u_i + 1/2) - 2 * 2^16 = sum(u_i) - 131070, in
// [-131070, 131070] (exact in fp32), times kNormalScale.
SMR_GEN_HD float normal(std::uint64_t h) {
  const auto s =
      static_cast<std::int32_t>(h & 0xFFFFu) + static_cast<std::int32_t>((h >> 16) & 0xFFFFu) +
      static_cast<std::int32_t>((h >> 32) & 0xFFFFu) + static_cast<std::int32_t>(h >> 48) - 131070;
  return mul_rn(static_cast<float>(s), kNormalScale);
}

// Uniform in [-a, a] (a a float whose value times 2^-24 is exact): 2^24 odd integers
// -(2^24 - 1) .. 2^24 - 1 from the hash's top 24 bits, times a / 2^24.
SMR_GEN_HD float uniform_sym(std::uint64_t h, float a) {
  const auto t = static_cast<std::int32_t>(h >> 40);  // 0 .. 2^24 - 1
  const std::int32_t odd = 2 * t - ((1 << 24) - 1);
  return mul_rn(static_cast<float>(odd), a * 0x1p-24f);
}

// An index in [0, n), n >= 1.
SMR_GEN_HD std::int64_t index(std::uint64_t h, std::int64_t n) {
  return static_cast<std::int64_t>(mulhi64(h, static_cast<std::uint64_t>(n)));
}

// The kind of row `row` in a matrix generated with `kind`: mixed cycles through the kinds in the
// order of the enum, normal first.
SMR_GEN_HD InputKind row_kind(InputKind kind, std::int64_t row) {
  if (kind != InputKind::mixed) return kind;
  return static_cast<InputKind>(1 + static_cast<int>(row % kMixedKinds));
}

// The key of one row: (seed, row, the row's own kind).
SMR_GEN_HD std::uint64_t row_key(std::uint64_t seed, std::int64_t row, InputKind row_kind) {
  return mix64(mix64(seed + kGolden) ^ (static_cast<std::uint64_t>(row) * 0xD1B54A32D192ED03ull) ^
               (static_cast<std::uint64_t>(row_kind) << 56));
}
// Element j's hashes: stream 0 gives its value, stream 1 (some_neg_inf) whether it is -inf.
SMR_GEN_HD std::uint64_t element_hash(std::uint64_t key, std::int64_t j, int stream) {
  return mix64(key + (2 * static_cast<std::uint64_t>(j) + static_cast<std::uint64_t>(stream) + 1) *
                         kGolden);
}
// The row's k-th special hash (positions, the all_equal level, the outliers' values).
SMR_GEN_HD std::uint64_t special_hash(std::uint64_t key, int k) {
  return mix64((key ^ 0x243F6A8885A308D3ull) + (static_cast<std::uint64_t>(k) + 1) * kGolden);
}

// The outliers of a row of n: 1 + min(n / 256, 7) of them.
SMR_GEN_HD int outlier_count(std::int64_t n) {
  const std::int64_t extra = n / 256 < 7 ? n / 256 : 7;
  return 1 + static_cast<int>(extra);
}

// Element j (0 <= j < n) of row `row` of the matrix generated with (seed, kind), rows of n.
SMR_GEN_HD float input_value(std::uint64_t seed, InputKind kind, std::int64_t row, std::int64_t n,
                             std::int64_t j) {
  const InputKind k = row_kind(kind, row);
  const std::uint64_t key = row_key(seed, row, k);
  switch (k) {
    case InputKind::mixed:  // resolved above
    case InputKind::normal:
      break;
    case InputKind::outliers:
      // Outlier i sits at index(special 2i) with the value 20 + normal(special 2i + 1); where two
      // land on one element the later one counts.
      for (int i = outlier_count(n) - 1; i >= 0; --i)
        if (index(special_hash(key, 2 * i), n) == j)
          return add_rn(20.0f, normal(special_hash(key, 2 * i + 1)));
      break;
    case InputKind::large:
      return uniform_sym(element_hash(key, j, 0), 1e4f);
    case InputKind::all_equal:
      return uniform_sym(special_hash(key, 0), 10.0f);
    case InputKind::some_neg_inf: {
      if (n < 2) break;  // a single -inf would make the row all -inf: that is another kind
      const std::int64_t keep = index(special_hash(key, 0), n);
      const std::int64_t forced = (keep + 1 + index(special_hash(key, 1), n - 1)) % n;
      if (j == keep) break;
      if (j == forced || (element_hash(key, j, 1) >> 61) == 0) return from_bits(kNegInfBits);
      break;
    }
    case InputKind::all_neg_inf:
      return from_bits(kNegInfBits);
    case InputKind::has_nan:
      if (j == index(special_hash(key, 0), n)) return from_bits(kQuietNaNBits);
      break;
    case InputKind::has_pos_inf:
      if (j == index(special_hash(key, 0), n)) return from_bits(kPosInfBits);
      break;
  }
  return normal(element_hash(key, j, 0));
}

}  // namespace gen
}  // namespace smr
