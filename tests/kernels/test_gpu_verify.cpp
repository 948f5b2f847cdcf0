// GPU tests of the sweep's verification on the device ([gpu][verify], harness/verify_gpu.hpp):
//   - the device fill writes make_input's values bit for bit, in every storage dtype;
//   - the device's fp64 reference and checker give the CPU oracle's verdict (verify_output /
//     verify_storage_output, the same worst error within rounding) on odd shapes, padded strides
//     and every hostile kind, on the production softmax's output;
//   - the checker catches planted faults and names the first one (lowest row, then column);
//   - the copy check, and the time a 2^27-element fp32 check takes (and that it repeats its
//     numbers bit for bit).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

#include "catch.hpp"
#include "gpu_check.hpp"
#include "harness/device.hpp"
#include "harness/storage.hpp"
#include "harness/timing.hpp"
#include "harness/verify.hpp"
#include "harness/verify_gpu.hpp"
#include "kernels/registry.hpp"

namespace {

using namespace smr;

constexpr DType kDtypes[] = {DType::f32, DType::bf16, DType::f16};
constexpr InputKind kKinds[] = {
    InputKind::mixed,       InputKind::normal,    InputKind::outliers,
    InputKind::large,       InputKind::all_equal, InputKind::some_neg_inf,
    InputKind::all_neg_inf, InputKind::has_nan,   InputKind::has_pos_inf};

std::size_t elem_bytes(const Problem& p) { return static_cast<std::size_t>(dtype_bytes(p.dtype)); }

std::string describe(const Problem& p, InputKind kind) {
  std::ostringstream s;
  s << "M = " << p.M << ", N = " << p.N << ", ld_x = " << p.ld_x << ", ld_y = " << p.ld_y << ", "
    << to_string(p.dtype) << ", input " << to_string(kind);
  return s.str();
}

// The kernel that makes a case's output: the production softmax, or where the device (or
// SMR_DEVICE_PROFILE) has no family for the shape, the online lab kernel (fp32, any N): the
// checker is under test, not the kernel. nullptr where neither runs p here.
const KernelInfo* producer(const Problem& p) {
  const DeviceLimits d = query_device().limits();
  for (const char* name : {"softmax", "online"}) {
    const KernelInfo* k = find_kernel(name);
    if (k && !why_unsupported(*k, p, d)) return k;
  }
  return nullptr;
}

// x filled on the device, y poisoned, the production softmax launched: what the sweep does.
struct DeviceCase {
  Problem p;
  DeviceBuffer x, y, ws;
  CudaStream stream;

  DeviceCase(const Problem& prob, std::uint64_t seed, InputKind kind)
      : p(prob),
        x(static_cast<std::size_t>(prob.M * prob.ld_x) * elem_bytes(prob)),
        y(static_cast<std::size_t>(prob.M * prob.ld_y) * elem_bytes(prob)) {
    const KernelInfo* k = producer(p);
    REQUIRE(k != nullptr);
    ws = DeviceBuffer(k->workspace_bytes ? k->workspace_bytes(p) : 0);
    fill_input_device(x.get(), p, seed, kind, stream.get());
    poison_nan(y.get(), y.bytes(), stream.get());
    k->launch(Launch{x.get(), y.get(), p, ws.get(), stream.get()});
    stream.sync();
  }
  std::vector<unsigned char> x_bytes() const { return download(x); }
  std::vector<float> hx() const { return from_storage(download(x), p.dtype); }
  std::vector<float> hy() const { return from_storage(download(y), p.dtype); }
  // One element of y, read and written in the storage format.
  float get_y(std::int64_t row, std::int64_t col) const {
    std::vector<unsigned char> b(elem_bytes(p));
    CUDA_CHECK(cudaMemcpy(b.data(), y.as<unsigned char>() + offset(row, col), b.size(),
                          cudaMemcpyDeviceToHost));
    return from_storage(b, p.dtype)[0];
  }
  void set_y(std::int64_t row, std::int64_t col, float v) {
    const std::vector<unsigned char> b = to_storage(std::vector<float>{v}, p.dtype);
    CUDA_CHECK(cudaMemcpy(y.as<unsigned char>() + offset(row, col), b.data(), b.size(),
                          cudaMemcpyHostToDevice));
  }
  void poison_y(std::int64_t row, std::int64_t col) {
    CUDA_CHECK(cudaMemset(y.as<unsigned char>() + offset(row, col), kPoisonByte, elem_bytes(p)));
  }
  VerifyResult gpu() { return verify_storage_output_device(p, x.get(), y.get(), stream.get()); }
  VerifyResult cpu() const { return verify_storage_output(p, hx(), hy()); }

