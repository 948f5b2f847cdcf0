// Inputs and the fp64 reference on the GPU (verify_gpu.hpp says what; docs/verification.md why).
//
// The checker works on items: a warp takes kSegment elements of one row (a row of at most
// kSegment elements is one item). Rows of one item get their statistics inside the warp (max,
// then the sum of exp(x - max), in double); longer rows get them in four short kernels:
// per-item partial maxima, per-row maxima, per-item partial sums, per-row sums. Then every item's
// elements are checked against exp(x - max) / sum, each block folds its warps' findings into one
// partial, and one block folds the partials. Every sum is taken in a fixed order (per thread
// along its grid-stride, warps by shuffle-down trees, blocks in index order) on a grid that
// depends on the shape only, so the result is the same on every card and every run; maxima,
// minima and counts do not depend on the order at all.
#include "harness/verify_gpu.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "harness/device.hpp"
#include "harness/input_gen.hpp"
#include "harness/storage.hpp"
#include "kernels/cuda_check.hpp"

namespace smr {
namespace {

constexpr int kThreads = 256;
constexpr int kWarpsPerBlock = kThreads / 32;
constexpr unsigned kFullMask = 0xFFFFFFFFu;
// Elements of a row one warp checks (128 a lane).
constexpr std::int64_t kSegment = 4096;
// At most this many blocks: a fixed grid (not the card's SM count), so that the order of every
// sum, and so the result, depends on the shape alone.
constexpr std::int64_t kMaxBlocks = 2048;
constexpr unsigned long long kNone = ~0ull;

// ---- storage types ----------------------------------------------------------------------------

__device__ __forceinline__ float value_of(float v) { return v; }
__device__ __forceinline__ float value_of(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float value_of(__half v) { return __half2float(v); }

__device__ __forceinline__ unsigned bits_of(float v) { return __float_as_uint(v); }
__device__ __forceinline__ unsigned bits_of(__nv_bfloat16 v) { return __bfloat16_as_ushort(v); }
__device__ __forceinline__ unsigned bits_of(__half v) { return __half_as_ushort(v); }

// The poison: all bits set (what a byte-wise cudaMemset(kPoisonByte) leaves, verify.hpp).
template <class T>
__device__ __forceinline__ bool is_poison_bits(unsigned bits) {
  return sizeof(T) == 4 ? bits == 0xFFFFFFFFu : bits == 0xFFFFu;
}

template <class T>
__device__ __forceinline__ T storage_of(float v);
template <>
__device__ __forceinline__ float storage_of<float>(float v) {
  return v;
}
template <>
__device__ __forceinline__ __nv_bfloat16 storage_of<__nv_bfloat16>(float v) {
  return __float2bfloat16_rn(v);
}
template <>
__device__ __forceinline__ __half storage_of<__half>(float v) {
  return __float2half_rn(v);
}

// ---- the fill ---------------------------------------------------------------------------------

template <class T>
__global__ void fill_kernel(T* x, std::int64_t M, std::int64_t N, std::int64_t ld,
                            std::uint64_t seed, InputKind kind) {
  const std::int64_t total = M * ld;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const std::int64_t row = i / ld;
    const std::int64_t col = i - row * ld;
    const float v = col < N ? gen::input_value(seed, kind, row, N, col) : kPaddingSentinel;
    x[i] = storage_of<T>(v);
  }
}

// ---- the checker's pieces ---------------------------------------------------------------------

struct Shape {
  std::int64_t M, N, ld_x, ld_y;
  std::int64_t segments;  // items per row
};

struct Rules {
  double tolerance;
  double floor;  // the absolute floor of the tolerance check (kAbsoluteFloor; fp16: 2^-14)
};

// One fault, as the host needs it for the text.
struct FaultInfo {
  int kind;  // FaultKind, or kPaddingFault
  float got;
  double want;
  double err;
};
constexpr int kPaddingFault = 100;

// What a thread, a block, and the whole check find. Two streams of faults: structural ones (never
// written, a wrong NaN pattern, an infinity, a write into the padding) and errors over the
// tolerance, kept apart because fp16's rule reports the second only when there is none of the
// first. first_*: the lowest element index row * ld_y + column of the stream (kNone if none).
struct Findings {
  double worst1;  // largest error against kAbsoluteFloor, over the finite comparisons
  double worst2;  // largest error against rules.floor
  double diff_sq, ref_sq;
  unsigned long long n_struct, n_far;
  unsigned long long first_struct, first_far;
  FaultInfo info_struct, info_far;
};

__device__ __forceinline__ void init(Findings& f) {
  f.worst1 = 0;
  f.worst2 = 0;
  f.diff_sq = 0;
  f.ref_sq = 0;
  f.n_struct = 0;
  f.n_far = 0;
  f.first_struct = kNone;
  f.first_far = kNone;
  f.info_struct = FaultInfo{0, 0.f, 0.0, 0.0};
  f.info_far = FaultInfo{0, 0.f, 0.0, 0.0};
}

// A row's statistics: its max over the non-NaN, non-+inf entries, and whether it is a NaN row
// (it holds a NaN or a +inf, or only -inf); the sum of exp(x - max) once the max is known.
template <class T>
__device__ void warp_max(const T* xr, std::int64_t begin, std::int64_t end, int lane, double& max,
                         bool& poisoned) {
  max = -HUGE_VAL;
  poisoned = false;
  for (std::int64_t j = begin + lane; j < end; j += 32) {
    const double v = value_of(xr[j]);
    if (isnan(v) || v == HUGE_VAL)
      poisoned = true;
    else
      max = fmax(max, v);
  }
  for (int off = 16; off > 0; off /= 2) max = fmax(max, __shfl_xor_sync(kFullMask, max, off));
  poisoned = __any_sync(kFullMask, poisoned);
}

// The sum over the warp, in a fixed order; every lane gets lane 0's total.
__device__ __forceinline__ double warp_sum_fixed(double s) {
  for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(kFullMask, s, off);
  return __shfl_sync(kFullMask, s, 0);
}

template <class T>
__device__ double warp_exp_sum(const T* xr, std::int64_t begin, std::int64_t end, int lane,
                               double max) {
  double s = 0;
  for (std::int64_t j = begin + lane; j < end; j += 32)
    s += exp(static_cast<double>(value_of(xr[j])) - max);  // exp(-inf) = 0
  return warp_sum_fixed(s);
}

__device__ __forceinline__ std::int64_t min64(std::int64_t a, std::int64_t b) {
  return a < b ? a : b;
}

__device__ __forceinline__ bool is_nan_row(double max) { return isnan(max) || max == -HUGE_VAL; }

__device__ __forceinline__ void note_struct(Findings& f, unsigned long long at, int kind, float got,
                                            double want) {
  if (f.n_struct++ == 0) {  // a thread meets its elements in increasing index order
    f.first_struct = at;
    f.info_struct = FaultInfo{kind, got, want, 0.0};
  }
}

// One element against the reference, verify_output's rules in its order.
template <class T>
__device__ __forceinline__ void check_element(Findings& f, T yv, double xv, double max, double sum,
                                              bool nan_row, unsigned long long at,
                                              const Rules& rules) {
  const unsigned bits = bits_of(yv);
  const float got = value_of(yv);
  const double want = nan_row ? static_cast<double>(NAN) : exp(xv - max) / sum;
  if (is_poison_bits<T>(bits)) {
    note_struct(f, at, static_cast<int>(FaultKind::unwritten), got, want);
  } else if (nan_row) {
    if (!isnan(got)) note_struct(f, at, static_cast<int>(FaultKind::not_nan), got, want);
  } else if (!isfinite(got)) {
    note_struct(f, at, static_cast<int>(FaultKind::not_finite), got, want);
  } else {
    const double d = fabs(static_cast<double>(got) - want);
    const double e1 = d / fmax(fabs(want), kAbsoluteFloor);
    const double e2 = d / fmax(fabs(want), rules.floor);
    f.diff_sq += d * d;
    f.ref_sq += want * want;
    f.worst1 = fmax(f.worst1, e1);
    f.worst2 = fmax(f.worst2, e2);
    if (!(e2 <= rules.tolerance) && f.n_far++ == 0) {
      f.first_far = at;
      f.info_far = FaultInfo{static_cast<int>(FaultKind::too_far), got, want, e2};
    }
  }
}

// Folds the block's threads' findings into out[blockIdx.x] (fixed order), then the owners of the
// block's first faults write their details. Every thread of the block must call it.
struct BlockScratch {
  double worst1[kWarpsPerBlock], worst2[kWarpsPerBlock], diff_sq[kWarpsPerBlock],
      ref_sq[kWarpsPerBlock];
  unsigned long long n_struct[kWarpsPerBlock], n_far[kWarpsPerBlock];
  unsigned long long first_struct[kWarpsPerBlock], first_far[kWarpsPerBlock];
  unsigned long long block_first_struct, block_first_far;
};

__device__ void block_fold(const Findings& f, Findings* out) {
  __shared__ BlockScratch s;
  const int lane = static_cast<int>(threadIdx.x) % 32, warp = static_cast<int>(threadIdx.x) / 32;
  double w1 = f.worst1, w2 = f.worst2, dsq = f.diff_sq, rsq = f.ref_sq;
  unsigned long long ns = f.n_struct, nf = f.n_far, fs = f.first_struct, ff = f.first_far;
  for (int off = 16; off > 0; off /= 2) {
    w1 = fmax(w1, __shfl_down_sync(kFullMask, w1, off));
    w2 = fmax(w2, __shfl_down_sync(kFullMask, w2, off));
    dsq += __shfl_down_sync(kFullMask, dsq, off);
    rsq += __shfl_down_sync(kFullMask, rsq, off);
    ns += __shfl_down_sync(kFullMask, ns, off);
    nf += __shfl_down_sync(kFullMask, nf, off);
    fs = min(fs, __shfl_down_sync(kFullMask, fs, off));
    ff = min(ff, __shfl_down_sync(kFullMask, ff, off));
  }
  if (lane == 0) {
    s.worst1[warp] = w1;
    s.worst2[warp] = w2;
    s.diff_sq[warp] = dsq;
    s.ref_sq[warp] = rsq;
    s.n_struct[warp] = ns;
    s.n_far[warp] = nf;
    s.first_struct[warp] = fs;
    s.first_far[warp] = ff;
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    Findings b;
    init(b);
    for (int w = 0; w < kWarpsPerBlock; ++w) {
      b.worst1 = fmax(b.worst1, s.worst1[w]);
      b.worst2 = fmax(b.worst2, s.worst2[w]);
      b.diff_sq += s.diff_sq[w];
      b.ref_sq += s.ref_sq[w];
      b.n_struct += s.n_struct[w];
      b.n_far += s.n_far[w];
      b.first_struct = min(b.first_struct, s.first_struct[w]);
      b.first_far = min(b.first_far, s.first_far[w]);
    }
    s.block_first_struct = b.first_struct;
    s.block_first_far = b.first_far;
    Findings& o = out[blockIdx.x];
    o.worst1 = b.worst1;
    o.worst2 = b.worst2;
    o.diff_sq = b.diff_sq;
    o.ref_sq = b.ref_sq;
    o.n_struct = b.n_struct;
    o.n_far = b.n_far;
    o.first_struct = b.first_struct;
    o.first_far = b.first_far;
  }
  __syncthreads();
  // Each element index belongs to one thread: at most one owner per stream.
  if (f.first_struct != kNone && f.first_struct == s.block_first_struct)
    out[blockIdx.x].info_struct = f.info_struct;
  if (f.first_far != kNone && f.first_far == s.block_first_far)
    out[blockIdx.x].info_far = f.info_far;
}

// ---- the checker's kernels ------------------------------------------------------------------

// Per item: the partial max (NaN when the item holds a NaN or a +inf).
template <class T>
__global__ void partial_max_kernel(const T* x, Shape sh, double* part) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  const std::int64_t items = sh.M * sh.segments;
  for (std::int64_t item =
           static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
       item < items; item += warps) {
    const std::int64_t row = item / sh.segments, seg = item - row * sh.segments;
    const std::int64_t begin = seg * kSegment, end = min64(sh.N, begin + kSegment);
    double max;
    bool poisoned;
    warp_max(x + row * sh.ld_x, begin, end, lane, max, poisoned);
    if (lane == 0) part[item] = poisoned ? static_cast<double>(NAN) : max;
  }
}

// Per row: the max of its items' partial maxima (NaN when any is NaN).
__global__ void row_max_kernel(const double* part, Shape sh, double* row_max) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
       row < sh.M; row += warps) {
    double max = -HUGE_VAL;
    bool poisoned = false;
    for (std::int64_t k = lane; k < sh.segments; k += 32) {
      const double v = part[row * sh.segments + k];
      if (isnan(v))
        poisoned = true;
      else
        max = fmax(max, v);
    }
    for (int off = 16; off > 0; off /= 2) max = fmax(max, __shfl_xor_sync(kFullMask, max, off));
    poisoned = __any_sync(kFullMask, poisoned);
    if (lane == 0) row_max[row] = poisoned ? static_cast<double>(NAN) : max;
  }
}

