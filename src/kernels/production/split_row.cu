// split_row: rows too long for a cluster (N > 16 x 112 KB), or too few rows to fill the card
// with clusters (M x C < SMs): each row split across S blocks of a grid that is resident at once.
//
// What changes from cluster_row: the blocks sharing a row are not a cluster (a cluster has at
// most 16 blocks, ~3.6 MB of shared memory: no cluster holds a 16 MB row of 2^22 fp32; and
// M = 4 rows of 65536 as clusters of 4 would keep 16 of 132 SMs busy). They exchange their partials
// through global memory instead: a persistent grid of G = R x S blocks (1 or 2 per SM, the plan
// says; launched cooperatively, so that all of them are resident and may wait for each other)
// works on R rows at a time; block b always takes slice b % S of rows b / S, b / S + R, ... For
// each (row, slice):
//   1. wait for the slice's resident part in shared memory (TMA bulk copies of its 16-byte window,
//      row_slice.cuh, in 4 chunks: issued at the start for the first slice, while the one before
//      is written for the others) and compute its (max, sum); the part that does not fit (only
//      when a row is longer than the card's shared memory can hold) is streamed from global
//      memory for the statistics;
//   2. thread 0 publishes the partial and prefetches its next slice into L2 when the plan says so
//      (cp.async.bulk.prefetch; the dispatch asks for it while the rows the blocks hold fill at
//      most 41% of L2, 45% for the pipelined plans: softmax_dispatch.cpp,
//      split_prefetch_default). Published as a tagged 64-bit word (the default): thread i of
//      every block of the row then waits for slot i itself, no fence, no counter. Counted (the
//      plan's other exchange, timed beside it): thread 0 stores the pair, adds 1 to the row's
//      arrival counter (release) and waits until it reaches S (acquire), then the threads read
//      the slots;
//   3. the block merges the S partials (one per thread, then one block reduction: the same tree
//      everywhere, so every block gets the same statistics) and writes its slice: the streamed
//      part first, re-read in reverse order (its most recently read lines are the likeliest to
//      still be in L2), then the resident part from shared memory, chunk by chunk, the block's
//      next slice copied into each chunk as soon as it is written.
// A cudaMemsetAsync before each launch fills the partial slots with the unpublished tag (or zeroes
// the arrival counters, counted). split_row_pipelined_kernel, below, is the same work with two or
// three slices per block, so that step 3's wait is for partials published a trip earlier (and, with
// three, step 1's for copies issued a trip earlier); the dispatch says when it runs. fp32 rows
// read twice whose streamed part is larger than L2 (M = 1, N = 2^26) deal that part out to the
// row's blocks step by step instead of giving each block its own stretch (kInterleaved:
// interleaved_part, below): the same bytes, in the copy ceiling's order. Aligned fp32 rows on chip
// that go one at a time over the whole card (N = 2^22) run split_row_ring_kernel, below: the same
// work with the block's shared memory a ring of chunk slots, each chunk of the next slices copied
// in as soon as a slot is free.
//
// Why it cannot deadlock: every block is resident (cooperative launch: the launch fails rather
// than leaves blocks unscheduled), blocks take their items in increasing order, and the lowest
// row not yet complete has all its slices' blocks either at it or done with everything before it.
//
// Cost per element. Rows that fit on chip in the rows-in-flight budget (the dispatch sizes R
// and S so that R rows' slices fit in the grid's shared memory, ~29 MB on the H200): one read,
// one write (TrafficModel::fused).
// Longer rows: the resident fraction f = S x resident / N is read once, the rest twice, the
// second time partly from L2: between 8 and 12 bytes per fp32 element (TrafficModel::two_read,
// whose 12 is the floor for a design that cannot keep the row).
#include <cuda/atomic>

#include <algorithm>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>

#include "kernels/cuda_check.hpp"
#include "kernels/common/arch.cuh"
#include "kernels/production/l2_prefetch.cuh"
#include "kernels/production/row_slice.cuh"
#include "kernels/production/softmax_families.hpp"

// Below sm_90 the kernels trap (common/arch.cuh), and the device helpers only they call go unused.
#if defined(__CUDA_ARCH__) && !SMR_ARCH_HAS_CLUSTERS
#pragma nv_diag_suppress 177
#endif

namespace smr::prod {

namespace {

// Vectors (or elements without 16-byte alignment) a thread streams per step: 64 bytes in flight.
inline constexpr int kStreamUnroll = 4;

// The groups of W elements wholly inside window[begin, end): [g0, g1) (none when begin and end
// lie in one group); the elements of [begin, end) outside them are the edges.
struct GroupRange {
  std::int64_t g0, g1;
};
template <int W>
__device__ __forceinline__ GroupRange whole_groups(std::int64_t begin, std::int64_t end) {
  const std::int64_t g0 = (begin + W - 1) / W;
  return GroupRange{g0, end / W > g0 ? end / W : g0};
}
template <int W, class F>
__device__ __forceinline__ void for_each_stream_edge(std::int64_t begin, std::int64_t end,
                                                     GroupRange g, F&& f) {
  const std::int64_t head_end = g.g0 * W < end ? g.g0 * W : end;
  const std::int64_t tail_begin = g.g1 * W > head_end ? g.g1 * W : head_end;
  for (std::int64_t j = begin + threadIdx.x; j < head_end; j += blockDim.x) f(j);
  for (std::int64_t j = tail_begin + threadIdx.x; j < end; j += blockDim.x) f(j);
}

// (max, sum) of this thread's share of window[begin, end), read from global memory (pass 1): W = V
// when the window is 16-byte aligned (whole vectors, the edges element by element), else 1.
template <int W, class T>
__device__ __forceinline__ RowStats stream_stats(const T* window, std::int64_t begin,
                                                 std::int64_t end, RowStats st) {
  const GroupRange g = whole_groups<W>(begin, end);
  constexpr std::int64_t kStep = static_cast<std::int64_t>(kSliceThreads) * kStreamUnroll;
  for (std::int64_t base = g.g0; base < g.g1; base += kStep) {
    float f[kStreamUnroll][W];
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) {
      const std::int64_t q = base + u * kSliceThreads + threadIdx.x;
      if constexpr (W == 1) {
        f[u][0] = q < g.g1 ? load_one(window + q) : -INFINITY;
      } else {
        Vec<T> v;
        if (q < g.g1) {
          v = load_vec(window + q * W);
        } else {
#pragma unroll
          for (int e = 0; e < W; ++e) v.e[e] = storage_neg_inf<T>();
        }
#pragma unroll
        for (int e = 0; e < W; ++e) f[u][e] = to_float(v.e[e]);
      }
    }
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) st = merge(st, stats_of(f[u]));
  }
  for_each_stream_edge<W>(begin, end, g, [&](std::int64_t j) {
    const float f[1] = {load_one(window + j)};
    st = merge(st, stats_of(f));
  });
  return st;
}

