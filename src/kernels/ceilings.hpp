// The ceiling kernels' host interface (host-only header), for the harness's measured ceilings and
// the tests. The registry entries `copy` and `fma` (ceilings.cu) launch the same kernels.
#pragma once

#include <cstddef>
#include <cstdint>

#include <cuda_runtime_api.h>

#include "roofline/problem.hpp"

namespace smr::ceilings {

// Copies `bytes` bytes from src to dst (device pointers, regions must not overlap) on `stream`
// with the copy-ceiling kernel: 16-byte accesses when src and dst have the same alignment modulo
// 16, 4-byte or 1-byte accesses otherwise; any size, any alignment. Throws smr::CudaError.
//
// Two orders of a block's accesses, both kept so the GPU test can time them side by side:
// `phased` (the ceiling's): every thread of the block loads its 4 words, a block barrier, then the
// stores -- the block's reads and writes reach DRAM as two bursts, as in block_row, whose reads
// and writes of a 16 KB row reached 4205 GB/s on the H200 where this copy without the barrier
// reached 3988; `interleaved`: each thread stores as soon as its own loads are back.
enum class CopyOrder { phased, interleaved };
void copy_bytes(const void* src, void* dst, std::size_t bytes, cudaStream_t stream,
                CopyOrder order = CopyOrder::phased);

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
