// The row copy (row_copy.cu), an experiment beside the copy ceiling: host interface.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace smr::experiments {

// Copies an M x N matrix of `elem_bytes`-byte elements (4 or 2) row by row from x (row stride
// ld_x elements) to y (ld_y), leaving every element between a row's end and the next row's start
// untouched: the bytes a softmax of padded rows must move, with no arithmetic. One warp a row,
// one element a lane per access (consecutive lanes, consecutive elements: coalesced whatever the
// rows' offsets from 16-byte boundaries), the same code for dense and padded strides, so that
// the two times compare the layouts, not two kernels. An experiment (docs/performance.md, "Rows
// off 16-byte boundaries"), not a ceiling. Throws std::invalid_argument on a bad shape.
void row_copy(const void* x, void* y, std::int64_t M, std::int64_t N, std::int64_t ld_x,
              std::int64_t ld_y, int elem_bytes, cudaStream_t stream);

}  // namespace smr::experiments
