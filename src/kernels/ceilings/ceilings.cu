// The two ceilings the roofline is drawn against: a device-to-device copy (the DRAM bandwidth a
// kernel that reads and writes every byte once can reach) and FP32 FMA throughput.
//
// copy: the best a softmax can do is read x once and write y once, so the copy of the same bytes
// is the bandwidth ceiling. A naive grid-stride copy does not reach it (one without vector loads
// fell well short of a good device copy on the H200): DRAM latency is long (of the order of
// 600-800 ns: an assumption here, not a measurement), and Little's law wants bandwidth x latency,
// ~3-4 MB, in flight across the card: ~25 KB per SM. So:
//   - 16-byte accesses (LDG.E.128 / STG.E.128): a quarter of the load/store instructions;
//   - each thread issues 4 independent 16-byte loads before its first store;
//   - one block per contiguous 16 KB chunk (256 threads x 4 loads), not a grid-stride loop, and a
//     block barrier between the block's loads and its stores: the pattern block_row reads and
//     writes rows with (copy_kernel below says why);
//   - at most 5 resident blocks per SM (shared memory reserved to cap them), as many as
//     block_row's 256 x 4 tile gets from its registers: 1280 threads x 64 B = 80 KB in flight per
//     SM, still ~3x the ~25 KB needed. More blocks were slower, not faster (the copy variants
//     below; docs/performance.md, "Tried and rejected").
// Bytes per copied byte: 1 read + 1 written. FLOPs: none.
// Any size and alignment: the aligned body goes 16 bytes at a time when src and dst have the
// same alignment modulo 16 (4 bytes at a time when they agree modulo 4, single bytes otherwise);
// the head before the first aligned word and the tail after the last (< 16 bytes each) are copied
// byte by byte by the first block.
//
// fma: one thread per element, kFmaChains independent chains of dependent FMAs per thread (an FMA
// has a 4-cycle latency; 8 chains and many warps per scheduler keep the FP32 pipes busy). The
// multiplier and addend are kernel arguments and every chain's result is summed into y, so the
// compiler can neither fold the chains nor drop them. FLOPs per element: kFmaFlopsPerElement
// (an FMA counts 2, Nsight Compute's convention); bytes per element: 4 written.
#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "kernels/ceilings/ceilings.hpp"
#include "kernels/common/arch.cuh"
#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/preconditions.hpp"

