// CUPTI Range Profiler session: user ranges, user replay (the only combination that can hold a
// multi-kernel pipeline and its L2 eviction in one range; kernel replay needs auto range).
//
// The steps, in the order CUPTI needs them (each one is printed with SMR_CUPTI_DEBUG=1):
//   once, in the constructor                   per collection (measure() makes one; a session's
//   cuptiProfilerInitialize                      first measure() makes two, the first discarded)
//   cuptiProfilerDeviceSupported               cuptiRangeProfilerCounterDataImageInitialize
//   cuptiDeviceGetChipName                     cuptiRangeProfilerSetConfig (pass 0)
//   cuptiProfilerGetCounterAvailability        work() once, unprofiled (warm-up)
//   cuptiProfilerHostInitialize                per pass: evict_l2() unprofiled, Start,
//   cuptiProfilerHostConfigAddMetrics            Push "work+evict", Pop, Push "evict", Pop,
//   cuptiProfilerHostGetConfigImage(Size)        Stop (all passes submitted?)
//   cuptiProfilerHostGetNumOfPasses            cuptiRangeProfilerDecodeData
//   cuptiRangeProfilerEnable                   cuptiRangeProfilerGetCounterDataInfo
//   cuptiRangeProfilerGetCounterDataSize       per range: CounterDataGetRangeInfo,
//                                                cuptiProfilerHostEvaluateToGpuValues
// The configuration image is built once per metric set; a measurement only resets the counter
// data image and sets the configuration again, so the profiling pass costs the replays, not setup.
// What the two ranges' values become (the work's share, the derived values) is
// counters_attribution.cpp's.
#include "harness/counters.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>

#include <fmt/format.h>

#if __has_include(<cupti_range_profiler.h>) && __has_include(<cupti_profiler_host.h>)
#define SMR_HAVE_RANGE_PROFILER 1
#include <cuda.h>
#include <cudaTypedefs.h>
#include <cupti_profiler_host.h>
#include <cupti_profiler_target.h>
#include <cupti_range_profiler.h>
#include <cupti_result.h>
#include <cupti_target.h>
#include <cupti_version.h>
#else
#define SMR_HAVE_RANGE_PROFILER 0
#endif

