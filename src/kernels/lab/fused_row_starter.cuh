// fused_starter: YOUR fused softmax kernel -- lab exercise 03 (docs/lab/03-fuse-it.md).
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

// TODO 1: v[i] <- row[element_index<kThreads>(i, thread)] for the elements inside the row
// (index < n), and the sentinel for those past its end. Read nothing at or past n: that memory is
// another row's, or the row's padding, or not ours at all.
template <int kThreads, int kPerThread>
__host__ __device__ inline void load_tile(const float* row, int n, int thread,
                                          float (&v)[kPerThread]) {
  (void)row;
  (void)n;
  (void)thread;
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) v[i] = 0.0f;  // placeholder: replace with the masked load
}

// TODO 2: the largest of the thread's values (fmaxf).
template <int kPerThread>
__host__ __device__ inline float thread_max(const float (&v)[kPerThread]) {
  (void)v;
  return 0.0f;  // placeholder
}

// TODO 3: v[i] <- exp(v[i] - m), through exp_reference(m) (once) and exp_shifted (per element);
// return the thread's sum of the new values.
template <int kPerThread>
__host__ __device__ inline float scale_exp(float (&v)[kPerThread], float m) {
  (void)v;
  (void)m;
  return 0.0f;  // placeholder
}

// Given: v[i] <- v[i] * factor.
template <int kPerThread>
__host__ __device__ inline void scale(float (&v)[kPerThread], float factor) {
#pragma unroll
  for (int i = 0; i < kPerThread; ++i) v[i] *= factor;
}

// TODO 5: row[element_index<kThreads>(i, thread)] <- v[i] for the elements inside the row only.
template <int kThreads, int kPerThread>
__host__ __device__ inline void store_tile(float* row, int n, int thread,
                                           const float (&v)[kPerThread]) {
  (void)row;
  (void)n;
  (void)thread;
  (void)v;  // placeholder: writes nothing, so the poisoned output shows every element unwritten
}

// One thread's part of the row: what the kernel runs in every thread of the block. x_row and
// y_row are the block's row of x and of y, `thread` is threadIdx.x, `block` does the block
// reductions.
template <int kThreads, int kPerThread, class Block>
__host__ __device__ inline void fused_row(const float* x_row, float* y_row, int n, int thread,
                                          const Block& block) {
  float v[kPerThread];  // the thread's share of the row, in registers
  load_tile<kThreads>(x_row, n, thread, v);
  // TODO 4: the row max over the block, the exponentials and their sum over the block, then
  // scale by one reciprocal of the sum (one division per row, not one per element). Three or
  // four lines, calling thread_max, block.max, scale_exp, block.sum, scale.
  (void)block;
  store_tile<kThreads>(y_row, n, thread, v);
}

}  // namespace smr::lab
