// The two ceilings the roofline is drawn against: a device-to-device copy (the DRAM bandwidth a
// kernel that reads and writes every byte once can reach) and FP32 FMA throughput.
//
// copy: the best a softmax can do is read x once and write y once, so the copy of the same bytes
// is the bandwidth ceiling. A naive grid-stride copy does not reach it (one without vector loads
// fell well short of a good device copy on the H200): DRAM latency is long (of the order of
// 600-800 ns: an assumption here, not a measurement), and Little's law wants bandwidth x latency,
// ~3-4 MB, in flight across the card: ~25 KB per SM. So:
//   - 16-byte accesses (LDG.E.128 / STG.E.128): a quarter of the load/store instructions;
//   - each thread issues kCopyLoads = 4 independent 16-byte loads before its first store:
//     2048 threads x 64 B = 128 KB in flight per SM, several times the ~25 KB needed;
//   - one block per contiguous 16 KB chunk (256 threads x 4 loads), not a grid-stride loop, and a
//     block barrier between the block's loads and its stores: the pattern block_row reads and
//     writes rows with (copy_kernel below says why).
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
#include <climits>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/ceilings.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/preconditions.hpp"

namespace smr {
namespace {

inline constexpr int kCopyThreads = 256;
inline constexpr int kCopyLoads = 4;  // independent loads per thread before its stores

// Copies `words` Words starting at byte `head` of src/dst (where both are Word-aligned), and the
// `head` bytes before and `tail` bytes after them one byte at a time (first block only).
//
// Block b owns one contiguous chunk of kCopyThreads x kCopyLoads words (16 KB of uint4): thread t
// loads words base + t, base + t + 256, ... (each load instruction of a warp reads 512
// consecutive bytes), all kCopyLoads before its first store, and the grid has one block per chunk
// -- the access pattern of block_row, which reached 99% of cudaMemcpyAsync on the H200. kPhased
// adds block_row's other habit, a block barrier between the loads and the stores (block_row
// reduces there): the block's reads and then its writes, not a mix of both. (The first
// version was persistent and grid-stride: a thread's four loads lay a whole grid's stride apart,
// four distant DRAM pages per thread, and it reached 92.5%: docs/performance.md.)
template <class Word, bool kPhased>
__global__ void __launch_bounds__(kCopyThreads)
    copy_kernel(const unsigned char* __restrict__ src, unsigned char* __restrict__ dst,
                std::size_t head, std::size_t words, std::size_t tail) {
  constexpr std::size_t kChunk = static_cast<std::size_t>(kCopyThreads) * kCopyLoads;
  const Word* __restrict__ s = reinterpret_cast<const Word*>(src + head);
  Word* __restrict__ d = reinterpret_cast<Word*>(dst + head);
  const std::size_t i = static_cast<std::size_t>(blockIdx.x) * kChunk + threadIdx.x;
  const bool whole = (static_cast<std::size_t>(blockIdx.x) + 1) * kChunk <= words;
  if (whole) {  // a whole chunk: every block but the last
    Word w[kCopyLoads];
#pragma unroll
    for (int u = 0; u < kCopyLoads; ++u) w[u] = __ldg(s + i + u * kCopyThreads);  // loads first...
    if constexpr (kPhased) __syncthreads();  // (a uniform branch: every block but the last)
#pragma unroll
    for (int u = 0; u < kCopyLoads; ++u) d[i + u * kCopyThreads] = w[u];  // ...then the stores
  } else {
#pragma unroll
    for (int u = 0; u < kCopyLoads; ++u)
      if (i + u * kCopyThreads < words) d[i + u * kCopyThreads] = s[i + u * kCopyThreads];
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

template <class Word>
void launch_copy(const unsigned char* src, unsigned char* dst, std::size_t bytes,
                 cudaStream_t stream, ceilings::CopyOrder order) {
  constexpr std::size_t kWord = sizeof(Word);
  constexpr std::size_t kChunk = static_cast<std::size_t>(kCopyThreads) * kCopyLoads;
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
  if (order == ceilings::CopyOrder::phased)
    copy_kernel<Word, true>
        <<<static_cast<unsigned>(blocks), kCopyThreads, 0, stream>>>(src, dst, head, words, tail);
  else
    copy_kernel<Word, false>
        <<<static_cast<unsigned>(blocks), kCopyThreads, 0, stream>>>(src, dst, head, words, tail);
  CUDA_CHECK_LAUNCH();
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

void copy_bytes(const void* src, void* dst, std::size_t bytes, cudaStream_t stream,
                CopyOrder order) {
  if (bytes == 0) return;
  const auto* s = static_cast<const unsigned char*>(src);
  auto* d = static_cast<unsigned char*>(dst);
  const std::uintptr_t offset =
      reinterpret_cast<std::uintptr_t>(s) - reinterpret_cast<std::uintptr_t>(d);
  if (offset % 16 == 0)
    launch_copy<uint4>(s, d, bytes, stream, order);
  else if (offset % 4 == 0)
    launch_copy<std::uint32_t>(s, d, bytes, stream, order);
  else
    launch_copy<unsigned char>(s, d, bytes, stream, order);
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
