// The tile copy (tile_copy.cu), an experiment beside the copy ceiling: host interface.
#pragma once

#include <cstdint>

#include <cuda_runtime_api.h>

namespace smr::experiments {

// Copies an M x N matrix of 4- or 2-byte elements through the production softmax's own memory
// path with none of its arithmetic: warp_rows' register tile of `capacity` elements (128: 8 lanes
// a row, fp32 4 and 16-bit 2 vectors a lane; 1024: 32 lanes, 8 and 4 vectors), loaded and stored
// by row_tile.cuh's load_tile and store_tile -- 16-byte vectors, each row's partial first and last
// vector element by element through its window, the extra element a lane where the window
// overflows the vectors. What a row off 16-byte boundaries or a padded row costs the softmax's
// accesses themselves (docs/performance.md, "Rows off 16-byte boundaries"). x's and y's rows must
// lie equally far past 16-byte boundaries and fit the tile (N + 7 <= capacity + lanes, or
// aligned N <= capacity); else std::invalid_argument.
void tile_copy(const void* x, void* y, std::int64_t M, std::int64_t N, std::int64_t ld_x,
               std::int64_t ld_y, int elem_bytes, int capacity, cudaStream_t stream);

}  // namespace smr::experiments
