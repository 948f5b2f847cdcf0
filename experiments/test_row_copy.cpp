// GPU tests of the row copy (row_copy.cu) and the tile copy (tile_copy.cu): every row copied and
// nothing else written, at dense and padded strides, 4- and 2-byte elements; bad shapes refused.
// Hidden ("[.padded-copy]"), printed, not asserted (docs/performance.md, "Rows off 16-byte
// boundaries"), each timing alternating with the copy ceiling's kernel on the same M x N elements,
// medians of 15 after 3 warm-ups:
//   - the tile copy (the softmax's own accesses) at ld = N, on rows of N - 1 at ld = N - 1 (off
//     boundaries, every byte written) and at ld = N + 3 (padded), N = 128 and 1024;
//   - at configs/padded-rows.yaml's shapes, the row copy at ld = N, at ld = N + 3 (x, y or both
//     padded; and rows of N + 3 at that stride, dense), and cudaMemcpy2DAsync at ld = N and N + 3.
// The executable skips visibly (exit 77) without a GPU.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <vector>

#include <cuda_runtime_api.h>

#include "catch.hpp"
#include "experiments/row_copy.hpp"
#include "experiments/tile_copy.hpp"
#include "harness/device.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/cuda_check.hpp"
#include "tests/kernels/copy_checks.hpp"