// y over the streamed part, window[begin, end) of x and of y (pass 2): x re-read, steps taken last
// to first.
template <int W, class T>
__device__ __forceinline__ void stream_write(const T* window, T* y_window, std::int64_t begin,
                                             std::int64_t end, bool y_vec, RowScale r) {
  const GroupRange g = whole_groups<W>(begin, end);
  for_each_stream_edge<W>(begin, end, g, [&](std::int64_t j) {
    y_window[j] = from_float<T>(softmax_value(load_one(window + j), r));
  });
  constexpr std::int64_t kStep = static_cast<std::int64_t>(kSliceThreads) * kStreamUnroll;
  const std::int64_t steps = (g.g1 - g.g0 + kStep - 1) / kStep;
  for (std::int64_t k = steps - 1; k >= 0; --k) {
    const std::int64_t base = g.g0 + k * kStep;
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) {
      const std::int64_t q = base + u * kSliceThreads + threadIdx.x;
      if (q >= g.g1) continue;
      if constexpr (W == 1) {
        y_window[q] = from_float<T>(softmax_value(load_one(window + q), r));
      } else {
        const Vec<T> v = load_vec(window + q * W);
        Vec<T> out;
#pragma unroll
        for (int e = 0; e < W; ++e) out.e[e] = from_float<T>(softmax_value(to_float(v.e[e]), r));
        if (y_vec) {
          store_vec_streaming(y_window + q * W, out);  // keep L2 for x's second read
        } else {
#pragma unroll
          for (int e = 0; e < W; ++e) y_window[q * W + e] = out.e[e];
        }
      }
    }
  }
}

// fp32 rows read twice, interleaved (SplitRowPlan::interleaved; rows on 16-byte boundaries whose
// windows line up): part s of a row keeps elements [s x resident, (s + 1) x resident) in shared
// memory, and the rest of the row, [S x resident, N), is dealt out in rounds of S steps of
// kSliceThreads vectors -- step r x S + s to part s -- and what is left under a whole round is cut
// into S equal pieces. So at any moment the grid's streamed loads and stores fall in one window of
// a few MB of consecutive addresses, as the copy ceiling's do, instead of in one stream per block.
// On the H200 this paid at M = 1, N = 2^26; where a row's streamed part fits in L2 (M = 8,
// N = 2^24), and for bf16, it was slower (results/h200/tuning/; docs/performance.md, "split_row").
// A step: kSliceThreads vectors, one per thread.
template <class T>
inline constexpr std::int64_t kInterleaveStep =
    static_cast<std::int64_t>(kSliceThreads) * Vec<T>::kElems;
struct InterleavedPart {
  std::int64_t base;    // the row's first streamed element
  std::int64_t rounds;  // whole rounds
  std::int64_t piece_begin, piece_end;  // this part's share of the rest
};
template <class T>
__device__ __forceinline__ InterleavedPart interleaved_part(std::int64_t N, int S, int part,
                                                            std::int64_t resident) {
  constexpr std::int64_t V = Vec<T>::kElems;
  constexpr std::int64_t kStep = kInterleaveStep<T>;
  InterleavedPart ip;
  ip.base = std::min<std::int64_t>(N, S * resident);
  ip.rounds = (N - ip.base) / (S * kStep);
  const std::int64_t rest = ip.base + ip.rounds * S * kStep;
  const std::int64_t piece = ((N - rest + S - 1) / S + V - 1) / V * V;
  ip.piece_begin = std::min(N, rest + part * piece);
  ip.piece_end = std::min(N, ip.piece_begin + piece);
  return ip;
}
// This thread's share of part `part`'s streamed elements, statistics (pass 1): the rounds' steps
// kStreamUnroll at a time, then the piece.
template <class T>
__device__ __forceinline__ RowStats interleaved_stats(const T* row, const InterleavedPart& ip,
                                                      int S, int part, RowStats st) {
  constexpr int V = Vec<T>::kElems;
  constexpr std::int64_t kStep = kInterleaveStep<T>;
  const T* first = row + ip.base + part * kStep + threadIdx.x * V;
  for (std::int64_t r0 = 0; r0 < ip.rounds; r0 += kStreamUnroll) {
    float f[kStreamUnroll][V];
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) {
      Vec<T> v;
      if (r0 + u < ip.rounds) {
        v = load_vec(first + (r0 + u) * S * kStep);
      } else {
#pragma unroll
        for (int e = 0; e < V; ++e) v.e[e] = storage_neg_inf<T>();
      }
#pragma unroll
      for (int e = 0; e < V; ++e) f[u][e] = to_float(v.e[e]);
    }
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) st = merge(st, stats_of(f[u]));
  }
  return stream_stats<V>(row, ip.piece_begin, ip.piece_end, st);
}
// y over part `part`'s streamed elements (pass 2): the piece first, then the rounds last to first
// (the reverse of pass 1's order, so that the most recently read lines, likeliest still in L2,
// come first).
template <class T>
__device__ __forceinline__ void interleaved_write(const T* row, T* y_row, const InterleavedPart& ip,
                                                  int S, int part, RowScale r) {
  constexpr int V = Vec<T>::kElems;
  constexpr std::int64_t kStep = kInterleaveStep<T>;
  stream_write<V>(row, y_row, ip.piece_begin, ip.piece_end, true, r);
  const std::int64_t offset = ip.base + part * kStep + threadIdx.x * V;
  for (std::int64_t r0 = ip.rounds - 1; r0 >= 0; r0 -= kStreamUnroll) {
#pragma unroll
    for (int u = 0; u < kStreamUnroll; ++u) {
      if (r0 - u < 0) continue;
      const std::int64_t at = offset + (r0 - u) * S * kStep;
      const Vec<T> v = load_vec(row + at);
      Vec<T> out;
#pragma unroll
      for (int e = 0; e < V; ++e) out.e[e] = from_float<T>(softmax_value(to_float(v.e[e]), r));
      store_vec_streaming(y_row + at, out);
    }
  }
}

