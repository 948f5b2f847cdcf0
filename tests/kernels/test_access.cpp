// Host-only checks of kernels/production/access.hpp: which access pattern a launch of the production softmax
// takes for given pointers and strides -- 16-byte accesses on aligned rows, through the rows'
// 16-byte windows, or one element at a time -- and how much room a row's window needs.
#include <cstdint>

#include "catch.hpp"
#include "kernels/production/access.hpp"

using namespace smr::prod;

namespace {

// A device-like address: 256-byte aligned, as cudaMalloc returns, plus `bytes`.
const void* at(std::uintptr_t bytes) {
  return reinterpret_cast<const void*>(std::uintptr_t{0x7f0000000000u} + bytes);
}

}  // namespace

TEST_CASE("access: rows on 16-byte boundaries, and how far off them a row can start", "[access]") {
  CHECK(is_vector_aligned(at(0), 1024, 4));
  CHECK(is_vector_aligned(at(0), 8, 2));
  CHECK_FALSE(is_vector_aligned(at(0), 1001, 4));  // rows 1, 2, 3 start 1, 2, 3 elements off
  CHECK_FALSE(is_vector_aligned(at(4), 1024, 4));  // every row one element off
  // The room a window needs beyond N: the base's offset when the stride is whole vectors, else
  // up to V - 1 elements (3 fp32, 7 bf16/fp16).
  CHECK(max_row_head(at(0), 1024, 4) == 0);
  CHECK(max_row_head(at(8), 1024, 4) == 2);
  CHECK(max_row_head(at(0), 1001, 4) == 3);
  CHECK(max_row_head(at(0), 50257, 2) == 7);
  CHECK(max_row_head(at(6), 16, 2) == 3);
}

TEST_CASE("access: x's and y's windows line up only with the same offsets row by row", "[access]") {
  CHECK(same_vector_offsets(at(0), 1001, at(4096), 1001, 4));
  // Both one element off, strides whole vectors:
  CHECK(same_vector_offsets(at(4), 1024, at(4100), 1028, 4));
  CHECK_FALSE(same_vector_offsets(at(0), 1001, at(0), 1002, 4));  // row 1: 1 and 2 elements off
  CHECK_FALSE(same_vector_offsets(at(4), 1024, at(0), 1024, 4));
  CHECK_FALSE(same_vector_offsets(at(2), 64, at(4), 64, 2));
}

TEST_CASE("access: what the rows allow, before any tile's room", "[access]") {
  CHECK(row_access(at(0), 1024, at(1 << 20), 1024, 4) == Access::aligned);
  CHECK(row_access(at(0), 1001, at(1 << 20), 1001, 4) == Access::windowed);
  CHECK(row_access(at(4), 1024, at(4), 1024, 4) == Access::windowed);
  CHECK(row_access(at(0), 1024, at(4), 1024, 4) == Access::scalar);
  CHECK(row_access(at(0), 1001, at(0), 1002, 2) == Access::scalar);
}

TEST_CASE("access: which path a register tile takes", "[access]") {
  // Aligned rows: the aligned instantiation, whatever the tile's room.
  CHECK(tile_access(at(0), 1024, at(1 << 20), 1024, 4, 1024, 1024) == Access::aligned);
  // ld = N = 1001 fp32 on a tile of 1024: windows, 1001 + 3 <= 1024.
  CHECK(tile_access(at(0), 1001, at(1 << 20), 1001, 4, 1001, 1024) == Access::windowed);
  // The same rows on a tile with no room for the window: one element at a time.
  CHECK(tile_access(at(0), 1023, at(1 << 20), 1023, 4, 1023, 1024) == Access::scalar);
  CHECK(tile_access(at(0), 1021, at(1 << 20), 1021, 4, 1021, 1024) == Access::windowed);
  // x aligned, y not (or the other way round): the windows do not line up.
  CHECK(tile_access(at(0), 1024, at(4), 1024, 4, 1000, 1024) == Access::scalar);
  CHECK(tile_access(at(0), 1001, at(0), 1002, 4, 1000, 1024) == Access::scalar);
  // Both bases one element off, strides whole vectors: windows of one element of room.
  CHECK(tile_access(at(4), 1024, at(4), 1024, 4, 1000, 1001) == Access::windowed);
  CHECK(tile_access(at(4), 1024, at(4), 1024, 4, 1001, 1001) == Access::scalar);
  // bf16, ld = N = 50257 on 32768-element slices: room for the 7 elements of a window.
  CHECK(tile_access(at(0), 50257, at(0), 50257, 2, 25132, 32768) == Access::windowed);
}
