// The exponential every fused softmax kernel uses, and its two traps (device code).
//
// exp(x - m) = 2^(x * log2(e) - m * log2(e)).  The GPU's special-function unit computes 2^t
// (MUFU.EX2); expf() must first multiply its argument by log2(e) anyway. Written this way, with
// the row's `m * log2(e)` computed once per row, each element costs ONE fused multiply-add,
// fmaf(x, kLog2e, -max_scaled), before the 2^t: the subtraction is folded into the FMA.
//
// Why this stays accurate even for |x| ~ 1e4: max_scaled = fl(m * log2e) is rounded once, with an
// error of up to half an ulp of m * log2e (for m = 1e4 that is ~5e-4, a lot). But that error is
// the SAME shift delta for every element of the row: every exponential becomes 2^delta times its
// exact value, the sum does too, and the division cancels it. This holds only if the very same
// float max_scaled is used for every element and for every rescaling of a partial sum: so
// `scaled_max` multiplies with __fmul_rn, which the compiler never contracts into a neighbouring
// FMA (a contraction would use the unrounded product in one place and the rounded one in another,
// and the shift would no longer cancel).
//
// The traps (flash-attention's softmax.h: "we don't want (-inf - (-inf)) since that would give
// NaN"): when the max is -inf (a row, a thread or a chunk that has only seen -inf),
// x * log2e - m * log2e is (-inf) - (-inf) = NaN, and a NaN in one thread's partial sum would
// poison the whole row even though the row has finite values elsewhere. `exp_reference` uses 0 as
// the reference point instead: every value seen so far is -inf, exp(-inf - 0) = 0, so the
// reference does not matter, and nothing becomes NaN. A row that is entirely -inf then ends with
// sum 0, and 0 * (1 / 0) = NaN: the all -inf row's output is NaN, as in PyTorch, on purpose.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

namespace smr {

inline constexpr float kLog2e = 1.4426950408889634f;  // log2(e), rounded to float

// m * log2(e), rounded exactly once (never fused into an FMA: see above). The three functions
// below also compile for the host, where the lab's CPU check runs the student's steps
// (tests/kernels/test_lab_cpu.cpp); a lone float multiply on the host is rounded once too.
__host__ __device__ __forceinline__ float scaled_max(float m) {
#ifdef __CUDA_ARCH__
  return __fmul_rn(m, kLog2e);
#else
  return m * kLog2e;
#endif
}

// The reference point the exponentials of a row (or a partial row) are taken against:
// scaled_max(m), or 0 while the max is still -inf (the -inf - (-inf) trap).
__host__ __device__ __forceinline__ float exp_reference(float m) {
  return m == -INFINITY ? 0.0f : scaled_max(m);
}

// exp(x - m) as 2^(x * log2e - reference): one FFMA and one exp2f. x = -inf gives 0.
__host__ __device__ __forceinline__ float exp_shifted(float x, float reference) {
  return exp2f(fmaf(x, kLog2e, -reference));
}

// 2^t on the special-function unit alone: ex2.approx.ftz, one MUFU.EX2, results below 2^-126
// flushed to 0. exp2f() above is the same MUFU.EX2 with a guard for those results, because the
// unit flushes them: FSETP t < -126, a predicated FMUL t * 0.5 before and r * r after -- three
// more instructions per exponential in the sm_90 SASS (every EX2 of the lab and production
// kernels had them; the lab kernels keep them: docs/lab/03-fuse-it.md, question 4, asks for them
// in the SASS). The production kernels (row_stats.cuh, row_tile.cuh) use this one: an output
// below 2^-126 (~1.2e-38) becomes 0, an absolute error far under the verification's floor
// (harness/verify.hpp), and a partial whose rescaling factor is below 2^-126 adds nothing to a
// sum that is >= 1.
__device__ __forceinline__ float exp2_ftz(float t) {
  float r;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(t));
  return r;
}

// exp_shifted on exp2_ftz: one FFMA and one MUFU.EX2.
__device__ __forceinline__ float exp_shifted_ftz(float x, float reference) {
  return exp2_ftz(fmaf(x, kLog2e, -reference));
}

}  // namespace smr
