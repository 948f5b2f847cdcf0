// Inputs and verification on the GPU: what the sweep uses for every record (verify.hpp's CPU
// reference stays, as the oracle the tests compare this with).
//
//   fill_input_device        x = make_input(p, seed, kind) rounded to p.dtype, written on the
//                            device in the storage format, row padding = kPaddingSentinel: bit for
//                            bit what to_storage(make_input(...), p.dtype) uploads
//   verify_output_device     every row of y against an fp64 reference computed on the device from
//                            the x on the device, with verify_output's rules (and, for fp16
//                            storage, verify_storage_output's); y's row padding must still be
//                            the poison
//   verify_copy_device       the copy ceiling: y == x bit for bit on every (row, column)
//
// The reduction is deterministic (fixed grid and summation order, independent of the card) and
// reports the first fault, lowest row then column, with the CPU checker's text. Every call
// synchronises `stream` and throws CudaError on a CUDA error.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

#include "harness/verify.hpp"
#include "core/problem.hpp"
#include "roofline/results.hpp"

namespace smr {

// x: p.M * p.ld_x elements of dtype_bytes(p.dtype) bytes. Asynchronous on `stream`.
void fill_input_device(void* x, const Problem& p, std::uint64_t seed, InputKind kind,
                       cudaStream_t stream);

// x, y: the device buffers (p.M * p.ld_x and p.M * p.ld_y elements of p.dtype). fp32 and bf16:
// verify_output(p, x, y, tolerance) on every row. fp16: verify_storage_output's rule with
// `tolerance` (the NaN pattern, the poison and the finite elements first, then every element's
// error against fp16's absolute floor). A write into y's row padding is a fault too (the text of
// check_padding_untouched). rows_checked = p.M. Throws std::invalid_argument for a bad problem.
VerifyResult verify_output_device(const Problem& p, const void* x, const void* y, double tolerance,
                                  cudaStream_t stream);

// verify_output_device with storage_tolerance(p.dtype) (harness/storage.hpp): what
// verify_storage_output does on the host.
VerifyResult verify_storage_output_device(const Problem& p, const void* x, const void* y,
                                          cudaStream_t stream);

// y == x bit for bit on every (row, column) (padding not compared). Detail on a difference:
// "row R: y differs from x", R the first such row.
VerifyResult verify_copy_device(const Problem& p, const void* x, const void* y,
                                cudaStream_t stream);

}  // namespace smr