// A partial published as its own flag (SplitRowPlan::tagged_partials): the (max, sum) pair as one
// 64-bit word, stored and loaded relaxed at device scope -- no fence, no counter. The workspace's
// slots are filled with kUnpublishedByte before each launch, so that an unpublished slot's sum
// reads kUnpublished (-1.498...), a value no sum of exponentials takes (they are >= +0 or NaN,
// and the GPU's NaN is 0x7fffffff).
inline constexpr unsigned char kUnpublishedByte = 0xBF;
inline constexpr std::uint32_t kUnpublished = 0xBFBFBFBFu;

__device__ __forceinline__ void publish_partial(float2* slot, RowStats st) {
  const unsigned long long bits =
      (static_cast<unsigned long long>(__float_as_uint(st.sum)) << 32) | __float_as_uint(st.max);
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(
      *reinterpret_cast<unsigned long long*>(slot));
  word.store(bits, cuda::memory_order_relaxed);
}

// The slot's word as it is now (one relaxed device-scope load: it may still be unpublished).
__device__ __forceinline__ unsigned long long partial_bits(float2* slot) {
  cuda::atomic_ref<unsigned long long, cuda::thread_scope_device> word(
      *reinterpret_cast<unsigned long long*>(slot));
  return word.load(cuda::memory_order_relaxed);
}
__device__ __forceinline__ bool unpublished(unsigned long long bits) {
  return static_cast<std::uint32_t>(bits >> 32) == kUnpublished;
}
// The partial, from `bits` (an earlier partial_bits of the slot) once published: loaded again until
// it is.
__device__ __forceinline__ RowStats await_partial(float2* slot, unsigned long long bits) {
  while (unpublished(bits)) {
    __nanosleep(32);
    bits = partial_bits(slot);
  }
  return RowStats{__uint_as_float(static_cast<std::uint32_t>(bits)),
                  __uint_as_float(static_cast<std::uint32_t>(bits >> 32))};
}
__device__ __forceinline__ RowStats await_partial(float2* slot) {
  return await_partial(slot, partial_bits(slot));
}

// The whole vectors of a slice's window (`src` the slice's first element, w its window) towards
// L2: what the slice's copy-engine chunks will read.
template <class T>
__device__ __forceinline__ void prefetch_slice_l2(const T* src, const SliceWindow& w) {
  constexpr int V = Vec<T>::kElems;
  const auto bytes = static_cast<std::uint32_t>((w.vhi - w.vlo) * kVecBytes);
  if (bytes > 0) prefetch_l2(src - w.lo + w.vlo * V, bytes);
}

// Item k of a block is (row, slice) = divmod(blockIdx.x + k x gridDim.x, S): where it lies in x.
template <class T>
struct SplitItem {
  const T* src;  // the slice's first element in x
  std::int64_t row, begin, n, res;
  int part;
};
// (kInterleaved: the item's slice is its resident part alone, at part x resident; the rest of its
// elements are dealt out by interleaved_part.)
template <class T, bool kInterleaved = false>
__device__ __forceinline__ SplitItem<T> split_item(const T* x, std::int64_t N, std::int64_t ld_x,
                                                   int S, std::int64_t slice, std::int64_t resident,
                                                   std::int64_t item) {
  SplitItem<T> it;
  it.row = item / S;
  it.part = static_cast<int>(item % S);
  it.begin = it.part * (kInterleaved ? resident : slice);
  it.n = std::max<std::int64_t>(0, std::min(kInterleaved ? resident : slice, N - it.begin));
  it.res = std::min(it.n, resident);
  it.src = x + it.row * ld_x + it.begin;
  return it;
}

// This thread's share of the row's S partials merged (thread i takes partial i, i + 512, ...;
// S is at most the grid, 264 on the H200: one L2 round trip), before the block reduction. Tagged:
// await_partial's relaxed device-scope loads spin until the slot is published. Counted (the
// caller has waited for the row's counter): __ldcg reads L2, never a stale L1 line (another block
// of this SM may have cached a neighbouring row's partials).
__device__ __forceinline__ RowStats thread_partials(float2* row_partials, int S, bool tagged) {
  RowStats st = empty_stats();
  for (int i = static_cast<int>(threadIdx.x); i < S; i += kSliceThreads) {
    if (tagged) {
      st = merge(st, await_partial(row_partials + i));
    } else {
      const float2 pr = __ldcg(row_partials + i);
      st = merge(st, RowStats{pr.x, pr.y});
    }
  }
  return st;
}

// Window vectors [w.vlo, w.vhi) of the slice in s written to y's window, chunk by chunk (chunks of
// `per` vectors); once every thread is done with chunk c, chunk c of the next slice (window
// vectors of `next`, in next_window, when `refill`) is copied into its bytes, so that the next
// slice's loads overlap this one's stores. The caller writes the slice's edges first: no copy may
// land on their vectors while they are read. Every thread of the block must call it.
template <class T>
__device__ __forceinline__ void write_and_refill(T* s, T* y_window, const SliceWindow& w,
                                                 std::int64_t per, bool y_vec, RowScale scale,
                                                 bool refill, const T* next_window,
                                                 const SliceWindow& next, const SliceBarriers& sb) {
#pragma unroll
  for (int c = 0; c < kSliceChunks; ++c) {
    const VecRange r = chunk_range(c, w.vlo, w.vhi, per);
    write_slice_vecs(s, y_window, r.begin, r.end, y_vec, scale);
    __syncthreads();  // every read of chunk c is done
    if (refill) issue_chunk_copy(s, next_window, chunk_range(c, next, per), sb, c);
  }
}

// The kernels' parameters, one struct per kernel, its fields in the order (and so at the offsets)
// the kernel's parameter list had them. x, y: the rows (ld_x, ld_y their strides), M x N; S slices
// of `slice` elements a row; partials: M x S (max, sum) pairs, arrived: M counters (counted
// partials only).
template <class T>
struct SplitRowParams {
  const T* x;
  T* y;
  std::int64_t M, N, ld_x, ld_y;
  int S;
  std::int64_t slice;
  std::int64_t resident;  // elements of a slice kept in shared memory (the rest read twice)
  bool x_tma;             // the resident part copied in by the copy engine (else by the threads)
  bool y_vec;             // y written in 16-byte vectors (its rows' windows line up with x's)
  bool prefetch;          // the next slice prefetched into L2 while the row's partials are awaited
  bool tagged;            // each partial its own flag (else counted in through `arrived`)
  float2* partials;
  unsigned* arrived;
};

