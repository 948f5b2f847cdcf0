// The row copy: row_copy.hpp says what it is for.
//
// Block of 256 threads (8 warps); warp w of the grid copies rows w, w + warps, ... Each lane reads
// kUnroll elements of its row (columns lane, lane + 32, ...) before it writes any, so a warp has
// kUnroll x 32 elements in flight a trip; a row longer than that takes several trips.
#include "experiments/row_copy.hpp"

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"

namespace smr::experiments {
namespace {

constexpr int kThreads = 256;
constexpr int kUnroll = 8;

template <class E>
__global__ void __launch_bounds__(kThreads)
row_copy_kernel(const E* __restrict__ x, E* __restrict__ y, std::int64_t M, std::int64_t N,
                std::int64_t ld_x, std::int64_t ld_y) {
  const int lane = threadIdx.x % 32;
  const std::int64_t warps = std::int64_t{gridDim.x} * (kThreads / 32);
  for (std::int64_t r = std::int64_t{blockIdx.x} * (kThreads / 32) + threadIdx.x / 32; r < M;
       r += warps) {
    const E* xr = x + r * ld_x;
    E* yr = y + r * ld_y;
    for (std::int64_t c0 = 0; c0 < N; c0 += 32 * kUnroll) {
      E v[kUnroll];
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t c = c0 + u * 32 + lane;
        if (c < N) v[u] = __ldg(xr + c);
      }
#pragma unroll
      for (int u = 0; u < kUnroll; ++u) {
        const std::int64_t c = c0 + u * 32 + lane;
        if (c < N) yr[c] = v[u];
      }
    }
  }
}

template <class E>
void launch(const void* x, void* y, std::int64_t M, std::int64_t N, std::int64_t ld_x,
            std::int64_t ld_y, cudaStream_t stream) {
  int device = 0, sms = 0, per_sm = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, row_copy_kernel<E>,
                                                           kThreads, 0));
  const std::int64_t blocks_needed = (M + kThreads / 32 - 1) / (kThreads / 32);
  const std::int64_t grid = std::min<std::int64_t>(blocks_needed, std::int64_t{sms} * per_sm);
  row_copy_kernel<E><<<static_cast<unsigned>(grid), kThreads, 0, stream>>>(
      static_cast<const E*>(x), static_cast<E*>(y), M, N, ld_x, ld_y);
  CUDA_CHECK(cudaGetLastError());
}

}  // namespace

void row_copy(const void* x, void* y, std::int64_t M, std::int64_t N, std::int64_t ld_x,
              std::int64_t ld_y, int elem_bytes, cudaStream_t stream) {
  if (M < 1 || N < 1 || ld_x < N || ld_y < N)
    throw std::invalid_argument("row_copy: M = " + std::to_string(M) + ", N = " +
                                std::to_string(N) + ", ld_x = " + std::to_string(ld_x) +
                                ", ld_y = " + std::to_string(ld_y) +
                                ": needs M, N >= 1 and strides >= N");
  if (elem_bytes == 4)
    launch<std::uint32_t>(x, y, M, N, ld_x, ld_y, stream);
  else if (elem_bytes == 2)
    launch<std::uint16_t>(x, y, M, N, ld_x, ld_y, stream);
  else
    throw std::invalid_argument("row_copy: elements of 4 or 2 bytes, not " +
                                std::to_string(elem_bytes));
}

}  // namespace smr::experiments
