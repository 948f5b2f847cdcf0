// The staged copy: the copy ceiling's bytes moved the way the shared-memory kernels move a row
// (block_hybrid's slice, cluster_row, split_row; row_slice.cuh), with no softmax in between. An
// experiment beside the copy ceiling, not a ceiling the harness uses: how close to the copy
// kernel can a persistent block come when every byte goes global -> shared memory (TMA bulk
// copies, or the threads' cp.async) -> registers -> global, and what its stage length, its
// buffers per block, its chunks per stage, its blocks per SM and a second pass over shared memory
// (the statistics' pass of the softmax kernels) cost. The kernels that hold part of a row in
// shared memory run further from the copy ceiling than the register tiles of the same shape of
// work (results/h200/default/); this separates the staging from the softmax. What it measured:
// docs/performance.md, "Tried and rejected"; experiments/REJECTED.md.
//
// Grid: blocks_per_sm blocks per SM, 512 threads each, resident at once (checked). The bytes are
// cut into stages of stage_bytes; block b takes stages b, b + grid, ...; stage k of a block lies
// in buffer k % kBuffers of its shared memory. A stage is kChunks chunks, each completing on its
// own barrier. A loop trip over stage k:
//   1. (read_pass) every thread reads its vectors of each chunk once it has landed and folds them
//      into one word (kept, so the pass is not compiled away) -- or, with exp_work, sums an
//      exponential of each element, as the softmax's statistics do;
//   2. (delay_us) a block-wide pause, standing for the softmax's exchange of partials;
//   3. chunk by chunk: wait for it (when there was no read pass), store its vectors to dst (with
//      exp_work, an exponential of each element worked into the stored word through a mask of 0,
//      so it costs its instructions and changes no byte), a block barrier, then copy stage
//      k + kBuffers' chunk c into the bytes just freed -- split_row's write_and_refill.
//      (bulk_store: the copy engine stores the chunk instead -- one bulk copy from
//      shared to global memory, issued by thread 0 after a block barrier; with exp_work the threads
//      first rewrite the chunk in shared memory with its exponentials, as a softmax would write its
//      output there. The chunk's bytes take the refill once the store has read them, which thread 0
//      waits for one chunk later, so that the store's reading overlaps the next chunk's work.)
// Bytes: 1 read + 1 written per byte, as the copy. FLOPs: none (exp_work: one exponential per
// element in each pass).
#include <cuda/barrier>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "experiments/staged_copy.hpp"
#include "kernels/common/arch.cuh"
#include "kernels/common/arch.hpp"
#include "kernels/cuda_check.hpp"
#include "kernels/production/row_slice.cuh"
#include "kernels/common/softmax_math.cuh"

// Below sm_90 the kernels trap (common/arch.cuh), and the device helpers only they call go unused.
#if defined(__CUDA_ARCH__) && !SMR_ARCH_HAS_CLUSTERS
#pragma nv_diag_suppress 177
#endif

