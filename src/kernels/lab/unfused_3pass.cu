// unfused: softmax as three kernels, one per step of the formula.
//
//   out[i, j] = exp(x[i, j] - max_k x[i, k]) / sum_k exp(x[i, k] - max_k x[i, k])
//
//   A  row_max_kernel    reads x                          writes max[i]             (M floats)
//   B  exp_sum_kernel    reads x and max[i]               writes tmp[i, j] = exp(x[i, j] - max[i])
//                                                         and sum[i] = sum_j tmp[i, j]  (M floats)
//   C  normalize_kernel  reads tmp and sum[i]             writes y[i, j] = tmp[i, j] / sum[i]
//
// This is the design the lab starts from: each kernel is simple, and each is a full pass over an
// M x N matrix through DRAM, because nothing survives on chip from one kernel to the next.
// (B adds up the exponentials as it writes them. Summing in C instead would make C read its row
// of tmp twice, once to sum and once to scale; for long rows, whose rows in flight overflow L2,
// that second read would be a sixth pass through DRAM.)
//
// Bytes per element (fp32), the model's `unfused` traffic: A reads 4; B reads 4 and writes 4;
// C reads 4 and writes 4: 20 bytes, five passes (5 x 4MN), against 8 bytes for a fused design,
// plus 4 bytes per row for each of the two vectors. When x, or x and tmp together, fit in the
// 60 MB L2, B's re-read of x and C's read of tmp can hit there: the model predicts less DRAM
// traffic in that regime (roofline/model.hpp).
//
// FLOPs per element: 3 algorithmic (subtract, exp, divide) + 1 compare for the max + 1 add for
// the sum. 3 FLOP / 20 B = 0.15 FLOP/B: far left of the H200's ridge point (~14 FLOP/B), so all
// three kernels are bound by DRAM bandwidth; the exp costs nothing next to the memory traffic.
//
// Limits: one block per row in each kernel, so a problem with fewer rows than SMs leaves SMs idle
// (the production kernel splits long rows across blocks); M <= 2^31 - 1; workspace M*N + 2M floats.
// Numerics: the textbook form, expf(x - max) and a division; see docs/verification.md for the
// bound. Special values follow from IEEE arithmetic and match PyTorch: a row with a NaN or a +inf
// becomes all NaN (the sum is NaN), a row that is all -inf becomes all NaN (-inf - (-inf)).
#include <cstddef>
#include <cstdint>

#include "kernels/cuda_check.hpp"
#include "kernels/entries.hpp"
#include "kernels/preconditions.hpp"
#include "kernels/common/reduce.cuh"
#include "kernels/lab/row_block.cuh"

