// Timing: where a sample starts and ends, what the L2 holds when it starts, and how the samples
// become TimeStats. docs/timing.md explains every choice made here; counters live elsewhere
// (harness/counters.hpp) and never share a launch with timing.
//
// One sample, cold (the default):   flush L2 | hold | event | launch            | event
// One sample, batched short launch: flush L2 | hold | event | K launches (graph) | event
//   where launch i of the batch uses buffer set i: no launch in a sample finds its data in L2, and
//   `hold` is a 20 us spin kernel that keeps the GPU busy while the CPU enqueues the launch, so the
//   events never measure the CPU's launch cost.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include <cuda_runtime_api.h>

#include "harness/config.hpp"
#include "harness/device.hpp"
#include "harness/noise.hpp"
#include "roofline/results.hpp"

namespace smr {

// A launch shorter than this is not timed alone: CUDA events resolve ~0.5 us and a launch costs the
// GPU a few microseconds of start-up that are not the kernel's work.
inline constexpr double kMinSampleSeconds = 10e-6;
// A batched sample aims at this much GPU time.
inline constexpr double kBatchTargetSeconds = 50e-6;
// Most launches (and buffer sets) one batched sample may hold.
inline constexpr int kMaxBatch = 256;
// Most samples one record may take, whatever min_time_s asks.
inline constexpr int kMaxSamples = 10000;

// Evicts the L2 before a timed sample: writes a buffer of twice the L2 size (every line the previous
// sample left, dirty outputs included, is pushed out), then reads it back so the L2 holds only clean
// lines of the flush buffer -- the timed launch does not pay the write-back of the flush itself.
class L2Flusher {
 public:
  explicit L2Flusher(std::int64_t l2_bytes);
  void flush(cudaStream_t stream);
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
  DeviceBuffer sink_;  // where the read-back would write if its sum were ever the impossible value
};

// How one sample is made up.
struct BatchPlan {
  int launches = 1;            // launches between the two events of a sample
  int sets = 1;                // buffer sets they rotate over: launch i uses set i % sets
  bool graph = false;          // the launches are replayed as one CUDA graph
  double single_launch_s = 0;  // what calibration measured for one launch
};

// The plan for a launch that took `single_launch_s` alone. A launch of at least kMinSampleSeconds is
// one sample by itself. A shorter one is batched: K = kBatchTargetSeconds / single launches per
// sample; with the L2 flushed, over K distinct buffer sets (so every launch of the batch starts from
// DRAM), as many as `spare_bytes` allows for the K - 1 extra sets of `set_bytes` each.
BatchPlan plan_batch(double single_launch_s, std::size_t set_bytes, bool flush_l2,
                     std::size_t spare_bytes);

// Samples a record takes: at least policy.min_repetitions, and at least policy.min_time_s of timed
// time in all; never more than kMaxSamples.
int samples_needed(const TimingPolicy& policy, double sample_s);

// The stop rule of a record whose samples take `sample_s` each: samples_needed first, then the
// policy's noise target and time cap (harness/noise.hpp), never more than kMaxSamples.
StopRule stop_rule(const TimingPolicy& policy, double sample_s);

// Read the SM clock (harness/clocks.hpp) after every this many samples, besides before the first
// and after the last: an NVML query costs microseconds of host time between samples, none inside.
inline constexpr int kClockReadEvery = 16;

// Statistics over per-launch times (seconds): median, min, max, mean, sample stddev, cv.
TimeStats summarize(std::vector<double> per_launch_s, int launches_per_sample, bool l2_flushed);

// Enqueues one launch on `stream` using buffer set `set`. Throws smr::CudaError on failure.
using LaunchFn = std::function<void(int set, cudaStream_t stream)>;

// Warm-up launches (untimed), then the median of three single launches, each after a flush when
// `flusher` is given: the input to plan_batch.
double calibrate(const LaunchFn& launch, L2Flusher* flusher, cudaStream_t stream, int warmup);

// Takes samples according to a plan. With plan.launches > 1 it captures the batch into a CUDA graph
// (replayed with one cudaGraphLaunch, so the CPU's launch rate does not enter the time); when the
// launches cannot be captured it enqueues them one by one and says so in plan().graph.
class SampleTimer {
 public:
  SampleTimer(LaunchFn launch, BatchPlan plan, L2Flusher* flusher, cudaStream_t stream);
  ~SampleTimer();
  SampleTimer(const SampleTimer&) = delete;
  SampleTimer& operator=(const SampleTimer&) = delete;

  // One sample: flush (when flushing), hold, event, the batch, event. Returns seconds per launch.
  double sample();
  const BatchPlan& plan() const { return plan_; }

 private:
  void enqueue_batch();
  LaunchFn launch_;
  BatchPlan plan_;
  L2Flusher* flusher_;
  cudaStream_t stream_;
  CudaEvent start_, stop_;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t exec_ = nullptr;
};

// The L2 read bandwidth ceiling (1e9 B/s): a buffer of a quarter of the L2, resident after warm-up,
// re-read many times inside one kernel with L1-bypassing loads. Bytes counted: reads only.
struct L2Measurement {
  double GBps = 0;
  std::size_t buffer_bytes = 0;
  int passes = 0;
  TimeStats time;
};
L2Measurement measure_l2_read(const DeviceInfo& device, const TimingPolicy& policy,
                              cudaStream_t stream);

// Fills `bytes` bytes at `p` with 0xFF: every fp32/bf16/fp16 element becomes a NaN, so an element a
// kernel forgot to write cannot pass verification.
void poison_nan(void* p, std::size_t bytes, cudaStream_t stream);

}  // namespace smr
