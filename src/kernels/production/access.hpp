// How a launch's threads reach a row-major x and y (host code, no CUDA headers: the launchers and
// the host-only tests both include it). A 16-byte access (LDG.128, STG.128, a TMA bulk copy) needs
// a 16-byte aligned address; a row h elements past a 16-byte boundary is reached through its
// *window*, the aligned address h elements before it (storage.cuh says how the kernels use it).
#pragma once

#include <cstdint>
#include <optional>

namespace smr::prod {

inline constexpr int kVecBytes = 16;

// Host side: does `p` lie on a 16-byte boundary?
inline bool on_vector_boundary(const void* p) {
  return reinterpret_cast<std::uintptr_t>(p) % kVecBytes == 0;
}

// Host side: does every row of (base, ld) start on a 16-byte boundary?
inline bool is_vector_aligned(const void* base, std::int64_t ld, int elem_bytes) {
  return on_vector_boundary(base) && (ld * elem_bytes) % kVecBytes == 0;
}

// Host side: do rows of n elements, ld_x and ld_y apart, lie whole inside 16-byte vectors of
// `vec_elems` elements -- n divides a vector and nothing lies between the rows (ld = n)? Then a
// matrix that starts on a boundary is vectors of vec_elems / n whole rows each (warp_rows' packed
// rows: the dispatch offers the plan, the launcher checks it, by this one test).
inline bool rows_pack_vectors(std::int64_t n, std::int64_t ld_x, std::int64_t ld_y,
                              std::int64_t vec_elems) {
  return n >= 1 && n <= vec_elems && vec_elems % n == 0 && ld_x == n && ld_y == n;
}

// Host side: does every row of y start as far past a 16-byte boundary as the same row of x? Then
// x's windows and y's windows line up, and the output can be stored 16 bytes at a time.
inline bool same_vector_offsets(const void* x, std::int64_t ld_x, const void* y, std::int64_t ld_y,
                                int elem_bytes) {
  return reinterpret_cast<std::uintptr_t>(x) % kVecBytes ==
             reinterpret_cast<std::uintptr_t>(y) % kVecBytes &&
         (ld_x * elem_bytes) % kVecBytes == (ld_y * elem_bytes) % kVecBytes;
}

// Host side: the most elements a row of (base, ld) can start past a 16-byte boundary: the room a
// tile or a shared-memory slice needs beyond N to hold the row's window.
inline std::int64_t max_row_head(const void* base, std::int64_t ld, int elem_bytes) {
  if ((ld * elem_bytes) % kVecBytes == 0)
    return static_cast<std::int64_t>((reinterpret_cast<std::uintptr_t>(base) % kVecBytes) /
                                     elem_bytes);
  return kVecBytes / elem_bytes - 1;
}

// How a launch's threads reach x and y: 16-byte accesses from rows that all start on 16-byte
// boundaries (the kernel is compiled knowing that every row's offset is 0: on the H200 the code
// that works the offset out at run time cost aligned rows time), 16-byte accesses through
// each row's window, or one element at a time. Each kernel is instantiated for the three.
enum class Access : int { aligned, windowed, scalar };

// Host side, what the rows allow: aligned when x's and y's rows all start on boundaries; windowed
// when their windows line up; else scalar.
inline Access row_access(const void* x, std::int64_t ld_x, const void* y, std::int64_t ld_y,
                         int elem_bytes) {
  if (is_vector_aligned(x, ld_x, elem_bytes) && is_vector_aligned(y, ld_y, elem_bytes))
    return Access::aligned;
  return same_vector_offsets(x, ld_x, y, ld_y, elem_bytes) ? Access::windowed : Access::scalar;
}

// Host side, the register tiles: row_access, except that windows need a tile of `capacity`
// elements to hold n elements of any row's window (else scalar).
inline Access tile_access(const void* x, std::int64_t ld_x, const void* y, std::int64_t ld_y,
                          int elem_bytes, std::int64_t n, std::int64_t capacity) {
  const Access a = row_access(x, ld_x, y, ld_y, elem_bytes);
  if (a == Access::windowed && n + max_row_head(x, ld_x, elem_bytes) > capacity)
    return Access::scalar;
  return a;
}

// How a register tile of `capacity` elements in its vectors and `lanes` lanes (or threads)
// reaches its rows (warp_rows, block_row): the access, and whether each lane holds one element
// past the vectors (row_tile.cuh) -- only where the rows' windows (or, one element at a time,
// the rows) are longer than the vectors, so that a row that fits them pays nothing for it. An
// aligned row has no window beyond N and no extra element. nullopt: the tile cannot hold the row.
struct TilePath {
  Access access;
  bool extra;
};
inline std::optional<TilePath> tile_path(const void* x, std::int64_t ld_x, const void* y,
                                         std::int64_t ld_y, int elem_bytes, std::int64_t n,
                                         std::int64_t capacity, std::int64_t lanes) {
  const Access a = row_access(x, ld_x, y, ld_y, elem_bytes);
  if (a == Access::aligned) {
    if (n <= capacity) return TilePath{a, false};
    return std::nullopt;
  }
  if (a == Access::windowed) {
    const std::int64_t window = n + max_row_head(x, ld_x, elem_bytes);
    if (window <= capacity + lanes) return TilePath{a, window > capacity};
  }
  if (n <= capacity + lanes) return TilePath{Access::scalar, n > capacity};
  return std::nullopt;
}

}  // namespace smr::prod
