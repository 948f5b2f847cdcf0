// fused_starter's steps, the reference solution of lab exercise 03 (docs/lab/03-fuse-it.md).
//
// The instructor's answer key: src/kernels/lab/fused_row_starter.cuh with its five TODOs done.
// `diff src/kernels/lab/fused_row_starter.cuh docs/lab/answers/fused_row_solution.cuh` is exactly
// the student's work (this paragraph aside); the worked reasoning is in 03-fuse-it.md of this
// folder, the builds that use this file in answers/README.md. The student's header follows.
//
// The task. `unfused` (../unfused_3pass.cu) makes five passes over the matrix through DRAM:
// 20 bytes per fp32 element. Write the kernel that makes two: a block owns one row, its threads
// load the row ONCE into registers, reduce the max, exponentiate, reduce the sum, scale, and store.
// x is read once and y written once: 8 bytes per element, 3 FLOP / 8 B = 0.375 FLOP/B.
//
// This file is all you write: five small steps, TODO 1 to TODO 5, each compiled for the GPU and
// for the CPU (__host__ __device__). fused_row_starter.cu, next to it, is written for you: the
// kernel that runs `fused_row` below once per thread of a block, one block per row, the choice of
// tile, the launcher and the registry entry. The helpers you call:
//   block.max(v), block.sum(v)                 the block reductions: every thread gets the row's
//                                              result; ALL threads must call them (on the GPU
//                                              they are block_max / block_sum, kernels/common/reduce.cuh)
//   exp_reference(m), exp_shifted(x, reference) kernels/common/softmax_math.cuh: exp(x - m) as one FFMA
//                                              and one exp2, safe when m is -inf
//
// Which elements a thread holds (given, keep it): the row is one tile of kTile elements, the next
// power of two >= N (the list is FusedTiles, ../fused_row.hpp). Thread t of the block's kThreads
// threads holds kPerThread = kTile / kThreads of them: register slot v[i] is element
//   element_index<kThreads>(i, t) = i * kThreads + t
// of the row. For each i the 32 threads of a warp touch 32 consecutive floats (128 bytes): a
// coalesced access. (fused_row.cu moves 16 bytes per thread per access instead of 4; exercise 06
// measures what that buys. Here, correctness first.)
//
// The five steps. Each placeholder compiles and is wrong on purpose.
//   1 load_tile   v[i] = row[j] where j < n, -inf where j >= n: the masked load (never read past n)
//   2 thread_max  the largest of the thread's kPerThread values
//   3 scale_exp   v[i] = exp(v[i] - m) for the row max m; return the sum of the new v[i]
//   4 fused_row   max over the block, exponentials, sum over the block, scale by 1 / sum
//   5 store_tile  row[j] = v[i] where j < n: the masked store (never write past n)
//
// What to get right (the tests check every one):
//   - N that is not a power of two (1, 7, 33, 1000, 4097 ...): the lanes past N must change
//     neither the max nor the sum. One value does both jobs; which? (Exercise 03 asks why.)
//   - rows of -inf, of a NaN, of +inf, rows with values around +-1e4: read softmax_math.cuh's
//     header before step 3; the helpers there already avoid the -inf - (-inf) = NaN trap.
//   - padded rows: x's row stride ld_x and y's ld_y may be larger than N; the padding of x holds
//     1e30 (read it and the row max is wrong), the padding of y must stay untouched.
//
// Check, build, measure (from the repository root; docs/lab/03-fuse-it.md has the details):
//   cmake --preset lab                               the lab build, build/lab
//   cmake --build build/lab --target smr_lab_cpu_tests
//   build/lab/tests/kernels/smr_lab_cpu_tests        on the CPU, no GPU needed: every thread of a
//                                                     block emulated; fails until the steps are right
//   cmake --build build/lab --target smr_lab_starter_tests softmax-bench
//   build/lab/tests/kernels/smr_lab_starter_tests     on the GPU: the kernel itself
//   build/lab/src/harness/softmax-bench run configs/lab-03-fuse.yaml
//       --kernels unfused,fused,fused_starter --out runs/lab-03      (one command line)
// The instructor's reference solution is in docs/lab/answers/.
#pragma once

#include <cmath>

#include "kernels/common/softmax_math.cuh"

namespace smr::lab {

// Register slot i of thread `thread` holds element i * kThreads + thread of the row.
template <int kThreads>
__host__ __device__ inline int element_index(int i, int thread) {
  return i * kThreads + thread;
}

// 1: the masked load. -inf past the row's end is the sentinel that does double duty: it never
// wins the max, and exp(-inf - m) = 0 adds nothing to the sum, so the reductions need no mask.
template <int kThreads, int kPerThread>
__host__ __device__ inline void load_tile(const float* row, int n, int thread,
                                          float (&v)[kPerThread]) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int j = element_index<kThreads>(i, thread);
    v[i] = j < n ? row[j] : -INFINITY;
  }
}

// 2: the thread's max. A thread whose every slot is past N returns -inf (the block max ignores it).
template <int kPerThread>
__host__ __device__ inline float thread_max(const float (&v)[kPerThread]) {
  float m = v[0];
#pragma unroll
  for (int i = 1; i < kPerThread; ++i) m = fmaxf(m, v[i]);
  return m;
}

// 3: exp(v[i] - m) as exp2(v[i] * log2e - m * log2e): m * log2e once per row (exp_reference,
// which also turns an all -inf row's m = -inf into 0, so -inf - (-inf) = NaN never happens), then
// one FFMA and one MUFU.EX2 per element. Returns the thread's sum.
template <int kPerThread>
__host__ __device__ inline float scale_exp(float (&v)[kPerThread], float m) {
  const float reference = exp_reference(m);
  float s = 0.0f;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    v[i] = exp_shifted(v[i], reference);
    s += v[i];
  }
  return s;
}

// Given: v[i] <- v[i] * factor.
template <int kPerThread>
__host__ __device__ inline void scale(float (&v)[kPerThread], float factor) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) v[i] *= factor;
}

// 5: the masked store: the slots past N hold exp(-inf) = 0 and are never written.
template <int kThreads, int kPerThread>
__host__ __device__ inline void store_tile(float* row, int n, int thread,
                                           const float (&v)[kPerThread]) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) {
    const int j = element_index<kThreads>(i, thread);
    if (j < n) row[j] = v[i];
  }
}

// One thread's part of the row: what the kernel runs in every thread of the block. x_row and
// y_row are the block's row of x and of y, `thread` is threadIdx.x, `block` does the block
// reductions.
template <int kThreads, int kPerThread, class Block>
__host__ __device__ inline void fused_row(const float* x_row, float* y_row, int n, int thread,
                                          const Block& block) {
  float v[kPerThread];  // the thread's share of the row, in registers
  load_tile<kThreads>(x_row, n, thread, v);
  // 4: every thread takes part in both block reductions (on the GPU they hold __syncthreads),
  // also the threads whose slots are all past N. An all -inf row has row_sum = 0:
  // 0 * (1 / 0) = NaN, the defined result (as PyTorch).
  const float row_max = block.max(thread_max(v));
  const float row_sum = block.sum(scale_exp(v, row_max));
  scale(v, 1.0f / row_sum);
  store_tile<kThreads>(y_row, n, thread, v);
}

}  // namespace smr::lab
