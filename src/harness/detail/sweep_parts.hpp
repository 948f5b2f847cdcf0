// The pieces the files of the sweep driver share (sweep.cpp's header lists the files): not part
// of the harness's interface (sweep.hpp is).
#pragma once

#include <chrono>
#include <csignal>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/clocks.hpp"
#include "harness/config.hpp"
#include "harness/device.hpp"
#include "harness/sweep.hpp"
#include "harness/sweep_plan.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "kernels/registry.hpp"
#include "roofline/results.hpp"

namespace smr::detail {

// ---- constants ------------------------------------------------------------------------------

inline constexpr std::size_t kMiB = std::size_t{1} << 20;
inline constexpr std::size_t kGiB = std::size_t{1} << 30;
// Device memory left free beyond what a record allocates (cuDNN, CUPTI and the driver need some).
inline constexpr std::size_t kMemoryMarginBytes = 256 * kMiB;

// Set by SIGINT during run_sweep (sweep.cpp); the passes stop at the next record.
extern volatile std::sig_atomic_t g_interrupted;

// ---- small helpers ----------------------------------------------------------------------------

inline double gb(double bytes) { return bytes / 1e9; }

std::string shape_text(const Problem& p);  // "MxN"

inline std::size_t buffer_bytes(std::int64_t rows, std::int64_t ld, DType t) {
  return static_cast<std::size_t>(rows) * static_cast<std::size_t>(ld) *
         static_cast<std::size_t>(dtype_bytes(t));
}

std::size_t free_device_bytes();

// The memory the sweep is planned against (harness/sweep_plan.hpp): the device's free memory now,
// its total and its L2.
MemoryBudget device_memory(const DeviceInfo& device);

// After a CUDA error: clear the error if it was not sticky and tell whether work can go on.
bool context_usable();

inline std::int64_t rows_in_flight(const KernelInfo& k, const Problem& p, const DeviceLimits& d) {
  return k.rows_in_flight ? k.rows_in_flight(p, d) : 0;
}

// Replaces the record with r's key, or appends r.
void upsert(RunResults& run, Record r);

// ---- Google Benchmark's JSON (gbench_log.cpp) -------------------------------------------------

void init_google_benchmark();

// gbench.json: Google Benchmark's own JSON document, one entry per timed record, accumulated over
// the records (and over the runs of a --resume) from what its JSONReporter writes.
class GbenchLog {
 public:
  // `resume`: keep the entries of the run being continued; otherwise start empty (--force).
  GbenchLog(std::filesystem::path file, bool resume);
  void add(const std::string& reporter_output);
  void save() const;

 private:
  std::filesystem::path file_;
  nlohmann::json doc_;
};

// ---- the terminal progress line (progress.cpp) ------------------------------------------------

class Progress {
 public:
  Progress(int total, int already_done, bool quiet);
  void show(const std::string& kernel, const Problem& p);
  void finished_one();
  void clear();
  // For messages printed while the line is showing.
  void message(const std::string& text);
  double seconds() const;
  int done() const { return done_; }

 private:
  bool on_;
  int total_, done_, done_here_ = 0;
  std::chrono::steady_clock::time_point start_;
};

// ---- one shape's data, shared by the kernels of the shape (shape_data.cpp) --------------------

// The input lives on the device only: made there from the run's seed (harness/verify_gpu.hpp),
// and verified there, every row of every record.
struct ShapeData {
  Problem p;
  std::uint64_t seed = 0;
  DeviceBuffer x, y;
};

ShapeData make_shape(const Problem& p, std::uint64_t seed, cudaStream_t stream);

// Bytes a record needs on the device beyond what is already allocated for its shape.
std::size_t record_bytes(const KernelInfo& k, const Problem& p, bool shape_allocated);

// ---- everything the records of a run share ----------------------------------------------------

struct Context {
  const SweepOptions& opt;
  const SweepConfig& cfg;
  DeviceInfo device;
  DeviceLimits limits;
  RunResults run;
  std::filesystem::path results_file;
  CudaStream stream;
  L2Flusher flusher;
  GbenchLog gbench;
  ClockWatch clocks;         // NVML's view of the SM clock; unavailable says why
  double timing_wall_s = 0;  // summed over the records timed in this run
  double verify_wall_s = 0;  // input made on the device, launch and the device's check, likewise

  Context(const SweepOptions& o, DeviceInfo d)
      : opt(o),
        cfg(o.config),
        device(std::move(d)),
        limits(device.limits()),
        results_file(o.dir / "results.json"),
        flusher(device.l2_bytes),
        gbench(o.dir / "gbench.json", o.resume) {}

  void save() {
    write_results(results_file, run);
    gbench.save();
  }
};

// ---- one record (sweep_record.cpp, record_verify.cpp, record_timing.cpp) ----------------------

// The record of kernel k on shape p before it runs: its key, its traffic model and plan.
Record base_record(const KernelInfo& k, const Problem& p, const Context& ctx);

// Fills r (status, reason, verify, time ...) for one kernel on one shape. Throws CudaError.
void run_record(const KernelInfo& k, std::optional<ShapeData>& shape, const Problem& p, Record& r,
                Context& ctx);

// Launch once on a freshly made input and a NaN-poisoned output, then check every row of the
// output on the device. nullopt: nothing to check (the FMA ceiling kernel).
std::optional<VerifyResult> verify_record(const KernelInfo& k, ShapeData& s, void* workspace,
                                          const SweepConfig& cfg, cudaStream_t stream);

// Times kernel k on the shape through Google Benchmark; fills r.time, the rates and
// r.extra["timing"].
void time_record(const KernelInfo& k, ShapeData& s, DeviceBuffer& workspace, Record& r,
                 Context& ctx);

// The timing of one launcher, outside Google Benchmark (ceilings).
struct DirectTiming {
  TimeStats time;
  BatchPlan plan;
};
DirectTiming time_direct(const LaunchFn& launch, const TimingPolicy& policy, L2Flusher* flusher,
                         cudaStream_t stream);

nlohmann::json time_json(const TimeStats& t);

// ---- the counters pass (counters_pass.cpp) ----------------------------------------------------

// Counters for every timed record that has none yet. Returns false when interrupted.
bool counters_pass(Context& ctx);

// ---- a run started or continued (resume.cpp) ---------------------------------------------------

// Fills the run's header (tool version, created, command, config, device) for a fresh run, or,
// with --resume, reads the saved results.json first. Returns whether the saved ceilings can be
// reused (measured, and on a device of the same name).
bool start_run(Context& ctx);

// key -> status of every record of the run being continued.
std::map<std::string, std::string> saved_statuses(const RunResults& run);

// How many of the records (problems x kernels) the continued run has already done (any status but
// "failed").
int records_done(const std::vector<Problem>& problems, const std::vector<std::string>& kernels,
                 const std::map<std::string, std::string>& saved);

// What a stopped run prints: why, how much is saved where, and the command that continues it.
std::string resume_hint(const std::string& why, int done, int total, const Context& ctx);

}  // namespace smr::detail