namespace smr::experiments {
namespace {

using prod::BlockBarrier;

inline constexpr int kStagedThreads = 512;

// Vectors [begin, end) of chunk c of a stage of n vectors, `per` vectors a chunk (the last chunk
// takes the rest): row_slice.cuh's chunk_range over [0, n).
template <int kChunks>
__device__ __forceinline__ prod::VecRange stage_chunk(int c, std::int64_t n, std::int64_t per) {
  return prod::chunk_range<kChunks>(c, 0, n, per);
}

// The output pass's exponential per element worked into the word v through `mask` (0: v
// unchanged, the instructions still executed): the stand-in for softmax_value in the variants
// with exp_work.
__device__ __forceinline__ void work_exp_into(uint4& v, unsigned mask) {
  v.x ^= __float_as_uint(exp2_ftz(__uint_as_float(v.x) * 1e-30f)) & mask;
  v.y ^= __float_as_uint(exp2_ftz(__uint_as_float(v.y) * 1e-30f)) & mask;
  v.z ^= __float_as_uint(exp2_ftz(__uint_as_float(v.z) * 1e-30f)) & mask;
  v.w ^= __float_as_uint(exp2_ftz(__uint_as_float(v.w) * 1e-30f)) & mask;
}

// kBulkStore: the copy engine stores each chunk (StagedCopy::bulk_store), compiled apart so that
// the variants with the threads' stores run the code they ran before bulk stores existed.
template <int kBuffers, int kChunks, bool kBulkStore>
__global__ void __launch_bounds__(kStagedThreads)
    staged_copy_kernel(const uint4* __restrict__ src, uint4* __restrict__ dst, std::int64_t vecs,
                       std::int64_t stage_vecs, bool read_pass, bool thread_copy,
                       bool exp_work, unsigned exp_mask, long long delay_cycles) {
#if SMR_ARCH_HAS_CLUSTERS  // TMA bulk copies, fence.proxy.async (common/arch.cuh)
  extern __shared__ __align__(16) unsigned char staged_smem[];
#pragma nv_diag_suppress static_var_with_dynamic_init
  __shared__ BlockBarrier bars[kBuffers][kChunks];
  if (threadIdx.x == 0) {
#pragma unroll
    for (int b = 0; b < kBuffers; ++b)
#pragma unroll
      for (int c = 0; c < kChunks; ++c) init(&bars[b][c], blockDim.x);
    cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
  }
  __syncthreads();
  const auto buf = [&](int b) {
    return reinterpret_cast<float*>(staged_smem) + static_cast<std::int64_t>(b) * stage_vecs * 4;
  };
  const std::int64_t stages = (vecs + stage_vecs - 1) / stage_vecs;
  const std::int64_t per = (stage_vecs + kChunks - 1) / kChunks;
  const auto length = [&](std::int64_t k) {
    return vecs - k * stage_vecs < stage_vecs ? vecs - k * stage_vecs : stage_vecs;
  };
  // Chunk c of stage k into buffer b (the copy engine's bulk copy, or the threads' cp.async).
  const auto copy_chunk = [&](std::int64_t k, int b, int c) {
    const prod::SliceBarriers sb{bars[b], false, thread_copy};
    prod::issue_chunk_copy(buf(b), reinterpret_cast<const float*>(src + k * stage_vecs),
                           stage_chunk<kChunks>(c, length(k), per), sb, c);
  };
#pragma unroll
  for (int b = 0; b < kBuffers; ++b) {
    const std::int64_t k = blockIdx.x + static_cast<std::int64_t>(b) * gridDim.x;
    if (k < stages)
#pragma unroll
      for (int c = 0; c < kChunks; ++c) copy_chunk(k, b, c);
  }
  unsigned phases = 0;  // bit b: the parity of buffer b's next phase
  int b = 0;
  for (std::int64_t k = blockIdx.x; k < stages; k += gridDim.x, b = b + 1 == kBuffers ? 0 : b + 1) {
    const std::int64_t n = length(k);
    const uint4* s = reinterpret_cast<const uint4*>(buf(b));
    const bool parity = ((phases >> b) & 1u) != 0;
    if (read_pass) {
      unsigned folded = 0;
      float sum = 0.0f;
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        bars[b][c].wait_parity(parity);
        const prod::VecRange r = stage_chunk<kChunks>(c, n, per);
        for (std::int64_t i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) {
          const uint4 v = s[i];
          // (exp_work) The statistics' exponential per element: 2^(x 1e-30), x the word's bits
          // read as a float -- scaled so that any bit pattern gives a finite exponential.
          if (exp_work) {
            sum += exp2_ftz(__uint_as_float(v.x) * 1e-30f) +
                   exp2_ftz(__uint_as_float(v.y) * 1e-30f) +
                   exp2_ftz(__uint_as_float(v.z) * 1e-30f) +
                   exp2_ftz(__uint_as_float(v.w) * 1e-30f);
          } else {
            folded ^= v.x ^ v.y ^ v.z ^ v.w;
          }
        }
      }
      asm volatile("" ::"r"(folded), "f"(sum));  // the pass's loads are kept
    }
    // (delay_cycles) A block-wide pause standing for the softmax's exchange: thread 0 waits on the
    // SM clock, the block at a barrier.
    if (delay_cycles > 0) {
      if (threadIdx.x == 0) {
        const long long t0 = clock64();
        while (clock64() - t0 < delay_cycles) {
        }
      }
      __syncthreads();
    }
    const std::int64_t refill = k + static_cast<std::int64_t>(kBuffers) * gridDim.x;
    uint4* d = dst + k * stage_vecs;
    if constexpr (kBulkStore) {
      // Chunk c of stage k's buffer takes stage `refill`'s chunk c once the copy engine has read
      // it for its store: thread 0 waits for that (every store but the newest `pending` read),
      // then the block issues the copy.
      const auto refill_after_store = [&](int c, auto pending) {
        if (refill >= stages) return;
        if (threadIdx.x == 0) cuda::ptx::cp_async_bulk_wait_group_read(pending);
        copy_chunk(refill, b, c);
      };
      uint4* sw = reinterpret_cast<uint4*>(buf(b));  // s, written in place (exp_work)
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (!read_pass) bars[b][c].wait_parity(parity);
        const prod::VecRange r = stage_chunk<kChunks>(c, n, per);
        if (exp_work) {
          // The output pass in place: each vector rewritten in shared memory, then this thread's
          // writes made visible to the copy engine before the barrier (fence.proxy.async).
          for (std::int64_t i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) {
            uint4 v = sw[i];
            work_exp_into(v, exp_mask);
            sw[i] = v;
          }
          cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
        }
        __syncthreads();  // chunk c is final in shared memory
        if (threadIdx.x == 0) {
          // (Also orders the copy engine's own writes of the chunk, seen complete through its
          // barrier, before its reads for the store: without exp_work no thread wrote it.)
          cuda::ptx::fence_proxy_async(cuda::ptx::space_shared);
          const auto bytes = static_cast<std::uint32_t>((r.end - r.begin) * 16);
          if (bytes > 0)
            cuda::ptx::cp_async_bulk(cuda::ptx::space_global, cuda::ptx::space_shared,
                                     d + r.begin, sw + r.begin, bytes);
          cuda::ptx::cp_async_bulk_commit_group();  // one group a chunk (empty where bytes = 0)
        }
        if (c > 0) refill_after_store(c - 1, cuda::ptx::n32_t<1>{});
      }
      refill_after_store(kChunks - 1, cuda::ptx::n32_t<0>{});
    } else {
#pragma unroll
      for (int c = 0; c < kChunks; ++c) {
        if (!read_pass) bars[b][c].wait_parity(parity);
        const prod::VecRange r = stage_chunk<kChunks>(c, n, per);
        for (std::int64_t i = r.begin + threadIdx.x; i < r.end; i += blockDim.x) {
          uint4 v = s[i];
          if (exp_work) work_exp_into(v, exp_mask);  // in the stored word's dependences
          d[i] = v;
        }
        __syncthreads();  // every read of chunk c is done
        if (refill < stages) copy_chunk(refill, b, c);
      }
    }
    phases ^= 1u << b;
  }
  // The copy engine's stores written before the block's shared memory is released.
  if constexpr (kBulkStore) {
    if (threadIdx.x == 0) cuda::ptx::cp_async_bulk_wait_group(cuda::ptx::n32_t<0>{});
  }
#else
  SMR_ARCH_UNSUPPORTED();
#endif
}

