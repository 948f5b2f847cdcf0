// The ceiling kernels' host interface (host-only header), for the harness's measured ceilings and
// the tests. The registry entries `copy` and `fma` (ceilings.cu) launch the same kernels.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/problem.hpp"

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