// Per item: the partial sum of exp(x - max) (0 for a NaN row, which needs none).
template <class T>
__global__ void partial_sum_kernel(const T* x, Shape sh, const double* row_max, double* part) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  const std::int64_t items = sh.M * sh.segments;
  for (std::int64_t item =
           static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
       item < items; item += warps) {
    const std::int64_t row = item / sh.segments, seg = item - row * sh.segments;
    const std::int64_t begin = seg * kSegment, end = min64(sh.N, begin + kSegment);
    const double max = row_max[row];
    double s = 0;
    if (!is_nan_row(max)) s = warp_exp_sum(x + row * sh.ld_x, begin, end, lane, max);
    if (lane == 0) part[item] = s;
  }
}

// Per row: the sum of its items' partial sums, lane by lane in item order, then a fixed tree.
__global__ void row_sum_kernel(const double* part, Shape sh, double* row_sum) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
       row < sh.M; row += warps) {
    double s = 0;
    for (std::int64_t k = lane; k < sh.segments; k += 32) s += part[row * sh.segments + k];
    s = warp_sum_fixed(s);
    if (lane == 0) row_sum[row] = s;
  }
}

// Every element of every item against the reference; the item that ends a row also checks the
// row's padding in y. kInline: items are whole rows, their statistics made here; else read from
// row_max / row_sum.
template <class T, bool kInline>
__global__ void check_kernel(const T* x, const T* y, Shape sh, const double* row_max,
                             const double* row_sum, Rules rules, Findings* out) {
  const int lane = static_cast<int>(threadIdx.x) % 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * kWarpsPerBlock;
  const std::int64_t items = sh.M * sh.segments;
  Findings f;
  init(f);
  for (std::int64_t item =
           static_cast<std::int64_t>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32;
       item < items; item += warps) {
    const std::int64_t row = item / sh.segments, seg = item - row * sh.segments;
    const std::int64_t begin = seg * kSegment, end = min64(sh.N, begin + kSegment);
    const T* xr = x + row * sh.ld_x;
    const T* yr = y + row * sh.ld_y;
    double max, sum = 1;
    if constexpr (kInline) {
      bool poisoned;
      warp_max(xr, 0, sh.N, lane, max, poisoned);
      if (poisoned) max = static_cast<double>(NAN);
      if (!is_nan_row(max)) sum = warp_exp_sum(xr, 0, sh.N, lane, max);
    } else {
      max = row_max[row];
      sum = row_sum[row];
    }
    const bool nan_row = is_nan_row(max);
    const auto base =
        static_cast<unsigned long long>(row) * static_cast<unsigned long long>(sh.ld_y);
    for (std::int64_t j = begin + lane; j < end; j += 32)
      check_element(f, yr[j], static_cast<double>(value_of(xr[j])), max, sum, nan_row,
                    base + static_cast<unsigned long long>(j), rules);
    if (seg == sh.segments - 1)
      for (std::int64_t j = sh.N + lane; j < sh.ld_y; j += 32) {
        const T yv = yr[j];
        if (!is_poison_bits<T>(bits_of(yv)))
          note_struct(f, base + static_cast<unsigned long long>(j), kPaddingFault, value_of(yv),
                      0.0);
      }
  }
  block_fold(f, out);
}

