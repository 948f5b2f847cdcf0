// A slice of a row held in shared memory by one block (device code): the part cluster_row.cu and
// split_row.cu share.
//
// Loading. Thread 0 hands the slice's whole 16-byte vectors to the copy engine (TMA bulk copy,
// cp.async.bulk.shared::cluster.global through libcu++'s cuda::device::memcpy_async_tx) in
// kSliceChunks chunks, each completing on its own barrier (an mbarrier that counts the bytes
// that landed); every thread then waits for chunk 0, works on it while chunks 1.. are still in
// flight, waits for chunk 1, and so on. One instruction moves up to a quarter of the slice: the
// bytes in flight do not depend on how many loads the threads can issue, and no register holds
// them. What the copy engine cannot take -- the slice's last partial vector, or everything when
// the row is not 16-byte aligned -- the threads copy element by element.
//
// Working. The statistics read the slice from shared memory 16 bytes at a time (LDS.128), one
// (max, sum) merge per vector; the output pass reads it again, computes exp(x - max) / sum and
// stores 16-byte vectors (or single elements when y is not aligned).
//
// Ordering. The barriers are initialised once per block (init + fence.proxy.async, so that the
// copy engine sees them initialised). A block that reuses its shared memory for another slice
// (split_row, chunk by chunk) must __syncthreads() after its last read of a chunk, and thread 0
// issues a proxy fence before that chunk's next copy: the copy engine's writes are ordered after
// the threads' reads.
#pragma once

#include <cuda/barrier>
#include <cuda/ptx>
#include <cuda_runtime.h>

#include <cstdint>

#include "kernels/cuda_check.hpp"
#include "kernels/row_stats.cuh"
#include "kernels/storage.cuh"

namespace smr::prod {

inline constexpr int kSliceChunks = 4;
using BlockBarrier = cuda::barrier<cuda::thread_scope_block>;

// The chunks' barriers and the phase the block's current slice completes (0 for its first slice,
// then 1, 0, ...: each slice is one phase of every chunk's barrier). Waiting on a phase's parity
// instead of an arrival token keeps no token in registers between a copy's issue and its wait.
struct SliceBarriers {
  BlockBarrier* bars;   // kSliceChunks barriers in shared memory
  bool parity = false;  // of the phase the next slice_stats waits for
};

// Once per block, before any copy: every thread of the block arrives on every chunk's barrier.
__device__ __forceinline__ void init_slice_barriers(BlockBarrier* bars) {
  if (threadIdx.x == 0) {
#pragma unroll
    for (int c = 0; c < kSliceChunks; ++c) init(&bars[c], blockDim.x);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // make the init visible to the copy engine
  }
  __syncthreads();
}

// Vectors [begin, end) of chunk c: chunks of `per` vectors, cut at `vecs`. A kernel that reuses
// its shared memory for slices of different lengths (split_row) keeps one `per` for all of them,
// so that chunk c of any slice lies in the same bytes.
struct VecRange {
  std::int64_t begin, end;
};
__device__ __forceinline__ VecRange chunk_range(int c, std::int64_t vecs, std::int64_t per) {
  const std::int64_t b = c * per < vecs ? c * per : vecs;
  const std::int64_t e = b + per < vecs ? b + per : vecs;
  return VecRange{b, e};
}
__device__ __forceinline__ std::int64_t chunk_vecs(std::int64_t vecs) {
  return (vecs + kSliceChunks - 1) / kSliceChunks;
}

// Thread 0 hands chunk r of src to the copy engine (into the same place of s) and arrives on its
// barrier expecting those bytes; every other thread just arrives. Every thread of the block must
// call it, once per chunk per slice. Thread 0's proxy fence orders the block's earlier reads of
// these bytes (a previous slice, after a __syncthreads) before the copy engine's writes.
template <class T>
__device__ __forceinline__ void issue_chunk_copy(T* s, const T* src, VecRange r, BlockBarrier& bar) {
  constexpr int V = Vec<T>::kElems;
  const auto bytes = static_cast<std::uint32_t>((r.end - r.begin) * kVecBytes);
  if (threadIdx.x == 0 && bytes > 0) {
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    cuda::device::memcpy_async_tx(s + r.begin * V, src + r.begin * V,
                                  cuda::aligned_size_t<kVecBytes>(bytes), bar);
    (void)cuda::device::barrier_arrive_tx(bar, 1, bytes);
  } else {
    (void)bar.arrive();
  }
}

// What the copy engine does not take, s[from, n) (the last partial vector, or the whole slice
// when the row is not 16-byte aligned), copied by the threads; visible to the block after the
// next __syncthreads (slice_stats has one).
template <class T>
__device__ __forceinline__ void copy_slice_tail(T* s, const T* src, std::int64_t from,
                                                std::int64_t n) {
  for (std::int64_t j = from + threadIdx.x; j < n; j += blockDim.x) s[j] = __ldg(src + j);
}

// Starts copying src[0, n) into s[0, n). Returns the number of whole vectors the copy engine
// brings (the rest, from that many vectors on, is copied by the threads before this returns, and
// becomes visible to the block at slice_stats' barrier). Every thread of the block must call it.
template <class T>
__device__ __forceinline__ std::int64_t issue_slice_copy(T* s, const T* src, std::int64_t n,
                                                         bool x_vec, SliceBarriers& sb) {
  constexpr int V = Vec<T>::kElems;
  const std::int64_t tma_vecs = x_vec ? n / V : 0;
#pragma unroll
  for (int c = 0; c < kSliceChunks; ++c)
    issue_chunk_copy(s, src, chunk_range(c, tma_vecs, chunk_vecs(tma_vecs)), sb.bars[c]);
  copy_slice_tail(s, src, tma_vecs * V, n);
  return tma_vecs;
}

// (max, sum) of this thread's vectors [begin, end) of a shared-memory slice (stride: the block).
template <class T>
__device__ __forceinline__ RowStats smem_vec_stats(const T* s, std::int64_t begin, std::int64_t end,
                                                   RowStats st) {
  constexpr int V = Vec<T>::kElems;
  const Vec<T>* sv = reinterpret_cast<const Vec<T>*>(s);
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const Vec<T> v = sv[i];
    float f[V];
#pragma unroll
    for (int e = 0; e < V; ++e) f[e] = to_float(v.e[e]);
    st = merge(st, stats_of(f));
  }
  return st;
}

