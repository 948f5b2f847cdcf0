// Named device profiles: the DeviceLimits of cards a student may have, so that the dispatch can say
// what would run on a card that is not there (`softmax-bench plan --device-profile NAME`,
// `softmax-bench model --device-profile NAME`, and the host tests of every profile).
//
// Sources. Compute capability, shared memory per SM and per block (opt-in), registers per SM and
// thread-block clusters (sm_90 on; 8 portable, 16 with the non-portable opt-in): the CUDA C++
// Programming Guide, "Technical Specifications per Compute Capability". SMs, L2, memory, its
// bandwidth and FP32 peak: NVIDIA's published specifications --
//   T4: the T4 Tensor Core GPU datasheet (40 SMs, 4 MB L2, 16 GB at 320 GB/s, 8.1 TFLOPS);
//   A100: the NVIDIA A100 Tensor Core GPU Architecture whitepaper (108 SMs, 40 MB L2,
//     19.5 TFLOPS; the 40 GB SXM4 card's 1555 GB/s);
//   RTX 4090: the NVIDIA Ada GPU Architecture whitepaper (128 SMs, 72 MB L2, 24 GB at 1008 GB/s,
//     82.6 TFLOPS);
//   L4: the L4 Tensor Core GPU datasheet (24 GB at 300 GB/s, 30.3 TFLOPS) and the Ada whitepaper
//     (58 SMs as the L4 ships, 48 MB L2);
//   H100 SXM and H200: read from the cards (results/h100/default/results.json and
//     results/h200/default/results.json, "device"); FP32 as the H200 model's (roofline/model.hpp).
#pragma once

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <stdexcept>
#include <span>
#include <string>
#include <string_view>

#include "kernels/registry.hpp"