namespace smr {

namespace {

constexpr const char* kPrivilegesFix =
    "run as root, or let users read the counters: load the nvidia kernel module with "
    "NVreg_RestrictProfilingToAdminUsers=0 (e.g. `options nvidia "
    "NVreg_RestrictProfilingToAdminUsers=0` in /etc/modprobe.d/, then reboot; "
    "https://developer.nvidia.com/ERR_NVGPUCTRPERM)";

}  // namespace

std::string explain_cupti_failure(int code, std::string_view call) {
#if SMR_HAVE_RANGE_PROFILER
  const char* name = nullptr;
  if (cuptiGetResultString(static_cast<CUptiResult>(code), &name) != CUPTI_SUCCESS || !name)
    name = "unknown CUPTI result";
  const std::string head = fmt::format("{} returned {} ({})", call, name, code);
  switch (static_cast<CUptiResult>(code)) {
    // Result codes from 39 on are named only where this header is known to have them (CUDA 13);
    // an older toolkit still gets the CUPTI name of the result in `head`.
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
#if CUPTI_API_VERSION >= 130000
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
#endif
      return fmt::format("{}: this process may not read GPU performance counters; {}", head,
                         kPrivilegesFix);
    case CUPTI_ERROR_HARDWARE_BUSY:
    case CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED:
#if CUPTI_API_VERSION >= 130000
    case CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED:
#endif
      return fmt::format(
          "{}: another profiler holds the counters (Nsight Compute, Nsight Systems GPU metrics, "
          "DCGM profiling): run without it (`dcgmi profile --pause` pauses DCGM)",
          head);
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_INVALID_DEVICE:
    case CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED:
#if CUPTI_API_VERSION >= 130000
    case CUPTI_ERROR_INVALID_CHIP_NAME:
#endif
      return fmt::format(
          "{}: this device or driver does not support CUPTI's Range Profiler (compute capability "
          ">= 7.5 and a driver as new as the CUDA toolkit the harness was built with are needed)",
          head);
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
#if CUPTI_API_VERSION >= 130000
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
#endif
      return fmt::format("{}: counters cannot be read in this device configuration", head);
    case CUPTI_ERROR_INVALID_METRIC_NAME:
      return fmt::format(
          "{}: a metric in counters.metrics does not exist on this chip (check the names with "
          "`ncu --query-metrics`)",
          head);
    default:
      return head;
  }
#else
  return fmt::format("{} returned CUPTI result {}", call, code);
#endif
}

// ---- The CUPTI session ------------------------------------------------------------------------

namespace {

bool cupti_debug() {
  static const bool on = [] {
    const char* v = std::getenv("SMR_CUPTI_DEBUG");
    return v && std::string_view(v) == "1";
  }();
  return on;
}

template <class... Args>
void debug(fmt::format_string<Args...> f, Args&&... args) {
  if (!cupti_debug()) return;
  std::fputs(("[smr-cupti] " + fmt::format(f, std::forward<Args>(args)...) + "\n").c_str(), stderr);
  std::fflush(stderr);
}

// The metric list a session uses: the default set for an empty list, duplicates dropped.
std::vector<std::string> dedupe(std::vector<std::string> metrics) {
  if (metrics.empty()) metrics = default_counter_metrics();
  std::vector<std::string> out;
  for (auto& m : metrics)
    if (std::find(out.begin(), out.end(), m) == out.end()) out.push_back(std::move(m));
  return out;
}

}  // namespace

#if SMR_HAVE_RANGE_PROFILER

namespace {

// A failed CUPTI call: the call's text, its result, and where.
struct CuptiError : std::runtime_error {
  CUptiResult code;
  std::string function;  // "cuptiRangeProfilerEnable"
  CuptiError(CUptiResult c, std::string fn, const std::string& what)
      : std::runtime_error(what), code(c), function(std::move(fn)) {}
};

std::string function_of(const char* call_text) {
  const std::string s(call_text);
  return s.substr(0, s.find('('));
}

void cupti_check(CUptiResult r, const char* call, const char* file, int line) {
  if (r == CUPTI_SUCCESS) {
    debug("  ok");
    return;
  }
  const std::string fn = function_of(call);
  std::string msg = explain_cupti_failure(static_cast<int>(r), fn);
  const char* detail = nullptr;
  if (cuptiGetErrorMessage(r, &detail) == CUPTI_SUCCESS && detail && *detail)
    msg += fmt::format(" [{}]", detail);
  const std::string_view path(file);
  msg += fmt::format(" ({}:{})", path.substr(path.find_last_of('/') + 1), line);
  debug("  FAILED: {}", msg);
  throw CuptiError(r, fn, msg);
}

// A failed step of ours (not a CUPTI result): same handling as a CUPTI failure.
[[noreturn]] void fail(const std::string& what) {
  debug("  FAILED: {}", what);
  throw CuptiError(CUPTI_ERROR_UNKNOWN, "", what);
}

// Every CUPTI call goes through here: printed before it runs (a crash or hang inside names the
// call), checked after, the call's text in the error.
#define SMR_CUPTI(call)                                          \
  do {                                                           \
    debug("{}", #call);                                          \
    ::smr::cupti_check((call), #call, __FILE__, __LINE__);       \
  } while (0)

// Params structs are zero-filled with structSize set (CUPTI's versioning field).
template <class P>
P params(std::size_t struct_size) {
  P p{};
  p.structSize = struct_size;
  return p;
}
#define SMR_PARAMS(Type) ::smr::params<Type>(Type##_STRUCT_SIZE)

// Driver entry points through the runtime, so that nothing links libcuda.so directly: a test
// binary must load on a machine with the toolkit but no driver.
template <class Fn>
Fn driver_function(const char* name) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found{};
  CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found));
  if (found != cudaDriverEntryPointSuccess || !fn)
    throw std::runtime_error(fmt::format("the CUDA driver has no {} (entry point query {})", name,
                                         static_cast<int>(found)));
  return reinterpret_cast<Fn>(fn);
}

const char* support_level(CUpti_Profiler_Support_Level l) {
  switch (l) {
    case CUPTI_PROFILER_CONFIGURATION_SUPPORTED: return "supported";
    case CUPTI_PROFILER_CONFIGURATION_UNSUPPORTED: return "unsupported";
    case CUPTI_PROFILER_CONFIGURATION_DISABLED: return "disabled";
    default: return "unknown";
  }
}

constexpr const char* kWorkRange = "work+evict";
constexpr const char* kEvictRange = "evict";
constexpr std::size_t kRangesPerPass = 2;
// Stop reports "all passes submitted" after expected_passes replays; a few more are tolerated
// before the loop is declared stuck.
constexpr int kExtraPassesTolerated = 2;

}  // namespace

