// Timing: L2 flush, calibration, batching of short launches, CUDA-event samples, statistics, and
// the one ceiling kernel the registry does not have (L2 re-read). docs/timing.md is the prose.
#include "harness/timing.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>
#include <utility>

namespace smr {

namespace {

constexpr int kThreadsPerBlock = 256;
// Blocks per SM for the streaming kernels here: 8 x 256 threads fill an sm_90 SM.
constexpr int kBlocksPerSm = 8;
// A sum no buffer of zeros (the flush) or of the L2 test's fill pattern can produce: the store
// guarded by it never happens, but the compiler cannot prove that and must keep every load.
constexpr float kImpossibleSum = -1.2345e30f;

// Reads the flush buffer back: pulls its lines into L2 clean, evicting the dirty ones the write left.
__global__ void read_back(const float4* __restrict__ buf, std::size_t n4, float* sink) {
  float acc = 0.f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x; i < n4;
       i += stride) {
    const float4 v = buf[i];
    acc += v.x + v.y + v.z + v.w;
  }
  if (acc == kImpossibleSum) *sink = acc;
}

// The L2 ceiling: `passes` reads of a buffer that stays in L2. __ldcg caches in L2 only, so the
// L1 (which could hold a per-SM share of the buffer) never serves a read; each pass starts at a
// different offset so no two passes issue the same load and the compiler cannot merge them.
__global__ void l2_reread(const float4* __restrict__ buf, std::size_t n4, int passes, float* sink) {
  constexpr std::size_t kPassShift = 64;  // float4s: 1 KiB, keeps every warp's loads coalesced
  float acc = 0.f;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  const std::size_t first = blockIdx.x * static_cast<std::size_t>(blockDim.x) + threadIdx.x;
  for (int p = 0; p < passes; ++p) {
    const std::size_t shift = (static_cast<std::size_t>(p) * kPassShift) % n4;
    for (std::size_t i = first; i < n4; i += stride) {
      std::size_t j = i + shift;
      if (j >= n4) j -= n4;
      const float4 v = __ldcg(buf + j);
      acc += v.x + v.y + v.z + v.w;
    }
  }
  if (acc == kImpossibleSum) *sink = acc;
}

// Keeps the GPU busy for `ns` nanoseconds (one thread spinning on the global timer). Enqueued just
// before a sample's start event, it gives the CPU that long to enqueue the timed launch(es): the
// events then bracket GPU work only, never the CPU's launch cost, with or without a flush before.
__global__ void hold_gpu(unsigned long long ns) {
  unsigned long long start = 0, now = 0;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
  } while (now - start < ns);
}

// The CPU needs a few microseconds per launch (more through cuDNN); 20 us covers it with room.
constexpr unsigned long long kLeadNanoseconds = 20'000;

void hold_gpu_for_lead(cudaStream_t stream) {
  hold_gpu<<<1, 1, 0, stream>>>(kLeadNanoseconds);
  CUDA_CHECK_LAUNCH();
}

int streaming_grid(int sm_count) { return std::max(1, sm_count) * kBlocksPerSm; }

int current_sm_count() {
  int device = 0, sms = 0;
  CUDA_CHECK(cudaGetDevice(&device));
  CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  return sms;
}

double median_of(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// 2 x L2, rounded up to whole MiB.
std::size_t flush_bytes_for(std::int64_t l2_bytes) {
  constexpr std::size_t kMiB = 1 << 20;
  const auto want = 2 * static_cast<std::size_t>(std::max<std::int64_t>(l2_bytes, 1));
  return (want + kMiB - 1) / kMiB * kMiB;
}

}  // namespace

// ---- L2 flush -------------------------------------------------------------------------------

L2Flusher::L2Flusher(std::int64_t l2_bytes)
    : buffer_(flush_bytes_for(l2_bytes)), sink_(sizeof(float)) {}