 private:
  std::size_t offset(std::int64_t row, std::int64_t col) const {
    return static_cast<std::size_t>(row * p.ld_y + col) * elem_bytes(p);
  }
  static std::vector<unsigned char> download(const DeviceBuffer& b) {
    std::vector<unsigned char> out(b.bytes());
    CUDA_CHECK(cudaMemcpy(out.data(), b.get(), out.size(), cudaMemcpyDeviceToHost));
    return out;
  }
};

// The same verdict: pass/fail, the words, the worst error and the L2 error within rounding (the
// device's exp and summation order differ from the host's in the last bits of a double).
void same_verdict(const VerifyResult& gpu, const VerifyResult& cpu) {
  INFO("GPU: " << gpu.passed << " " << gpu.max_rel_err << " " << gpu.detail);
  INFO("CPU: " << cpu.passed << " " << cpu.max_rel_err << " " << cpu.detail);
  CHECK(gpu.passed == cpu.passed);
  CHECK(gpu.detail == cpu.detail);
  CHECK(gpu.tolerance == cpu.tolerance);
  CHECK(gpu.rows_checked == cpu.rows_checked);
  CHECK_THAT(gpu.max_rel_err, Catch::Matchers::WithinRel(cpu.max_rel_err, 1e-6) ||
                                  Catch::Matchers::WithinAbs(cpu.max_rel_err, 1e-15));
  CHECK_THAT(gpu.rel_l2_err, Catch::Matchers::WithinRel(cpu.rel_l2_err, 1e-6) ||
                                 Catch::Matchers::WithinAbs(cpu.rel_l2_err, 1e-15));
}

// Odd shapes: N = 1, 31, 33 (rows of one warp item), 4097 and 99991 (a prime near 10^5: rows of
// several items), dense and with padded strides that are no multiple of 4.
std::vector<Problem> odd_shapes(DType t) {
  std::vector<Problem> out;
  for (const std::int64_t n : {1, 31, 33, 4097, 99991}) {
    const std::int64_t m = n > 10000 ? 9 : 37;
    out.push_back(dense(m, n, t));
    out.push_back(Problem{m, n, n + 3, n + 5, t});
  }
  out.push_back(dense(1, (1 << 20) + 3, t));  // one long row: 257 items
  return out;
}

std::uint64_t seed_for(std::uint64_t i) { return test::case_seed(test::base_seed() ^ 0x6E7F1u, i); }

}  // namespace

TEST_CASE("device fill: make_input's values, bit for bit, in every storage dtype",
          "[gpu][verify]") {
  std::uint64_t n = 0;
  for (const DType t : kDtypes)
    for (const Problem& p :
         {dense(40, 300, t), Problem{17, 4097, 4101, 4097, t}, Problem{9, 1, 3, 1, t}})
      for (const InputKind kind : kKinds) {
        const std::uint64_t seed = seed_for(n++);
        INFO(describe(p, kind) << ", seed " << seed);
        DeviceBuffer x(static_cast<std::size_t>(p.M * p.ld_x) * elem_bytes(p));
        CudaStream s;
        fill_input_device(x.get(), p, seed, kind, s.get());
        s.sync();
        std::vector<unsigned char> got(x.bytes());
        CUDA_CHECK(cudaMemcpy(got.data(), x.get(), got.size(), cudaMemcpyDeviceToHost));
        const std::vector<unsigned char> want = to_storage(make_input(p, seed, kind), t);
        REQUIRE(got.size() == want.size());
        std::size_t first_diff = got.size();
        for (std::size_t i = 0; i < got.size() && first_diff == got.size(); ++i)
          if (got[i] != want[i]) first_diff = i;
        INFO("first differing byte " << first_diff << " of " << got.size());
        CHECK(first_diff == got.size());
      }
}

