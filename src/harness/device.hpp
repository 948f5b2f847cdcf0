// Device resources as move-only RAII types, and what the harness knows about the card.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include <cuda_runtime_api.h>
#include <nlohmann/json.hpp>

#include "kernels/cuda_check.hpp"
#include "kernels/registry.hpp"

namespace smr {

// True when at least one CUDA device can be used. Never throws.
bool gpu_available();

// A cudaMalloc'd buffer of `bytes` bytes, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(std::exchange(o.bytes_, 0)) {}
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  void* get() const { return ptr_; }
  template <class T> T* as() const { return static_cast<T*>(ptr_); }
  std::size_t bytes() const { return bytes_; }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

class CudaEvent {
 public:
  CudaEvent();
  ~CudaEvent();
  CudaEvent(CudaEvent&& o) noexcept : e_(std::exchange(o.e_, nullptr)) {}
  CudaEvent& operator=(CudaEvent&&) = delete;
  CudaEvent(const CudaEvent&) = delete;
  cudaEvent_t get() const { return e_; }
  void record(cudaStream_t s);
  // Seconds from `start` to this event; both must have completed.
  double seconds_since(const CudaEvent& start) const;

 private:
  cudaEvent_t e_ = nullptr;
};

class CudaStream {
 public:
  CudaStream();
  ~CudaStream();
  CudaStream(CudaStream&& o) noexcept : s_(std::exchange(o.s_, nullptr)) {}
  CudaStream& operator=(CudaStream&&) = delete;
  CudaStream(const CudaStream&) = delete;
  cudaStream_t get() const { return s_; }
  void sync() const;

 private:
  cudaStream_t s_ = nullptr;
};

struct DeviceInfo {
  int ordinal = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  std::int64_t l2_bytes = 0;
  std::int64_t global_bytes = 0;
  std::size_t shared_per_block_optin = 0;
  int memory_clock_khz = 0;    // cudaDevAttrMemoryClockRate (cudaDeviceProp lost it in CUDA 13)
  int memory_bus_bits = 0;
  int sm_clock_khz = 0;
  int driver_version = 0, runtime_version = 0;
  std::size_t shared_per_sm = 0;  // the card's own (cudaDevAttrMaxSharedMemoryPerMultiprocessor)
  int registers_per_sm = 0;
  bool cluster_launch = false;    // cudaDevAttrClusterLaunch
  // What the dispatch plans with (read_device_limits): the card's limits, capped to what the loaded
  // code has (an 80-virtual build: sm_80, no clusters) and to SMR_DEVICE_PROFILE's card, with the
  // largest cluster the card places. results.json writes it as device.dispatch_limits.
  DeviceLimits dispatch;
  std::string restricted_to_profile;  // SMR_DEVICE_PROFILE's profile; empty: none
  // 2 (DDR) x clock x bus width / 8: the datasheet-style peak, read + write, GB/s
  double peak_dram_GBps() const;
  DeviceLimits limits() const { return dispatch; }
  nlohmann::json to_json() const;
};

DeviceInfo query_device(int ordinal = 0);

}  // namespace smr
