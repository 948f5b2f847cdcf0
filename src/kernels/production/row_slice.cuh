// A slice of a row held in shared memory by one block (device code): the part cluster_row.cu and
// split_row.cu share.
//
// Loading. Thread 0 hands the slice's whole 16-byte vectors to the copy engine (TMA bulk copy,
// cp.async.bulk.shared::cluster.global through libcu++'s cuda::device::memcpy_async_tx) in
// kSliceChunks chunks, each completing on its own barrier (an mbarrier that counts the bytes
// that landed); every thread then waits for chunk 0, works on it while chunks 1.. are still in
// flight, waits for chunk 1, and so on. One instruction moves up to a quarter of the slice: the
// bytes in flight do not depend on how many loads the threads can issue, and no register holds
// them. (cluster_row may instead have every thread cp.async its share of each chunk, 16 bytes at
// a time, and arrive on the chunk's barrier when its copies land: SliceBarriers::thread_copy, the
// dispatch's choice for clusters of 8.) Both take 16-byte aligned vectors only, so shared memory
// holds the slice's window (storage.cuh): src[0, n) at s[lo, lo + n), lo = row_head(src)
// elements, the window's whole vectors by TMA (or cp.async) and its partial first and last
// vectors (the "edges", fewer than V elements each) by the threads, element by element; a row
// that is not 16-byte aligned (ld = 50257) costs 15 bytes of shared memory, not the copy engine.
// Without the room for that (SliceWindow::tma false) the threads copy everything element by
// element.
//
// Working. The statistics read the slice from shared memory 16 bytes at a time (LDS.128), one
// (max, sum) merge per kStatsGroup vectors; the output pass reads it again, computes
// exp(x - max) / sum (one FFMA, one MUFU.EX2, one FMUL an element: softmax_math.cuh) and
// stores 16-byte vectors (single elements where y's window does not line up with x's).
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
#include "kernels/production/row_stats.cuh"
#include "kernels/production/storage.cuh"

