// results.json: one versioned document per run. Everything downstream (report, plots, claims,
// scripts/table) reads this, never printed text. docs/results-schema.md documents every field.
// Rule: a value not measured is absent (std::nullopt -> key left out), never 0. A number that is
// not finite (a NaN error, a model value that is not modelled) is written as JSON null and read
// back as NaN. A json member that is null (config, device, claims at the top; counters, extra in
// a record) is written as null at the top level and left out in a record; both read back as null.
#pragma once

#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "roofline/model.hpp"
#include "core/problem.hpp"

namespace smr {

inline constexpr const char* kResultsSchema = "softmax-roofline/results";
inline constexpr int kResultsSchemaVersion = 1;
// The largest results.json read: a sweep of thousands of records with counters is a few MB.
inline constexpr std::uintmax_t kMaxResultsBytes = std::uintmax_t{256} << 20;

// The noise criterion of a record (harness/noise.hpp): whether the median's relative spread met
// the target before the time cap. Absent in runs made before the criterion existed: "not recorded",
// which is not "not converged".
struct NoiseStats {
  std::string statistic;    // "median_ci95_halfwidth_rel"
  double value = 0;         // the statistic over all samples; +inf (null in JSON): too few samples
  double target = 0;        // timing.noise_target
  bool converged = false;   // value <= target
  double seconds = 0;       // wall time spent taking the samples (flushes and holds included)
  double max_seconds = 0;   // timing.max_seconds_per_record
};

// The SM clock as NVML saw it around and during a record's samples (harness/clocks.hpp). Never
// zeros for "unknown": available = false and `unavailable` says why.
struct ClockStats {
  bool available = false;
  std::string unavailable;           // why not, when !available
  double sm_mhz_min = 0, sm_mhz_max = 0;
  int readings = 0;
  std::vector<std::string> reasons;  // NVML clock-event reasons seen at any reading
  bool throttled = false;            // a power or thermal reason among them
  // Set after the run (mark_clock_drops): sm_mhz_min below the run's highest reading by more
  // than kClockFellFraction, or throttled. Absent until then.
  std::optional<bool> fell;
};

// A record's SM clock "fell" when its lowest reading is this fraction below the run's highest.
inline constexpr double kClockFellFraction = 0.05;

struct TimeStats {         // seconds, over `samples` timed launches
  double median_s = 0, min_s = 0, max_s = 0, mean_s = 0, stddev_s = 0;
  double cv = 0;           // stddev / mean
  int samples = 0;
  int launches_per_sample = 1;  // >1 when short launches are batched between one event pair
  bool l2_flushed = true;
  std::optional<NoiseStats> noise;   // absent: not recorded (older runs, peers)
  std::optional<ClockStats> clocks;  // absent: not recorded
};

struct VerifyResult {
  bool passed = false;
  double max_rel_err = 0;     // worst row's maximum relative error against the fp64 reference
  double rel_l2_err = 0;      // ||out - ref|| / ||ref|| over the checked rows
  double tolerance = 0;
  std::int64_t rows_checked = 0;
  std::string detail;         // first failure, in words; empty when passed
};

struct Record {
  std::string kernel;
  DType dtype = DType::f32;
  std::int64_t M = 0, N = 0, ld_x = 0, ld_y = 0;
  std::string status = "ok";  // "ok", "skipped", "failed"
  std::string reason;         // why skipped/failed; empty for ok
  ModelPoint model;
  std::optional<VerifyResult> verify;
  std::optional<TimeStats> time;
  std::optional<double> effective_GBps;  // 2 x elements x dtype bytes / median time
  std::optional<double> pct_of_copy;     // effective_GBps / ceilings.dram_GBps x 100
  std::optional<double> model_GBps;      // model.dram_bytes / median time: what the model implies
  // null when not measured; else an object, metric name -> number: the raw CUPTI metrics
  // (attributed to this record's launch) and the derived keys listed in src/harness/counters.hpp.
  nlohmann::json counters;
  std::optional<std::string> counters_reason;  // why counters is null when they were asked for, and the fix
  nlohmann::json extra;                  // null or object: anything kernel- or peer-specific

  Problem problem() const { return Problem{M, N, ld_x, ld_y, dtype}; }
  std::string key() const;  // "kernel/dtype/M/N/ld_x/ld_y": identifies a record for --resume
};

struct RunResults {
  std::string tool_version;           // softmax-bench --version
  std::string created;                // ISO 8601 UTC
  std::string command;                // the command line that produced the run
  nlohmann::json config;              // SweepConfig::normalized
  nlohmann::json device;              // name, sm, SMs, L2, memory, clocks, driver; null without GPU
  Ceilings ceilings;
  std::vector<Record> records;
  nlohmann::json claims;              // null until evaluated (issue 5)
  bool complete = false;              // false while the sweep is still running or was interrupted
};

nlohmann::json to_json(const RunResults& r);
// Throws std::runtime_error with one line "SOURCE: KEY: what was expected" on a wrong `schema`, a
// newer `schema_version`, a missing required key or a wrong type.
RunResults results_from_json(const nlohmann::json& j, const std::string& source = "results.json");
RunResults read_results(const std::filesystem::path& file);  // errors name the file

// A file the user named (a config, a results or peers file), read whole. Throws InputFileError,
// one line "FILE: what is wrong": no such file, a symlink loop, a symlink to a missing file, a
// directory, not a regular file (a device, a FIFO, a socket), unreadable, or larger than
// `max_bytes` ("FILE: B bytes, larger than the 16 MiB a config may be", `what` = "a config") --
// checked before reading, and no more than max_bytes + 1 bytes are ever read.
struct InputFileError : std::runtime_error {
  InputFileError(const std::filesystem::path& file, std::string why);
  std::string reason;  // the message without "FILE: "
};
std::string read_input_file(const std::filesystem::path& file, std::uintmax_t max_bytes,
                            const std::string& what);
// Atomic: writes a temporary file beside FILE (FILE.tmp.PID.N), fsyncs it, renames it over FILE,
// fsyncs the directory. On any failure the temporary is removed, FILE is left as it was, and a
// std::runtime_error names FILE and the reason. Never leaves a half-written results.json.
void write_results(const std::filesystem::path& file, const RunResults& r);
// Same atomic write for any text file (reports, specs).
void write_file_atomic(const std::filesystem::path& file, const std::string& content);

// Marks every record's clocks.fell against the highest SM clock any record of `run` saw, and
// writes the run's clock summary to run.device["clocks"] (docs/results-schema.md). Records without
// clock readings are left alone; a run with none gets {"available": false, ...}.
void mark_clock_drops(RunResults& run);

// The current time as ISO 8601 UTC, "2026-12-01T06:16:00Z": RunResults::created.
std::string utc_now_iso8601();

}  // namespace smr
