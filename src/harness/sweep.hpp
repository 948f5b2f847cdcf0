// The sweep driver: ceilings first, then every (kernel, dtype, M, N) of a config -- verified, then
// timed through Google Benchmark with CUDA events -- then the counters pass, the claims and the
// report. Results are saved after every record; --resume continues a partial run.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/config.hpp"
#include "harness/device.hpp"
#include "roofline/results.hpp"

namespace smr {

struct SweepOptions {
  SweepConfig config;
  std::string config_arg;            // CONFIG as given on the command line; empty: embedded default
  std::filesystem::path dir;         // the run directory (created when missing)
  bool resume = false;               // keep the records already in dir/results.json
  bool counters = true;              // the profiling pass (config.counters.enabled && !--no-counters)
  bool quiet = false;                // no progress line, no summary
  std::vector<Record> peers;         // records of scripts/peers.py, merged before the claims
  std::string command;               // the command line, for results.json
};

// Runs the sweep; returns the exit code: 0 ok, 1 runtime failure (a sticky CUDA error stops the
// sweep with everything so far saved), 130 interrupted by SIGINT (everything so far saved).
int run_sweep(const SweepOptions& options);

// The ceilings measured on the current device (source "measured"): DRAM copy bandwidth (best of
// cudaMemcpyAsync device-to-device and the registry's `copy` kernel, bytes read + written, 1 GiB
// each way), FP32 FMA throughput (registry `fma`), L2 read bandwidth, and the peak from the clocks.
// `detail` receives every measurement behind them (times, sizes, which copy won).
Ceilings measure_ceilings(const DeviceInfo& device, const TimingPolicy& policy,
                          nlohmann::json& detail);

// The FP32 peak from the device's properties, the datasheet's way: SMs x FP32 lanes per SM x
// 2 FLOP (FMA) x SM clock. Lanes per SM by compute capability: 64 for 7.x and 8.0, 128 for 8.6
// and later. The ceiling used when the fma kernel cannot be measured; 0 when the clock is unknown.
double fp32_peak_GFLOPs(int cc_major, int cc_minor, int sm_count, int sm_clock_khz);

// Puts peer records into a run: a record with the same key() is replaced, pct_of_copy is
// recomputed against the run's copy ceiling, a record without a model (peers.py writes none) gets
// the fused one for the run's ceilings, and model_GBps follows. Returns how many were merged.
int merge_peers(RunResults& run, const std::vector<Record>& peers);

// For a saved run (`softmax-bench report`): every record of a registry kernel whose stored traffic
// model is not the one the registry now gives it (cuDNN's measured passes, say) gets the registry's
// model, predicted with the run's ceilings, and its model_GBps again. Returns how many changed.
int remodel_records(RunResults& run);

// The DeviceLimits a saved run was measured with, from its results.json `device`: the card's own
// fields (SMs, L2, memory, shared memory, registers, capability, clusters) and, where the run
// recorded them, its dispatch_limits (a run restricted to a profile or an 80-virtual build).
// Fields an older run did not record come from the device profile its card's name matches
// ("NVIDIA H100 80GB HBM3": h100), else from `fallback_profile`'s.
DeviceLimits run_device_limits(const RunResults& run, std::string_view fallback_profile);

// parent/<name>-<UTC timestamp>, with -2, -3 ... appended if that exists already. Not created.
std::filesystem::path fresh_run_dir(const std::filesystem::path& parent, const std::string& name);

}  // namespace smr