namespace smr::prod {

inline constexpr int kSliceChunks = 4;
using BlockBarrier = cuda::barrier<cuda::thread_scope_block>;

// How a block's slices arrive: the chunks' barriers, the phase the block's current slice completes
// (0 for its first slice, then 1, 0, ...: each slice is one phase of every chunk's barrier) and who
// copies (issue_chunk_copy). Waiting on a phase's parity instead of an arrival token keeps no token
// in registers between a copy's issue and its wait.
struct SliceBarriers {
  BlockBarrier* bars;         // kSliceChunks barriers in shared memory
  bool parity = false;        // of the phase the next slice_stats waits for
  bool thread_copy = false;   // the threads copy the vectors (cp.async), not the copy engine (TMA)
};

// Once per block, before any copy: every thread of the block arrives on every chunk's barrier.
__device__ __forceinline__ void init_slice_barriers(BlockBarrier* bars) {
  if (threadIdx.x == 0) {
#pragma unroll
    for (int c = 0; c < kSliceChunks; ++c) init(&bars[c], blockDim.x);
    // Make the init visible to the copy engine.
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();
}

// Where a slice lies in its window, in elements: src[0, n) is window[lo, hi), the window starting
// at src - lo (a 16-byte boundary when tma; src itself, lo = 0, when not). Window vectors
// [vlo, vhi) lie wholly inside the slice: the copy engine brings them when tma, the threads
// otherwise; the elements of the slice outside them (the edges: [lo, vlo V) and [vhi V, hi),
// fewer than V each) go one at a time.
struct SliceWindow {
  std::int64_t lo, hi, vlo, vhi;
  bool tma;
};
// kWindowed = false: the caller guarantees that src is on a 16-byte boundary (lo = 0 at compile
// time: Access::aligned).
template <bool kWindowed, class T>
__device__ __forceinline__ SliceWindow slice_window(const T* src, std::int64_t n, bool tma) {
  constexpr int V = Vec<T>::kElems;
  SliceWindow w;
  w.tma = tma;
  w.lo = kWindowed && tma ? row_head(src) : 0;
  w.hi = w.lo + n;
  w.vlo = (w.lo + V - 1) / V;
  w.vhi = w.hi / V > w.vlo ? w.hi / V : w.vlo;
  return w;
}
// The end of the vectors the copy engine brings: vhi when tma, else none of them.
__device__ __forceinline__ std::int64_t tma_end(const SliceWindow& w) {
  return w.tma ? w.vhi : w.vlo;
}

// Calls f(j) for this thread's share of the slice's edge elements j (window positions).
template <class T, class F>
__device__ __forceinline__ void for_each_edge(const SliceWindow& w, F&& f) {
  constexpr int V = Vec<T>::kElems;
  const std::int64_t head_end = w.vlo * V < w.hi ? w.vlo * V : w.hi;
  const std::int64_t tail_begin = w.vhi * V > head_end ? w.vhi * V : head_end;
  for (std::int64_t j = w.lo + threadIdx.x; j < head_end; j += blockDim.x) f(j);
  for (std::int64_t j = tail_begin + threadIdx.x; j < w.hi; j += blockDim.x) f(j);
}

// Vectors [begin, end) of chunk c, of the window vectors [lo, hi): chunk c is the window's vectors
// [c per, (c + 1) per), the last chunk (of kChunks) everything from (kChunks - 1) per on. A kernel
// that reuses its shared memory for slices of different lengths and offsets (split_row) keeps one
// `per` for all of them, so that chunk c of any slice lies in the same bytes.
struct VecRange {
  std::int64_t begin, end;
};
template <int kChunks = kSliceChunks>
__device__ __forceinline__ VecRange chunk_range(int c, std::int64_t lo, std::int64_t hi,
                                                std::int64_t per) {
  const auto clamp = [&](std::int64_t v) { return v < lo ? lo : (v > hi ? hi : v); };
  const std::int64_t b = clamp(c * per);
  const std::int64_t e = c + 1 == kChunks ? hi : clamp((c + 1) * per);
  return VecRange{b, e > b ? e : b};
}
__device__ __forceinline__ VecRange chunk_range(int c, const SliceWindow& w, std::int64_t per) {
  return chunk_range(c, w.vlo, tma_end(w), per);
}
__device__ __forceinline__ std::int64_t chunk_vecs(std::int64_t vecs) {
  return (vecs + kSliceChunks - 1) / kSliceChunks;
}

// One 16-byte cp.async (LDGSTS): global to shared memory without a register, L2 only (.cg).
__device__ __forceinline__ void cp_async_16(void* smem, const void* gmem) {
  const auto dst = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(gmem) : "memory");
}
// This thread's arrival on `bar`, made when all its earlier cp.async copies have landed (.noinc:
// it is the thread's one arrival of the phase, counted in the barrier's blockDim.x).
__device__ __forceinline__ void cp_async_arrive(BlockBarrier& bar) {
  const auto b = static_cast<std::uint32_t>(
      __cvta_generic_to_shared(cuda::device::barrier_native_handle(bar)));
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];" ::"r"(b) : "memory");
}

// Window vectors r of `window` into the same place of s, completing on `bar`. By the copy engine
// (thread 0 issues one bulk copy and arrives expecting its bytes; every other thread just
// arrives) or, when thread_copy, by the threads (each cp.asyncs every blockDim.x-th vector and
// arrives when they have landed). Every thread of the block must call it, once per chunk per
// slice. Thread 0's proxy fence orders the block's earlier reads of these bytes (a previous
// slice, after a __syncthreads) before the copy engine's writes; the threads' copies are ordered
// after them by that __syncthreads itself.
template <class T>
__device__ __forceinline__ void issue_chunk_copy(T* s, const T* window, VecRange r,
                                                 BlockBarrier& bar, bool thread_copy) {
  constexpr int V = Vec<T>::kElems;
  if (thread_copy) {
    for (std::int64_t i = r.begin + threadIdx.x; i < r.end; i += blockDim.x)
      cp_async_16(s + i * V, window + i * V);
    cp_async_arrive(bar);
    return;
  }
  const auto bytes = static_cast<std::uint32_t>((r.end - r.begin) * kVecBytes);
  if (threadIdx.x == 0 && bytes > 0) {
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
    cuda::device::memcpy_async_tx(s + r.begin * V, window + r.begin * V,
                                  cuda::aligned_size_t<kVecBytes>(bytes), bar);
    (void)cuda::device::barrier_arrive_tx(bar, 1, bytes);
  } else {
    (void)bar.arrive();
  }
}
// The same for chunk c of a slice, on the slice's barrier c.
template <class T>
__device__ __forceinline__ void issue_chunk_copy(T* s, const T* window, VecRange r,
                                                 const SliceBarriers& sb, int c) {
  issue_chunk_copy(s, window, r, sb.bars[c], sb.thread_copy);
}