template <class T>
struct SplitRingParams {
  const T* x;
  T* y;
  std::int64_t M, N, ld_x, ld_y;
  int S;
  std::int64_t slice;
  int slots;  // chunk slots of the block's shared memory
  float2* partials;
};

template <class T>
struct SplitPipelinedParams {
  const T* x;
  T* y;
  std::int64_t M, N, ld_x, ld_y;
  int S;
  std::int64_t slice;
  std::int64_t part;  // elements of each of the kBuffers parts of shared memory (whole vectors)
  bool y_vec;
  bool prefetch;      // the slice each trip copies in prefetched into L2 at the trip's start
  float2* partials;
};

// kWindowed: the rows may start off 16-byte boundaries (compiled apart from the aligned case, whose
// offsets are 0 at compile time).
// (kInterleaved: fp32 rows read twice with their streamed parts dealt out step by step, aligned
// rows only: interleaved_part above.)
template <class T, bool kWindowed, bool kInterleaved = false>
__global__ void __launch_bounds__(kSliceThreads, kSplitBlocksPerSm)
    split_row_kernel(const SplitRowParams<T> a) {
#if SMR_ARCH_HAS_CLUSTERS  // TMA bulk copies, fence.proxy.async (common/arch.cuh)
  const T* __restrict__ x = a.x;
  T* __restrict__ y = a.y;
  const std::int64_t M = a.M, N = a.N, ld_x = a.ld_x, ld_y = a.ld_y, slice = a.slice,
                     resident = a.resident;
  const int S = a.S;
  const bool x_tma = a.x_tma, y_vec = a.y_vec, prefetch = a.prefetch, tagged = a.tagged;
  float2* __restrict__ partials = a.partials;
  unsigned* __restrict__ arrived = a.arrived;
  constexpr int V = Vec<T>::kElems;
  extern __shared__ __align__(kVecBytes) unsigned char slice_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier bars[kSliceChunks];
  T* s = reinterpret_cast<T*>(slice_smem);
  init_slice_barriers(bars);
  SliceBarriers sb{bars};

  // Item k of this block is (row, slice) = divmod(blockIdx.x + k x gridDim.x, S). Each item's
  // resident part sits in shared memory as its window (row_slice.cuh); chunk c of every item is
  // the window vectors [c per, (c + 1) per) (`per` from `resident`), so it lies in the same bytes
  // of s for every item, and the next item's chunk c can be copied in as soon as this item's chunk
  // c is written.
  const std::int64_t items = M * S;
  const auto item_at = [&](std::int64_t item) {
    return split_item<T, kInterleaved>(x, N, ld_x, S, slice, resident, item);
  };
  if (blockIdx.x < items) {
    const SplitItem<T> first = item_at(blockIdx.x);
    const SliceWindow w = slice_window<kWindowed>(first.src, first.res, x_tma);
#pragma unroll
    for (int c = 0; c < kSliceChunks; ++c)
      issue_chunk_copy(s, first.src - w.lo, chunk_range(c, w, chunk_vecs(resident / V)), sb, c);
  }

  for (std::int64_t item = blockIdx.x; item < items; item += gridDim.x) {
    const SplitItem<T> it = item_at(item);
    const SliceWindow w = slice_window<kWindowed>(it.src, it.res, x_tma);
    const T* window = it.src - w.lo;  // x's window; y's is dst - w.lo

    // 1. The slice's statistics: the resident part from shared memory (its copy-engine chunks
    //    were issued while the previous item was written, step 4 below, or above), the rest
    //    streamed.
    copy_slice_rest(s, window, w);
    RowStats st = slice_stats<kWindowed>(s, w, chunk_vecs(resident / V), sb);
    if constexpr (kInterleaved)
      st = interleaved_stats(x + it.row * ld_x, interleaved_part<T>(N, S, it.part, resident), S,
                             it.part, st);
    else if (x_tma)
      st = stream_stats<V>(window, w.hi, w.lo + it.n, st);
    else
      st = stream_stats<1>(window, w.hi, w.lo + it.n, st);
    st = block_allreduce<kSliceThreads>(st, MergeOp{});

    // 2. Publish, prefetch the next slice, wait for the row's other slices.
    const std::int64_t next = item + gridDim.x;
    const bool has_next = next < items;
    if (threadIdx.x == 0) {
      // The row's arrival counter: the counted exchange's only.
      cuda::atomic_ref<unsigned, cuda::thread_scope_device> count(arrived[it.row]);
      if (tagged) {
        publish_partial(partials + it.row * S + it.part, st);
      } else {
        partials[it.row * S + it.part] = make_float2(st.max, st.sum);
        count.fetch_add(1u, cuda::memory_order_release);
      }
      if (prefetch && x_tma && has_next) {
        const SplitItem<T> nx = item_at(next);
        prefetch_slice_l2(nx.src, slice_window<kWindowed>(nx.src, nx.res, x_tma));
      }
      // Counted: the whole block waits here for thread 0's counter. Tagged: each thread waits for
      // its own slot in step 3, no barrier needed (block_allreduce ends with one).
      if (!tagged)
        while (count.load(cuda::memory_order_acquire) < static_cast<unsigned>(S)) __nanosleep(64);
    }
    if (!tagged) __syncthreads();

    // 3. The block merges the S partials: one per thread (where one warp looping over them took
    //    ceil(S / 32) L2 round trips -- 9 at N = 2^22), then one block reduction, the same tree
    //    in every block: every block of the row gets the same statistics.
    const RowStats row_stats = block_allreduce<kSliceThreads>(
        thread_partials(partials + it.row * S, S, tagged), MergeOp{});
    const RowScale scale = row_scale(row_stats);
    T* y_window = y + it.row * ld_y + it.begin - w.lo;
    // (interleaved_part again rather than kept from step 1: as with the next item below, nothing
    // of it stays live in registers across the merge.)
    if constexpr (kInterleaved)
      interleaved_write(x + it.row * ld_x, y + it.row * ld_y,
                        interleaved_part<T>(N, S, it.part, resident), S, it.part, scale);
    else if (x_tma)
      stream_write<V>(window, y_window, w.hi, w.lo + it.n, y_vec, scale);
    else
      stream_write<1>(window, y_window, w.hi, w.lo + it.n, y_vec, scale);

    // 4. The resident part: its edges, then chunk by chunk, the next item's chunks copied into
    //    the bytes as they are freed (write_and_refill).
    //    (The next item is worked out again here rather than kept from step 2, and `per` again
    //    rather than kept from the start: nothing of them stays live in registers across the
    //    merge and the streamed writes -- the bf16 instantiation is at the 64-register bound.)
    write_slice_edges(s, y_window, w, scale);
    const SplitItem<T> nx = item_at(has_next ? next : item);
    const SliceWindow nw = slice_window<kWindowed>(nx.src, nx.res, x_tma);
    const T* next_window = nx.src - nw.lo;
    write_and_refill(s, y_window, w, chunk_vecs(resident / V), y_vec, scale, has_next, next_window,
                     nw, sb);
  }
#else
  SMR_ARCH_UNSUPPORTED();
#endif
}