// One block: the blocks' partials folded in index order (thread t takes t, t + kThreads, ...),
// then the winners' details copied.
__global__ void final_kernel(const Findings* part, int count, Findings* out) {
  Findings f;
  init(f);
  int from_struct = -1, from_far = -1;
  for (int k = static_cast<int>(threadIdx.x); k < count; k += kThreads) {
    const Findings& p = part[k];
    f.worst1 = fmax(f.worst1, p.worst1);
    f.worst2 = fmax(f.worst2, p.worst2);
    f.diff_sq += p.diff_sq;
    f.ref_sq += p.ref_sq;
    f.n_struct += p.n_struct;
    f.n_far += p.n_far;
    if (p.first_struct < f.first_struct) {
      f.first_struct = p.first_struct;
      from_struct = k;
    }
    if (p.first_far < f.first_far) {
      f.first_far = p.first_far;
      from_far = k;
    }
  }
  // Each thread carries the details of its own first faults; block_fold has the owner of the
  // block's minimum write them.
  if (from_struct >= 0) f.info_struct = part[from_struct].info_struct;
  if (from_far >= 0) f.info_far = part[from_far].info_far;
  block_fold(f, out);
}

// ---- host side --------------------------------------------------------------------------------

int blocks_for(std::int64_t warps_of_work) {
  const std::int64_t blocks = (warps_of_work + kWarpsPerBlock - 1) / kWarpsPerBlock;
  return static_cast<int>(std::clamp<std::int64_t>(blocks, 1, kMaxBlocks));
}