// What the copy engine does not take, copied by the threads: the edges, and without tma the
// window's vectors too; visible to the block after the next __syncthreads (slice_stats has one).
template <class T>
__device__ __forceinline__ void copy_slice_rest(T* s, const T* window, const SliceWindow& w) {
  constexpr int V = Vec<T>::kElems;
  for (std::int64_t j = tma_end(w) * V + threadIdx.x; j < w.vhi * V; j += blockDim.x)
    s[j] = __ldg(window + j);
  for_each_edge<T>(w, [&](std::int64_t j) { s[j] = __ldg(window + j); });
}

// Starts copying the slice w of `window` into s: the copy engine's chunks of `per` vectors, then
// the threads' part (done before this returns, visible at slice_stats' barrier). Every thread of
// the block must call it.
template <class T>
__device__ __forceinline__ void issue_slice_copy(T* s, const T* window, const SliceWindow& w,
                                                 std::int64_t per, SliceBarriers& sb) {
#pragma unroll
  for (int c = 0; c < kSliceChunks; ++c) issue_chunk_copy(s, window, chunk_range(c, w, per), sb, c);
  copy_slice_rest(s, window, w);
}

// Vectors a thread merges into its (max, sum) at once in smem_vec_stats: one merge (a compare,
// a rescaling exponential) per kStatsGroup x V elements instead of per vector.
inline constexpr int kStatsGroup = 2;

// (max, sum) of this thread's vectors [begin, end) of a shared-memory slice (stride: the block),
// kStatsGroup of them per step (a vector past `end` counts as -inf: exp gives 0).
//
// kEveryLoad: every load of a step executes -- a vector q past `end` reads the step's first
// vector i instead (always inside the slice) and its values are replaced by -inf. Without it,
// `if (q < end) v = sv[q]`. The two compile differently: in split_row's 16-bit kernels and its
// windowed fp32 ones ptxas put each conditional load behind a branch, with its shared address
// rebuilt inside (seven instructions a load); in its aligned fp32 ones it predicated them, and
// there the unconditional form ran slower (the two-slice plan at N = 1000003). So each takes the
// form that ran faster: kStatsEveryLoad. Either way the step's first vector is not tested, which
// the compiler could not see (most split_row and cluster_row plans ran faster for it).
// Evidence: results/h200/tuning/; docs/performance.md, "split_row".
template <bool kEveryLoad, class T>
__device__ __forceinline__ RowStats smem_vec_stats(const T* s, std::int64_t begin, std::int64_t end,
                                                   RowStats st) {
  constexpr int V = Vec<T>::kElems;
  const Vec<T>* sv = reinterpret_cast<const Vec<T>*>(s);
  const std::int64_t stride = blockDim.x;
  for (std::int64_t i = begin + threadIdx.x; i < end; i += kStatsGroup * stride) {
    float f[kStatsGroup * V];
#pragma unroll
    for (int g = 0; g < kStatsGroup; ++g) {
      const std::int64_t q = i + g * stride;
      // The step's first vector is inside by the loop's test.
      const bool in = g == 0 || q < end;
      if constexpr (kEveryLoad) {
        const Vec<T> v = sv[in ? q : i];
#pragma unroll
        for (int e = 0; e < V; ++e) f[g * V + e] = in ? to_float(v.e[e]) : -INFINITY;
      } else if (in) {
        const Vec<T> v = sv[q];
#pragma unroll
        for (int e = 0; e < V; ++e) f[g * V + e] = to_float(v.e[e]);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) f[g * V + e] = -INFINITY;
      }
    }
    st = merge(st, stats_of(f));
  }
  return st;
}
// The form of smem_vec_stats for storage T, in kernels whose slices may start off 16-byte
// boundaries (kWindowed) or not: the conditional loads only for aligned fp32.
template <class T, bool kWindowed>
inline constexpr bool kStatsEveryLoad = kWindowed || sizeof(T) < 4;