// The ring of chunks (SplitRowPlan::ring: rows on chip, one slice per block, 16-byte aligned rows
// of whole vectors whose windows line up). The kernel above copies its next slice in only as this
// one is written, chunk c into chunk c's bytes, so a slice's copies are issued in the trip just
// before its statistics, and a block whose slice fills less of its shared memory than it has
// (N = 2^22 fp32: 127 KB slices in 227 KB) leaves the rest unused. Here the block's shared memory
// is `slots` chunk slots of one chunk's bytes each (5 ... kRingSlotsMax), and the block's chunks,
// counted j = 0, 1, ... over its items (item j / 4, its chunk j % 4), take the slots in turn:
// chunk j lies in slot j % slots and is copied in as soon as chunk j - slots has been written. So
// with 7 slots, 3 of the next item's 4 chunks are in flight while this item's statistics are taken
// and its row's partials awaited, and all of them are issued a trip or more before they are
// needed. The exchange, the bytes and the FLOPs are the kernel above's for rows on chip (tagged
// partials).
inline constexpr int kRingSlotsMax = kSplitRingSlotsMax;
static_assert(kSliceChunks == kSplitChunks, "the dispatch sizes the ring's slots by chunks");

template <class T>
__global__ void __launch_bounds__(kSliceThreads, 1)
    split_row_ring_kernel(const SplitRingParams<T> a) {
#if SMR_ARCH_HAS_CLUSTERS  // TMA bulk copies, fence.proxy.async (common/arch.cuh)
  const T* __restrict__ x = a.x;
  T* __restrict__ y = a.y;
  const std::int64_t M = a.M, N = a.N, ld_x = a.ld_x, ld_y = a.ld_y, slice = a.slice;
  const int S = a.S, slots = a.slots;
  float2* __restrict__ partials = a.partials;
  constexpr int V = Vec<T>::kElems;
  extern __shared__ __align__(kVecBytes) unsigned char slice_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier bars[kRingSlotsMax];
  if (threadIdx.x == 0) {
    for (int b = 0; b < slots; ++b) init(&bars[b], blockDim.x);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);  // the inits, to the copy engine
  }
  __syncthreads();
  T* s = reinterpret_cast<T*>(slice_smem);
  const std::int64_t items = M * S;
  if (blockIdx.x >= items) return;
  const std::int64_t per = chunk_vecs(slice / V);  // vectors per chunk, every item's
  const int mine = static_cast<int>((items - blockIdx.x + gridDim.x - 1) / gridDim.x);
  const int chunks = mine * kSliceChunks;
  const auto item_at = [&](int t) {
    return split_item(x, N, ld_x, S, slice, slice, blockIdx.x + std::int64_t{t} * gridDim.x);
  };
  // Chunk j: its vectors of the item's slice ([c per, (c + 1) per), c = j % 4), and its slot
  // (which holds them from the slot's first byte on).
  const auto range = [&](int j, const SplitItem<T>& it) {
    return chunk_range(j % kSliceChunks, 0, it.n / V, per);
  };
  const auto slot = [&](int j) { return s + (j % slots) * per * V; };
  const auto issue = [&](int j) {  // every thread, once per chunk
    if (j >= chunks) return;
    const SplitItem<T> it = item_at(j / kSliceChunks);
    const VecRange r = range(j, it);
    issue_chunk_copy(slot(j), it.src + r.begin * V, VecRange{0, r.end - r.begin},
                     bars[j % slots], false);
  };
  for (int j = 0; j < slots; ++j) issue(j);

  for (int t = 0; t < mine; ++t) {
    const SplitItem<T> it = item_at(t);
    // 1. The slice's statistics, chunk by chunk as they land (the slot's use j / slots: its phase
    //    parity).
    RowStats st = empty_stats();
#pragma unroll
    for (int c = 0; c < kSliceChunks; ++c) {
      const int j = t * kSliceChunks + c;
      bars[j % slots].wait_parity(((j / slots) & 1) != 0);
      const VecRange r = range(j, it);
      st = smem_vec_stats<kStatsEveryLoad<T, false>>(slot(j), 0, r.end - r.begin, st);
    }
    st = block_allreduce<kSliceThreads>(st, MergeOp{});
    // 2-3. Publish; merge the row's S partials (as the kernel above, tagged).
    if (threadIdx.x == 0) publish_partial(partials + it.row * S + it.part, st);
    const RowScale scale = row_scale(block_allreduce<kSliceThreads>(
        thread_partials(partials + it.row * S, S, true), MergeOp{}));
    // 4. Write the slice chunk by chunk; each slot, once every thread is done with it, takes the
    //    chunk `slots` on.
    T* y_slice = y + it.row * ld_y + it.begin;
#pragma unroll
    for (int c = 0; c < kSliceChunks; ++c) {
      const int j = t * kSliceChunks + c;
      const VecRange r = range(j, it);
      write_slice_vecs(slot(j), y_slice + r.begin * V, 0, r.end - r.begin, true, scale);
      __syncthreads();  // every read of slot j % slots is done
      issue(j + slots);
    }
  }
#else
  SMR_ARCH_UNSUPPORTED();
#endif
}