TEST_CASE("device checker: the CPU oracle's verdict on odd shapes and every hostile kind",
          "[gpu][verify]") {
  std::uint64_t n = 100;
  for (const DType t : kDtypes)
    for (const Problem& p : odd_shapes(t)) {
      if (!producer(p)) {  // 16-bit rows past block_row's on a card without sm_90's families
        WARN("no kernel runs " << describe(p, InputKind::mixed) << " on this device: not checked");
        continue;
      }
      for (const InputKind kind : kKinds) {
        if (p.N > 10000 && kind != InputKind::mixed && kind != InputKind::outliers &&
            kind != InputKind::some_neg_inf)
          continue;  // the long rows: the kinds whose values the row's statistics depend on most
        const std::uint64_t seed = seed_for(n++);
        INFO(describe(p, kind) << ", seed " << seed);
        DeviceCase c(p, seed, kind);
        const VerifyResult cpu = c.cpu();
        const VerifyResult gpu = c.gpu();
        same_verdict(gpu, cpu);
        CHECK(gpu.passed);  // the production softmax is correct
        CHECK(gpu.rows_checked == p.M);
        CHECK(!check_padding_untouched(p, c.hy()));
      }
    }
}

TEST_CASE("device checker: planted faults are caught, the first one named, in the oracle's words",
          "[gpu][verify]") {
  std::uint64_t n = 1000;
  for (const DType t : kDtypes)
    // 16 rows of 33 (one item a row) and 10 rows of 10000 (three items a row), padded y.
    for (const Problem& p : {Problem{16, 33, 35, 38, t}, Problem{10, 10000, 10001, 10003, t}}) {
      const std::uint64_t seed = seed_for(n++);
      INFO(describe(p, InputKind::mixed) << ", seed " << seed);
      // mixed: row 1 outliers, 3 all_equal (every output 1/N), 4 some_neg_inf, 6 has_nan (a NaN
      // row), 9 outliers again.
      const std::int64_t last = p.N - 1, mid = p.N / 2;
      // A wrong value: 5% off (over every dtype's tolerance), on an element whose output is not
      // tiny (all_equal: 1/N everywhere).
      {
        INFO("one wrong element");
        DeviceCase c(p, seed, InputKind::mixed);
        c.set_y(3, mid, c.get_y(3, mid) * 1.05f);
        const VerifyResult g = c.gpu();
        same_verdict(g, c.cpu());
        CHECK(!g.passed);
        const std::string at = "row 3, column " + std::to_string(mid);
        CHECK(g.detail.find(at) == 0);
      }
      {
        INFO("one unwritten (still poisoned) element, in a finite row and in a NaN row");
        DeviceCase c(p, seed, InputKind::mixed);
        c.poison_y(6, last);
        VerifyResult g = c.gpu();
        same_verdict(g, c.cpu());
        CHECK(g.detail.find("row 6, column " + std::to_string(last) + ": never written") == 0);
        c.poison_y(1, mid);  // earlier: now the first
        g = c.gpu();
        same_verdict(g, c.cpu());
        CHECK(g.detail.find("row 1, column " + std::to_string(mid) + ": never written") == 0);
        CHECK(g.detail.find("(and 1 more)") != std::string::npos);
      }
      {
        INFO("a wrong NaN pattern: a value in a NaN row, a NaN in a finite row");
        DeviceCase c(p, seed, InputKind::mixed);
        c.set_y(6, 0, 0.25f);
        VerifyResult g = c.gpu();
        same_verdict(g, c.cpu());
        CHECK(g.detail.find("row 6, column 0: expected NaN") == 0);
        c.set_y(4, last, std::nanf(""));
        g = c.gpu();
        same_verdict(g, c.cpu());
        CHECK(g.detail.find("row 4, column " + std::to_string(last) + ": got NaN") == 0);
      }
      {
        INFO("a write into y's row padding: check_padding_untouched's words");
        DeviceCase c(p, seed, InputKind::mixed);
        c.set_y(2, p.N + 1, 0.5f);
        const VerifyResult g = c.gpu();
        CHECK(!g.passed);
        CHECK(c.cpu().passed);  // verify_output leaves the padding to check_padding_untouched
        const auto why = check_padding_untouched(p, c.hy());
        REQUIRE(why);
        CHECK(g.detail == *why);
      }
      {
        INFO("faults in several rows and columns: the lowest row, then column, comes first");
        DeviceCase c(p, seed, InputKind::mixed);
        c.set_y(9, 0, 0.75f);
        c.set_y(3, last, c.get_y(3, last) * 1.5f);
        c.set_y(3, mid, c.get_y(3, mid) * 1.5f);
        const VerifyResult g = c.gpu();
        same_verdict(g, c.cpu());
        CHECK(g.detail.find("row 3, column " + std::to_string(mid) + ":") == 0);
        // fp16's rule names only the first error over the tolerance, with no count.
        if (t != DType::f16) CHECK(g.detail.find("(and 2 more)") != std::string::npos);
      }
    }
}

