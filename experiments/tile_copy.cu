// The tile copy: tile_copy.hpp says what it is for. The kernel is warp_rows_body (warp_rows.cu)
// with the statistics taken out: each group of G lanes loads its row into the tile and stores it
// again, multiplied by 1 (exact in every storage type).
#include "experiments/tile_copy.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>

#include "kernels/cuda_check.hpp"
#include "kernels/production/access.hpp"
#include "kernels/production/row_tile.cuh"

namespace smr::experiments {
namespace {

using prod::RowTile;
using prod::Vec;

constexpr int kThreads = 256;

template <class T, int G, int K, prod::Access A, bool kExtra>
__global__ void __launch_bounds__(kThreads, 4)
tile_copy_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t M, std::int64_t N,
                 std::int64_t ld_x, std::int64_t ld_y) {
  constexpr int W = prod::kGroupWidth<T, A>;
  constexpr bool kWindowed = prod::kWindowed<A>;
  constexpr int kRowsPerWarp = 32 / G;
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warp = (std::int64_t{blockIdx.x} * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * (blockDim.x / 32);
  for (std::int64_t first = warp * kRowsPerWarp; first < M; first += warps * kRowsPerWarp) {
    RowTile<T, K, kExtra> tile;
    const std::int64_t row = first + lane / G;
    if (row >= M) continue;
    prod::load_tile<W, G, kWindowed>(x + row * ld_x, N, lane % G, tile);
    prod::store_tile<W, G, kWindowed>(y + row * ld_y, N, lane % G, tile, 1.0f);
  }
}

// The tile's path as warp_rows' launcher finds it (access.hpp, tile_path), the scalar one refused:
// the copy is of the 16-byte accesses.
template <class T, int G, int K>
void launch(const void* x, void* y, std::int64_t M, std::int64_t N, std::int64_t ld_x,
            std::int64_t ld_y, cudaStream_t stream) {
  constexpr int C = G * K * Vec<T>::kElems;
  const std::optional<prod::TilePath> path =
      prod::tile_path(x, ld_x, y, ld_y, sizeof(T), N, C, G);
  if (!path || path->access == prod::Access::scalar)
    throw std::invalid_argument("tile_copy: rows of " + std::to_string(N) + " at ld_x = " +
                                std::to_string(ld_x) + ", ld_y = " + std::to_string(ld_y) +
                                " do not fit the tile of " + std::to_string(C) +
                                " through 16-byte windows");
  const std::int64_t rows_per_block = (kThreads / 32) * (32 / G);
  const auto grid = static_cast<unsigned>((M + rows_per_block - 1) / rows_per_block);
  prod::with_tile_path(*path, [&](auto a, auto extra) {
    tile_copy_kernel<T, G, K, decltype(a)::value, decltype(extra)::value>
        <<<grid, kThreads, 0, stream>>>(static_cast<const T*>(x), static_cast<T*>(y), M, N,
                                        ld_x, ld_y);
  });
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void tile_copy(const void* x, void* y, std::int64_t M, std::int64_t N, std::int64_t ld_x,
               std::int64_t ld_y, int elem_bytes, int capacity, cudaStream_t stream) {
  if (M < 1 || N < 1 || ld_x < N || ld_y < N)
    throw std::invalid_argument("tile_copy: M = " + std::to_string(M) + ", N = " +
                                std::to_string(N) + ": needs M, N >= 1 and strides >= N");
  // (The 16-bit tiles are bf16's: the copy moves bits, any 2-byte type would do.)
  if (elem_bytes == 4 && capacity == 128)
    return launch<float, 8, 4>(x, y, M, N, ld_x, ld_y, stream);
  if (elem_bytes == 4 && capacity == 1024)
    return launch<float, 32, 8>(x, y, M, N, ld_x, ld_y, stream);
  if (elem_bytes == 2 && capacity == 128)
    return launch<__nv_bfloat16, 8, 2>(x, y, M, N, ld_x, ld_y, stream);
  if (elem_bytes == 2 && capacity == 1024)
    return launch<__nv_bfloat16, 32, 4>(x, y, M, N, ld_x, ld_y, stream);
  throw std::invalid_argument("tile_copy: tiles of 128 or 1024 elements of 4 or 2 bytes, not " +
                              std::to_string(capacity) + " of " + std::to_string(elem_bytes));
}

}  // namespace smr::experiments
