#include "harness/device.hpp"

#include "kernels/device_profiles.hpp"

namespace smr {

bool gpu_available() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return false;
  }
  return count > 0;
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  if (bytes) CUDA_CHECK(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) CUDA_CHECK_NOTHROW(cudaFree(ptr_));
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) CUDA_CHECK_NOTHROW(cudaFree(ptr_));
    ptr_ = std::exchange(o.ptr_, nullptr);
    bytes_ = std::exchange(o.bytes_, 0);
  }
  return *this;
}

CudaEvent::CudaEvent() { CUDA_CHECK(cudaEventCreate(&e_)); }
CudaEvent::~CudaEvent() {
  if (e_) CUDA_CHECK_NOTHROW(cudaEventDestroy(e_));
}
void CudaEvent::record(cudaStream_t s) { CUDA_CHECK(cudaEventRecord(e_, s)); }
double CudaEvent::seconds_since(const CudaEvent& start) const {
  float ms = 0;
  CUDA_CHECK(cudaEventElapsedTime(&ms, start.e_, e_));
  return static_cast<double>(ms) * 1e-3;
}

CudaStream::CudaStream() { CUDA_CHECK(cudaStreamCreateWithFlags(&s_, cudaStreamNonBlocking)); }
CudaStream::~CudaStream() {
  if (s_) CUDA_CHECK_NOTHROW(cudaStreamDestroy(s_));
}
void CudaStream::sync() const { CUDA_CHECK(cudaStreamSynchronize(s_)); }

double DeviceInfo::peak_dram_GBps() const {
  return 2.0 * memory_clock_khz * 1e3 * (memory_bus_bits / 8.0) / 1e9;
}

nlohmann::json DeviceInfo::to_json() const {
  return {{"ordinal", ordinal},
          {"name", name},
          {"compute_capability", std::to_string(cc_major) + "." + std::to_string(cc_minor)},
          {"sm_count", sm_count},
          {"l2_bytes", l2_bytes},
          {"global_bytes", global_bytes},
          {"shared_per_block_optin_bytes", shared_per_block_optin},
          {"shared_per_sm_bytes", shared_per_sm},
          {"registers_per_sm", registers_per_sm},
          {"cluster_launch", cluster_launch},
          {"memory_clock_khz", memory_clock_khz},
          {"memory_bus_bits", memory_bus_bits},
          {"sm_clock_khz", sm_clock_khz},
          {"peak_dram_GBps", peak_dram_GBps()},
          {"driver_version", driver_version},
          {"runtime_version", runtime_version},
          {"dispatch_limits",
           {{"compute_capability", std::to_string(dispatch.cc_major) + "." +
                                       std::to_string(dispatch.cc_minor)},
            {"cluster_launch", dispatch.cluster_launch},
            {"max_cluster", dispatch.max_cluster},
            {"shared_per_block_bytes", dispatch.shared_bytes_per_block},
            {"shared_per_sm_bytes", dispatch.shared_bytes_per_sm},
            {"registers_per_sm", dispatch.registers_per_sm},
            {"restricted_to_profile", restricted_to_profile.empty()
                                          ? nlohmann::json(nullptr)
                                          : nlohmann::json(restricted_to_profile)}}}};
}

DeviceInfo query_device(int ordinal) {
  DeviceInfo info;
  info.ordinal = ordinal;
  cudaDeviceProp prop{};
  CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  info.name = prop.name;
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.l2_bytes = prop.l2CacheSize;
  info.global_bytes = static_cast<std::int64_t>(prop.totalGlobalMem);
  info.shared_per_block_optin = prop.sharedMemPerBlockOptin;
  info.memory_bus_bits = prop.memoryBusWidth;
  CUDA_CHECK(cudaDeviceGetAttribute(&info.memory_clock_khz, cudaDevAttrMemoryClockRate, ordinal));
  CUDA_CHECK(cudaDeviceGetAttribute(&info.sm_clock_khz, cudaDevAttrClockRate, ordinal));
  const auto attr = [ordinal](cudaDeviceAttr a) {
    int v = 0;
    CUDA_CHECK(cudaDeviceGetAttribute(&v, a, ordinal));
    return v;
  };
  info.shared_per_sm = static_cast<std::size_t>(attr(cudaDevAttrMaxSharedMemoryPerMultiprocessor));
  info.registers_per_sm = attr(cudaDevAttrMaxRegistersPerMultiprocessor);
  info.cluster_launch = attr(cudaDevAttrClusterLaunch) != 0;
  info.dispatch = read_device_limits(ordinal);
  if (const DeviceProfile* profile = restricting_profile())
    info.restricted_to_profile = std::string(profile->name);
  CUDA_CHECK(cudaDriverGetVersion(&info.driver_version));
  CUDA_CHECK(cudaRuntimeGetVersion(&info.runtime_version));
  return info;
}

}  // namespace smr
