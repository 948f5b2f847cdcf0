// fused_starter: YOUR fused softmax kernel -- lab exercise 03 (docs/lab/03-fuse-it.md).
//
// The task. `unfused` (../unfused_3pass.cu) makes three passes over the matrix through DRAM:
// 20 bytes per fp32 element. Write the kernel that makes one: a block owns one row, its threads
// load the row ONCE into registers, reduce the max, exponentiate, reduce the sum, scale, and store.
// x is read once and y written once: 8 bytes per element, 3 FLOP / 8 B = 0.375 FLOP/B.
//
// What is written for you (the same as in ../fused_row.cu, the finished design with 16-byte
// accesses: try yours before reading its body): the tile sizes (`Tiles`), the one switch from a
// run-time N to a compile-time tile (`with_tile`), the launcher, the registry entry, `scale`, and
// the helpers you call:
//   block_max<kThreads>(v), block_sum<kThreads>(v)   kernels/reduce.cuh: every thread gets the
//                                                    row's result; ALL threads must call them
//   exp_reference(m), exp_shifted(x, reference)      kernels/softmax_math.cuh: exp(x - m) as one
//                                                    FFMA and one exp2, safe when m is -inf
//
// Which elements a thread holds (given, keep it): the row is one tile of kTile elements, the next
// power of two >= N. Thread t of the block's kThreads threads holds kPerThread = kTile / kThreads
// of them: register slot v[i] is element  element_index<kThreads>(i) = i * kThreads + t  of the
// row.
// For each i the 32 threads of a warp touch 32 consecutive floats (128 bytes): a coalesced access.
// (fused_row.cu moves 16 bytes per thread per access instead of 4; exercise 06 measures what that
// buys. Here, correctness first.)
//
// The five steps, TODO 1 to TODO 5 below. Each placeholder compiles and is wrong on purpose.
//   1 load_tile   v[i] = row[j] where j < n, -inf where j >= n: the masked load (never read past n)
//   2 thread_max  the largest of the thread's kPerThread values
//   3 scale_exp   v[i] = exp(v[i] - m) for the row max m; return the sum of the new v[i]
//   4 the kernel  max over the block, exponentials, sum over the block, scale by 1 / sum
//   5 store_tile  row[j] = v[i] where j < n: the masked store (never write past n)
//
// What to get right (the test checks every one):
//   - N that is not a power of two (1, 7, 33, 1000, 4097 ...): the lanes past N must change
//     neither the max nor the sum. One value does both jobs; which? (Exercise 03 asks why.)
//   - rows of -inf, of a NaN, of +inf, rows with values around +-1e4: read softmax_math.cuh's
//     header before step 3; the helpers there already avoid the -inf - (-inf) = NaN trap.
//   - padded rows: x's row stride ld_x and y's ld_y may be larger than N; the padding of x holds
//     1e30 (read it and the row max is wrong), the padding of y must stay untouched.
//
// Build, test, measure (from the repository root):
//   cmake -S . -B build/lab -G Ninja -DCMAKE_BUILD_TYPE=Release -DSMR_BUILD_LAB=ON
//   cmake --build build/lab --target smr_lab_starter_tests softmax-bench
//   build/lab/tests/kernels/smr_lab_starter_tests     fails until all five steps are right
//   build/lab/src/harness/softmax-bench run configs/lab-03-fuse.yaml
//       --kernels unfused,fused,fused_starter --out runs/lab-03      (one command line)
// Only a lab build compiles this file (SMR_BUILD_LAB, off by default); it is the registry entry
// `fused_starter`. The instructor's reference solution is in docs/lab/answers/.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/fused_row.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/reduce.cuh"
#include "kernels/softmax_math.cuh"