void check_problem(const Problem& p, const char* who) {
  if (p.M < 1 || p.N < 1 || p.ld_x < p.N || p.ld_y < p.N)
    throw std::invalid_argument(std::string(who) + ": bad problem M = " + std::to_string(p.M) +
                                ", N = " + std::to_string(p.N) + ", ld_x = " +
                                std::to_string(p.ld_x) + ", ld_y = " + std::to_string(p.ld_y));
}

template <class T>
Findings run_check(const Problem& p, const void* xv, const void* yv, const Rules& rules,
                   cudaStream_t stream) {
  const T* x = static_cast<const T*>(xv);
  const T* y = static_cast<const T*>(yv);
  Shape sh{p.M, p.N, p.ld_x, p.ld_y, (p.N + kSegment - 1) / kSegment};
  const std::int64_t items = sh.M * sh.segments;
  const int blocks = blocks_for(items);
  DeviceBuffer partials(sizeof(Findings) * static_cast<std::size_t>(blocks));
  DeviceBuffer result(sizeof(Findings));
  DeviceBuffer part, row_max, row_sum;  // long rows only
  if (sh.segments == 1) {
    check_kernel<T, true><<<blocks, kThreads, 0, stream>>>(x, y, sh, nullptr, nullptr, rules,
                                                           partials.as<Findings>());
    CUDA_CHECK_LAUNCH();
  } else {
    part = DeviceBuffer(sizeof(double) * static_cast<std::size_t>(items));
    row_max = DeviceBuffer(sizeof(double) * static_cast<std::size_t>(sh.M));
    row_sum = DeviceBuffer(sizeof(double) * static_cast<std::size_t>(sh.M));
    const int row_blocks = blocks_for(sh.M);
    // Each kernel reads only what the one before it wrote, in stream order.
    partial_max_kernel<T><<<blocks, kThreads, 0, stream>>>(x, sh, part.as<double>());
    CUDA_CHECK_LAUNCH();
    row_max_kernel<<<row_blocks, kThreads, 0, stream>>>(part.as<double>(), sh,
                                                        row_max.as<double>());
    CUDA_CHECK_LAUNCH();
    partial_sum_kernel<T>
        <<<blocks, kThreads, 0, stream>>>(x, sh, row_max.as<double>(), part.as<double>());
    CUDA_CHECK_LAUNCH();
    row_sum_kernel<<<row_blocks, kThreads, 0, stream>>>(part.as<double>(), sh,
                                                        row_sum.as<double>());
    CUDA_CHECK_LAUNCH();
    check_kernel<T, false><<<blocks, kThreads, 0, stream>>>(
        x, y, sh, row_max.as<double>(), row_sum.as<double>(), rules, partials.as<Findings>());
    CUDA_CHECK_LAUNCH();
  }
  final_kernel<<<1, kThreads, 0, stream>>>(partials.as<Findings>(), blocks, result.as<Findings>());
  CUDA_CHECK_LAUNCH();
  Findings f{};
  CUDA_CHECK(cudaMemcpyAsync(&f, result.get(), sizeof f, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return f;  // the scratch buffers are freed after the work that used them has finished
}

std::string text_of(const Problem& p, unsigned long long at, const FaultInfo& info,
                    double tolerance) {
  const auto row = static_cast<std::int64_t>(at / static_cast<unsigned long long>(p.ld_y));
  const auto col = static_cast<std::int64_t>(at % static_cast<unsigned long long>(p.ld_y));
  if (info.kind == kPaddingFault) return describe_padding_write(p, row, col, info.got);
  return describe_fault(static_cast<FaultKind>(info.kind), row, col, info.got, info.want, info.err,
                        tolerance);
}

// y == x bit for bit: the first differing element index (row * N + column) by a block minimum
// and one atomicMin a block (the minimum does not depend on the order).
template <class U>
__global__ void copy_check_kernel(const U* x, const U* y, std::int64_t M, std::int64_t N,
                                  std::int64_t ld_x, std::int64_t ld_y, unsigned long long* first) {
  __shared__ unsigned long long block_first;
  if (threadIdx.x == 0) block_first = kNone;
  __syncthreads();
  const std::int64_t total = M * N;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < total;
       i += stride) {
    const std::int64_t row = i / N, col = i - row * N;
    if (x[row * ld_x + col] != y[row * ld_y + col]) {
      atomicMin(&block_first, static_cast<unsigned long long>(i));
      break;  // a thread's later elements have higher indices
    }
  }
  __syncthreads();
  if (threadIdx.x == 0 && block_first != kNone) atomicMin(first, block_first);
}

}  // namespace