struct CounterSession::Impl {
  std::vector<std::string> metrics;
  std::vector<const char*> metric_ptrs;
  std::map<std::string, std::string> unavailable;  // metrics this chip lacks: metric -> why
  std::string reason;
  bool ok = false;
  std::string chip;
  int expected_passes = 0;
  bool primed = false;  // the first collection has been taken (and discarded)

  CUcontext ctx = nullptr;
  bool profiler_initialized = false;
  CUpti_Profiler_Host_Object* host = nullptr;
  CUpti_RangeProfiler_Object* range_profiler = nullptr;
  std::vector<uint8_t> availability;
  std::vector<uint8_t> config;
  std::vector<uint8_t> counter_data;

  explicit Impl(std::vector<std::string> m) : metrics(dedupe(std::move(m))) {
    for (const auto& s : metrics) metric_ptrs.push_back(s.c_str());
    if (!gpu_available()) {
      reason = "no CUDA device is visible (cudaGetDeviceCount found none or no driver is loaded): "
               "counters need an NVIDIA GPU";
      debug("{}", reason);
      return;
    }
    try {
      set_up();
      ok = true;
      debug("session ready: chip {}, {} metrics, {} pass(es) per measurement", chip,
            metrics.size(), expected_passes);
    } catch (const CuptiError& e) {
      reason = e.what();
      tear_down();
    } catch (const std::exception& e) {  // a CUDA or driver step before CUPTI could be asked
      reason = fmt::format("counters could not be set up: {}", e.what());
      debug("  FAILED: {}", reason);
      tear_down();
    }
  }
  ~Impl() { tear_down(); }

  void set_up() {
    int device = 0;
    CUDA_CHECK(cudaGetDevice(&device));
    CUDA_CHECK(cudaFree(nullptr));  // make the primary context current
    auto cu_ctx_get_current = driver_function<PFN_cuCtxGetCurrent_v4000>("cuCtxGetCurrent");
    auto cu_device_get = driver_function<PFN_cuDeviceGet_v2000>("cuDeviceGet");
    if (cu_ctx_get_current(&ctx) != CUDA_SUCCESS || !ctx)
      fail("cuCtxGetCurrent: no current CUDA context");
    CUdevice cu_device = 0;
    if (cu_device_get(&cu_device, device) != CUDA_SUCCESS) fail("cuDeviceGet failed");
    debug("device {}, context {}", device, static_cast<const void*>(ctx));

    auto init = SMR_PARAMS(CUpti_Profiler_Initialize_Params);
    SMR_CUPTI(cuptiProfilerInitialize(&init));
    profiler_initialized = true;

    auto supported = SMR_PARAMS(CUpti_Profiler_DeviceSupported_Params);
    supported.cuDevice = cu_device;
    supported.api = CUPTI_PROFILER_RANGE_PROFILING;
    SMR_CUPTI(cuptiProfilerDeviceSupported(&supported));
    debug("  supported: overall {}, architecture {}, sli {}, vGpu {}, confidentialCompute {}, "
          "cmp {}, wsl {}",
          support_level(supported.isSupported), support_level(supported.architecture),
          support_level(supported.sli), support_level(supported.vGpu),
          support_level(supported.confidentialCompute), support_level(supported.cmp),
          support_level(supported.wsl));
    if (supported.isSupported != CUPTI_PROFILER_CONFIGURATION_SUPPORTED)
      fail(fmt::format(
          "cuptiProfilerDeviceSupported: the Range Profiler is not supported on device {} "
          "(architecture {}, SLI {}, vGPU {}, confidential computing {}, CMP {}, WSL {}): "
          "compute capability >= 7.5 on bare metal, or vGPU with profiling enabled, is needed",
          device, support_level(supported.architecture), support_level(supported.sli),
          support_level(supported.vGpu), support_level(supported.confidentialCompute),
          support_level(supported.cmp), support_level(supported.wsl)));

    auto chip_params = SMR_PARAMS(CUpti_Device_GetChipName_Params);
    chip_params.deviceIndex = static_cast<std::size_t>(device);
    SMR_CUPTI(cuptiDeviceGetChipName(&chip_params));
    chip = chip_params.pChipName ? chip_params.pChipName : "";
    debug("  chip {}", chip);

    // Which counters this context may read; asked before the range profiler is enabled.
    auto avail = SMR_PARAMS(CUpti_Profiler_GetCounterAvailability_Params);
    avail.ctx = ctx;
    SMR_CUPTI(cuptiProfilerGetCounterAvailability(&avail));
    availability.assign(avail.counterAvailabilityImageSize, 0);
    avail.pCounterAvailabilityImage = availability.data();
    SMR_CUPTI(cuptiProfilerGetCounterAvailability(&avail));
    debug("  counter availability image: {} bytes", availability.size());

    host_initialize();
    add_metrics();
    build_config_image();

    auto enable = SMR_PARAMS(CUpti_RangeProfiler_Enable_Params);
    enable.ctx = ctx;
    SMR_CUPTI(cuptiRangeProfilerEnable(&enable));
    range_profiler = enable.pRangeProfilerObject;

    auto size = SMR_PARAMS(CUpti_RangeProfiler_GetCounterDataSize_Params);
    size.pRangeProfilerObject = range_profiler;
    size.pMetricNames = metric_ptrs.data();
    size.numMetrics = metric_ptrs.size();
    size.maxNumOfRanges = kRangesPerPass;
    size.maxNumRangeTreeNodes = static_cast<uint32_t>(kRangesPerPass);
    SMR_CUPTI(cuptiRangeProfilerGetCounterDataSize(&size));
    counter_data.assign(size.counterDataSize, 0);
    debug("  counter data image: {} bytes for {} ranges", counter_data.size(), kRangesPerPass);
  }

