// The ceiling kernels' host interface (host-only header), for the harness's measured ceilings and
// the tests. The registry entries `copy` and `fma` (ceilings.cu) launch the same kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "roofline/problem.hpp"

namespace smr::ceilings {

// Copies `bytes` bytes from src to dst (device pointers, regions must not overlap) on `stream`
// with the copy-ceiling kernel: 16-byte accesses when src and dst have the same alignment modulo
// 16, 4-byte or 1-byte accesses otherwise; any size, any alignment. Throws smr::CudaError.
//
// The kernel's shape is a CopyVariant; the default is the ceiling's, the others are built so the
// GPU test can time them beside it (docs/performance.md): block size, 16-byte loads per thread
// (all issued before the first store), `phased` (a block barrier between the block's loads and
// its stores, as block_row has), a load hint (none: ld.global.nc; l2_256b: the L2 fetches 256-byte
// blocks; evict_first: ld.global.cs), streaming stores (st.global.cs) and a cap on the resident
// blocks per SM.
struct CopyVariant {
  enum class Hint { none = 0, l2_256b = 1, evict_first = 2 };
  int threads = 256;
  int loads = 4;
  bool phased = true;
  Hint load_hint = Hint::none;
  bool streaming_stores = false;
  // Resident blocks per SM, capped by reserving shared memory (0: no cap, 8 blocks of 256 threads
  // at 32 registers). block_row's 256 x 4 tile, at 50 registers, holds 5 blocks per SM.
  int blocks_per_sm = 5;
};
std::vector<CopyVariant> copy_variants();  // the built ones, the default first
std::string to_string(const CopyVariant& v);
void copy_bytes(const void* src, void* dst, std::size_t bytes, cudaStream_t stream,
                const CopyVariant& v = CopyVariant{});

// The staged copy (staged_copy.cu): the same bytes moved through shared memory the way the slice
// kernels move a row -- a persistent grid of blocks_per_sm 512-thread blocks per SM, stages of
// stage_bytes copied in by TMA (or the threads' cp.async: thread_copy) in `chunks` chunks into
// `buffers` buffers per block, optionally read once more from shared memory (read_pass, the
// softmax's statistics), optionally with an exponential per element in each pass and a pause per
// stage (the softmax's exchange), then stored chunk by chunk (by the threads, or by the copy
// engine: bulk_store), each freed chunk refilled with the block's stage `buffers` ahead. An
// experiment timed beside the copy ceiling (docs/performance.md), not a ceiling. 16-byte aligned
// buffers, a multiple of 16 bytes; throws std::invalid_argument for a variant that is not built or
// does not fit on an SM.
struct StagedCopy {
  int buffers = 2;                  // 1, 2 or 3 (chunks 4); 2 with chunks 8
  int chunks = 4;
  std::int64_t stage_bytes = 95328;  // a multiple of 16
  int blocks_per_sm = 1;
  bool read_pass = false;
  bool thread_copy = false;
  bool exp_work = false;   // an exponential per element in each pass (its result not stored)
  double delay_us = 0.0;   // a block-wide pause per stage, before its stores
  bool bulk_store = false;  // the copy engine stores each chunk (cp.async.bulk shared -> global);
                            // with exp_work the threads first rewrite it in shared memory
};
std::vector<StagedCopy> staged_copy_variants();
std::string to_string(const StagedCopy& v);
void staged_copy_bytes(const void* src, void* dst, std::size_t bytes, cudaStream_t stream,
                       const StagedCopy& v);

// The FMA-throughput kernel: one thread per element of the problem, each running kFmaChains
// independent chains of kFmaIterations dependent FMAs (acc = acc * a + b) and writing the sum of
// its chains to y[i, j], so that no FMA can be optimised away.
inline constexpr int kFmaChains = 8;
inline constexpr int kFmaIterations = 512;
inline constexpr double kFmaFlopsPerElement = 2.0 * kFmaChains * kFmaIterations;  // FMA = 2 FLOP

// The kernel's parameters, so a test can recompute a lane on the host with std::fma.
inline constexpr float kFmaA = 0.999f;
inline constexpr float kFmaB = 0.001f;
// Chain c of the thread for element index e (row-major, 0 .. M*N-1) starts at
// fma(float(e % 1024), kFmaStartScale, float(c)).
inline constexpr float kFmaStartScale = 1.0e-3f;

// y[i, j] for every element of p (stride p.ld_y); returns the FLOPs the launch performs.
double launch_fma(float* y, const Problem& p, cudaStream_t stream);

}  // namespace smr::ceilings