// The pipelined exchange (SplitRowPlan::buffers = B = 2 or 3, rows on chip only): B slices per
// block, in B equal parts of its shared memory, so that most of a row's exchange is off the
// critical path (docs/performance.md, "split_row", has the wait a trip with and without it).
// In the kernel above, once a block's slice has landed it loads
// and stores nothing until the row's last partial arrives: the statistics pass over shared memory,
// the publication, the L2 round trip and the wait for the slowest block of the row. Here item
// k + 1 is already in another part while item k waits to be written, so a loop trip over item k is
//   1. load this thread's partial of item k's row (thread i takes slot i; S <= the grid <= 512);
//   2. take item k + 1's statistics from its part and publish them -- a whole trip before any
//      block needs them;
//   3. finish step 1: item k's partials were published in step 2 of the trip before, so they are
//      normally in the registers already (no wait for the slowest block: only for one a whole
//      trip late); merge them;
//   4. write item k chunk by chunk, copying item k + B's chunk c into its bytes once chunk c is
//      written (as the kernel above does with the next item).
// B = 2 gives the exchange a trip of slack but not the copies: item k + 1's chunks were issued in
// step 4 of the trip before, the phase just before step 2, and step 2 waits for them. B = 3
// issues them two trips ahead -- a whole trip of lead time -- for slices a third of the shared
// memory (S three times the one-slice plan's). On the H200 that pays only where the slices need
// not shrink for it (N = 2^21 fp32), not against two longer slices (2^19-2^20):
// results/h200/tuning/; docs/performance.md, "split_row".
// A block's step 3 depends on its row's blocks having finished the trip before last: the rows
// cannot deadlock (every block resident, every block publishes before it waits). The bytes and
// FLOPs are the kernel above's for rows on chip; each slice is 1/B as long, so a row is over B
// times as many blocks (the partials with them). Tagged partials only; the x_tma path only (the
// dispatch gives every row the room for its window). Two options, both taken by the two-slice
// defaults (each faster with than without on the H200: results/h200/tuning/):
// `prefetch` -- at the start of trip k thread 0 prefetches item k + B into L2, so that its DRAM
// reads run during steps 1-3 and step 4's copies find it there; kRepoll -- step 2 loads again a
// partial that step 1 found unpublished.
// One block per SM (its shared memory is all the parts): the launch bounds give each thread up to
// 128 registers.
template <int kBuffers>
__device__ __forceinline__ int next_part(int b) {
  if constexpr (kBuffers == 2) {
    return b ^ 1;
  } else {
    return b + 1 == kBuffers ? 0 : b + 1;
  }
}

template <class T, bool kWindowed, int kBuffers, bool kRepoll>
__global__ void __launch_bounds__(kSliceThreads, 1)
    split_row_pipelined_kernel(const SplitPipelinedParams<T> a) {
#if SMR_ARCH_HAS_CLUSTERS  // TMA bulk copies, fence.proxy.async (common/arch.cuh)
  const T* __restrict__ x = a.x;
  T* __restrict__ y = a.y;
  const std::int64_t M = a.M, N = a.N, ld_x = a.ld_x, ld_y = a.ld_y, slice = a.slice,
                     part = a.part;
  const int S = a.S;
  const bool y_vec = a.y_vec, prefetch = a.prefetch;
  float2* __restrict__ partials = a.partials;
  static_assert(kBuffers == 2 || kBuffers == 3);
  constexpr int V = Vec<T>::kElems;
  extern __shared__ __align__(kVecBytes) unsigned char slice_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier bars[kBuffers][kSliceChunks];
#pragma unroll
  for (int b = 0; b < kBuffers; ++b) init_slice_barriers(bars[b]);
  // Part b of shared memory (`part` elements, whole vectors) holds the items k with
  // k % kBuffers == b; each part's barriers complete one phase per item, the parity of its next
  // phase kept as bit b of `phases` (no array indexed at run time: it would live in local memory).
  const auto buf = [&](int b) { return reinterpret_cast<T*>(slice_smem) + b * part; };
  unsigned phases = 0;
  const std::int64_t items = M * S;
  const std::int64_t per = chunk_vecs(slice / V);  // chunk c lies in the same bytes for every item
  const auto item_at = [&](std::int64_t item) {
    return split_item(x, N, ld_x, S, slice, slice, item);
  };
  const auto window_of = [&](const SplitItem<T>& it) {
    return slice_window<kWindowed>(it.src, it.n, true);
  };
  // Item `item`'s copies into part b: the chunks by the copy engine, its edges by the threads
  // (visible after the next __syncthreads).
  const auto copy_item = [&](std::int64_t item, int b) {
    const SplitItem<T> it = item_at(item);
    const SliceWindow w = window_of(it);
    SliceBarriers sb{bars[b]};
    issue_slice_copy(buf(b), it.src - w.lo, w, per, sb);
  };
  // This thread's share of item `item`'s statistics, from part b (waiting for each chunk).
  const auto thread_stats = [&](std::int64_t item, int b) {
    const SplitItem<T> it = item_at(item);
    SliceBarriers sb{bars[b], ((phases >> b) & 1u) != 0};
    const RowStats st = slice_stats<kWindowed>(buf(b), window_of(it), per, sb);
    phases ^= 1u << b;
    return st;
  };
  const auto publish = [&](std::int64_t item, RowStats st) {
    const SplitItem<T> it = item_at(item);
    if (threadIdx.x == 0) publish_partial(partials + it.row * S + it.part, st);
  };
  // Item `item`'s statistics from part b, reduced over the block and published.
  const auto publish_stats = [&](std::int64_t item, int b) {
    publish(item, block_allreduce<kSliceThreads>(thread_stats(item, b), MergeOp{}));
  };

  if (blockIdx.x >= items) return;
#pragma unroll
  for (int b = 0; b < kBuffers; ++b)
    if (blockIdx.x + b * gridDim.x < items) copy_item(blockIdx.x + b * gridDim.x, b);
  publish_stats(blockIdx.x, 0);

  int b = 0;  // the part holding item k
  for (std::int64_t item = blockIdx.x; item < items;
       item += gridDim.x, b = next_part<kBuffers>(b)) {
    const SplitItem<T> it = item_at(item);
    // 0. (prefetch) Item k + B, which step 4 copies in, brought towards L2 now: its DRAM reads
    //    overlap steps 1-3, where the block otherwise has none in flight.
    const std::int64_t refill = item + kBuffers * gridDim.x;
    if (prefetch && threadIdx.x == 0 && refill < items) {
      const SplitItem<T> pf = item_at(refill);
      prefetch_slice_l2(pf.src, window_of(pf));
    }
    float2* row_partials = partials + it.row * S;
    // 1. This thread's partial of the row, as it is now.
    const bool has_slot = static_cast<int>(threadIdx.x) < S;
    unsigned long long bits = has_slot ? partial_bits(row_partials + threadIdx.x) : 0;
    // 2. The next item's statistics, published a trip ahead. (kRepoll: a slot that step 1 found
    //    unpublished is loaded again once the statistics are taken, before their block reduction,
    //    so that its L2 round trip overlaps the reduction instead of following it.)
    const std::int64_t next = item + gridDim.x;
    if (next < items) {
      const RowStats st = thread_stats(next, next_part<kBuffers>(b));
      if (kRepoll && has_slot && unpublished(bits)) bits = partial_bits(row_partials + threadIdx.x);
      publish(next, block_allreduce<kSliceThreads>(st, MergeOp{}));
    }
    // 3. This row's statistics.
    const RowStats mine =
        has_slot ? await_partial(row_partials + threadIdx.x, bits) : empty_stats();
    const RowScale scale = row_scale(block_allreduce<kSliceThreads>(mine, MergeOp{}));

    // 4. Write item k; copy item k + kBuffers into its bytes as they are freed.
    const SliceWindow w = window_of(it);
    T* y_window = y + it.row * ld_y + it.begin - w.lo;
    const bool has_refill = refill < items;
    const SplitItem<T> rf = item_at(has_refill ? refill : item);
    const SliceWindow rw = window_of(rf);
    write_slice_edges(buf(b), y_window, w, scale);  // before any copy may land on their vectors
    write_and_refill(buf(b), y_window, w, per, y_vec, scale, has_refill, rf.src - rw.lo, rw,
                     SliceBarriers{bars[b]});
    if (has_refill) copy_slice_rest(buf(b), rf.src - rw.lo, rw);
  }
#else
  SMR_ARCH_UNSUPPORTED();
#endif
}