namespace smr {
namespace {

// Register slot i of this thread holds element i * kThreads + threadIdx.x of the row.
template <int kThreads>
__device__ __forceinline__ int element_index(int i) {
  return i * kThreads + static_cast<int>(threadIdx.x);
}

// TODO 1: v[i] <- row[element_index<kThreads>(i)] for the elements inside the row (index < n),
// and the sentinel for those past its end. Read nothing at or past n: that memory is another
// row's, or the row's padding, or not ours at all.
template <int kThreads, int kPerThread>
__device__ __forceinline__ void load_tile(const float* row, int n, float (&v)[kPerThread]) {
  (void)row;
  (void)n;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) v[i] = 0.0f;  // placeholder: replace with the masked load
}

// TODO 2: the largest of the thread's values (fmaxf).
template <int kPerThread>
__device__ __forceinline__ float thread_max(const float (&v)[kPerThread]) {
  (void)v;
  return 0.0f;  // placeholder
}

// TODO 3: v[i] <- exp(v[i] - m), through exp_reference(m) (once) and exp_shifted (per element);
// return the thread's sum of the new values.
template <int kPerThread>
__device__ __forceinline__ float scale_exp(float (&v)[kPerThread], float m) {
  (void)v;
  (void)m;
  return 0.0f;  // placeholder
}

// Given: v[i] <- v[i] * factor.
template <int kPerThread>
__device__ __forceinline__ void scale(float (&v)[kPerThread], float factor) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) v[i] *= factor;
}

// TODO 5: row[element_index<kThreads>(i)] <- v[i] for the elements inside the row only.
template <int kThreads, int kPerThread>
__device__ __forceinline__ void store_tile(float* row, int n, const float (&v)[kPerThread]) {
  (void)row;
  (void)n;
  (void)v;  // placeholder: writes nothing, so the poisoned output shows every element unwritten
}

template <int kTile, int kThreads>
__global__ void __launch_bounds__(kThreads)
    fused_starter_kernel(const float* __restrict__ x, std::int64_t ld_x, float* __restrict__ y,
                         std::int64_t ld_y, int n) {
  constexpr int kPerThread = kTile / kThreads;
  float v[kPerThread];  // the thread's share of the row, in registers
  load_tile<kThreads>(x + blockIdx.x * ld_x, n, v);
  // TODO 4: the row max over the block, the exponentials and their sum over the block, then
  // scale by one reciprocal of the sum (one division per row, not one per element). Three or
  // four lines, calling thread_max, block_max<kThreads>, scale_exp, block_sum<kThreads>, scale.
  store_tile<kThreads>(y + blockIdx.x * ld_y, n, v);
}

// --- Written for you: the same plumbing as fused_row.cu (its tiles: FusedTiles, fused_row.hpp).

void launch(const Launch& l) {
  const Problem& p = l.p;
  const auto* x = static_cast<const float*>(l.x);
  auto* y = static_cast<float*>(l.y);
  const int n = static_cast<int>(p.N);
  const bool launched = with_fused_tile(
      n,
      [&](auto tile) {
        using T = decltype(tile);
        fused_starter_kernel<T::kTile, T::kThreads>
            <<<static_cast<unsigned>(p.M), T::kThreads, 0, l.stream>>>(x, p.ld_x, y, p.ld_y, n);
        CUDA_CHECK_LAUNCH();
      },
      FusedTiles{});
  if (!launched)
    throw std::invalid_argument("fused_starter: N = " + std::to_string(p.N) +
                                " exceeds the cap of " + std::to_string(kFusedMaxN));
}

std::optional<std::string> unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  if (p.N > kFusedMaxN)
    return "N = " + std::to_string(p.N) + " exceeds the one-tile cap of " +
           std::to_string(kFusedMaxN) + " (the row must fit in registers)";
  return too_many_rows(p, "fused_starter");
}

}  // namespace

namespace entries {

KernelInfo fused_starter() {
  KernelInfo k;
  k.name = "fused_starter";
  k.description =
      "lab exercise 03: your fused kernel (src/kernels/lab/fused_row_starter.cu), N <= " +
      std::to_string(kFusedMaxN);
  k.role = Role::lab;
  k.traffic = TrafficModel::fused;
  k.dtypes = {DType::f32};
  k.unsupported = unsupported;
  k.launch = launch;
  return k;
}

}  // namespace entries
}  // namespace smr