template <int kBuffers, int kChunks, bool kBulkStore>
void launch_staged(const uint4* s, uint4* d, std::int64_t vecs, cudaStream_t stream,
                   const StagedCopy& v) {
  const auto kernel = staged_copy_kernel<kBuffers, kChunks, kBulkStore>;
  const std::int64_t stage_vecs = v.stage_bytes / 16;
  const std::size_t smem = static_cast<std::size_t>(kBuffers) * v.stage_bytes;
  static const bool opted = (prod::allow_all_dynamic_shared_memory(kernel), true);
  (void)opted;
  // The device's facts, asked once per device and size: a timed launch pays no query (the clock
  // rate's took longer than the copy itself on the H200, and it would be timed with it).
  struct Facts {
    int sms = 0, per_sm = 0, clock_khz = 0;
  };
  static std::mutex mu;
  static std::map<std::pair<int, std::size_t>, Facts> cache;
  int device = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  Facts f;
  {
    const std::lock_guard<std::mutex> lock(mu);
    const auto key = std::make_pair(device, smem);
    if (const auto it = cache.find(key); it != cache.end()) {
      f = it->second;
    } else {
      CUDA_CHECK(cudaDeviceGetAttribute(&f.sms, cudaDevAttrMultiProcessorCount, device));
      CUDA_CHECK(cudaDeviceGetAttribute(&f.clock_khz, cudaDevAttrClockRate, device));
      CUDA_CHECK(
          cudaOccupancyMaxActiveBlocksPerMultiprocessor(&f.per_sm, kernel, kStagedThreads, smem));
      cache.emplace(key, f);
    }
  }
  const int sms = f.sms, per_sm = f.per_sm, clock_khz = f.clock_khz;
  if (per_sm < v.blocks_per_sm)
    throw std::invalid_argument("staged copy " + to_string(v) + ": " +
                                std::to_string(per_sm) + " block(s) of " + std::to_string(smem) +
                                " bytes of shared memory fit on an SM");
  const std::int64_t stages = (vecs + stage_vecs - 1) / stage_vecs;
  const std::int64_t grid = std::min<std::int64_t>(stages, std::int64_t{sms} * v.blocks_per_sm);
  // exp_mask 0: the exponentials cost their instructions but leave the copied words as they are.
  const long long delay_cycles =
      static_cast<long long>(v.delay_us * 1e3 * static_cast<double>(clock_khz) / 1e6);
  kernel<<<static_cast<unsigned>(grid), kStagedThreads, smem, stream>>>(
      s, d, vecs, stage_vecs, v.read_pass, v.thread_copy, v.exp_work, 0u, delay_cycles);
  CUDA_CHECK_LAUNCH();
}