// The pipelined kernel for `buffers` slices per block (2 or 3), with the early re-poll or without.
template <class T, bool kWindowed>
auto pipelined_kernel(int buffers, bool repoll) {
  if (repoll)
    return buffers == 3 ? split_row_pipelined_kernel<T, kWindowed, 3, true>
                        : split_row_pipelined_kernel<T, kWindowed, 2, true>;
  return buffers == 3 ? split_row_pipelined_kernel<T, kWindowed, 3, false>
                      : split_row_pipelined_kernel<T, kWindowed, 2, false>;
}

// The dynamic shared memory limit of every instantiation.
template <class T>
void allow_split_kernels() {
  allow_all_dynamic_shared_memory(split_row_kernel<T, false>);
  allow_all_dynamic_shared_memory(split_row_kernel<T, true>);
  if constexpr (sizeof(T) == 4)
    allow_all_dynamic_shared_memory(split_row_kernel<T, false, true>);  // interleaved
  allow_all_dynamic_shared_memory(split_row_ring_kernel<T>);
  for (const int buffers : {2, 3})
    for (const bool repoll : {false, true}) {
      allow_all_dynamic_shared_memory(pipelined_kernel<T, false>(buffers, repoll));
      allow_all_dynamic_shared_memory(pipelined_kernel<T, true>(buffers, repoll));
    }
}
// Once per process and type.
template <class T>
void prepare() {
  static const bool done = (allow_split_kernels<T>(), true);
  (void)done;
}

// The kernel a plan runs (`windowed`: rows off 16-byte boundaries).
template <class T>
const void* split_kernel(const SplitRowPlan& plan, bool windowed) {
  if (plan.ring && !windowed) return reinterpret_cast<const void*>(split_row_ring_kernel<T>);
  if (plan.buffers > 1)
    return windowed ? reinterpret_cast<const void*>(
                          pipelined_kernel<T, true>(plan.buffers, plan.repoll))
                    : reinterpret_cast<const void*>(
                          pipelined_kernel<T, false>(plan.buffers, plan.repoll));
  return windowed ? reinterpret_cast<const void*>(split_row_kernel<T, true>)
                  : reinterpret_cast<const void*>(split_row_kernel<T, false>);
}

// Blocks of the plan's kernel the device holds at once with its shared memory, asked once per
// kernel and size (the launch path of a timed run should not pay an occupancy query).
template <class T>
std::int64_t resident_split_blocks(const SplitRowPlan& plan) {
  static std::mutex mu;
  static std::map<std::tuple<int, std::size_t, int, bool, bool>, std::int64_t> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  const std::lock_guard<std::mutex> lock(mu);
  const auto key = std::make_tuple(device, plan.smem_bytes, plan.buffers, plan.repoll, plan.ring);
  if (auto it = cache.find(key); it != cache.end()) return it->second;
  // (Both instantiations of a kernel take the same resources; the ring has only the aligned one,
  // and the blocks of a launch that falls back from it hold no more than its own.)
  const std::int64_t n = resident_blocks(split_kernel<T>(plan, !plan.ring), kSliceThreads,
                                         plan.smem_bytes);
  cache.emplace(key, n);
  return n;
}

void check_plan(const SplitRowPlan& plan, const Problem& p) {
  const std::int64_t V = kVecBytes / dtype_bytes(p.dtype);
  if (plan.slices < 1 || plan.slice < 1 || plan.slice % V != 0 ||
      static_cast<std::int64_t>(plan.slices) * plan.slice < p.N)
    throw std::invalid_argument("split_row: " + std::to_string(plan.slices) + " slices of " +
                                std::to_string(plan.slice) +
                                " elements (a multiple of 16 bytes each) must cover N = " +
                                std::to_string(p.N));
  if (plan.resident < V || plan.resident % V != 0 ||
      plan.smem_bytes < static_cast<std::size_t>(plan.resident * dtype_bytes(p.dtype)))
    throw std::invalid_argument("split_row: resident part of " + std::to_string(plan.resident) +
                                " elements must be whole vectors within " +
                                std::to_string(plan.smem_bytes) + " bytes of shared memory");
  if (plan.grid < plan.slices)
    throw std::invalid_argument("split_row: a grid of " + std::to_string(plan.grid) +
                                " blocks cannot hold the " + std::to_string(plan.slices) +
                                " slices of one row at once");
  if (plan.interleaved &&
      (p.dtype != DType::f32 || plan.buffers != 1 || plan.resident >= plan.slice))
    throw std::invalid_argument("split_row: interleaved streamed parts are built for fp32 rows "
                                "read twice (one slice per block, resident part shorter than the "
                                "slice)");
  if (plan.buffers < 1 || plan.buffers > 3)
    throw std::invalid_argument("split_row: " + std::to_string(plan.buffers) +
                                " slices per block; 1, or 2 or 3 (the pipelined exchange)");
  if (plan.repoll && plan.buffers == 1)
    throw std::invalid_argument("split_row: the early re-poll of unpublished partials is the "
                                "pipelined exchange's (2 or 3 slices per block), not one slice's");
  if (plan.ring && (plan.buffers != 1 || plan.resident != plan.slice || !plan.tagged_partials ||
                    plan.interleaved || split_ring_slots(plan, p.dtype) <= kSliceChunks))
    throw std::invalid_argument("split_row: the ring of chunks needs one whole slice per block in "
                                "shared memory, tagged partials and room for more than " +
                                std::to_string(kSliceChunks) + " chunks");
  if (plan.buffers > 1 && (plan.resident != plan.slice || !plan.tagged_partials ||
                           plan.slices > kSliceThreads))
    throw std::invalid_argument("split_row: the pipelined exchange (2 or 3 slices per block) needs "
                                "whole slices in shared memory, tagged partials and at most " +
                                std::to_string(kSliceThreads) + " slices a row");
}

}  // namespace

