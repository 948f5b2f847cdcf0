// The kernel registry: every softmax design the lab teaches, the production `softmax`, the library
// peers run in-process (cuDNN) and the ceiling kernels, each behind one entry. The harness, the
// tests and `softmax-bench list` all go through here; nothing dispatches on kernel numbers.
//
// Host-only header: the entries' metadata is usable on a machine without a GPU.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <cuda_runtime_api.h>

#include "core/problem.hpp"
#include "core/traffic.hpp"

namespace smr {

enum class Role {
  lab,         // the designs the lab teaches: unfused, fused, online
  production,  // `softmax`: picks the best kernel for the shape
  library,     // peers called in-process (cuDNN)
  ceiling,     // copy and FMA kernels the roofline is drawn against
};
std::string_view to_string(Role r);

// What the device offers; preconditions and the production dispatch are checked against it. The
// harness reads every field from the device at hand (harness/device.cpp, DeviceInfo::limits());
// device_profiles.hpp holds named presets for cards that are not there. The defaults are one
// such card's (the H200's), so that a test without a GPU has a complete device to ask about.
struct DeviceLimits {
  int sm_count = 132;
  std::size_t shared_bytes_per_block = 232448;  // with the opt-in attribute
  std::size_t l2_bytes = 62914560;
  std::size_t global_bytes = 150'000'000'000;
  int cc_major = 9, cc_minor = 0;  // compute capability
  bool cluster_launch = true;      // thread-block clusters (cudaDevAttrClusterLaunch: sm_90 on)
  // The largest cluster the device accepts: 16 (non-portable, with the opt-in attribute) where
  // the card allows it, 8 (portable) otherwise, 1 without cluster launch. The launch path lowers
  // it further for a kernel whose cluster the device cannot place (cluster_placeable, softmax.cu).
  int max_cluster = 16;
  // Shared memory per SM; 0: the opt-in per-block limit plus the 1 KB the card reserves per
  // block (so a DeviceLimits that sets only the per-block limit stays consistent).
  std::size_t shared_bytes_per_sm = 0;
  int registers_per_sm = 65536;
  double dram_GBps = 4800.0;  // peak: 2 x memory clock x bus width / 8
  int compute_capability() const { return cc_major * 10 + cc_minor; }  // 90 for sm_90
  bool has_clusters() const { return cluster_launch && cc_major >= 9; }
};

// The limits of CUDA device `device`, every field read from it (kernels/device_limits.cu), then
// capped to what the loaded code has (an 80-virtual build: sm_80, no clusters) and, where
// SMR_DEVICE_PROFILE names a profile, to that card's features (restrict_to_profile,
// device_profiles.hpp). Throws smr::CudaError when the device cannot be queried,
// std::invalid_argument for an unknown SMR_DEVICE_PROFILE.
DeviceLimits read_device_limits(int device);

// One launch. x and y are device pointers of p.dtype; workspace has workspace_bytes(p) bytes.
struct Launch {
  const void* x = nullptr;
  void* y = nullptr;
  Problem p;
  void* workspace = nullptr;
  cudaStream_t stream = nullptr;
};

struct KernelInfo {
  std::string name;         // registry name used in configs and on the command line
  std::string description;  // one line, for `softmax-bench list`
  Role role = Role::lab;
  TrafficModel traffic = TrafficModel::fused;
  std::vector<DType> dtypes{DType::f32};
  // Why this kernel cannot run `p` on a device with these limits; nullopt when it can.
  // (Example: "N = 65536 exceeds the fused kernel's one-tile cap of 32768".)
  std::optional<std::string> (*unsupported)(const Problem& p, const DeviceLimits& d) = nullptr;
  std::size_t (*workspace_bytes)(const Problem& p) = nullptr;  // nullptr: none
  // Enqueues the kernel(s) on l.stream. Throws smr::CudaError when a launch fails.
  void (*launch)(const Launch& l) = nullptr;
  // Rows resident on the card at once, for the online model's L2 test; nullptr: one per SM.
  std::int64_t (*rows_in_flight)(const Problem& p, const DeviceLimits& d) = nullptr;
  // ADDED for the production `softmax` (issue 7), whose kernel -- and so its traffic -- depends on
  // the shape: the TrafficModel that applies to p (nullptr: `traffic` for every shape; use
  // traffic_model() below) and the plan it runs, in words, for logs and a record's `extra`
  // (nullptr: none).
  TrafficModel (*traffic_for)(const Problem& p, const DeviceLimits& d) = nullptr;
  std::string (*plan_for)(const Problem& p, const DeviceLimits& d) = nullptr;
  // Ceiling kernels are not softmax: verification compares y with x (copy) or skips (compute).
  bool is_softmax() const { return role != Role::ceiling; }
};

// All entries, in the order `list` prints them.
std::span<const KernelInfo> kernels();
const KernelInfo* find_kernel(std::string_view name);
// Names `all` in a config expands to: the lab kernels, the production kernel and the library peers.
std::vector<std::string> default_kernel_names();
// Names only a lab build (SMR_BUILD_LAB) registers, listed in every build: a saved run of a lab
// build holds their records, and any build may read it (`softmax-bench report`).
std::span<const std::string_view> lab_build_kernel_names();

// Names only the full build registers: a lab build (cmake --preset lab, SMR_BUILD_PRODUCTION=OFF)
// leaves the production kernels out; `list` and the "unknown kernel" errors say so.
std::span<const std::string_view> full_build_kernel_names();

// Self-registration, for the lab folder (src/kernels/lab/): a kernel file there registers its own
// entry, with no edit elsewhere --
//
//   namespace { KernelInfo my_softmax() { KernelInfo k; k.name = "my_softmax"; ...; return k; } }
//   SMR_REGISTER_KERNEL(my_softmax);
//
// The build collects every .cu of the lab folder (src/kernels/CMakeLists.txt) and links its
// objects into every executable whole, so no linker drops an object nothing refers to. The entry
// is made at static initialization; kernels() lists the registered entries after the table, in
// name order. A registered name that is already taken is an error the first kernels() call throws.
class KernelRegistration {
 public:
  explicit KernelRegistration(KernelInfo (*make)());
};

#define SMR_REGISTER_KERNEL(make)                                                         \
  namespace {                                                                             \
  [[maybe_unused]] const ::smr::KernelRegistration smr_kernel_registration_##make{make}; \
  }                                                                                       \
  static_assert(true, "SMR_REGISTER_KERNEL(f): one per entry, at namespace scope")

// ADDED (issue 7): the traffic model of k for p: k.traffic_for(p, d) when set, else k.traffic.
inline TrafficModel traffic_model(const KernelInfo& k, const Problem& p, const DeviceLimits& d) {
  return k.traffic_for ? k.traffic_for(p, d) : k.traffic;
}

// Whether this kernel can run p; combines the dtype list and `unsupported`.
std::optional<std::string> why_unsupported(const KernelInfo& k, const Problem& p,
                                           const DeviceLimits& d);

}  // namespace smr