  void host_initialize() {
    auto host_init = SMR_PARAMS(CUpti_Profiler_Host_Initialize_Params);
    host_init.profilerType = CUPTI_PROFILER_TYPE_RANGE_PROFILER;
    host_init.pChipName = chip.c_str();
    host_init.pCounterAvailabilityImage = availability.data();
    SMR_CUPTI(cuptiProfilerHostInitialize(&host_init));
    host = host_init.pHostObject;
  }

  CUptiResult try_add_metrics() {
    auto add = SMR_PARAMS(CUpti_Profiler_Host_ConfigAddMetrics_Params);
    add.pHostObject = host;
    add.ppMetricNames = metric_ptrs.data();
    add.numMetrics = metric_ptrs.size();
    debug("cuptiProfilerHostConfigAddMetrics(&add) [{} metrics]", metric_ptrs.size());
    return cuptiProfilerHostConfigAddMetrics(&add);
  }

  // All metrics at once. When CUPTI rejects the set, the metrics this chip does not have
  // (cuptiProfilerHostGetMetricProperties fails for them) leave the set and are reported as
  // unavailable, and the rest are added to a fresh host object; when it has none of them, or the
  // rest are rejected too, counters are unavailable with the reason.
  void add_metrics() {
    const CUptiResult r = try_add_metrics();
    if (r == CUPTI_SUCCESS) {
      debug("  ok");
      return;
    }
    MetricSelection sel = select_metrics(metrics, [&](const std::string& m) {
      auto props = SMR_PARAMS(CUpti_Profiler_Host_GetMetricProperties_Params);
      props.pHostObject = host;
      props.pMetricName = m.c_str();
      const CUptiResult pr = cuptiProfilerHostGetMetricProperties(&props);
      if (pr == CUPTI_SUCCESS) return std::optional<std::string>();
      return std::optional<std::string>(fmt::format(
          "not on chip {}: {}", chip,
          explain_cupti_failure(static_cast<int>(pr), "cuptiProfilerHostGetMetricProperties")));
    });
    if (sel.unavailable.empty() || sel.kept.empty()) {
      if (!sel.unavailable.empty())
        fail(fmt::format(
            "{}; chip {} has none of the metrics asked for (the first: \"{}\", {})",
            explain_cupti_failure(static_cast<int>(r), "cuptiProfilerHostConfigAddMetrics"), chip,
            sel.unavailable.begin()->first, sel.unavailable.begin()->second));
      cupti_check(r, "cuptiProfilerHostConfigAddMetrics(&add)", __FILE__, __LINE__);
    }
    for (const auto& [m, why] : sel.unavailable) debug("  unavailable: {} ({})", m, why);
    unavailable = std::move(sel.unavailable);
    metrics = std::move(sel.kept);
    metric_ptrs.clear();
    for (const auto& m : metrics) metric_ptrs.push_back(m.c_str());
    // A fresh host object: the rejected configuration is not reused.
    auto deinit = SMR_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
    deinit.pHostObject = host;
    SMR_CUPTI(cuptiProfilerHostDeinitialize(&deinit));
    host = nullptr;
    host_initialize();
    const CUptiResult again = try_add_metrics();
    cupti_check(again, "cuptiProfilerHostConfigAddMetrics(&add)", __FILE__, __LINE__);
  }