namespace {

using namespace smr;

// One matrix's bytes in a buffer of M rows of ld elements.
std::size_t matrix_bytes(std::int64_t M, std::int64_t ld, int elem_bytes) {
  return static_cast<std::size_t>(M * ld * elem_bytes);
}

// M x ld elements of small whole numbers (exact in fp32 and bf16: the tile copy converts to fp32
// and back), as bytes.
std::vector<unsigned char> whole_numbers(std::int64_t M, std::int64_t ld, int elem_bytes) {
  std::vector<unsigned char> v(matrix_bytes(M, ld, elem_bytes));
  for (std::int64_t i = 0; i < M * ld; ++i) {
    const float f = static_cast<float>((i * 7) % 200 + 1);
    unsigned int bits;
    std::memcpy(&bits, &f, 4);
    if (elem_bytes == 2) bits >>= 16;  // bf16: the top half (whole numbers <= 256 are exact)
    std::memcpy(v.data() + i * elem_bytes, &bits, static_cast<std::size_t>(elem_bytes));
  }
  return v;
}

// Copies src's M rows into a poisoned y of stride ld_y through `copy` and counts the bytes of
// the rows that differ and of the padding that changed.
template <class Copy>
std::pair<std::int64_t, std::int64_t> copy_and_check(const std::vector<unsigned char>& src,
                                                     std::int64_t M, std::int64_t N,
                                                     std::int64_t ld_x, std::int64_t ld_y, int eb,
                                                     Copy&& copy) {
  const std::size_t yb = matrix_bytes(M, ld_y, eb);
  DeviceBuffer dx(src.size()), dy(yb);
  CUDA_CHECK(cudaMemcpy(dx.get(), src.data(), src.size(), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemset(dy.get(), kPoisonByte, yb));
  copy(dx.get(), dy.get());
  CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<unsigned char> out(yb);
  CUDA_CHECK(cudaMemcpy(out.data(), dy.get(), yb, cudaMemcpyDeviceToHost));
  std::int64_t wrong = 0, touched = 0;
  for (std::int64_t r = 0; r < M; ++r)
    for (std::int64_t c = 0; c < ld_y; ++c)
      for (int b = 0; b < eb; ++b) {
        const unsigned char got = out[static_cast<std::size_t>((r * ld_y + c) * eb + b)];
        if (c < N)
          wrong += got != src[static_cast<std::size_t>((r * ld_x + c) * eb + b)];
        else
          touched += got != kPoisonByte;
      }
  return {wrong, touched};
}

}  // namespace

TEST_CASE("row copy: every row copied, its padding untouched", "[gpu][experiments]") {
  struct Shape {
    std::int64_t M, N, ld_x, ld_y;
  };
  const Shape shapes[] = {{5, 1, 1, 1},     {3, 33, 36, 33},  {7, 128, 131, 131},
                          {4, 4097, 4100, 4097}, {2, 31, 31, 34}, {9, 300, 300, 300}};
  for (const int eb : {4, 2})
    for (const Shape& s : shapes) {
      INFO("elem_bytes " << eb << ", M " << s.M << ", N " << s.N << ", ld_x " << s.ld_x
                         << ", ld_y " << s.ld_y);
      const auto [wrong, touched] = copy_and_check(
          test::patterned_bytes(matrix_bytes(s.M, s.ld_x, eb)), s.M, s.N, s.ld_x, s.ld_y, eb,
          [&](void* x, void* y) {
            experiments::row_copy(x, y, s.M, s.N, s.ld_x, s.ld_y, eb, nullptr);
          });
      CHECK(wrong == 0);
      CHECK(touched == 0);
    }
  DeviceBuffer d(64);
  CHECK_THROWS_AS(experiments::row_copy(d.get(), d.get(), 2, 8, 7, 8, 4, nullptr),
                  std::invalid_argument);
  CHECK_THROWS_AS(experiments::row_copy(d.get(), d.get(), 1, 8, 8, 8, 8, nullptr),
                  std::invalid_argument);
}

TEST_CASE("tile copy: every row copied through the softmax's tiles, its padding untouched",
          "[gpu][experiments]") {
  struct Shape {
    int capacity;
    std::int64_t M, N, ld;
  };
  // Aligned, dense rows off boundaries (every offset), padded rows, a row past the vectors.
  const Shape shapes[] = {{128, 37, 128, 128},   {128, 37, 127, 127},   {128, 37, 128, 131},
                          {128, 9, 100, 103},    {128, 9, 129, 129},    {1024, 9, 1024, 1024},
                          {1024, 9, 1023, 1023}, {1024, 9, 1024, 1027}, {1024, 9, 1025, 1025}};
  for (const int eb : {4, 2})
    for (const Shape& s : shapes) {
      INFO("elem_bytes " << eb << ", tile " << s.capacity << ", M " << s.M << ", N " << s.N
                         << ", ld " << s.ld);
      const auto [wrong, touched] = copy_and_check(
          whole_numbers(s.M, s.ld, eb), s.M, s.N, s.ld, s.ld, eb, [&](void* x, void* y) {
            experiments::tile_copy(x, y, s.M, s.N, s.ld, s.ld, eb, s.capacity, nullptr);
          });
      CHECK(wrong == 0);
      CHECK(touched == 0);
    }
  // Refused: windows that do not line up (the softmax's scalar path), a row the tile cannot hold.
  DeviceBuffer d(1 << 16);
  CHECK_THROWS_AS(experiments::tile_copy(d.get(), d.get(), 2, 100, 103, 100, 4, 128, nullptr),
                  std::invalid_argument);
  CHECK_THROWS_AS(experiments::tile_copy(d.get(), d.get(), 2, 200, 200, 200, 4, 128, nullptr),
                  std::invalid_argument);
}

TEST_CASE("tile copy: rows off boundaries and padded rows against the copy ceiling",
          "[.padded-copy][gpu][experiments]") {
  constexpr int kReps = 15;
  CudaStream s;
  std::printf("\ntile copy (the softmax's warp_rows tiles, no arithmetic), M x N = 2^27, median of "
              "%d, each alternating with the copy ceiling's kernel on the same bytes\n", kReps);
  for (const int eb : {4, 2})
    for (const int n : {128, 1024}) {
      struct Layout {
        const char* name;
        std::int64_t N, ld;
      };
      const Layout layouts[] = {{"ld = N", n, n}, {"N - 1 at ld = N - 1", n - 1, n - 1},
                                {"ld = N + 3", n, n + 3}};
      for (const Layout& l : layouts) {
        const std::int64_t M = (std::int64_t{1} << 27) / l.N;
        const std::size_t moved = matrix_bytes(M, l.N, eb);
        const double gb = 2.0 * static_cast<double>(moved) / 1e9;
        DeviceBuffer x(matrix_bytes(M, l.ld, eb)), y(matrix_bytes(M, l.ld, eb));
        CUDA_CHECK(cudaMemset(x.get(), 1, x.bytes()));
        const auto ceiling = [&] { ceilings::copy_bytes(x.get(), y.get(), moved, s.get()); };
        const auto tile = [&] {
          experiments::tile_copy(x.get(), y.get(), M, l.N, l.ld, l.ld, eb, n, s.get());
        };
        const test::Alternated t = test::time_alternately(s, ceiling, tile, 3, kReps);
        const double copy_gbps = gb / test::median_of(t.a);
        const TimeStats st = summarize(t.b, 1, false);
        std::printf("  %d-byte tile %4d M = %7lld N = %4lld  %-20s %6.0f GB/s, %5.1f%% of the "
                    "copy kernel's %4.0f (min %.0f, max %.0f)\n",
                    eb, n, static_cast<long long>(M), static_cast<long long>(l.N), l.name,
                    gb / st.median_s, 100.0 * gb / st.median_s / copy_gbps, copy_gbps,
                    gb / st.max_s, gb / st.min_s);
        std::fflush(stdout);
      }
    }
}

TEST_CASE("row copy: padded rows against dense ones and the copy ceiling",
          "[.padded-copy][gpu][experiments]") {
  struct Shape {
    std::int64_t M, N;
  };
  // configs/padded-rows.yaml's shapes and pad.
  const Shape shapes[] = {{1048576, 128}, {131072, 1024}, {32768, 4096},
                          {4096, 32768},  {2048, 65536},  {512, 262144}};
  constexpr std::int64_t kPad = 3;
  constexpr int kReps = 15;
  CudaStream s;
  std::printf("\nrow copy, M rows read and written (GB/s counts 2 x M x the row's bytes), "
              "median of %d, each alternating with the copy ceiling's kernel on the same bytes; "
              "padded: ld = N + %lld\n", kReps, static_cast<long long>(kPad));
  for (const int eb : {4, 2})
    for (const Shape& sh : shapes) {
      const std::int64_t ld = sh.N + kPad;
      const std::size_t moved = matrix_bytes(sh.M, sh.N, eb);
      const double gb = 2.0 * static_cast<double>(moved) / 1e9;  // read + written
      DeviceBuffer x(matrix_bytes(sh.M, ld, eb)), y(matrix_bytes(sh.M, ld, eb));
      CUDA_CHECK(cudaMemset(x.get(), 1, x.bytes()));
      const auto ceiling = [&] { ceilings::copy_bytes(x.get(), y.get(), moved, s.get()); };
      struct Op {
        const char* name;
        std::int64_t row_elems;  // the elements a row it moves (GB/s counts them)
        std::function<void()> run;
      };
      const std::size_t row = static_cast<std::size_t>(sh.N * eb);
      const std::size_t pitch = static_cast<std::size_t>(ld * eb);
      // The row copy at ld = N (rows on 16-byte boundaries), at ld = N + pad with rows of N + pad
      // (dense: the padded rows' offsets, every byte written), padded on one side only, padded on
      // both; cudaMemcpy2DAsync dense and padded. Index 4: the padded copy checked below.
      const Op ops[] = {
          {"row copy, ld = N", sh.N, [&] {
             experiments::row_copy(x.get(), y.get(), sh.M, sh.N, sh.N, sh.N, eb, s.get());
           }},
          {"row copy, N + pad at ld = N + pad", ld, [&] {
             experiments::row_copy(x.get(), y.get(), sh.M, ld, ld, ld, eb, s.get());
           }},
          {"row copy, x padded, y at ld = N", sh.N, [&] {
             experiments::row_copy(x.get(), y.get(), sh.M, sh.N, ld, sh.N, eb, s.get());
           }},
          {"row copy, x at ld = N, y padded", sh.N, [&] {
             experiments::row_copy(x.get(), y.get(), sh.M, sh.N, sh.N, ld, eb, s.get());
           }},
          {"row copy, ld = N + pad", sh.N, [&] {
             experiments::row_copy(x.get(), y.get(), sh.M, sh.N, ld, ld, eb, s.get());
           }},
          {"cudaMemcpy2DAsync, ld = N", sh.N, [&] {
             CUDA_CHECK(cudaMemcpy2DAsync(y.get(), row, x.get(), row, row,
                                          static_cast<std::size_t>(sh.M),
                                          cudaMemcpyDeviceToDevice, s.get()));
           }},
          {"cudaMemcpy2DAsync, ld = N + pad", sh.N, [&] {
             CUDA_CHECK(cudaMemcpy2DAsync(y.get(), pitch, x.get(), pitch, row,
                                          static_cast<std::size_t>(sh.M),
                                          cudaMemcpyDeviceToDevice, s.get()));
           }},
      };
      for (const Op& op : ops) {
        const test::Alternated t = test::time_alternately(s, ceiling, op.run, 3, kReps);
        const double copy_gbps = gb / test::median_of(t.a);
        const double op_gb = gb * static_cast<double>(op.row_elems) / static_cast<double>(sh.N);
        const TimeStats st = summarize(t.b, 1, false);
        std::printf("  %d-byte M = %7lld N = %6lld  %-36s %6.0f GB/s, %5.1f%% of the copy "
                    "kernel's %4.0f (min %.0f, max %.0f)\n",
                    eb, static_cast<long long>(sh.M), static_cast<long long>(sh.N), op.name,
                    op_gb / st.median_s, 100.0 * op_gb / st.median_s / copy_gbps, copy_gbps,
                    op_gb / st.max_s, op_gb / st.min_s);
        std::fflush(stdout);
      }
      // The padded row copy (ops[4]) puts the rows where they belong (row 0 and the last row
      // read back: x is all ones).
      CUDA_CHECK(cudaMemsetAsync(y.get(), 0, y.bytes(), s.get()));
      ops[4].run();
      s.sync();
      std::vector<unsigned char> first(row), last(row);
      CUDA_CHECK(cudaMemcpy(first.data(), y.get(), row, cudaMemcpyDeviceToHost));
      CUDA_CHECK(cudaMemcpy(last.data(), y.as<unsigned char>() + (sh.M - 1) * ld * eb, row,
                            cudaMemcpyDeviceToHost));
      CHECK(std::count(first.begin(), first.end(), 1) == static_cast<std::ptrdiff_t>(row));
      CHECK(std::count(last.begin(), last.end(), 1) == static_cast<std::ptrdiff_t>(row));
    }
}