namespace smr {

struct DeviceProfile {
  std::string_view name;         // as --device-profile takes it
  std::string_view description;  // the card, one line
  DeviceLimits limits;
  double fp32_GFLOPs = 0;  // datasheet FP32 peak (an FMA as 2 FLOP), for the model
};

// The table's own helpers, in a namespace apart from the harness's `detail` (which has a kMiB of
// its own: a translation unit includes both).
namespace profile_detail {

constexpr DeviceLimits profile_limits(int cc, int sms, std::size_t l2, std::size_t smem_block,
                                      std::size_t smem_sm, std::size_t global, double GBps) {
  DeviceLimits d;
  d.cc_major = cc / 10;
  d.cc_minor = cc % 10;
  d.sm_count = sms;
  d.l2_bytes = l2;
  d.shared_bytes_per_block = smem_block;
  d.shared_bytes_per_sm = smem_sm;
  d.global_bytes = global;
  d.dram_GBps = GBps;
  d.registers_per_sm = 65536;
  d.cluster_launch = cc >= 90;
  d.max_cluster = cc >= 90 ? 16 : 1;
  return d;
}

inline constexpr std::size_t kMiB = 1024 * 1024;
inline constexpr std::size_t kKiB = 1024;

inline constexpr DeviceProfile kDeviceProfiles[] = {
    {"t4", "NVIDIA T4 (sm_75, 40 SMs, 4 MB L2, 64 KB shared memory per block, no clusters)",
     profile_limits(75, 40, 4 * kMiB, 64 * kKiB, 64 * kKiB, 16'000'000'000, 320.0),
     8100.0},
    {"a100", "NVIDIA A100 40GB SXM4 (sm_80, 108 SMs, 40 MB L2, 163 KB per block, no clusters)",
     profile_limits(80, 108, 40 * kMiB, 163 * kKiB, 164 * kKiB, 40'000'000'000, 1555.0),
     19500.0},
    {"rtx4090", "NVIDIA GeForce RTX 4090 (sm_89, 128 SMs, 72 MB L2, 99 KB per block, no clusters)",
     profile_limits(89, 128, 72 * kMiB, 99 * kKiB, 100 * kKiB, 24'000'000'000, 1008.0),
     82600.0},
    {"l4", "NVIDIA L4 (sm_89, 58 SMs, 48 MB L2, 99 KB per block, no clusters)",
     profile_limits(89, 58, 48 * kMiB, 99 * kKiB, 100 * kKiB, 24'000'000'000, 300.0),
     30300.0},
    {"h100", "NVIDIA H100 80GB HBM3 SXM (sm_90, 132 SMs, 50 MB L2, 227 KB per block, clusters)",
     profile_limits(90, 132, 52428800, 232448, 233472, 85017493504, 3352.32),
     66900.0},
    {"h200", "NVIDIA H200 (sm_90, 132 SMs, 60 MB L2, 227 KB per block, clusters)",
     profile_limits(90, 132, 62914560, 232448, 233472, 150109880320, 4814.304),
     66900.0},
};

}  // namespace profile_detail

// The card `softmax-bench model` describes when neither a profile nor a run's ceilings name one,
// and whose limits fill in what an older saved run did not record (harness run_device_limits).
inline constexpr std::string_view kModelDefaultProfile = "h200";

// Every profile, in the order `--device-profile` lists them.
inline std::span<const DeviceProfile> device_profiles() { return profile_detail::kDeviceProfiles; }

namespace profile_detail {
// A profile's name (lower case) against text in any case.
inline bool same_letter(char name_char, char c) {
  return name_char == (c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c);
}
}  // namespace profile_detail

// The profile of that name, in any case ("A100" finds "a100"); nullptr when there is none.
inline const DeviceProfile* find_device_profile(std::string_view name) {
  for (const DeviceProfile& p : device_profiles())
    if (std::equal(p.name.begin(), p.name.end(), name.begin(), name.end(),
                   profile_detail::same_letter))
      return &p;
  return nullptr;
}

// The profile whose name a card's name holds, in any case ("NVIDIA H100 80GB HBM3": h100);
// nullptr when none does.
inline const DeviceProfile* profile_named_in(std::string_view device_name) {
  const auto letter = [](char c, char name_char) { return profile_detail::same_letter(name_char, c); };
  for (const DeviceProfile& p : device_profiles())
    if (std::search(device_name.begin(), device_name.end(), p.name.begin(), p.name.end(), letter) !=
        device_name.end())
      return &p;
  return nullptr;
}

// A real device's limits restricted to a profile's card: the compute capability, thread-block
// clusters, shared memory and registers -- what the dispatch picks families and tiles by -- are at
// most the profile's, while the sizes of the card the kernels run on (SMs, L2, memory and its
// bandwidth) stay the real card's. On an H100, restricted to "a100", the dispatch picks what it
// would on an sm_80 card without clusters, and the sweep still fits the H100's memory.
inline DeviceLimits restrict_to_profile(const DeviceLimits& real, const DeviceLimits& profile) {
  DeviceLimits d = real;
  if (profile.compute_capability() < real.compute_capability()) {
    d.cc_major = profile.cc_major;
    d.cc_minor = profile.cc_minor;
  }
  d.cluster_launch = real.cluster_launch && profile.cluster_launch;
  d.max_cluster = d.cluster_launch ? std::min(real.max_cluster, profile.max_cluster) : 1;
  d.shared_bytes_per_block = std::min(real.shared_bytes_per_block, profile.shared_bytes_per_block);
  d.shared_bytes_per_sm = std::min(real.shared_bytes_per_sm, profile.shared_bytes_per_sm);
  d.registers_per_sm = std::min(real.registers_per_sm, profile.registers_per_sm);
  return d;
}

// The environment variable that restricts every device the process reads (read_device_limits) to
// a profile: SMR_DEVICE_PROFILE=a100 runs the GPU suite and a sweep on an H100 with the dispatch an
// A100 would have (scripts/gpu-session's sm80-ptx step). Unset or empty: no restriction.
inline constexpr const char* kDeviceProfileEnv = "SMR_DEVICE_PROFILE";

// "t4, a100, rtx4090, l4, h100, h200": for error messages and --help.
inline std::string device_profile_names() {
  std::string out;
  for (const DeviceProfile& p : device_profiles()) {
    if (!out.empty()) out += ", ";
    out += p.name;
  }
  return out;
}

// The profile SMR_DEVICE_PROFILE names, nullptr when it is unset or empty. Throws
// std::invalid_argument naming the variable and the known profiles for an unknown name.
inline const DeviceProfile* restricting_profile() {
  const char* name = std::getenv(kDeviceProfileEnv);
  if (!name || !*name) return nullptr;
  if (const DeviceProfile* p = find_device_profile(name)) return p;
  throw std::invalid_argument(std::string(kDeviceProfileEnv) + "=" + name +
                              ": unknown device profile (one of: " + device_profile_names() + ")");
}

}  // namespace smr