// This thread's (max, sum) over the whole slice w of s: waits for each chunk in turn (chunks of
// `per` vectors), then (after a block barrier) takes what the threads copied. Every thread of the
// block must call it. (kWindowed: the slice may start off a 16-byte boundary, w.lo known only at
// run time; it picks smem_vec_stats' form.)
template <bool kWindowed, class T>
__device__ __forceinline__ RowStats slice_stats(const T* s, const SliceWindow& w, std::int64_t per,
                                                SliceBarriers& sb) {
  constexpr bool kEveryLoad = kStatsEveryLoad<T, kWindowed>;
  RowStats st = empty_stats();
#pragma unroll
  for (int c = 0; c < kSliceChunks; ++c) {
    sb.bars[c].wait_parity(sb.parity);
    const VecRange r = chunk_range(c, w, per);
    st = smem_vec_stats<kEveryLoad>(s, r.begin, r.end, st);
  }
  sb.parity = !sb.parity;
  __syncthreads();  // the element-wise copies of every thread are in shared memory
  st = smem_vec_stats<kEveryLoad>(s, tma_end(w), w.vhi, st);
  for_each_edge<T>(w, [&](std::int64_t j) {
    const float f[1] = {to_float(s[j])};
    st = merge(st, stats_of(f));
  });
  return st;
}

// y = softmax of one window vector v, written to window vector q of y's window: one 16-byte
// store when y_vec (y's window lines up with x's), else element by element.
template <class T>
__device__ __forceinline__ void write_softmax_vec(T* window, std::int64_t q, const Vec<T> v,
                                                  bool y_vec, RowScale r) {
  constexpr int V = Vec<T>::kElems;
  Vec<T> out;
#pragma unroll
  for (int e = 0; e < V; ++e) out.e[e] = from_float<T>(softmax_value(to_float(v.e[e]), r));
  if (y_vec) {
    store_vec(window + q * V, out);
  } else {
#pragma unroll
    for (int e = 0; e < V; ++e) window[q * V + e] = out.e[e];
  }
}

// y = softmax of the slice's window vectors [begin, end) (of s, written to the same positions of
// y's window), one vector a loop trip.
template <class T>
__device__ __forceinline__ void write_slice_vecs(const T* s, T* window, std::int64_t begin,
                                                 std::int64_t end, bool y_vec, RowScale r) {
  const Vec<T>* sv = reinterpret_cast<const Vec<T>*>(s);
  for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x)
    write_softmax_vec(window, i, sv[i], y_vec, r);
}

// write_slice_vecs with G vectors read from shared memory before any of them is written: G LDS.128
// in flight at once instead of one, the loop's compare and address arithmetic shared by the group,
// and 32-bit shared-memory indices (a slice is at most 232448 bytes). block_hybrid's fp32 slices
// take G = 2: there one 512-thread block per SM writes up to 192 KB from shared memory, 16 warps
// with one load each in flight (on the H200 faster at N = 65536, and the spill of its aligned
// instantiations gone). Not the cluster_row and split_row kernels: two vectors a thread cost
// cluster_row 4-6 registers, and with them blocks per SM at small slices, and it ran slower at
// C = 8 and 16 (results/h200/tuning/; docs/performance.md, "block_hybrid").
template <int G, class T>
__device__ __forceinline__ void write_slice_vecs_grouped(const T* s, T* window, std::int64_t begin,
                                                         std::int64_t end, bool y_vec, RowScale r) {
  if constexpr (G == 1) {
    write_slice_vecs(s, window, begin, end, y_vec, r);
  } else {
    const Vec<T>* sv = reinterpret_cast<const Vec<T>*>(s);
    const int stride = static_cast<int>(blockDim.x);
    const int e_end = static_cast<int>(end);
    const int first = static_cast<int>(begin) + static_cast<int>(threadIdx.x);
    for (int i = first; i < e_end; i += G * stride) {
      Vec<T> v[G];
#pragma unroll
      for (int g = 0; g < G; ++g)
        if (i + g * stride < e_end) v[g] = sv[i + g * stride];
#pragma unroll
      for (int g = 0; g < G; ++g) {
        const int q = i + g * stride;
        if (q >= e_end) break;
        write_softmax_vec(window, static_cast<std::int64_t>(q), v[g], y_vec, r);
      }
    }
  }
}

// y = softmax of the slice's edge elements, one at a time.
template <class T>
__device__ __forceinline__ void write_slice_edges(const T* s, T* window, const SliceWindow& w,
                                                  RowScale r) {
  for_each_edge<T>(w, [&](std::int64_t j) {
    window[j] = from_float<T>(softmax_value(to_float(s[j]), r));
  });
}

// y = softmax of the slice w of s, written to y's window.
template <class T>
__device__ __forceinline__ void write_slice(const T* s, T* window, const SliceWindow& w, bool y_vec,
                                            RowScale r) {
  write_slice_vecs(s, window, w.vlo, w.vhi, y_vec, r);
  write_slice_edges(s, window, w, r);
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
