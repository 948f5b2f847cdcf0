// GPU tests of the staged copy (staged_copy.cu): every variant copies every byte and nothing else,
// bad requests are refused; and, hidden ("[.staged]"), how close each variant comes to the copy
// ceiling on the ceiling's 512 MiB: each timed alternately with the copy kernel, sample by sample,
// medians of 15 after 3 warm-ups each; printed, not asserted (docs/performance.md, "Tried and
// rejected"). The executable skips visibly (exit 77) without a GPU.
#include <algorithm>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <utility>
#include <vector>

#include <cuda_runtime_api.h>

#include "catch.hpp"
#include "experiments/staged_copy.hpp"
#include "tests/kernels/copy_checks.hpp"
#include "harness/device.hpp"
#include "kernels/common/arch.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "kernels/ceilings/ceilings.hpp"
#include "kernels/cuda_check.hpp"

namespace {

using namespace smr;

using test::Alternated;
using test::median_of;
using test::patterned_bytes;
using test::poison_outside;
using test::time_alternately;

}  // namespace

// The staged copy is sm_90 code (bulk copies onto mbarriers): below it -- an 80-virtual build on
// Hopper -- the cases say so and end, and the copy refuses to launch.
bool staged_copy_runs_here() {
  if (kernels_have_clusters()) return true;
  WARN("the staged copy needs sm_90 device code; this build's is sm_" << kernels_code_arch()
       << ": case not run");
  CHECK_THROWS_AS(experiments::staged_copy_bytes(nullptr, nullptr, 16, nullptr,
                                                 experiments::StagedCopy{}),
                  std::invalid_argument);
  return false;
}

TEST_CASE("staged copy: every byte copied, nothing else written, every variant", "[gpu][experiments]") {
  if (!staged_copy_runs_here()) return;
  // Sizes that end mid-stage and mid-chunk, one shorter than a chunk, and more stages than the
  // grid has blocks (every buffer refilled several times).
  const std::size_t sizes[] = {16, 4096 + 16, 95328 * 3 + 160, (std::size_t{40} << 20) + 48};
  constexpr std::size_t kGuard = 256;
  const std::size_t span = sizes[std::size(sizes) - 1] + 2 * kGuard;
  const std::vector<unsigned char> src = patterned_bytes(span);
  DeviceBuffer dsrc(span), ddst(span);
  CUDA_CHECK(cudaMemcpy(dsrc.get(), src.data(), span, cudaMemcpyHostToDevice));
  std::vector<unsigned char> out(span);
  for (const experiments::StagedCopy& v : experiments::staged_copy_variants())
    for (const std::size_t bytes : sizes) {
      INFO("variant " << experiments::to_string(v) << ", bytes " << bytes);
      CUDA_CHECK(cudaMemset(ddst.get(), kPoisonByte, span));
      experiments::staged_copy_bytes(dsrc.as<unsigned char>() + kGuard,
                                  ddst.as<unsigned char>() + kGuard, bytes, nullptr, v);
      CUDA_CHECK(cudaDeviceSynchronize());
      CUDA_CHECK(cudaMemcpy(out.data(), ddst.get(), span, cudaMemcpyDeviceToHost));
      CHECK(std::memcmp(out.data() + kGuard, src.data() + kGuard, bytes) == 0);
      CHECK(poison_outside(out, kGuard, kGuard + bytes));
    }
  // Refused, not run: a size that is not whole vectors, a misaligned buffer, a stage too big.
  CHECK_THROWS_AS(experiments::staged_copy_bytes(dsrc.get(), ddst.get(), 17, nullptr,
                                              experiments::StagedCopy{}),
                  std::invalid_argument);
  CHECK_THROWS_AS(experiments::staged_copy_bytes(dsrc.as<unsigned char>() + 4, ddst.get(), 32,
                                              nullptr, experiments::StagedCopy{}),
                  std::invalid_argument);
  CHECK_THROWS_AS(experiments::staged_copy_bytes(dsrc.get(), ddst.get(), 32, nullptr,
                                              experiments::StagedCopy{.buffers = 2,
                                                                      .stage_bytes = 190656}),
                  std::invalid_argument);
}

TEST_CASE("staged copy: each variant against the copy ceiling", "[.staged][gpu][experiments]") {
  if (!staged_copy_runs_here()) return;
  constexpr std::size_t kBytes = std::size_t{512} << 20;
  constexpr int kReps = 15;
  DeviceBuffer a(kBytes), b(kBytes);
  CUDA_CHECK(cudaMemset(a.get(), 1, kBytes));
  CudaStream s;
  const auto ceiling = [&] { ceilings::copy_bytes(a.get(), b.get(), kBytes, s.get()); };
  std::printf("\nstaged copy, 512 MiB (read + write), median of %d, alternating with the copy "
              "ceiling kernel\n", kReps);
  for (const experiments::StagedCopy& v : experiments::staged_copy_variants()) {
    const auto staged = [&] { experiments::staged_copy_bytes(a.get(), b.get(), kBytes, s.get(), v); };
    const Alternated t = time_alternately(s, ceiling, staged, 3, kReps);
    const double copy_s = median_of(t.a);
    const TimeStats st = summarize(t.b, 1, false);
    std::printf("  %-52s %6.0f GB/s, %5.1f%% of the copy kernel's %4.0f (min %.0f, max %.0f)\n",
                experiments::to_string(v).c_str(), 2.0 * kBytes / st.median_s / 1e9,
                100.0 * copy_s / st.median_s, 2.0 * kBytes / copy_s / 1e9,
                2.0 * kBytes / st.max_s / 1e9, 2.0 * kBytes / st.min_s / 1e9);
    std::fflush(stdout);
    // The timed variant copied every byte (b cleared, copied once more, read back).
    CUDA_CHECK(cudaMemsetAsync(b.get(), 0, kBytes, s.get()));
    staged();
    s.sync();
    std::vector<unsigned char> back(kBytes);
    CUDA_CHECK(cudaMemcpy(back.data(), b.get(), kBytes, cudaMemcpyDeviceToHost));
    CHECK(std::count(back.begin(), back.end(), static_cast<unsigned char>(1)) ==
          static_cast<std::ptrdiff_t>(kBytes));
  }
}

