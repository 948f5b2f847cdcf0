// Sweep configuration: one schema, written in YAML or JSON. Loaded and fully validated before
// anything touches the GPU; a mistake is one ConfigError naming file, line, column and key.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/problem.hpp"

namespace smr {

struct ConfigError : std::runtime_error {
  std::string file;
  int line = 0;    // 1-based; 0 when unknown
  int column = 0;  // 1-based; 0 when unknown
  std::string key; // dotted path, e.g. "sweep.N.from"; empty when the error is not about a key
  // what() is the full one-line message: "FILE:LINE:COL: KEY: MESSAGE"
  ConfigError(std::string file, int line, int column, std::string key, const std::string& message);
};

struct TimingPolicy {
  int warmup = 3;              // untimed launches before measuring
  int min_repetitions = 20;    // timed samples at least
  double min_time_s = 0.05;    // and at least this much timed time
  bool flush_l2 = true;        // evict L2 before every timed launch
  // The noise criterion (harness/noise.hpp): after the samples above, keep sampling until the
  // median's relative 95% interval half-width is <= noise_target, or until the record's samples
  // took max_seconds_per_record of wall time (0: never past the samples above).
  double noise_target = 0.005;
  double max_seconds_per_record = 0.2;
};

struct CounterPolicy {
  bool enabled = true;
  std::vector<std::string> metrics;  // empty: the default metric set (issue 5)
};

struct SweepConfig {
  std::string source;                // file path, or "<embedded default>"
  std::string name;                  // the config's `name`
  std::string description;
  std::vector<std::string> kernels;  // registry names, `all` already expanded, in run order
  std::vector<DType> dtypes;
  std::vector<Problem> problems;     // every (M, N, strides) of the sweep for each dtype, expanded
  // Parallel to problems: M comes from `sweep: {elements: ...}`, a size budget, so the sweep may
  // shrink M to fit the device's memory (harness/sweep_plan.hpp); other shapes are skipped there.
  std::vector<bool> shrinkable;
  std::int64_t row_pad = 0;          // extra elements per row: ld = N + row_pad
  TimingPolicy timing;
  CounterPolicy counters;
  // Max relative error per element against the fp64 reference: 2^-15, verify.hpp's
  // kDefaultTolerance (docs/verification.md derives it; a test holds the two equal).
  double tolerance = 1.0 / 32768.0;
  std::uint64_t seed = 2026;
  std::string output_dir = "runs";   // parent of the run directories
  nlohmann::json normalized;         // the config as understood, for results.json's `config`
};

// Most shapes (before the dtype product) one config may expand to: a sweep far past any real run
// is a typo, and the bound keeps the loader's work proportional to its input.
inline constexpr std::size_t kMaxShapes = 65536;

// The largest config file read (the expanded shapes of a sweep at kMaxShapes are far smaller): a
// bigger file is refused before it is read, with its name and this cap.
inline constexpr std::uintmax_t kMaxConfigBytes = std::uintmax_t{16} << 20;

// The kernel names a config may use. The normal build takes them from the registry
// (registry_kernel_names()); the fuzz target, which has no CUDA code, passes its own list to the
// overload of load_config_text below.
struct KernelNames {
  std::vector<std::string> known;  // every name a config may list
  std::vector<std::string> all;    // what `all` expands to, in run order
};
KernelNames registry_kernel_names();  // smr::kernels() and smr::default_kernel_names()

// Format by extension (.yaml/.yml or .json). Throws ConfigError, also for a file that cannot be
// read as one (missing, a directory, a device, a symlink loop, over kMaxConfigBytes).
SweepConfig load_config_file(const std::filesystem::path& path);
// `source` names the text in messages. `json` chooses the parser; YAML otherwise.
SweepConfig load_config_text(const std::string& text, const std::string& source, bool json);
// The same with the kernel names given: needs nothing from the registry.
SweepConfig load_config_text(const std::string& text, const std::string& source, bool json,
                             const KernelNames& names);
// The default sweep (configs/default.yaml, embedded at build time).
SweepConfig default_config();
const std::string& default_config_text();

}  // namespace smr
