// The ceilings measured on the current device: DRAM copy bandwidth (the better of
// cudaMemcpyAsync and the registry's copy kernel), FP32 FMA throughput, L2 read bandwidth, and
// the peak from the memory clock (sweep.hpp's measure_ceilings).
#include <optional>
#include <string>

#include "harness/detail/sweep_parts.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "roofline/model.hpp"

namespace smr {

using json = nlohmann::json;
using detail::buffer_bytes;
using detail::DirectTiming;
using detail::gb;
using detail::time_direct;
using detail::time_json;

namespace {

// The copy ceiling is measured on 1 GiB read + 1 GiB written: far past the L2, long enough that
// launch latency is noise.
constexpr std::size_t kCeilingCopyBytes = detail::kGiB;

std::int64_t find_rows_for(std::size_t bytes, std::int64_t cols) {
  return static_cast<std::int64_t>(bytes / sizeof(float)) / cols;
}

}  // namespace

double fp32_peak_GFLOPs(int cc_major, int cc_minor, int sm_count, int sm_clock_khz) {
  if (cc_major <= 0 || sm_count <= 0 || sm_clock_khz <= 0) return 0;
  const bool wide = cc_major > 8 || (cc_major == 8 && cc_minor >= 6);  // GA10x and later
  const double lanes = wide ? 128 : 64;
  return sm_count * lanes * 2.0 * sm_clock_khz * 1e3 / 1e9;
}

Ceilings measure_ceilings(const DeviceInfo& device, const TimingPolicy& policy, json& detail) {
  Ceilings c = datasheet_h200();
  c.source = "measured";
  c.device = device.name;
  c.peak_dram_GBps = device.peak_dram_GBps();
  c.l2_bytes = device.l2_bytes;
  c.sm_count = device.sm_count;
  detail = json::object();
  detail["peak_dram_GBps"] = {{"GBps", c.peak_dram_GBps},
                              {"how", "2 x memory clock x bus width / 8 (cudaDevAttrMemoryClockRate)"}};

  CudaStream stream;
  L2Flusher flusher(device.l2_bytes);
  const DeviceLimits limits = device.limits();

  // DRAM copy: cudaMemcpyAsync device to device, and the registry's copy kernel.
  {
    DeviceBuffer src(kCeilingCopyBytes), dst(kCeilingCopyBytes);
    CUDA_CHECK(cudaMemsetAsync(src.get(), 0, src.bytes(), stream.get()));
    const DirectTiming memcpy_t = time_direct(
        [&](int, cudaStream_t s) {
          CUDA_CHECK(cudaMemcpyAsync(dst.get(), src.get(), kCeilingCopyBytes,
                                     cudaMemcpyDeviceToDevice, s));
        },
        policy, &flusher, stream.get());
    const double memcpy_GBps = 2.0 * gb(static_cast<double>(kCeilingCopyBytes)) / memcpy_t.time.median_s;
    detail["memcpy_d2d"] = {{"GBps", memcpy_GBps},
                            {"bytes_each_way", kCeilingCopyBytes},
                            {"time", time_json(memcpy_t.time)}};
    double best = memcpy_GBps;
    std::string best_of = "memcpy_d2d";

    constexpr std::int64_t kCopyCols = 4096;
    const Problem p = dense(find_rows_for(kCeilingCopyBytes, kCopyCols), kCopyCols);
    const KernelInfo* copy = find_kernel("copy");
    std::optional<std::string> why;
    if (!copy || !copy->launch) why = "no `copy` entry with a launcher in the registry";
    else why = why_unsupported(*copy, p, limits);
    if (why) {
      detail["copy_kernel"] = {{"not_measured", *why}};
    } else {
      DeviceBuffer ws(copy->workspace_bytes ? copy->workspace_bytes(p) : 0);
      const DirectTiming copy_t = time_direct(
          [&](int, cudaStream_t s) { copy->launch(Launch{src.get(), dst.get(), p, ws.get(), s}); },
          policy, &flusher, stream.get());
      const double copy_GBps = gb(p.min_bytes()) / copy_t.time.median_s;
      detail["copy_kernel"] = {{"GBps", copy_GBps},
                               {"M", p.M},
                               {"N", p.N},
                               {"time", time_json(copy_t.time)}};
      if (copy_GBps > best) {
        best = copy_GBps;
        best_of = "copy_kernel";
      }
    }
    c.dram_GBps = best;
    detail["dram_GBps"] = {{"GBps", best}, {"best_of", best_of},
                           {"how", "bytes read + bytes written / median time, L2 flushed"}};
  }

  // FP32 FMA throughput: the registry's fma kernel, kFmaFlopsPerElement FLOPs per element
  // (kernels/ceilings/ceilings.hpp). 2^20 elements: ~8.6 GFLOP, a launch of ~0.1 ms on an H200.
  {
    const KernelInfo* fma = find_kernel("fma");
    const Problem p = dense(1024, 1024);
    std::optional<std::string> why;
    if (!fma || !fma->launch) why = "no `fma` entry with a launcher in the registry";
    else why = why_unsupported(*fma, p, limits);
    if (why) {
      // This card's peak from its properties, not another card's datasheet.
      const double peak = fp32_peak_GFLOPs(device.cc_major, device.cc_minor, device.sm_count,
                                           device.sm_clock_khz);
      if (peak > 0) c.fp32_GFLOPs = peak;
      detail["fp32_GFLOPs"] = {
          {"not_measured", *why},
          {"GFLOPs", c.fp32_GFLOPs},
          {"source", peak > 0 ? "SMs x FP32 lanes per SM x 2 x SM clock" : "datasheet (H200)"}};
    } else {
      const double flops = ceilings::kFmaFlopsPerElement * static_cast<double>(p.elements());
      DeviceBuffer x(buffer_bytes(p.M, p.ld_x, p.dtype)), y(buffer_bytes(p.M, p.ld_y, p.dtype));
      DeviceBuffer ws(fma->workspace_bytes ? fma->workspace_bytes(p) : 0);
      CUDA_CHECK(cudaMemsetAsync(x.get(), 0, x.bytes(), stream.get()));
      const DirectTiming t = time_direct(
          [&](int, cudaStream_t s) { fma->launch(Launch{x.get(), y.get(), p, ws.get(), s}); },
          policy, nullptr, stream.get());
      c.fp32_GFLOPs = flops / t.time.median_s / 1e9;
      detail["fp32_GFLOPs"] = {{"GFLOPs", c.fp32_GFLOPs},
                               {"flops_per_launch", flops},
                               {"M", p.M},
                               {"N", p.N},
                               {"how", "FMA counted as 2 FLOP; no L2 flush (no data to speak of)"},
                               {"time", time_json(t.time)}};
    }
  }

  // L2: a buffer well inside it, re-read.
  {
    const L2Measurement m = measure_l2_read(device, policy, stream.get());
    c.l2_GBps = m.GBps;
    detail["l2_GBps"] = {{"GBps", m.GBps},
                         {"buffer_bytes", m.buffer_bytes},
                         {"passes", m.passes},
                         {"how", "reads only, L1 bypassed (ld.global.cg), buffer = L2 / 4"},
                         {"time", time_json(m.time)}};
  }
  return c;
}

}  // namespace smr
