// Hardware counters through CUPTI's Range Profiler (CUDA >= 12.6): what each kernel really moved
// through DRAM, L2 and L1 and which instructions it ran. A profiling pass of its own, never mixed
// with timing.
//
// How a measurement is attributed (docs/verification.md, "Counters against Nsight Compute"):
// the L2 is write-back, so a kernel's last writes can still sit dirty in L2 when it ends and reach
// DRAM during whatever runs next. measure() therefore profiles two user ranges per replay pass:
//   range "work+evict":  work(), then evict_l2() (reads a buffer ~4x L2: every dirty line of the
//                        work is written back inside this range)
//   range "evict":       evict_l2() alone, from the same L2 state
// and attributes to the work  range - eviction  for every additive counter, except the DRAM
// writes: a read-only eviction writes nothing of its own, so every write in the first range is
// the work's (kept whole; the eviction range's own writes are reported as a check).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

#include "harness/device.hpp"

namespace smr {

// The default metric set (docs/results-schema.md explains each).
std::vector<std::string> default_counter_metrics();

// Keys of a record's `counters` object in results.json (src/roofline/claims.cpp reads them;
// docs/results-schema.md documents them). Every value is a number attributed to the record's
// launch; a metric that was not read is left out, never 0.
//   Raw CUPTI metrics, under their own names (the constants of src/core/metrics.hpp):
//     metric::kDramRead, kDramWrite                                      bytes
//     kL2SectorsFromL1                                                   32-byte sectors, L1<->L2
//     kL1Bytes                                                           bytes
//     kFaddThreadInst, kFmulThreadInst, kFfmaThreadInst                  thread instructions
//     kXuWarpInst                                                        warp instructions
//     kGpuTime                                                           ns
//   Derived keys, the constants below: dram_bytes (bytes), l1_l2_bytes (bytes), flops_executed
//   (FLOP), xu_thread_inst (thread instructions). The L1 bytes need no derived key:
//   kL1Bytes is already in bytes.

// Values derived from the metrics, added to CounterReading::values when their inputs were
// measured (docs/results-schema.md documents these names):
inline constexpr std::string_view kDramBytes = "dram_bytes";          // read + write
inline constexpr std::string_view kL1L2Bytes = "l1_l2_bytes";         // L2 sectors from L1 x 32
inline constexpr std::string_view kFlopsExecuted = "flops_executed";  // fadd + fmul + 2 x ffma
inline constexpr std::string_view kXuThreadInst = "xu_thread_inst";   // pipe_xu (warp-level) x 32

struct CounterReading {
  bool ok = false;
  std::string reason;                  // why not, with the fix ("run as root, or ...")
  std::map<std::string, double> values;  // metric name -> value, attributed to the work
  int passes = 0;                      // replay passes the metric set needed
  // As CUPTI reported them, before attribution: the range "work+evict" and the range "evict".
  std::map<std::string, double> range_values;
  std::map<std::string, double> eviction_values;
  std::vector<std::string> notes;      // caveats found while attributing (see attribute_counters)
  double wall_ms = 0;                  // this measurement's host wall time, passes and decoding
};

// ---- Attribution: pure functions, testable without a GPU -----------------------------------

// True for counters that add up over a range (the rollup `.sum` with no sub-metric), which is what
// attribution can subtract. Ratios, averages, maxima and rates (".avg", ".max", ".per_second",
// ".pct_of_peak...") cannot be split that way: they are kept only in range_values.
bool counter_is_additive(std::string_view metric);

// True for counters the eviction range contributes nothing of its own to, so that the first
// range's value is the work's entire value: the DRAM writes (dram__bytes_write.*). See the file
// comment; everything else the eviction does (its DRAM and L2 reads, L1 traffic, any FP32 or XU
// instructions, its duration) is subtracted.
bool counter_kept_whole(std::string_view metric);

struct Attribution {
  std::map<std::string, double> values;  // attributed, plus the derived values
  std::vector<std::string> notes;
};

// range_with_eviction: the values of range "work+evict"; eviction_alone: those of range "evict".
// Every additive metric of the first range must be in the second (std::invalid_argument names the
// one missing). Results are not clamped: a small negative difference is noise and stays visible.
Attribution attribute_counters(const std::map<std::string, double>& range_with_eviction,
                               const std::map<std::string, double>& eviction_alone);

// Adds kDramBytes, kL1L2Bytes, kFlopsExecuted and kXuThreadInst to `values`, each only when all of
// its inputs are present (a value not measured stays absent, never 0).
void add_derived_counters(std::map<std::string, double>& values);

// A metric set split by what the chip has: CUPTI names metrics per architecture, and a chip may
// lack one the set asks for (a GDDR card's DRAM counters, an older chip's pipe). `why_missing`
// returns the reason a metric cannot be read on this chip, or nullopt when it can. The session
// measures `kept`; every metric of `unavailable` is reported as such (results.json: the record's
// extra.counters.unavailable, metric -> reason), never as 0.
struct MetricSelection {
  std::vector<std::string> kept;
  std::map<std::string, std::string> unavailable;  // metric -> why
};
MetricSelection select_metrics(
    const std::vector<std::string>& wanted,
    const std::function<std::optional<std::string>(const std::string&)>& why_missing);

// The one-line reason, with the fix, for a CUPTI failure that makes counters unavailable.
// `cupti_result` is the CUptiResult code, `call` the CUPTI function that returned it.
std::string explain_cupti_failure(int cupti_result, std::string_view call);

// ---- The profiler ----------------------------------------------------------------------------

class CounterSession {
 public:
  // Creates the profiler for the current device and context: the metric set's configuration is
  // built once here and reused by every measure() (empty `metrics`: the default set; duplicates
  // are dropped). Never throws for "counters are not available here" (no GPU, no privileges,
  // unsupported device or driver, another profiler attached, a metric this chip does not have):
  // available() says so and unavailable_reason() says why, naming the CUPTI call that failed.
  // SMR_CUPTI_DEBUG=1 in the environment prints every CUPTI step to stderr.
  CounterSession(std::vector<std::string> metrics);
  ~CounterSession();
  CounterSession(const CounterSession&) = delete;
  CounterSession& operator=(const CounterSession&) = delete;