template <int kBuffers, int kChunks>
bool try_staged(const StagedCopy& v, const uint4* s, uint4* d, std::int64_t vecs,
                cudaStream_t stream) {
  if (v.buffers != kBuffers || v.chunks != kChunks) return false;
  if (v.bulk_store)
    launch_staged<kBuffers, kChunks, true>(s, d, vecs, stream, v);
  else
    launch_staged<kBuffers, kChunks, false>(s, d, vecs, stream, v);
  return true;
}

}  // namespace


std::vector<StagedCopy> staged_copy_variants() {
  constexpr std::int64_t kKiB = 1024;
  // Stage lengths of the kernels they stand for: 95328 bytes split_row's pipelined slice at
  // N = 2^19-2^20 fp32 (two per block), 63552 its three-slice one, 190656 its one-slice one,
  // 114688 split_row's two blocks per SM (112 KB), 196608 block_hybrid's 192 KiB at N = 65536.
  // Fields not named keep StagedCopy's defaults (4 chunks, one block per SM, no read pass, TMA
  // copies in, the threads' stores out, no exponentials, no pause).
  return {
      {.buffers = 2, .stage_bytes = 95328},                     // two buffers, stores only
      {.buffers = 2, .stage_bytes = 95328, .read_pass = true},  // + the statistics' pass
      {.buffers = 2, .chunks = 8, .stage_bytes = 95328, .read_pass = true},  // 8 chunks a stage
      {.buffers = 2, .stage_bytes = 95328, .read_pass = true, .thread_copy = true},  // cp.async
      {.buffers = 3, .stage_bytes = 63552, .read_pass = true},   // three buffers (split_row B = 3)
      {.buffers = 1, .stage_bytes = 190656},                     // one buffer, stores only
      {.buffers = 1, .stage_bytes = 190656, .read_pass = true},  // split_row's one slice
      {.buffers = 1, .stage_bytes = 196608, .read_pass = true},  // block_hybrid's slice at 65536
      {.buffers = 1, .stage_bytes = 114688, .blocks_per_sm = 2, .read_pass = true},  // 112 KB x 2
      {.buffers = 2, .stage_bytes = 32 * kKiB},
      {.buffers = 2, .stage_bytes = 64 * kKiB},
      {.buffers = 2, .stage_bytes = 112 * kKiB},
      {.buffers = 2, .stage_bytes = 56 * kKiB, .blocks_per_sm = 2, .read_pass = true},
      // split_row pipelined's stage with, one at a time, its other costs: its exponentials (one
      // per element in each pass), a pause per stage as long as its exchange phase, both.
      {.buffers = 2, .stage_bytes = 95328, .read_pass = true, .exp_work = true},
      {.buffers = 2, .stage_bytes = 95328, .read_pass = true, .delay_us = 0.8},
      {.buffers = 2, .stage_bytes = 95328, .read_pass = true, .exp_work = true, .delay_us = 0.8},
      // The copy engine's stores in place of the threads': a stage never in a register (stores
      // only), with the statistics' pass, and with the softmax's work -- the exponentials of both
      // passes, the output pass rewriting the chunk in shared memory -- beside the threads' stores
      // of the same stages above; block_hybrid's slice; two blocks per SM.
      {.buffers = 2, .stage_bytes = 95328, .bulk_store = true},
      {.buffers = 2, .stage_bytes = 95328, .read_pass = true, .bulk_store = true},
      {.buffers = 2, .stage_bytes = 95328, .read_pass = true, .exp_work = true, .bulk_store = true},
      {.buffers = 1, .stage_bytes = 190656, .bulk_store = true},
      {.buffers = 1, .stage_bytes = 196608, .read_pass = true, .exp_work = true,
       .bulk_store = true},
      {.buffers = 2, .stage_bytes = 56 * kKiB, .blocks_per_sm = 2, .read_pass = true,
       .exp_work = true, .bulk_store = true},
  };
}