void fill_input_device(void* x, const Problem& p, std::uint64_t seed, InputKind kind,
                       cudaStream_t stream) {
  if (p.M < 0 || p.N < 0 || p.ld_x < p.N)
    throw std::invalid_argument("fill_input_device: bad problem M = " + std::to_string(p.M) +
                                ", N = " + std::to_string(p.N) +
                                ", ld_x = " + std::to_string(p.ld_x));
  const std::int64_t total = p.M * p.ld_x;
  if (total == 0) return;
  const int blocks = static_cast<int>(
      std::clamp<std::int64_t>((total + kThreads - 1) / kThreads, 1, kMaxBlocks * 4));
  switch (p.dtype) {
    case DType::f32:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<float*>(x), p.M, p.N, p.ld_x, seed,
                                                   kind);
      break;
    case DType::bf16:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__nv_bfloat16*>(x), p.M, p.N, p.ld_x,
                                                   seed, kind);
      break;
    case DType::f16:
      fill_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<__half*>(x), p.M, p.N, p.ld_x, seed,
                                                   kind);
      break;
  }
  CUDA_CHECK_LAUNCH();
}

VerifyResult verify_output_device(const Problem& p, const void* x, const void* y, double tolerance,
                                  cudaStream_t stream) {
  check_problem(p, "verify_output_device");
  const bool fp16 = p.dtype == DType::f16;
  const Rules rules{tolerance, fp16 ? storage_absolute_floor(DType::f16) : kAbsoluteFloor};
  Findings f{};
  switch (p.dtype) {
    case DType::f32:
      f = run_check<float>(p, x, y, rules, stream);
      break;
    case DType::bf16:
      f = run_check<__nv_bfloat16>(p, x, y, rules, stream);
      break;
    case DType::f16:
      f = run_check<__half>(p, x, y, rules, stream);
      break;
  }
  VerifyResult r;
  r.tolerance = tolerance;
  r.rows_checked = p.M;
  r.rel_l2_err = f.ref_sq > 0.0 ? std::sqrt(f.diff_sq / f.ref_sq) : 0.0;
  if (!fp16) {
    // verify_output: every fault in one stream, the first of them in words.
    r.max_rel_err = f.worst1;
    const unsigned long long bad = f.n_struct + f.n_far;
    r.passed = bad == 0;
    if (!r.passed) {
      r.detail = f.first_struct < f.first_far ? text_of(p, f.first_struct, f.info_struct, tolerance)
                                              : text_of(p, f.first_far, f.info_far, tolerance);
      if (bad > 1) r.detail += " (and " + std::to_string(bad - 1) + " more)";
    }
    return r;
  }
  // verify_storage_output's fp16 rule: the structural checks first (errors against 1e-20 then),
  // else every element's error against fp16's floor.
  if (f.n_struct > 0) {
    r.max_rel_err = f.worst1;
    r.passed = false;
    r.detail = text_of(p, f.first_struct, f.info_struct, HUGE_VAL);
    if (f.n_struct > 1) r.detail += " (and " + std::to_string(f.n_struct - 1) + " more)";
    return r;
  }
  r.max_rel_err = f.worst2;
  r.passed = f.n_far == 0;
  if (!r.passed) {
    const auto row =
        static_cast<std::int64_t>(f.first_far / static_cast<unsigned long long>(p.ld_y));
    const auto col =
        static_cast<std::int64_t>(f.first_far % static_cast<unsigned long long>(p.ld_y));
    r.detail =
        describe_fp16_fault(row, col, f.info_far.err, tolerance, f.info_far.got, f.info_far.want);
  }
  return r;
}