  bool available() const;
  const std::string& unavailable_reason() const;
  const std::vector<std::string>& metrics() const;
  int expected_passes() const;    // replay passes the configuration needs; 0 when unavailable
  const std::string& chip() const;  // CUPTI's chip name ("GH100"); empty when unavailable
  // Metrics of the set this chip lacks, metric -> why: measured without them (metrics() lists
  // what is measured). Empty when the chip has every one.
  const std::map<std::string, std::string>& unavailable_metrics() const;

  // Profiles `work` (enqueue the kernel(s) on any stream) as one range, replaying it as many times
  // as the metric set needs. DRAM writes still dirty in L2 when `work` ends are attributed to it:
  // `evict_l2` runs inside the range and what it itself read is subtracted (see the file comment).
  // `evict_l2` must only read (an L2Evictor does). Both callables must be repeatable (same inputs
  // each pass): work() also runs once unprofiled before the passes, because the first writes to
  // freshly allocated memory cost DRAM traffic that is not the kernel's (+1.8% dram__bytes_write
  // on the H200), and each pass starts with an unprofiled evict_l2(). The session's first
  // measure() collects twice and discards the first collection (its DRAM writes came out 1.8%
  // high on the H200): keep one session for a whole sweep. The device is synchronised after each
  // callable. A CUPTI failure here returns
  // ok = false with the reason and leaves the session unavailable; an exception from a callable
  // propagates after the profiler's range is closed.
  CounterReading measure(const std::function<void()>& work, const std::function<void()>& evict_l2);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Evicts L2 by reading a buffer `multiple` times the L2 size with plain loads (no writes, no FP32
// arithmetic: the eviction range then adds nothing to the FP32 counts and writes no DRAM bytes of
// its own). Device code in counters_device.cu.
class L2Evictor {
 public:
  explicit L2Evictor(std::size_t l2_bytes, int multiple = 4);
  void operator()(cudaStream_t stream = nullptr) const;  // enqueue one eviction
  std::size_t bytes() const { return buffer_.bytes(); }

 private:
  DeviceBuffer buffer_;
  DeviceBuffer sink_;  // written only if an impossible value is read: keeps the loads alive
  int blocks_ = 0;     // a few blocks per SM, grid-stride over the buffer
};

// A kernel with exactly known counts, for checking the profiler itself (smr-counter-probe
// selftest): y[i] = a * x[i] + b over n floats, one FFMA and no other FP32 instruction per element,
// each x read once and each y written once: 4n bytes read, 4n written, n FFMA thread instructions.
void launch_counter_selftest(const float* x, float* y, std::size_t n, cudaStream_t stream);

}  // namespace smr