// This thread's (max, sum) over the whole slice s[0, n): waits for each chunk in turn (chunks of
// `per` vectors), then (after a block barrier) takes what the threads copied. Every thread of the
// block must call it.
template <class T>
__device__ __forceinline__ RowStats slice_stats(const T* s, std::int64_t n, std::int64_t tma_vecs,
                                                std::int64_t per, SliceBarriers& sb) {
  constexpr int V = Vec<T>::kElems;
  RowStats st = empty_stats();
#pragma unroll
  for (int c = 0; c < kSliceChunks; ++c) {
    sb.bars[c].wait_parity(sb.parity);
    const VecRange r = chunk_range(c, tma_vecs, per);
    st = smem_vec_stats(s, r.begin, r.end, st);
  }
  sb.parity = !sb.parity;
  __syncthreads();  // the element-wise copies of every thread are in shared memory
  st = smem_vec_stats(s, tma_vecs, n / V, st);
  for (std::int64_t j = n / V * V + threadIdx.x; j < n; j += blockDim.x) {
    const float f[1] = {to_float(s[j])};
    st = merge(st, stats_of(f));
  }
  return st;
}
template <class T>
__device__ __forceinline__ RowStats slice_stats(const T* s, std::int64_t n, std::int64_t tma_vecs,
                                                SliceBarriers& sb) {
  return slice_stats(s, n, tma_vecs, chunk_vecs(tma_vecs), sb);
}

// y = softmax of the slice's vectors [begin, end) (of s, written to dst): 16-byte stores when
// y_vec.
template <class T>
__device__ __forceinline__ void write_slice_vecs(const T* s, T* dst, std::int64_t begin,
                                                 std::int64_t end, bool y_vec, RowScale r) {
  constexpr int V = Vec<T>::kElems;
  const Vec<T>* sv = reinterpret_cast<const Vec<T>*>(s);
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
    const Vec<T> v = sv[i];
    Vec<T> out;
#pragma unroll
    for (int e = 0; e < V; ++e) out.e[e] = from_float<T>(softmax_value(to_float(v.e[e]), r));
    if (y_vec) {
      store_vec(dst + i * V, out);
    } else {
#pragma unroll
      for (int e = 0; e < V; ++e) dst[i * V + e] = out.e[e];
    }
  }
}

// y = softmax of the slice's last partial vector, s[n / V * V, n), element by element.
template <class T>
__device__ __forceinline__ void write_slice_tail(const T* s, T* dst, std::int64_t n, RowScale r) {
  constexpr int V = Vec<T>::kElems;
  for (std::int64_t j = n / V * V + threadIdx.x; j < n; j += blockDim.x)
    dst[j] = from_float<T>(softmax_value(to_float(s[j]), r));
}

// y = softmax of the slice s[0, n), written to dst[0, n).
template <class T>
__device__ __forceinline__ void write_slice(const T* s, T* dst, std::int64_t n, bool y_vec,
                                            RowScale r) {
  write_slice_vecs(s, dst, 0, n / Vec<T>::kElems, y_vec, r);
  write_slice_tail(s, dst, n, r);
}

// Host side, once per kernel before its first launch: lets `kernel` take all the dynamic shared
// memory a block can opt in to (232448 bytes on the H200) less its static shared memory. Both
// slice kernels (cluster_row, split_row) hold their slices there.
template <class Kernel>
void allow_all_dynamic_shared_memory(Kernel kernel) {
  int device = 0, optin = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  cudaFuncAttributes attrs{};
  CUDA_CHECK(cudaFuncGetAttributes(&attrs, kernel));
  CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                  optin - static_cast<int>(attrs.sharedSizeBytes)));
}

}  // namespace smr::prod