namespace smr {
namespace {

// A: max[i] = max_j x[i, j]. One block per row.
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    row_max_kernel(const float* __restrict__ x, std::int64_t ld_x, std::int64_t n,
                   float* __restrict__ row_max) {
  const float* row = x + blockIdx.x * ld_x;
  float m = -INFINITY;
  for (std::int64_t base = 0; base < n; base += kThreads * kSliceLoads) {
    float v[kSliceLoads];
    load_slice<kThreads>(row, base, n, v, -INFINITY);
    m = fmaxf(m, slice_max(v));
  }
  m = block_max<kThreads>(m);
  if (threadIdx.x == 0) row_max[blockIdx.x] = m;
}

// B: tmp[i, j] = exp(x[i, j] - max[i]) and sum[i] = sum_j tmp[i, j]. tmp is dense (stride N).
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    exp_sum_kernel(const float* __restrict__ x, std::int64_t ld_x, std::int64_t n,
                   const float* __restrict__ row_max, float* __restrict__ tmp,
                   float* __restrict__ row_sum) {
  const float* row = x + blockIdx.x * ld_x;
  float* out = tmp + blockIdx.x * n;
  const float m = row_max[blockIdx.x];
  // Each thread adds one slice sum (a tree of 16) per step: its chain is N / (kThreads * 16)
  // additions long, then the block's tree adds log2(kThreads) levels. A masked element is -inf
  // and adds exp(-inf - m) = 0.
  float s = 0.0f;
  for (std::int64_t base = 0; base < n; base += kThreads * kSliceLoads) {
    float v[kSliceLoads];
    load_slice<kThreads>(row, base, n, v, -INFINITY);
#pragma unroll
    for (int u = 0; u < kSliceLoads; ++u) v[u] = expf(v[u] - m);
    store_slice<kThreads>(out, base, n, v);
    s += slice_sum(v);
  }
  s = block_sum<kThreads>(s);
  if (threadIdx.x == 0) row_sum[blockIdx.x] = s;
}

// C: y[i, j] = tmp[i, j] / sum[i].
template <int kThreads>
__global__ void __launch_bounds__(kThreads)
    normalize_kernel(const float* __restrict__ tmp, std::int64_t n,
                     const float* __restrict__ row_sum, float* __restrict__ y, std::int64_t ld_y) {
  const float* row = tmp + blockIdx.x * n;
  float* out = y + blockIdx.x * ld_y;
  // The division, as one reciprocal per row and a multiply per element (IEEE 1/sum, then one
  // more rounding: 2^-24 relative, inside the tolerance; docs/verification.md).
  const float inv_sum = 1.0f / row_sum[blockIdx.x];
  for (std::int64_t base = 0; base < n; base += kThreads * kSliceLoads) {
    float v[kSliceLoads];
    load_slice<kThreads>(row, base, n, v, 0.0f);
#pragma unroll
    for (int u = 0; u < kSliceLoads; ++u) v[u] *= inv_sum;
    store_slice<kThreads>(out, base, n, v);
  }
}

// Workspace layout: tmp (M * N floats) first, then max (M floats), then sum (M floats).
// cudaMalloc's alignment of the workspace carries over to tmp; the vectors need only 4 bytes.
std::size_t workspace_bytes(const Problem& p) {
  return static_cast<std::size_t>(p.M) * static_cast<std::size_t>(p.N + 2) * sizeof(float);
}

void launch(const Launch& l) {
  const Problem& p = l.p;
  const auto* x = static_cast<const float*>(l.x);
  auto* y = static_cast<float*>(l.y);
  auto* tmp = static_cast<float*>(l.workspace);
  float* row_max = tmp + p.M * p.N;
  float* row_sum = row_max + p.M;
  const unsigned rows = static_cast<unsigned>(p.M);
  with_row_block_threads(row_block_threads(p.N), [&](auto threads) {
    constexpr int kThreads = decltype(threads)::value;
    row_max_kernel<kThreads><<<rows, kThreads, 0, l.stream>>>(x, p.ld_x, p.N, row_max);
    CUDA_CHECK_LAUNCH();
    exp_sum_kernel<kThreads>
        <<<rows, kThreads, 0, l.stream>>>(x, p.ld_x, p.N, row_max, tmp, row_sum);
    CUDA_CHECK_LAUNCH();
    normalize_kernel<kThreads><<<rows, kThreads, 0, l.stream>>>(tmp, p.N, row_sum, y, p.ld_y);
    CUDA_CHECK_LAUNCH();
  });
}

std::optional<std::string> unsupported(const Problem& p, const DeviceLimits& d) {
  if (auto why = invalid_problem(p)) return why;
  if (auto why = too_many_rows(p, "unfused")) return why;
  const double need = static_cast<double>(workspace_bytes(p)) +
                      static_cast<double>(p.M) * static_cast<double>(p.ld_x + p.ld_y) * 4.0;
  if (need > static_cast<double>(d.global_bytes))
    return "unfused needs " + std::to_string(static_cast<long long>(need / 1e9)) +
           " GB for x, y and its (M, N) intermediate, more than the device's " +
           std::to_string(static_cast<long long>(static_cast<double>(d.global_bytes) / 1e9)) +
           " GB";
  return std::nullopt;
}

}  // namespace

namespace entries {

KernelInfo unfused_3pass() {
  KernelInfo k;
  k.name = "unfused";
  k.description =
      "three kernels: row max; exp(x - max) into an (M, N) intermediate and row sums; divide "
      "(5 passes over DRAM)";
  k.role = Role::lab;
  k.traffic = TrafficModel::unfused;
  k.dtypes = {DType::f32};
  k.unsupported = unsupported;
  k.workspace_bytes = workspace_bytes;
  k.launch = launch;
  return k;
}

}  // namespace entries
}  // namespace smr
