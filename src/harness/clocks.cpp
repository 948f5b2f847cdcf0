// NVML loaded at run time; the few entry points used here are declared with NVML's documented C
// signatures (nvmlReturn_t is an int-sized enum, nvmlDevice_t an opaque pointer).
#include "harness/clocks.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <array>

#include <cuda_runtime_api.h>
#include <fmt/format.h>

namespace smr {

std::vector<std::string> clock_reason_names(std::uint64_t mask) {
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 9> kNames{{
      {clock_reason::kGpuIdle, "gpu_idle"},
      {clock_reason::kApplicationsClocksSetting, "applications_clocks_setting"},
      {clock_reason::kSwPowerCap, "sw_power_cap"},
      {clock_reason::kHwSlowdown, "hw_slowdown"},
      {clock_reason::kSyncBoost, "sync_boost"},
      {clock_reason::kSwThermalSlowdown, "sw_thermal_slowdown"},
      {clock_reason::kHwThermalSlowdown, "hw_thermal_slowdown"},
      {clock_reason::kHwPowerBrakeSlowdown, "hw_power_brake_slowdown"},
      {clock_reason::kDisplayClockSetting, "display_clock_setting"},
  }};
  std::vector<std::string> out;
  std::uint64_t known = 0;
  for (const auto& [bit, name] : kNames) {
    known |= bit;
    if (mask & bit) out.emplace_back(name);
  }
  for (int b = 0; b < 64; ++b) {
    const std::uint64_t bit = std::uint64_t{1} << b;
    if ((mask & bit) && !(known & bit)) out.push_back(fmt::format("{:#x}", bit));
  }
  return out;
}

void ClockTally::add(double sm_mhz, std::uint64_t reasons) {
  min_ = n_ ? std::min(min_, sm_mhz) : sm_mhz;
  max_ = n_ ? std::max(max_, sm_mhz) : sm_mhz;
  ++n_;
  reasons_ |= reasons;
}

ClockStats ClockTally::stats(const std::string& why_unavailable) const {
  ClockStats s;
  if (n_ == 0) {
    s.unavailable = why_unavailable.empty() ? "no clock reading succeeded" : why_unavailable;
    return s;
  }
  s.available = true;
  s.sm_mhz_min = min_;
  s.sm_mhz_max = max_;
  s.readings = n_;
  s.reasons = clock_reason_names(reasons_);
  s.throttled = (reasons_ & clock_reason::kThrottleMask) != 0;
  return s;
}

// ---- NVML -----------------------------------------------------------------------------------

namespace {
using nvmlReturn = int;  // nvmlReturn_t; NVML_SUCCESS = 0
using nvmlDevice = struct nvmlDevice_st*;
constexpr nvmlReturn kNvmlSuccess = 0;
constexpr int kNvmlClockSm = 1;  // NVML_CLOCK_SM
}  // namespace

struct ClockWatch::Nvml {
  void* lib = nullptr;
  nvmlDevice device = nullptr;
  nvmlReturn (*init)() = nullptr;
  nvmlReturn (*shutdown)() = nullptr;
  nvmlReturn (*by_pci)(const char*, nvmlDevice*) = nullptr;
  nvmlReturn (*clock)(nvmlDevice, int, unsigned int*) = nullptr;
  nvmlReturn (*reasons)(nvmlDevice, unsigned long long*) = nullptr;
  const char* (*error)(nvmlReturn) = nullptr;
  bool initialized = false;

  ~Nvml() {
    if (initialized && shutdown) shutdown();
    if (lib) dlclose(lib);
  }
  template <class F>
  bool load(F& f, const char* name) {
    f = reinterpret_cast<F>(dlsym(lib, name));
    return f != nullptr;
  }
  std::string say(nvmlReturn r) const {
    return error ? fmt::format("{} ({})", error(r), r) : fmt::format("NVML error {}", r);
  }
};

ClockWatch::ClockWatch() {
  auto n = std::make_unique<Nvml>();
  n->lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!n->lib) {
    why_ = "NVML not loaded (libnvidia-ml.so.1, which the NVIDIA driver ships, not found)";
    return;
  }
  n->load(n->error, "nvmlErrorString");
  // Newer drivers call the reasons "clocks event reasons"; older ones only "throttle reasons".
  if (!n->load(n->reasons, "nvmlDeviceGetCurrentClocksEventReasons"))
    n->load(n->reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  if (!n->load(n->init, "nvmlInit_v2") || !n->load(n->shutdown, "nvmlShutdown") ||
      !n->load(n->by_pci, "nvmlDeviceGetHandleByPciBusId_v2") ||
      !n->load(n->clock, "nvmlDeviceGetClockInfo") || !n->reasons) {
    why_ = "NVML lacks an entry point the clock watch needs (driver too old?)";
    return;
  }
  if (const nvmlReturn r = n->init(); r != kNvmlSuccess) {
    why_ = "nvmlInit failed: " + n->say(r);
    return;
  }
  n->initialized = true;
  int cuda_device = 0;
  char bus_id[32] = {};
  if (cudaGetDevice(&cuda_device) != cudaSuccess ||
      cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, cuda_device) != cudaSuccess) {
    cudaGetLastError();
    why_ = "the CUDA device's PCI bus id is unknown (cudaDeviceGetPCIBusId failed)";
    return;
  }
  if (const nvmlReturn r = n->by_pci(bus_id, &n->device); r != kNvmlSuccess) {
    why_ = fmt::format("NVML has no device at PCI bus id {}: {}", bus_id, n->say(r));
    return;
  }
  unsigned int mhz = 0;
  if (const nvmlReturn r = n->clock(n->device, kNvmlClockSm, &mhz); r != kNvmlSuccess) {
    why_ = "nvmlDeviceGetClockInfo(SM) failed: " + n->say(r);
    return;
  }
  nvml_ = std::move(n);
}

ClockWatch::~ClockWatch() = default;

bool ClockWatch::available() const { return nvml_ != nullptr; }

void ClockWatch::read(ClockTally& tally) const {
  if (!nvml_) return;
  unsigned int mhz = 0;
  unsigned long long reasons = 0;
  if (nvml_->clock(nvml_->device, kNvmlClockSm, &mhz) != kNvmlSuccess) return;
  if (nvml_->reasons(nvml_->device, &reasons) != kNvmlSuccess) reasons = 0;
  tally.add(static_cast<double>(mhz), reasons);
}

ClockStats ClockWatch::stats(const ClockTally& tally) const { return tally.stats(why_); }

}  // namespace smr