namespace smr {
namespace {

// The copy kernel's shape (ceilings::CopyVariant): block size, loads per thread, the order of a
// block's accesses and the cache hints. The ceiling runs CopyVariant{}; the GPU test times the
// others beside it (docs/performance.md records what they gave).
using ceilings::CopyVariant;

// A 16-byte load with the variant's hint: ld.global.nc (the read-only path, no hint), the same
// with L2::256B (the L2 fetches whole 256-byte blocks from DRAM, twice the 128-byte line), or
// ld.global.cs (streaming: evict first). L2::256B exists from sm_80 on (common/arch.cuh): on
// sm_75 that variant loads as the first does.
template <int kHint>
__device__ __forceinline__ uint4 load_word(const uint4* p) {
  if constexpr (kHint == 1) {
#if SMR_ARCH_HAS_SM80
    uint4 v;
    asm volatile("ld.global.nc.L2::256B.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
#else
    return __ldg(p);
#endif
  } else if constexpr (kHint == 2) {
    return __ldcs(p);
  } else {
    return __ldg(p);
  }
}
template <int kHint, class Word>
__device__ __forceinline__ Word load_word(const Word* p) {
  return __ldg(p);  // 4-byte and 1-byte words (misaligned copies): no hints
}
template <bool kStreaming, class Word>
__device__ __forceinline__ void store_word(Word* p, Word v) {
  if constexpr (kStreaming && sizeof(Word) == 16)
    __stcs(reinterpret_cast<uint4*>(p), reinterpret_cast<const uint4&>(v));
  else
    *p = v;
}

// Copies `words` Words starting at byte `head` of src/dst (where both are Word-aligned), and the
// `head` bytes before and `tail` bytes after them one byte at a time (first block only).
//
// Block b owns one contiguous chunk of kThreads x kLoads words (16 KB of uint4 by default):
// thread t loads words base + t, base + t + kThreads, ... (each load instruction of a warp reads
// 512 consecutive bytes), all kLoads before its first store, and the grid has one block per chunk
// -- the access pattern of block_row. kPhased adds block_row's other habit, a block barrier
// between the loads and the stores (block_row reduces there): the block's reads, then its writes.
// (A persistent grid-stride form, a thread's four loads a whole grid's stride apart, ran further
// from cudaMemcpyAsync: docs/performance.md, "Tried and rejected".)
template <class Word, int kThreads, int kLoads, bool kPhased, int kHint, bool kStreaming>
__global__ void __launch_bounds__(kThreads)
    copy_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                std::size_t head, std::size_t words, std::size_t tail) {
  constexpr std::size_t kChunk = static_cast<std::size_t>(kThreads) * kLoads;
  const Word* __restrict__ s = reinterpret_cast<const Word*>(src + head);
  Word* __restrict__ d = reinterpret_cast<Word*>(dst + head);
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kChunk + threadIdx.x;
  const bool whole = (static_cast<std::size_t>(blockIdx.x) + 1) * kChunk <= words;
  if (whole) {  // a whole chunk: every block but the last
    Word w[kLoads];
#pragma unroll
    for (int u = 0; u < kLoads; ++u) w[u] = load_word<kHint>(s + i + u * kThreads);  // loads...
    if constexpr (kPhased) __syncthreads();  // (a uniform branch: every block but the last)
#pragma unroll
    for (int u = 0; u < kLoads; ++u) store_word<kStreaming>(d + i + u * kThreads, w[u]);  // stores
  } else {
#pragma unroll
    for (int u = 0; u < kLoads; ++u)
      if (i + u * kThreads < words) d[i + u * kThreads] = s[i + u * kThreads];
  }
  if (blockIdx.x == 0) {
    const std::size_t t = threadIdx.x;
    if (t < head) {
      dst[t] = src[t];
    } else if (t < head + tail) {
      const std::size_t b = head + words * sizeof(Word) + (t - head);
      dst[b] = src[b];
    }
  }
}

// Dynamic shared memory that leaves room for only `blocks_per_sm` blocks on an SM (0: none).
// Worked out, and opted in above 48 KB, once per kernel, device and cap: a launch only looks it up.
template <class Kernel>
std::size_t occupancy_smem(Kernel kernel, int blocks_per_sm) {
  if (blocks_per_sm <= 0) return 0;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  static thread_local std::map<std::tuple<const void*, int, int>, std::size_t> cache;
  const auto key = std::make_tuple(reinterpret_cast<const void*>(kernel), device, blocks_per_sm);
  if (const auto it = cache.find(key); it != cache.end()) return it->second;
  int per_sm = 0;
  CUDA_CHECK(cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxSharedMemoryPerMultiprocessor, device));
  constexpr int kReservedPerBlock = 1024;  // sm_90 reserves 1 KB of shared memory per block
  const int smem = std::max(0, per_sm / blocks_per_sm - kReservedPerBlock);
  if (smem > 48 * 1024)
    CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  return cache[key] = static_cast<std::size_t>(smem);
}

template <class Word, int kThreads, int kLoads, bool kPhased, int kHint, bool kStreaming>
void launch_copy(const unsigned char* src, unsigned char* dst, std::size_t bytes,
                 cudaStream_t stream, int blocks_per_sm) {
  static_assert(kThreads >= 16, "the first block copies the < 16-byte head and tail");
  constexpr std::size_t kWord = sizeof(Word);
  constexpr std::size_t kChunk = static_cast<std::size_t>(kThreads) * kLoads;
  const std::size_t misalignment = reinterpret_cast<std::uintptr_t>(dst) % kWord;
  std::size_t head = (kWord - misalignment) % kWord;
  if (head > bytes) head = bytes;
  const std::size_t words = (bytes - head) / kWord;
  const std::size_t tail = bytes - head - words * kWord;
  const std::size_t chunks = (words + kChunk - 1) / kChunk;
  if (chunks > static_cast<std::size_t>(INT_MAX))
    throw std::invalid_argument("copy ceiling: " + std::to_string(bytes) +
                                " bytes need more blocks than a grid holds");
  const std::size_t blocks = chunks < 1 ? 1 : chunks;
  const auto kernel = copy_kernel<Word, kThreads, kLoads, kPhased, kHint, kStreaming>;
  const std::size_t smem = occupancy_smem(kernel, blocks_per_sm);
  kernel<<<static_cast<unsigned>(blocks), kThreads, smem, stream>>>(src, dst, head, words, tail);
  CUDA_CHECK_LAUNCH();
}

template <int kThreads, int kLoads, bool kPhased, int kHint, bool kStreaming>
void copy_with(const unsigned char* s, unsigned char* d, std::size_t bytes, cudaStream_t stream,
               int cap) {
  const std::uintptr_t offset =
      reinterpret_cast<std::uintptr_t>(s) - reinterpret_cast<std::uintptr_t>(d);
  if (offset % 16 == 0)
    launch_copy<uint4, kThreads, kLoads, kPhased, kHint, kStreaming>(s, d, bytes, stream, cap);
  else if (offset % 4 == 0)
    launch_copy<std::uint32_t, kThreads, kLoads, kPhased, 0, false>(s, d, bytes, stream, cap);
  else
    launch_copy<unsigned char, kThreads, kLoads, kPhased, 0, false>(s, d, bytes, stream, cap);
}

template <int kThreads, int kLoads, bool kPhased, int kHint, bool kStreaming>
bool try_variant(const CopyVariant& v, const unsigned char* s, unsigned char* d,
                 std::size_t bytes, cudaStream_t stream) {
  if (v.threads != kThreads || v.loads != kLoads || v.phased != kPhased ||
      static_cast<int>(v.load_hint) != kHint || v.streaming_stores != kStreaming)
    return false;
  copy_with<kThreads, kLoads, kPhased, kHint, kStreaming>(s, d, bytes, stream, v.blocks_per_sm);
  return true;
}

inline constexpr int kFmaThreads = 256;

__global__ void __launch_bounds__(kFmaThreads)
    fma_kernel(float* __restrict__ y, std::int64_t ld_y, std::int64_t n, std::int64_t elements,
               float a, float b) {
  const std::int64_t e = static_cast<std::int64_t>(blockIdx.x) * kFmaThreads + threadIdx.x;
  if (e >= elements) return;
  float acc[ceilings::kFmaChains];
#pragma unroll
  for (int c = 0; c < ceilings::kFmaChains; ++c)
    acc[c] = fmaf(static_cast<float>(e % 1024), ceilings::kFmaStartScale, static_cast<float>(c));
#pragma unroll 16
  for (int it = 0; it < ceilings::kFmaIterations; ++it)
#pragma unroll
    for (int c = 0; c < ceilings::kFmaChains; ++c) acc[c] = fmaf(acc[c], a, b);
  float sum = 0.0f;
#pragma unroll
  for (int c = 0; c < ceilings::kFmaChains; ++c) sum += acc[c];
  const std::int64_t row = e / n;
  y[row * ld_y + (e - row * n)] = sum;
}

bool dense(const Problem& p) { return p.ld_x == p.N && p.ld_y == p.N; }

void launch_copy_entry(const Launch& l) {
  const std::size_t bytes = static_cast<std::size_t>(l.p.M) * static_cast<std::size_t>(l.p.N) *
                            static_cast<std::size_t>(dtype_bytes(l.p.dtype));
  ceilings::copy_bytes(l.x, l.y, bytes, l.stream);
}

std::optional<std::string> copy_unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  if (!dense(p))
    return "the copy ceiling copies dense matrices (ld_x = ld_y = N); this problem has ld_x = " +
           std::to_string(p.ld_x) + ", ld_y = " + std::to_string(p.ld_y) +
           ", N = " + std::to_string(p.N);
  return std::nullopt;
}

