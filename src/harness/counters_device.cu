// The device side of the counters: the read-only L2 eviction that closes every profiled range, and
// the self-test kernel whose counts are known exactly (smr-counter-probe selftest).
#include <algorithm>
#include <cstdint>

#include "harness/counters.hpp"

namespace smr {
namespace {

constexpr int kThreads = 256;
constexpr int kBlocksPerSm = 4;
// The eviction buffer is zeroed, so the XOR of what it reads is 0: this value is never seen, and
// the store behind it never happens, but the compiler cannot prove that and must keep every load.
constexpr unsigned kNeverRead = 0x5eed5eedu;

int sm_count() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

// Reads every 16-byte word of the buffer once. Integer XOR, not a float sum: the eviction must
// not add FP32 instructions to the counts it is subtracted from, and it writes nothing.
__global__ void evict_by_reading(const uint4* __restrict__ buffer, std::size_t words,
                                 unsigned* __restrict__ sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < words;
       i += stride) {
    const uint4 w = buffer[i];
    acc ^= w.x ^ w.y ^ w.z ^ w.w;
  }
  if (acc == kNeverRead) *sink = acc;
}

// y = a * x + b: exactly one FFMA per element (fmaf, not a * x + b left to contraction), 16-byte
// loads and stores, the n % 4 tail by the first threads.
__global__ void selftest_axpb(const float4* __restrict__ x, float4* __restrict__ y, std::size_t n,
                              float a, float b) {
  const std::size_t n4 = n / 4;
  const std::size_t first = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = first; i < n4; i += stride) {
    float4 v = x[i];
    v.x = fmaf(a, v.x, b);
    v.y = fmaf(a, v.y, b);
    v.z = fmaf(a, v.z, b);
    v.w = fmaf(a, v.w, b);
    y[i] = v;
  }
  const std::size_t tail = n - 4 * n4;
  if (first < tail) {
    const float* xs = reinterpret_cast<const float*>(x);
    float* ys = reinterpret_cast<float*>(y);
    ys[4 * n4 + first] = fmaf(a, xs[4 * n4 + first], b);
  }
}

}  // namespace

L2Evictor::L2Evictor(std::size_t l2_bytes, int multiple)
    : buffer_(l2_bytes * static_cast<std::size_t>(std::max(multiple, 1))), sink_(sizeof(unsigned)) {
  CUDA_CHECK(cudaMemset(buffer_.get(), 0, buffer_.bytes()));
  CUDA_CHECK(cudaMemset(sink_.get(), 0, sink_.bytes()));
  CUDA_CHECK(cudaDeviceSynchronize());
  blocks_ = sm_count() * kBlocksPerSm;
}

void L2Evictor::operator()(cudaStream_t stream) const {
  evict_by_reading<<<blocks_, kThreads, 0, stream>>>(buffer_.as<const uint4>(),
                                                     buffer_.bytes() / sizeof(uint4),
                                                     sink_.as<unsigned>());
  CUDA_CHECK_LAUNCH();
}

void launch_counter_selftest(const float* x, float* y, std::size_t n, cudaStream_t stream) {
  const std::size_t n4 = n / 4;
  const std::size_t wanted = std::max<std::size_t>((n4 + kThreads - 1) / kThreads, 1);
  const int blocks = static_cast<int>(
      std::min<std::size_t>(wanted, static_cast<std::size_t>(sm_count()) * 16));
  selftest_axpb<<<blocks, kThreads, 0, stream>>>(reinterpret_cast<const float4*>(x),
                                                 reinterpret_cast<float4*>(y), n, 2.0f, 1.0f);
  CUDA_CHECK_LAUNCH();
}

}  // namespace smr