TEST_CASE("device copy check: y == x bit for bit, the first differing row named", "[gpu][verify]") {
  for (const DType t : {DType::f32, DType::bf16}) {
    const Problem p{50, 1001, 1003, 1005, t};
    DeviceBuffer x(static_cast<std::size_t>(p.M * p.ld_x) * elem_bytes(p));
    DeviceBuffer y(static_cast<std::size_t>(p.M * p.ld_y) * elem_bytes(p));
    CudaStream s;
    fill_input_device(x.get(), p, 5, InputKind::mixed, s.get());
    poison_nan(y.get(), y.bytes(), s.get());
    CUDA_CHECK(cudaMemcpy2DAsync(y.get(), static_cast<std::size_t>(p.ld_y) * elem_bytes(p), x.get(),
                                 static_cast<std::size_t>(p.ld_x) * elem_bytes(p),
                                 static_cast<std::size_t>(p.N) * elem_bytes(p),
                                 static_cast<std::size_t>(p.M), cudaMemcpyDeviceToDevice, s.get()));
    s.sync();
    VerifyResult v = verify_copy_device(p, x.get(), y.get(), s.get());
    CHECK(v.passed);
    CHECK(v.rows_checked == p.M);
    // Two rows changed by one byte each: the first is named.
    for (const std::int64_t row : {41, 17}) {
      const std::size_t at = static_cast<std::size_t>(row * p.ld_y + 500) * elem_bytes(p);
      CUDA_CHECK(cudaMemset(y.as<unsigned char>() + at, 0x11, 1));
    }
    v = verify_copy_device(p, x.get(), y.get(), s.get());
    CHECK(!v.passed);
    CHECK(v.detail == "row 17: y differs from x");
  }
}

TEST_CASE("device checker: 2^27-element fp32 checks, the same numbers each time (time printed)",
          "[gpu][verify]") {
  // One shape per path: rows of one warp item (short and at the item's length), rows of many
  // items, and rows of 2^26. The time is printed for the run's log, not asserted: performance
  // targets live in the sweep (the run's summary line says what verification cost).
  for (const Problem& p :
       {dense(1 << 22, 32), dense(1 << 15, 1 << 12), dense(1 << 7, 1 << 20), dense(2, 1 << 26)}) {
    INFO(describe(p, InputKind::mixed));
    DeviceCase c(p, 11, InputKind::mixed);
    const VerifyResult first = c.gpu();  // also the warm-up: module load, first allocations
    const auto start = std::chrono::steady_clock::now();
    const VerifyResult v = c.gpu();
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("verify_output_device %lld x %lld fp32: %.3f s\n", static_cast<long long>(p.M),
                static_cast<long long>(p.N), s);
    CHECK(v.passed);
    CHECK(v.rows_checked == p.M);
    // Deterministic: the same numbers, bit for bit, run after run.
    CHECK(v.max_rel_err == first.max_rel_err);
    CHECK(v.rel_l2_err == first.rel_l2_err);
  }
}