void L2Flusher::flush(cudaStream_t stream) {
  CUDA_CHECK(cudaMemsetAsync(buffer_.get(), 0, buffer_.bytes(), stream));
  read_back<<<streaming_grid(current_sm_count()), kThreadsPerBlock, 0, stream>>>(
      buffer_.as<const float4>(), buffer_.bytes() / sizeof(float4), sink_.as<float>());
  CUDA_CHECK_LAUNCH();
}

void poison_nan(void* p, std::size_t bytes, cudaStream_t stream) {
  constexpr int kAllOnes = 0xFF;  // 0xFFFFFFFF is a NaN in fp32, 0xFFFF in bf16 and fp16
  CUDA_CHECK(cudaMemsetAsync(p, kAllOnes, bytes, stream));
}

// ---- plans and statistics (host only) -------------------------------------------------------

BatchPlan plan_batch(double single_launch_s, std::size_t set_bytes, bool flush_l2,
                     std::size_t spare_bytes) {
  BatchPlan plan;
  plan.single_launch_s = single_launch_s;
  if (single_launch_s >= kMinSampleSeconds) return plan;
  const double per = std::max(single_launch_s, 1e-9);
  // (The 1e-9 keeps 50 us / 2 us at 25 launches, not 26 from rounding.)
  const double want = std::ceil(kBatchTargetSeconds / per - 1e-9);
  plan.launches = static_cast<int>(std::clamp(want, 2.0, static_cast<double>(kMaxBatch)));
  plan.graph = true;
  if (flush_l2) {
    // One set per launch: each launch of the batch reads data nothing has touched since the flush.
    std::size_t affordable = set_bytes ? spare_bytes / set_bytes + 1 : plan.launches;
    plan.sets = static_cast<int>(std::min<std::size_t>(affordable, plan.launches));
    plan.sets = std::max(plan.sets, 1);
  }
  return plan;
}

int samples_needed(const TimingPolicy& policy, double sample_s) {
  const double by_time =
      sample_s > 0 ? std::ceil(policy.min_time_s / sample_s) : static_cast<double>(kMaxSamples);
  const double n = std::max(static_cast<double>(policy.min_repetitions), by_time);
  return static_cast<int>(std::clamp(n, 1.0, static_cast<double>(kMaxSamples)));
}

StopRule stop_rule(const TimingPolicy& policy, double sample_s) {
  StopRule rule;
  rule.first_samples = samples_needed(policy, sample_s);
  rule.target = policy.noise_target;
  rule.max_seconds = policy.max_seconds_per_record;
  rule.max_samples = kMaxSamples;
  return rule;
}

TimeStats summarize(std::vector<double> v, int launches_per_sample, bool l2_flushed) {
  TimeStats t;
  t.samples = static_cast<int>(v.size());
  t.launches_per_sample = launches_per_sample;
  t.l2_flushed = l2_flushed;
  if (v.empty()) return t;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  t.median_s = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  t.min_s = v.front();
  t.max_s = v.back();
  t.mean_s = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(n);
  double ss = 0;
  for (double x : v) ss += (x - t.mean_s) * (x - t.mean_s);
  t.stddev_s = n > 1 ? std::sqrt(ss / static_cast<double>(n - 1)) : 0.0;
  t.cv = t.mean_s > 0 ? t.stddev_s / t.mean_s : 0.0;
  return t;
}

// ---- calibration and samples ----------------------------------------------------------------