  void build_config_image() {
    auto size = SMR_PARAMS(CUpti_Profiler_Host_GetConfigImageSize_Params);
    size.pHostObject = host;
    SMR_CUPTI(cuptiProfilerHostGetConfigImageSize(&size));
    config.assign(size.configImageSize, 0);
    auto image = SMR_PARAMS(CUpti_Profiler_Host_GetConfigImage_Params);
    image.pHostObject = host;
    image.configImageSize = config.size();
    image.pConfigImage = config.data();
    SMR_CUPTI(cuptiProfilerHostGetConfigImage(&image));
    auto passes = SMR_PARAMS(CUpti_Profiler_Host_GetNumOfPasses_Params);
    passes.configImageSize = config.size();
    passes.pConfigImage = config.data();
    SMR_CUPTI(cuptiProfilerHostGetNumOfPasses(&passes));
    expected_passes = static_cast<int>(passes.numOfPasses);
    debug("  config image: {} bytes, {} pass(es)", config.size(), expected_passes);
  }

  void tear_down() noexcept {
    const auto quiet = [](CUptiResult r, const char* what) {
      if (r != CUPTI_SUCCESS) {
        const char* s = nullptr;
        cuptiGetResultString(r, &s);
        std::fprintf(stderr, "smr counters: %s failed during clean-up: %s\n", what, s ? s : "?");
      }
    };
    if (range_profiler) {
      debug("cuptiRangeProfilerDisable");
      auto p = SMR_PARAMS(CUpti_RangeProfiler_Disable_Params);
      p.pRangeProfilerObject = range_profiler;
      quiet(cuptiRangeProfilerDisable(&p), "cuptiRangeProfilerDisable");
      range_profiler = nullptr;
    }
    if (host) {
      debug("cuptiProfilerHostDeinitialize");
      auto p = SMR_PARAMS(CUpti_Profiler_Host_Deinitialize_Params);
      p.pHostObject = host;
      quiet(cuptiProfilerHostDeinitialize(&p), "cuptiProfilerHostDeinitialize");
      host = nullptr;
    }
    if (profiler_initialized) {
      debug("cuptiProfilerDeInitialize");
      auto p = SMR_PARAMS(CUpti_Profiler_DeInitialize_Params);
      quiet(cuptiProfilerDeInitialize(&p), "cuptiProfilerDeInitialize");
      profiler_initialized = false;
    }
  }

  // Open ranges and a started profiler are closed if a callable throws mid-pass.
  struct PassGuard {
    CUpti_RangeProfiler_Object* rp;
    int open_ranges = 0;
    bool started = false;
    ~PassGuard() {
      if (!started) return;
      debug("closing the pass after an exception: {} open range(s)", open_ranges);
      for (; open_ranges > 0; --open_ranges) {
        auto pop = SMR_PARAMS(CUpti_RangeProfiler_PopRange_Params);
        pop.pRangeProfilerObject = rp;
        cuptiRangeProfilerPopRange(&pop);
      }
      auto stop = SMR_PARAMS(CUpti_RangeProfiler_Stop_Params);
      stop.pRangeProfilerObject = rp;
      cuptiRangeProfilerStop(&stop);
    }
  };

  void push(PassGuard& g, const char* name) {
    auto p = SMR_PARAMS(CUpti_RangeProfiler_PushRange_Params);
    p.pRangeProfilerObject = range_profiler;
    p.pRangeName = name;
    SMR_CUPTI(cuptiRangeProfilerPushRange(&p));
    ++g.open_ranges;
  }
  void pop(PassGuard& g) {
    auto p = SMR_PARAMS(CUpti_RangeProfiler_PopRange_Params);
    p.pRangeProfilerObject = range_profiler;
    SMR_CUPTI(cuptiRangeProfilerPopRange(&p));
    --g.open_ranges;
  }

