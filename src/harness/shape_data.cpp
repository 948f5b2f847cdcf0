// One shape's data, shared by the kernels of the shape: the input made on the device from the
// run's seed, the output buffer, and what a record needs beyond them; plus the small device-memory
// helpers of the sweep.
#include <fmt/format.h>

#include "harness/detail/sweep_parts.hpp"
#include "harness/verify_gpu.hpp"

namespace smr::detail {

std::string shape_text(const Problem& p) { return fmt::format("{}x{}", p.M, p.N); }

std::size_t free_device_bytes() {
  std::size_t free_b = 0, total_b = 0;
  CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
  return free_b;
}

MemoryBudget device_memory(const DeviceInfo& device) {
  MemoryBudget m;
  m.free_bytes = static_cast<std::int64_t>(free_device_bytes());
  m.total_bytes = device.global_bytes;
  m.l2_bytes = device.l2_bytes;
  m.source = fmt::format("the device at hand ({}): its free memory when the run started",
                         device.name);
  return m;
}

// After a CUDA error: clear the error if it was not sticky and tell whether work can go on.
bool context_usable() {
  cudaGetLastError();
  if (cudaDeviceSynchronize() != cudaSuccess) return false;
  return cudaGetLastError() == cudaSuccess;
}

void upsert(RunResults& run, Record r) {
  const std::string key = r.key();
  for (auto& old : run.records)
    if (old.key() == key) {
      old = std::move(r);
      return;
    }
  run.records.push_back(std::move(r));
}

ShapeData make_shape(const Problem& p, std::uint64_t seed, cudaStream_t stream) {
  ShapeData s;
  s.p = p;
  s.seed = seed;
  s.x = DeviceBuffer(buffer_bytes(p.M, p.ld_x, p.dtype));
  s.y = DeviceBuffer(buffer_bytes(p.M, p.ld_y, p.dtype));
  fill_input_device(s.x.get(), p, seed, InputKind::mixed, stream);
  CUDA_CHECK(cudaStreamSynchronize(stream));
  return s;
}

std::size_t record_bytes(const KernelInfo& k, const Problem& p, bool shape_allocated) {
  std::size_t need = k.workspace_bytes ? k.workspace_bytes(p) : 0;
  if (!shape_allocated) need += buffer_bytes(p.M, p.ld_x, p.dtype) + buffer_bytes(p.M, p.ld_y, p.dtype);
  return need;
}

}  // namespace smr::detail