static std::string fmt_us(double us) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2g", us);
  return buf;
}

std::string to_string(const StagedCopy& v) {
  return std::to_string(v.buffers) + " x " + std::to_string(v.stage_bytes) + " B, " +
         std::to_string(v.chunks) + " chunks, " + std::to_string(v.blocks_per_sm) + " per SM" +
         (v.read_pass ? ", read pass" : "") + (v.thread_copy ? ", cp.async" : ", TMA") +
         (v.exp_work ? ", exp" : "") + (v.bulk_store ? ", bulk stores" : "") +
         (v.delay_us > 0 ? ", " + fmt_us(v.delay_us) + " us pause" : "");
}

void staged_copy_bytes(const void* src, void* dst, std::size_t bytes, cudaStream_t stream,
                       const StagedCopy& v) {
  if (reinterpret_cast<std::uintptr_t>(src) % 16 != 0 ||
      reinterpret_cast<std::uintptr_t>(dst) % 16 != 0 || bytes % 16 != 0)
    throw std::invalid_argument("staged copy: needs 16-byte aligned buffers and a multiple of 16 "
                                "bytes, got " + std::to_string(bytes));
  if (v.stage_bytes <= 0 || v.stage_bytes % 16 != 0 || v.blocks_per_sm < 1)
    throw std::invalid_argument("staged copy " + to_string(v) +
                                ": the stage must be whole 16-byte vectors, one block per SM "
                                "or more");
  if (!kernels_have_clusters())
    throw std::invalid_argument("staged copy: its kernel copies with sm_90's bulk copies; this "
                                "build's device code is sm_" + std::to_string(kernels_code_arch()) +
                                "'s");
  if (bytes == 0) return;
  const auto* s = static_cast<const uint4*>(src);
  auto* d = static_cast<uint4*>(dst);
  const auto vecs = static_cast<std::int64_t>(bytes / 16);
  const bool ran = try_staged<1, 4>(v, s, d, vecs, stream) ||
                   try_staged<2, 4>(v, s, d, vecs, stream) ||
                   try_staged<3, 4>(v, s, d, vecs, stream) ||
                   try_staged<2, 8>(v, s, d, vecs, stream);
  if (!ran) throw std::invalid_argument("staged copy: variant " + to_string(v) + " is not built");
}

}  // namespace smr::experiments