  // Runs the passes; returns how many were needed.
  int collect(const std::function<void()>& work, const std::function<void()>& evict_l2) {
    auto reset = SMR_PARAMS(CUpti_RangeProfiler_CounterDataImage_Initialize_Params);
    reset.pRangeProfilerObject = range_profiler;
    reset.counterDataSize = counter_data.size();
    reset.pCounterData = counter_data.data();
    SMR_CUPTI(cuptiRangeProfilerCounterDataImageInitialize(&reset));

    auto set = SMR_PARAMS(CUpti_RangeProfiler_SetConfig_Params);
    set.pRangeProfilerObject = range_profiler;
    set.configSize = config.size();
    set.pConfig = config.data();
    set.counterDataImageSize = counter_data.size();
    set.pCounterDataImage = counter_data.data();
    set.range = CUPTI_UserRange;
    set.replayMode = CUPTI_UserReplay;
    set.maxRangesPerPass = kRangesPerPass;
    set.numNestingLevels = 1;
    set.minNestingLevel = 1;
    set.passIndex = 0;
    set.targetNestingLevel = 1;
    SMR_CUPTI(cuptiRangeProfilerSetConfig(&set));

    // One unprofiled run first: the first writes to freshly allocated memory cost extra DRAM
    // traffic that is not the kernel's (seen on the H200: +1.8% dram__bytes_write for a 256 MB
    // output written for the first time, exact from the second run on).
    debug("warm-up: work() once, not profiled");
    work();
    CUDA_CHECK(cudaDeviceSynchronize());

    const int max_passes = std::max(expected_passes, 1) + kExtraPassesTolerated;
    int passes = 0;
    for (bool all_submitted = false; !all_submitted;) {
      if (passes == max_passes)
        fail(fmt::format("cuptiRangeProfilerStop still reports passes to replay after {} passes "
                         "(cuptiProfilerHostGetNumOfPasses said {})",
                         passes, expected_passes));
      debug("pass {}", passes + 1);
      // Every pass starts from the same L2 state (the eviction buffer's clean lines), outside the
      // ranges: nothing dirty left by earlier work lands in this measurement.
      evict_l2();
      CUDA_CHECK(cudaDeviceSynchronize());

      PassGuard g{range_profiler};
      auto start = SMR_PARAMS(CUpti_RangeProfiler_Start_Params);
      start.pRangeProfilerObject = range_profiler;
      SMR_CUPTI(cuptiRangeProfilerStart(&start));
      g.started = true;

      push(g, kWorkRange);
      work();
      CUDA_CHECK(cudaDeviceSynchronize());  // work may run on its own stream: finish it first
      evict_l2();
      CUDA_CHECK(cudaDeviceSynchronize());
      pop(g);

      push(g, kEvictRange);
      evict_l2();
      CUDA_CHECK(cudaDeviceSynchronize());
      pop(g);

      auto stop = SMR_PARAMS(CUpti_RangeProfiler_Stop_Params);
      stop.pRangeProfilerObject = range_profiler;
      SMR_CUPTI(cuptiRangeProfilerStop(&stop));
      g.started = false;
      all_submitted = stop.isAllPassSubmitted != 0;
      ++passes;
      debug("  next pass index {}, all passes submitted: {}", stop.passIndex, all_submitted);
    }

    auto decode = SMR_PARAMS(CUpti_RangeProfiler_DecodeData_Params);
    decode.pRangeProfilerObject = range_profiler;
    SMR_CUPTI(cuptiRangeProfilerDecodeData(&decode));
    if (decode.numOfRangeDropped != 0)
      fail(fmt::format("cuptiRangeProfilerDecodeData dropped {} range(s) (room for {})",
                       decode.numOfRangeDropped, kRangesPerPass));
    return passes;
  }