void launch_split_row(const SplitRowPlan& plan, const Launch& l) {
  const Problem& p = l.p;
  check_plan(plan, p);
  const std::size_t partial_bytes =
      static_cast<std::size_t>((p.M * plan.slices * 8 + 15) / 16 * 16);
  const std::size_t need = partial_bytes + static_cast<std::size_t>(p.M) * 4;
  if (l.workspace == nullptr)
    throw std::invalid_argument("split_row: needs a workspace of " + std::to_string(need) +
                                " bytes (KernelInfo::workspace_bytes), got none");
  auto* partials = static_cast<float2*>(l.workspace);
  auto* arrived =
      reinterpret_cast<unsigned*>(static_cast<unsigned char*>(l.workspace) + partial_bytes);

  with_storage(p.dtype, [&](auto type_tag) {
    using T = decltype(type_tag);
    const bool windowed = !is_vector_aligned(l.x, p.ld_x, sizeof(T));
    prepare<T>();
    const std::int64_t resident_max = resident_split_blocks<T>(plan);
    if (plan.grid > resident_max)
      throw std::invalid_argument("split_row: the grid of " + std::to_string(plan.grid) +
                                  " blocks exceeds the " + std::to_string(resident_max) +
                                  " this device holds at once with " +
                                  std::to_string(plan.smem_bytes) + " bytes of shared memory");
    if (plan.tagged_partials)
      CUDA_CHECK(cudaMemsetAsync(partials, kUnpublishedByte,
                                 static_cast<std::size_t>(p.M * plan.slices) * 8, l.stream));
    else
      CUDA_CHECK(cudaMemsetAsync(arrived, 0, static_cast<std::size_t>(p.M) * 4, l.stream));

    cudaLaunchConfig_t cfg{};
    cfg.gridDim = dim3(static_cast<unsigned>(plan.grid));
    cfg.blockDim = dim3(kSliceThreads);
    cfg.dynamicSmemBytes = plan.smem_bytes;
    cfg.stream = l.stream;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeCooperative;  // all blocks resident, or the launch fails
    attr[0].val.cooperative = 1;
    cfg.attrs = attr;
    cfg.numAttrs = 1;
    // The copy engine brings each slice's window when the shared memory it lies in has room for
    // it (the dispatch gives rows that are not 16-byte aligned one vector more).
    const auto tma_fits = [&](std::size_t bytes) {
      return static_cast<std::size_t>(
                 (plan.resident + max_row_head(l.x, p.ld_x, sizeof(T))) * sizeof(T)) <= bytes;
    };
    // Pipelined where each of the plan's equal parts of the shared memory holds a slice's window.
    // Where one does not (rows that start off 16-byte boundaries while the plan, made for aligned
    // rows, has no room), the one-slice kernel runs on the same grid, its slice in all of the
    // block's shared memory.
    const std::size_t part_bytes = plan.smem_bytes / static_cast<std::size_t>(plan.buffers);
    const bool pipelined = plan.buffers > 1 && part_bytes % kVecBytes == 0 && tma_fits(part_bytes);
    const bool x_tma = tma_fits(pipelined ? part_bytes : plan.smem_bytes);
    const bool y_vec = x_tma && same_vector_offsets(l.x, p.ld_x, l.y, p.ld_y, sizeof(T));
    const auto* xp = static_cast<const T*>(l.x);
    auto* yp = static_cast<T*>(l.y);
    if (pipelined) {
      const auto kernel =
          windowed ? pipelined_kernel<T, true>(plan.buffers, plan.repoll)
                   : pipelined_kernel<T, false>(plan.buffers, plan.repoll);
      const SplitPipelinedParams<T> args{xp,         yp,
                                         p.M,        p.N,
                                         p.ld_x,     p.ld_y,
                                         plan.slices, plan.slice,
                                         static_cast<std::int64_t>(part_bytes / sizeof(T)),
                                         y_vec,      plan.prefetch,
                                         partials};
      CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args));
    } else {
      // The ring: rows of whole vectors on 16-byte boundaries whose windows line up (else the
      // kernel below, on the same slices, each copied in as the one before is written).
      if (plan.ring && !windowed && y_vec && p.N % Vec<T>::kElems == 0) {
        const SplitRingParams<T> args{xp,          yp,         p.M,
                                      p.N,         p.ld_x,     p.ld_y,
                                      plan.slices, plan.slice, split_ring_slots(plan, p.dtype),
                                      partials};
        CUDA_CHECK(cudaLaunchKernelEx(&cfg, split_row_ring_kernel<T>, args));
      } else {
        auto kernel = windowed ? split_row_kernel<T, true> : split_row_kernel<T, false>;
        // Interleaved: rows on 16-byte boundaries whose windows line up (else the kernel above,
        // the same plan's slices each with its own streamed part: correct, at the speed before).
        if constexpr (sizeof(T) == 4) {
          if (plan.interleaved && !windowed && x_tma && y_vec)
            kernel = split_row_kernel<T, false, true>;
        }
        const SplitRowParams<T> args{xp,          yp,           p.M,          p.N,
                                     p.ld_x,      p.ld_y,       plan.slices,  plan.slice,
                                     plan.resident, x_tma,      y_vec,        plan.prefetch,
                                     plan.tagged_partials, partials, arrived};
        CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, args));
      }
    }
    CUDA_CHECK_LAUNCH();
  });
}

int split_row_blocks_per_sm(const SplitRowPlan& plan, DType t) {
  int per_sm = 0;
  with_storage(t, [&](auto type_tag) {
    using T = decltype(type_tag);
    prepare<T>();
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
        &per_sm, split_kernel<T>(plan, true), kSliceThreads, plan.smem_bytes));
  });
  return per_sm;
}

}  // namespace smr::prod