double calibrate(const LaunchFn& launch, L2Flusher* flusher, cudaStream_t stream, int warmup) {
  for (int i = 0; i < warmup; ++i) launch(0, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  constexpr int kCalibrationLaunches = 3;
  CudaEvent start, stop;
  std::vector<double> t;
  for (int i = 0; i < kCalibrationLaunches; ++i) {
    if (flusher) flusher->flush(stream);
    hold_gpu_for_lead(stream);
    start.record(stream);
    launch(0, stream);
    stop.record(stream);
    CUDA_CHECK(cudaEventSynchronize(stop.get()));
    t.push_back(stop.seconds_since(start));
  }
  return median_of(t);
}

SampleTimer::SampleTimer(LaunchFn launch, BatchPlan plan, L2Flusher* flusher, cudaStream_t stream)
    : launch_(std::move(launch)), plan_(plan), flusher_(flusher), stream_(stream) {
  if (plan_.launches <= 1) {
    plan_.graph = false;
    return;
  }
  if (!plan_.graph) return;
  // Capture the batch once; if any launch in it cannot be captured, fall back to plain enqueues.
  bool captured = false;
  CUDA_CHECK(cudaStreamBeginCapture(stream_, cudaStreamCaptureModeThreadLocal));
  try {
    for (int i = 0; i < plan_.launches; ++i) launch_(i % plan_.sets, stream_);
    captured = true;
  } catch (const CudaError&) {
  }
  cudaGraph_t graph = nullptr;
  const cudaError_t end = cudaStreamEndCapture(stream_, &graph);
  if (captured && end == cudaSuccess && graph &&
      cudaGraphInstantiate(&exec_, graph, 0) == cudaSuccess) {
    graph_ = graph;
  } else {
    if (graph) CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph));
    exec_ = nullptr;
    cudaGetLastError();  // the failed capture's error is not sticky: clear it and enqueue directly
    plan_.graph = false;
  }
}

SampleTimer::~SampleTimer() {
  if (exec_) CUDA_CHECK_NOTHROW(cudaGraphExecDestroy(exec_));
  if (graph_) CUDA_CHECK_NOTHROW(cudaGraphDestroy(graph_));
}

void SampleTimer::enqueue_batch() {
  if (exec_) {
    CUDA_CHECK(cudaGraphLaunch(exec_, stream_));
    return;
  }
  for (int i = 0; i < plan_.launches; ++i) launch_(i % plan_.sets, stream_);
}

double SampleTimer::sample() {
  if (flusher_) flusher_->flush(stream_);
  hold_gpu_for_lead(stream_);
  start_.record(stream_);
  enqueue_batch();
  stop_.record(stream_);
  CUDA_CHECK(cudaEventSynchronize(stop_.get()));
  return stop_.seconds_since(start_) / plan_.launches;
}

// ---- the L2 ceiling -------------------------------------------------------------------------

L2Measurement measure_l2_read(const DeviceInfo& device, const TimingPolicy& policy,
                              cudaStream_t stream) {
  // A quarter of the L2: well inside it even on parts whose L2 is split into two partitions.
  constexpr int kL2Fraction = 4;
  constexpr int kPasses = 200;
  L2Measurement m;
  m.buffer_bytes = static_cast<std::size_t>(device.l2_bytes / kL2Fraction) / sizeof(float4) *
                   sizeof(float4);
  m.passes = kPasses;
  DeviceBuffer buf(m.buffer_bytes), sink(sizeof(float));
  constexpr int kOneBits = 0x01;  // fill pattern 0x01010101: small positive floats, never the sentinel
  CUDA_CHECK(cudaMemsetAsync(buf.get(), kOneBits, buf.bytes(), stream));
  const std::size_t n4 = m.buffer_bytes / sizeof(float4);
  const int grid = streaming_grid(device.sm_count);
  LaunchFn launch = [&](int, cudaStream_t s) {
    l2_reread<<<grid, kThreadsPerBlock, 0, s>>>(buf.as<const float4>(), n4, kPasses,
                                                 sink.as<float>());
    CUDA_CHECK_LAUNCH();
  };
  // No flush: the point is that the buffer stays resident.
  const double single = calibrate(launch, nullptr, stream, std::max(policy.warmup, 1));
  SampleTimer timer(launch, BatchPlan{1, 1, false, single}, nullptr, stream);
  std::vector<double> t;
  const auto start = std::chrono::steady_clock::now();
  const NoiseStats noise = sample_until_quiet(
      t, stop_rule(policy, single),
      [&](int n) {
        for (int i = 0; i < n; ++i) t.push_back(timer.sample());
      },
      [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); });
  m.time = summarize(std::move(t), 1, false);
  m.time.noise = noise;
  m.GBps = static_cast<double>(m.buffer_bytes) * kPasses / m.time.median_s / 1e9;
  return m;
}

}  // namespace smr
