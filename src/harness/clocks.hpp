// Watching the SM clock while a record is timed: NVML (the management library the driver ships)
// read on the host between samples, never inside the timed events. Clocks are never set or locked
// here: the harness reports the clock the card chose, and flags the records where it fell.
//
// NVML is loaded at run time (dlopen of libnvidia-ml.so.1, the driver's copy), not linked: the
// build then needs no nvml.h (not every toolkit install has it), and a machine without the driver
// records the clocks as unavailable, with the reason, instead of failing to start.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "roofline/results.hpp"

namespace smr {

// NVML's clock-event (throttle) reason bits, as nvml.h defines nvmlClocksEventReason*.
namespace clock_reason {
inline constexpr std::uint64_t kGpuIdle = 0x1;
inline constexpr std::uint64_t kApplicationsClocksSetting = 0x2;
inline constexpr std::uint64_t kSwPowerCap = 0x4;
inline constexpr std::uint64_t kHwSlowdown = 0x8;
inline constexpr std::uint64_t kSyncBoost = 0x10;
inline constexpr std::uint64_t kSwThermalSlowdown = 0x20;
inline constexpr std::uint64_t kHwThermalSlowdown = 0x40;
inline constexpr std::uint64_t kHwPowerBrakeSlowdown = 0x80;
inline constexpr std::uint64_t kDisplayClockSetting = 0x100;
// The reasons that mean power or heat held the clock down (the others are settings or idleness).
inline constexpr std::uint64_t kThrottleMask = kSwPowerCap | kHwSlowdown | kSwThermalSlowdown |
                                               kHwThermalSlowdown | kHwPowerBrakeSlowdown;
}  // namespace clock_reason

// Names of the bits set in `mask` ("sw_power_cap", "hw_thermal_slowdown", ...; unknown bits as
// "0x..."), in bit order.
std::vector<std::string> clock_reason_names(std::uint64_t mask);

// Accumulates the readings of one record. Pure host code: tests feed it readings directly.
class ClockTally {
 public:
  void add(double sm_mhz, std::uint64_t reasons);
  // available = false with `why` when no reading was added.
  ClockStats stats(const std::string& why_unavailable) const;

 private:
  double min_ = 0, max_ = 0;
  int n_ = 0;
  std::uint64_t reasons_ = 0;
};

// The NVML device behind the current CUDA device (matched by PCI bus id).
class ClockWatch {
 public:
  ClockWatch();  // never throws: a failure makes available() false
  ~ClockWatch();
  ClockWatch(const ClockWatch&) = delete;
  ClockWatch& operator=(const ClockWatch&) = delete;

  bool available() const;
  const std::string& unavailable_reason() const { return why_; }
  // One reading into `tally` (the SM clock in MHz and the current reasons); does nothing when
  // unavailable or when NVML fails this once.
  void read(ClockTally& tally) const;
  // The tally's stats, or "unavailable" with the reason.
  ClockStats stats(const ClockTally& tally) const;

 private:
  struct Nvml;
  std::unique_ptr<Nvml> nvml_;
  std::string why_;
};

}  // namespace smr