  // name of range -> metric -> value
  std::map<std::string, std::map<std::string, double>> evaluate() {
    auto info = SMR_PARAMS(CUpti_RangeProfiler_GetCounterDataInfo_Params);
    info.pCounterDataImage = counter_data.data();
    info.counterDataImageSize = counter_data.size();
    SMR_CUPTI(cuptiRangeProfilerGetCounterDataInfo(&info));
    debug("  {} range(s) in the counter data", info.numTotalRanges);

    std::map<std::string, std::map<std::string, double>> out;
    std::vector<double> values(metric_ptrs.size());
    for (std::size_t i = 0; i < info.numTotalRanges; ++i) {
      auto range = SMR_PARAMS(CUpti_RangeProfiler_CounterData_GetRangeInfo_Params);
      range.pCounterDataImage = counter_data.data();
      range.counterDataImageSize = counter_data.size();
      range.rangeIndex = i;
      range.rangeDelimiter = "/";
      SMR_CUPTI(cuptiRangeProfilerCounterDataGetRangeInfo(&range));
      const std::string name = range.rangeName ? range.rangeName : "";

      auto eval = SMR_PARAMS(CUpti_Profiler_Host_EvaluateToGpuValues_Params);
      eval.pHostObject = host;
      eval.pCounterDataImage = counter_data.data();
      eval.counterDataImageSize = counter_data.size();
      eval.rangeIndex = i;
      eval.ppMetricNames = metric_ptrs.data();
      eval.numMetrics = metric_ptrs.size();
      eval.pMetricValues = values.data();
      SMR_CUPTI(cuptiProfilerHostEvaluateToGpuValues(&eval));
      auto& m = out[name];
      for (std::size_t k = 0; k < metrics.size(); ++k) {
        m[metrics[k]] = values[k];
        debug("  range \"{}\": {} = {}", name, metrics[k], values[k]);
      }
    }
    for (const char* want : {kWorkRange, kEvictRange})
      if (!out.count(want)) {
        std::string found;
        for (const auto& [n, _] : out) found += (found.empty() ? "\"" : ", \"") + n + "\"";
        fail(fmt::format("the counter data has no range \"{}\" (found: {})", want,
                         found.empty() ? "none" : found));
      }
    return out;
  }

  CounterReading measure(const std::function<void()>& work, const std::function<void()>& evict_l2) {
    CounterReading r;
    if (!ok) {
      r.reason = reason;
      return r;
    }
    try {
      const auto t0 = std::chrono::steady_clock::now();
      if (!primed) {
        // The first collection of a session is taken and thrown away: on the H200 its DRAM writes
        // came out 1.8% high (4.8 MB more for a 256 MB output), every later one within 0.1%.
        debug("priming: the session's first collection, discarded");
        collect(work, evict_l2);
        primed = true;
      }
      r.passes = collect(work, evict_l2);
      auto ranges = evaluate();
      r.range_values = std::move(ranges[kWorkRange]);
      r.eviction_values = std::move(ranges[kEvictRange]);
      Attribution a = attribute_counters(r.range_values, r.eviction_values);
      r.values = std::move(a.values);
      r.notes = std::move(a.notes);
      r.ok = true;
      const std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - t0;
      r.wall_ms = took.count();
      debug("measurement done: {} pass(es), {:.1f} ms", r.passes, took.count());
    } catch (const CuptiError& e) {
      // The profiler's state is unknown after a failed call: no further measurements.
      ok = false;
      reason = fmt::format("counters stopped after a failed measurement: {}", e.what());
      r.reason = e.what();
    }
    return r;
  }
};

#else  // no Range Profiler in this CUDA toolkit

struct CounterSession::Impl {
  std::vector<std::string> metrics;
  std::map<std::string, std::string> unavailable;
  std::string reason;
  bool ok = false;
  std::string chip;
  int expected_passes = 0;
  explicit Impl(std::vector<std::string> m) : metrics(dedupe(std::move(m))) {
    reason = fmt::format(
        "this build of the harness has no CUPTI Range Profiler (cupti_range_profiler.h, CUDA >= "
        "12.6 Update 2; built against CUDA runtime {}): rebuild with a newer CUDA toolkit",
        CUDART_VERSION);
  }
  CounterReading measure(const std::function<void()>&, const std::function<void()>&) {
    CounterReading r;
    r.reason = reason;
    return r;
  }
};

#endif

CounterSession::CounterSession(std::vector<std::string> metrics)
    : impl_(std::make_unique<Impl>(std::move(metrics))) {}
CounterSession::~CounterSession() = default;

bool CounterSession::available() const { return impl_->ok; }
const std::string& CounterSession::unavailable_reason() const { return impl_->reason; }
const std::vector<std::string>& CounterSession::metrics() const { return impl_->metrics; }
int CounterSession::expected_passes() const { return impl_->ok ? impl_->expected_passes : 0; }
const std::string& CounterSession::chip() const { return impl_->chip; }
const std::map<std::string, std::string>& CounterSession::unavailable_metrics() const {
  return impl_->unavailable;
}

CounterReading CounterSession::measure(const std::function<void()>& work,
                                       const std::function<void()>& evict_l2) {
  return impl_->measure(work, evict_l2);
}

}  // namespace smr