// fused_starter: the kernel around YOUR steps -- lab exercise 03 (docs/lab/03-fuse-it.md).
//
// Written for you: you write fused_row_starter.cuh, next to this file (its header is your task
// sheet). This file is the same plumbing as ../fused_row.cu, the finished design with 16-byte
// accesses (try yours before reading its body): the kernel, one block per row, which runs the
// header's `fused_row` in every thread; the block reductions it hands to it; the one switch from
// a run-time N to a compile-time tile (`with_fused_tile` over `FusedTiles`, ../fused_row.hpp);
// the launcher and the registry entry, which registers itself (SMR_REGISTER_KERNEL): a kernel of
// your own is one more file like this one in this folder.
//
// Only a lab build compiles this file (cmake --preset lab, or -DSMR_BUILD_LAB=ON); it is the
// registry entry `fused_starter`. The instructor's build (-DSMR_LAB_SOLUTION=ON as well) compiles it with
// the reference solution's steps, docs/lab/answers/fused_row_solution.cuh, in place of yours.
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include "kernels/cuda_check.hpp"
#include "kernels/registry.hpp"
#include "kernels/lab/fused_row.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/common/reduce.cuh"
#if SMR_LAB_SOLUTION
#include "fused_row_solution.cuh"  // docs/lab/answers/: the instructor's build
#else
#include "kernels/lab/fused_row_starter.cuh"  // your steps
#endif

namespace smr {
namespace {

// The block reductions `fused_row` calls: every thread of the block gets the row's result.
template <int kThreads>
struct ThisBlock {
  __device__ float max(float v) const { return block_max<kThreads>(v); }
  __device__ float sum(float v) const { return block_sum<kThreads>(v); }
};

template <int kTile, int kThreads>
__global__ void __launch_bounds__(kThreads)
    fused_starter_kernel(const float* __restrict__ x, std::int64_t ld_x, float* __restrict__ y,
                         std::int64_t ld_y, int n) {
  lab::fused_row<kThreads, kTile / kThreads>(x + blockIdx.x * ld_x, y + blockIdx.x * ld_y, n,
                                             static_cast<int>(threadIdx.x), ThisBlock<kThreads>{});
}

void launch(const Launch& l) {
  const Problem& p = l.p;
  const auto* x = static_cast<const float*>(l.x);
  auto* y = static_cast<float*>(l.y);
  const int n = static_cast<int>(p.N);
  const bool launched = with_fused_tile(
      n,
      [&](auto tile) {
        using T = decltype(tile);
        fused_starter_kernel<T::kTile, T::kThreads>
            <<<static_cast<unsigned>(p.M), T::kThreads, 0, l.stream>>>(x, p.ld_x, y, p.ld_y, n);
        CUDA_CHECK_LAUNCH();
      },
      FusedTiles{});
  if (!launched)
    throw std::invalid_argument("fused_starter: N = " + std::to_string(p.N) +
                                " exceeds the cap of " + std::to_string(kFusedMaxN));
}

std::optional<std::string> unsupported(const Problem& p, const DeviceLimits&) {
  if (auto why = invalid_problem(p)) return why;
  if (p.N > kFusedMaxN)
    return "N = " + std::to_string(p.N) + " exceeds the one-tile cap of " +
           std::to_string(kFusedMaxN) + " (the row must fit in registers)";
  return too_many_rows(p, "fused_starter");
}

KernelInfo fused_starter() {
  KernelInfo k;
  k.name = "fused_starter";
#if SMR_LAB_SOLUTION
  k.description = "lab exercise 03: the reference solution (docs/lab/answers), N <= ";
#else
  k.description = "lab exercise 03: your fused kernel (src/kernels/lab/fused_row_starter.cuh), N <= ";
#endif
  k.description += std::to_string(kFusedMaxN);
  k.role = Role::lab;
  k.traffic = TrafficModel::fused;
  k.dtypes = {DType::f32};
  k.unsupported = unsupported;
  k.launch = launch;
  return k;
}

}  // namespace

// The registry entry, with no edit elsewhere (registry.hpp): how any kernel file of this folder
// joins `softmax-bench list`.
SMR_REGISTER_KERNEL(fused_starter);

}  // namespace smr
