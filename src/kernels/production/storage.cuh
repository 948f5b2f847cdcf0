// Storage types of the production softmax (device code; include from .cu files).
//
// x and y are fp32, bf16 or fp16 in memory; every kernel computes in fp32. A thread moves data
// 16 bytes at a time -- one LDG.E.128 / STG.E.128 / LDS.128 instruction -- as a Vec<T>: 4 fp32
// or 8 bf16/fp16 elements, widened to fp32 (a shift for bf16, HADD2.F32 for fp16) where they are
// used: the register tiles (row_tile.cuh) widen as they load, the shared-memory slices
// (row_slice.cuh) keep the storage type in shared memory and widen on each read.
//
// A 16-byte access needs a 16-byte aligned address. A row that starts h elements past a 16-byte
// boundary (ld = 50257 fp32: h = 0, 1, 2, 3 from row to row) is read and written through its
// *window*: the aligned address h elements before the row's start, from which whole vectors are
// 16-byte accesses and only the elements of the first and last, partial vectors go one at a time
// (row_head gives h). That needs y's rows to start h elements past a boundary too
// (same_vector_offsets) and room for h more elements in the tile or shared memory; the launchers
// test both at run time (access.hpp) and launch the kernel's instantiation for the pattern they
// found: aligned (h = 0 for every row, known at compile time), windowed, or scalar (one-element
// accesses, W = 1 below).
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <type_traits>

#include "kernels/production/access.hpp"
#include "core/problem.hpp"

namespace smr::prod {


template <class T>
struct alignas(kVecBytes) Vec {
  static constexpr int kElems = kVecBytes / static_cast<int>(sizeof(T));
  T e[kElems];
};

__device__ __forceinline__ float to_float(float v) { return v; }
__device__ __forceinline__ float to_float(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_float(__half v) { return __half2float(v); }

// Round to nearest even, as the host-side conversions in harness/storage.hpp.
template <class T> __device__ __forceinline__ T from_float(float v);
template <> __device__ __forceinline__ float from_float<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half from_float<__half>(float v) {
  return __float2half_rn(v);
}

// The masked-lane sentinel in the storage type: -inf is exact in all three.
template <class T> __device__ __forceinline__ T storage_neg_inf() { return from_float<T>(-INFINITY); }

// One 16-byte load through the read-only path, one 16-byte store.
template <class T>
__device__ __forceinline__ Vec<T> load_vec(const T* p) {
  const uint4 raw = __ldg(reinterpret_cast<const uint4*>(p));
  Vec<T> v;
  static_assert(sizeof(v) == sizeof(raw));
  __builtin_memcpy(&v, &raw, sizeof(v));
  return v;
}
// (Through the __stwb intrinsic, not a plain assignment: where a kernel has both a 16-byte and an
// element-wise store of the same values, the optimiser may legally merge the two branches into
// the element-wise one -- it did in write_slice -- and the 16-byte store is gone from the SASS.)
template <class T>
__device__ __forceinline__ void store_vec(T* p, const Vec<T>& v) {
  uint4 raw;
  __builtin_memcpy(&raw, &v, sizeof(raw));
  __stwb(reinterpret_cast<uint4*>(p), raw);
}
// The streaming store (st.global.cs): y is never re-read, so its lines may leave L2 first. Used
// where L2 holds something worth keeping (split_row's second read of x).
template <class T>
__device__ __forceinline__ void store_vec_streaming(T* p, const Vec<T>& v) {
  uint4 raw;
  __builtin_memcpy(&raw, &v, sizeof(raw));
  __stcs(reinterpret_cast<uint4*>(p), raw);
}

__device__ __forceinline__ float load_one(const float* p) { return __ldg(p); }
__device__ __forceinline__ float load_one(const __nv_bfloat16* p) { return to_float(__ldg(p)); }
__device__ __forceinline__ float load_one(const __half* p) { return to_float(__ldg(p)); }

// The elements `p` lies past the 16-byte boundary below it: its window starts at p - row_head(p).
template <class T>
__device__ __forceinline__ int row_head(const T* p) {
  return static_cast<int>((reinterpret_cast<std::uintptr_t>(p) % kVecBytes) / sizeof(T));
}

// Calls f(std::integral_constant<Access, a>{}): the one switch from a launch's run-time Access to
// the kernel instantiated for it (each its own kernel, so that ptxas allocates registers for one
// access pattern at a time).
template <class F>
void with_access(Access a, F&& f) {
  switch (a) {
    case Access::aligned: f(std::integral_constant<Access, Access::aligned>{}); return;
    case Access::windowed: f(std::integral_constant<Access, Access::windowed>{}); return;
    case Access::scalar: f(std::integral_constant<Access, Access::scalar>{}); return;
  }
}
// What the tile functions take for an Access: the group width W (row_tile.cuh) and whether the
// rows may start off a boundary.
template <class T, Access A>
inline constexpr int kGroupWidth = A == Access::scalar ? 1 : Vec<T>::kElems;
template <Access A>
inline constexpr bool kWindowed = A == Access::windowed;

// Calls f(std::integral_constant<Access, a>{}, std::bool_constant<extra>{}) for a register tile's
// path (access.hpp, tile_path): with_access, and the extra element a lane where the rows need it
// (never on aligned rows: five instantiations a tile, not six).
template <class F>
void with_tile_path(TilePath path, F&& f) {
  with_access(path.access, [&](auto a) {
    if constexpr (decltype(a)::value == Access::aligned)
      f(a, std::false_type{});
    else if (path.extra)
      f(a, std::true_type{});
    else
      f(a, std::false_type{});
  });
}

// Calls f(T{}) with the storage type of `t`: the one switch from the run-time dtype to a type.
template <class F>
void with_storage(DType t, F&& f) {
  switch (t) {
    case DType::f32: f(float{}); return;
    case DType::bf16: f(__nv_bfloat16{}); return;
    case DType::f16: f(__half{}); return;
  }
  throw std::invalid_argument("with_storage: unknown dtype");
}

}  // namespace smr::prod