VerifyResult verify_storage_output_device(const Problem& p, const void* x, const void* y,
                                          cudaStream_t stream) {
  return verify_output_device(p, x, y, storage_tolerance(p.dtype), stream);
}

VerifyResult verify_copy_device(const Problem& p, const void* x, const void* y,
                                cudaStream_t stream) {
  check_problem(p, "verify_copy_device");
  DeviceBuffer first(sizeof(unsigned long long));
  CUDA_CHECK(cudaMemsetAsync(first.get(), 0xFF, first.bytes(), stream));  // kNone
  const int blocks = static_cast<int>(
      std::clamp<std::int64_t>((p.M * p.N + kThreads - 1) / kThreads, 1, kMaxBlocks * 4));
  auto* out = first.as<unsigned long long>();
  if (dtype_bytes(p.dtype) == 4)
    copy_check_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const unsigned*>(x),
                                                       static_cast<const unsigned*>(y), p.M, p.N,
                                                       p.ld_x, p.ld_y, out);
  else
    copy_check_kernel<<<blocks, kThreads, 0, stream>>>(static_cast<const unsigned short*>(x),
                                                       static_cast<const unsigned short*>(y), p.M,
                                                       p.N, p.ld_x, p.ld_y, out);
  CUDA_CHECK_LAUNCH();
  unsigned long long at = kNone;
  CUDA_CHECK(cudaMemcpyAsync(&at, out, sizeof at, cudaMemcpyDeviceToHost, stream));
  CUDA_CHECK(cudaStreamSynchronize(stream));
  VerifyResult v;
  v.tolerance = 0;
  v.rows_checked = p.M;
  v.passed = at == kNone;
  if (!v.passed)
    v.detail =
        "row " + std::to_string(at / static_cast<unsigned long long>(p.N)) + ": y differs from x";
  return v;
}

}  // namespace smr
