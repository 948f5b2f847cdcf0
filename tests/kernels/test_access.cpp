// Host-only checks of kernels/production/access.hpp: which access pattern a launch of the production softmax
// takes for given pointers and strides -- 16-byte accesses on aligned rows, through the rows'
// 16-byte windows, or one element at a time -- and how much room a row's window needs.
#include <cstdint>
#include <optional>
#include <string>

#include "catch.hpp"
#include "kernels/production/access.hpp"
#include "kernels/production/staged_span.hpp"

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

TEST_CASE("access: a register tile's path, with one element a lane past its vectors where the "
          "rows need it", "[access]") {
  const auto path = [](const void* x, std::int64_t ld_x, const void* y, std::int64_t ld_y, int b,
                       std::int64_t n, std::int64_t cap, std::int64_t lanes) {
    const std::optional<TilePath> p = tile_path(x, ld_x, y, ld_y, b, n, cap, lanes);
    return p ? std::to_string(static_cast<int>(p->access)) + (p->extra ? "+" : "") : "none";
  };
  const std::string aligned = std::to_string(static_cast<int>(Access::aligned));
  const std::string windowed = std::to_string(static_cast<int>(Access::windowed));
  const std::string scalar = std::to_string(static_cast<int>(Access::scalar));
  // Aligned rows: the vectors alone, no extra element; a longer row does not fit.
  CHECK(path(at(0), 1024, at(1 << 20), 1024, 2, 1024, 1024, 32) == aligned);
  CHECK(path(at(0), 1032, at(1 << 20), 1032, 2, 1025, 1024, 32) == "none");
  // bf16 rows off boundaries on a tile of 1024 and 32 lanes: a window that fits the vectors needs
  // no extra element (1017 + 7); 1023 (a window of up to 1030) and 1049 (1056) do; 1050 does not
  // fit windowed, and one element at a time (1050 <= 1056) it does, with the extra elements.
  CHECK(path(at(0), 1017, at(1 << 20), 1017, 2, 1017, 1024, 32) == windowed);
  CHECK(path(at(0), 1023, at(1 << 20), 1023, 2, 1023, 1024, 32) == windowed + "+");
  CHECK(path(at(0), 1049, at(1 << 20), 1049, 2, 1049, 1024, 32) == windowed + "+");
  CHECK(path(at(0), 1050, at(1 << 20), 1050, 2, 1050, 1024, 32) == scalar + "+");
  CHECK(path(at(0), 1057, at(1 << 20), 1057, 2, 1057, 1024, 32) == "none");
  // Too few lanes for the window's room: 1023 bf16 on 4 lanes (1030 > 1024 + 4), scalar.
  CHECK(path(at(0), 1023, at(1 << 20), 1023, 2, 1023, 1024, 4) == scalar);
  // Windows that do not line up: scalar, the extra element only past the vectors.
  CHECK(path(at(0), 1024, at(4), 1024, 4, 1000, 1024, 32) == scalar);
  CHECK(path(at(0), 1024, at(4), 1024, 4, 1030, 1024, 32) == scalar + "+");
}

TEST_CASE("access: warp_rows' staged span loads and stores whole vectors only where they may",
          "[access]") {
  // Every span a staged trip can see: V = 4 (fp32) and 8 (16-bit), every head h, short rows dense,
  // padded off and on 16-byte boundaries and far apart, one row to as many as fill 32 lanes x 8
  // vectors. A whole-vector load must lie inside the span (the window around it may leave x's
  // allocation), a whole-vector store must hold only outputs (no padding, nothing outside the
  // span), and on dense rows only the span's first and last vector may go element by element.
  int spans = 0;
  for (const int V : {4, 8}) {
    const int kSpan = 32 * 8 * V;
    for (int n = 1; n <= 80; ++n)
      for (const int ld : {n, n + 1, n + 3, n + V, n + V + 1, kSpan})
        for (int h = 0; h < V; ++h)
          for (int rows = 1; h + (rows - 1) * ld + n <= kSpan && rows <= 2048; ++rows) {
            const StagedSpan s{h, n, ld, rows, V};
            INFO("V = " << V << ", n = " << n << ", ld = " << ld << ", h = " << h << ", rows = "
                        << rows);
            REQUIRE(s.vectors() * V <= kSpan);
            int partial_stores = 0;
            bool bad_load = false, bad_store = false;
            for (int i = 0; i < s.vectors(); ++i) {
              for (int p = i * V; p < (i + 1) * V; ++p) {
                if (s.loads_whole(i) && (p < h || p >= s.end())) bad_load = true;
                if (s.stores_whole(i) && !s.is_output(p)) bad_store = true;
              }
              if (!s.stores_whole(i)) ++partial_stores;
            }
            CHECK_FALSE(bad_load);
            CHECK_FALSE(bad_store);
            if (ld == n) CHECK(partial_stores <= 2);
            ++spans;
          }
  }
  CHECK(spans > 10000);
  // The predicate can fail: a vector straddling a row's padding is not stored whole.
  const StagedSpan padded{0, 5, 8, 2, 4};  // row 0: [0, 5), padding [5, 8), row 1: [8, 13)
  CHECK(padded.stores_whole(0));
  CHECK_FALSE(padded.stores_whole(1));  // positions 4 ... 7: one output, three of padding
  CHECK_FALSE(padded.is_output(6));
  CHECK(padded.is_output(9));
}