void launch_fma_entry(const Launch& l) {
  ceilings::launch_fma(static_cast<float*>(l.y), l.p, l.stream);
}

std::optional<std::string> fma_unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  if ((p.elements() + kFmaThreads - 1) / kFmaThreads > INT_MAX)
    return "M x N = " + std::to_string(p.elements()) +
           " exceeds the fma kernel's one-thread-per-element grid limit";
  return std::nullopt;
}

}  // namespace

namespace ceilings {

std::vector<CopyVariant> copy_variants() {
  using H = CopyVariant::Hint;
  // The GPU test "copy ceiling is at least as fast as cudaMemcpyAsync" times each against
  // cudaMemcpyAsync; on the H200 none beat the default (docs/performance.md, "Tried and
  // rejected").
  return {
      CopyVariant{},                                       // the ceiling's: 256 x 4, 5 per SM
      CopyVariant{256, 4, true, H::none, false, 0},        // no occupancy cap (8 per SM)
      CopyVariant{256, 4, true, H::none, false, 4},        // 4 per SM
      CopyVariant{256, 4, true, H::none, false, 6},        // 6 per SM
      CopyVariant{256, 4, false, H::none, false, 0},       // no barrier, no cap
      CopyVariant{512, 4, true, H::none, false, 0},        // 512 threads (4 per SM)
      CopyVariant{512, 4, true, H::none, false, 2},        // 512 threads, 2 per SM
      CopyVariant{256, 8, true, H::none, false, 0},        // 32 KB per block
      CopyVariant{256, 4, true, H::none, true, 0},         // streaming stores (st.global.cs)
      CopyVariant{256, 4, true, H::l2_256b, false, 0},     // L2::256B fetches
      CopyVariant{256, 8, true, H::l2_256b, true, 0},      // both, 32 KB per block
      CopyVariant{256, 4, true, H::evict_first, true, 0},  // ld.global.cs + st.global.cs
  };
}

std::string to_string(const CopyVariant& v) {
  const char* hint = v.load_hint == CopyVariant::Hint::l2_256b       ? " L2::256B"
                     : v.load_hint == CopyVariant::Hint::evict_first ? " ld.cs"
                                                                     : "";
  return std::to_string(v.threads) + " x " + std::to_string(v.loads) +
         (v.phased ? " phased" : " interleaved") + hint + (v.streaming_stores ? " st.cs" : "") +
         (v.blocks_per_sm > 0 ? ", " + std::to_string(v.blocks_per_sm) + " per SM" : "");
}

void copy_bytes(const void* src, void* dst, std::size_t bytes, cudaStream_t stream,
                const CopyVariant& v) {
  if (bytes == 0) return;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const bool ran = try_variant<256, 4, true, 0, false>(v, s, d, bytes, stream) ||
                   try_variant<256, 4, false, 0, false>(v, s, d, bytes, stream) ||
                   try_variant<256, 8, true, 0, false>(v, s, d, bytes, stream) ||
                   try_variant<512, 4, true, 0, false>(v, s, d, bytes, stream) ||
                   try_variant<256, 4, true, 0, true>(v, s, d, bytes, stream) ||
                   try_variant<256, 4, true, 1, false>(v, s, d, bytes, stream) ||
                   try_variant<256, 8, true, 1, true>(v, s, d, bytes, stream) ||
                   try_variant<256, 4, true, 2, true>(v, s, d, bytes, stream);
  if (!ran) throw std::invalid_argument("copy ceiling: variant " + to_string(v) + " is not built");
}

double launch_fma(float* y, const Problem& p, cudaStream_t stream) {
  const std::int64_t elements = p.elements();
  const auto blocks = static_cast<unsigned>((elements + kFmaThreads - 1) / kFmaThreads);
  fma_kernel<<<blocks, kFmaThreads, 0, stream>>>(y, p.ld_y, p.N, elements, kFmaA, kFmaB);
  CUDA_CHECK_LAUNCH();
  return static_cast<double>(elements) * kFmaFlopsPerElement;
}

}  // namespace ceilings

namespace entries {

KernelInfo copy() {
  KernelInfo k;
  k.name = "copy";
  k.description =
      "copy ceiling: y = x with 16-byte accesses, 4 loads in flight per thread, one block per "
      "16 KB chunk";
  k.role = Role::ceiling;
  k.traffic = TrafficModel::copy;
  k.dtypes = {DType::f32, DType::bf16, DType::f16};
  k.unsupported = copy_unsupported;
  k.launch = launch_copy_entry;
  return k;
}

KernelInfo fma() {
  KernelInfo k;
  k.name = "fma";
  k.description = "FP32 ceiling: " + std::to_string(ceilings::kFmaChains) +
                  " independent FMA chains per thread, " +
                  std::to_string(static_cast<long long>(ceilings::kFmaFlopsPerElement)) +
                  " FLOP per element, the result written so nothing is optimised away";
  k.role = Role::ceiling;
  k.traffic = TrafficModel::compute;
  k.dtypes = {DType::f32};
  k.unsupported = fma_unsupported;
  k.launch = launch_fma_entry;
  return k;
}

}  // namespace entries
}  // namespace smr
