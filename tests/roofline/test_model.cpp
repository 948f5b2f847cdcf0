// The analytic model: intensities, pass counts and traffic ratios in and out of the L2 regime,
// the roofline bound, and the sector arithmetic behind the byte counts.
#include <cmath>
#include <cstdint>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "catch.hpp"
#include "roofline/model.hpp"

using namespace smr;
using Catch::Matchers::WithinAbs;
using Catch::Matchers::WithinRel;

namespace {

constexpr std::int64_t kDefaultElements = std::int64_t{1} << 27;  // configs/default.yaml: M x N

// The default sweep's shapes: N = 2^7 ... 2^22 at M x N = 2^27.
std::vector<Problem> default_shapes(DType t = DType::f32) {
  std::vector<Problem> out;
  for (int k = 7; k <= 22; ++k) {
    const std::int64_t N = std::int64_t{1} << k;
    out.push_back(dense(kDefaultElements / N, N, t));
  }
  return out;
}

// A dense fp32 problem of about `bytes` bytes per buffer with rows of N elements.
Problem fp32_of_bytes(double bytes, std::int64_t N) {
  return dense(static_cast<std::int64_t>(std::llround(bytes / (4.0 * static_cast<double>(N)))), N);
}

// Distinct 32-byte sectors by brute force, to check touched_bytes' closed form.
double brute_force_sectors(std::int64_t rows, std::int64_t cols, std::int64_t ld, int b) {
  std::set<std::int64_t> sectors;
  for (std::int64_t i = 0; i < rows; ++i)
    for (std::int64_t j = 0; j < cols; ++j) sectors.insert((i * ld + j) * b / kSectorBytes);
  return static_cast<double>(sectors.size()) * kSectorBytes;
}

}  // namespace

TEST_CASE("fused: 0.375 FLOP/byte in fp32 at every default shape", "[model]") {
  const Ceilings c = datasheet_h200();
  for (const Problem& p : default_shapes()) {
    CAPTURE(p.M, p.N);
    const ModelPoint m = predict(TrafficModel::fused, p, c);
    CHECK(m.traffic == TrafficModel::fused);
    CHECK(m.flops == 3.0 * static_cast<double>(p.elements()));
    CHECK(m.dram_read_bytes == 4.0 * static_cast<double>(p.elements()));
    CHECK(m.dram_write_bytes == 4.0 * static_cast<double>(p.elements()));
    CHECK(m.intensity == 0.375);
    CHECK(m.passes == 2.0);
    CHECK(m.bound == "memory");
    CHECK_THAT(m.bound_GBps, WithinRel(c.dram_GBps, 1e-12));
  }
}

TEST_CASE("dtype: bf16 and fp16 move 2 bytes per element", "[model]") {
  const Ceilings c = datasheet_h200();
  for (DType t : {DType::bf16, DType::f16}) {
    for (const Problem& p : default_shapes(t)) {
      CAPTURE(to_string(t), p.N);
      const ModelPoint m = predict(TrafficModel::fused, p, c);
      CHECK(m.dram_bytes == 4.0 * static_cast<double>(p.elements()));
      CHECK(m.intensity == 0.75);
      // The ratio does not depend on the dtype far above L2 (the fp32 vectors weigh 4/N, not 2/N).
      CHECK_THAT(predicted_traffic_ratio(p, c), WithinRel(2.5 + 4.0 / static_cast<double>(p.N), 1e-12));
    }
  }
}

TEST_CASE("unfused: 5 passes and a ratio of 2.5 at 2^27 elements", "[model]") {
  const Ceilings c = datasheet_h200();
  for (const Problem& p : default_shapes()) {
    CAPTURE(p.M, p.N);
    const ModelPoint u = predict(TrafficModel::unfused, p, c);
    CHECK(u.passes == 5.0);
    // 5 passes over x plus the fp32 max and sum vectors, each written once and read once: 16M bytes.
    CHECK(u.dram_bytes == 20.0 * static_cast<double>(p.elements()) + 16.0 * static_cast<double>(p.M));
    const double ratio = predicted_traffic_ratio(p, c);
    CHECK_THAT(ratio, WithinRel(2.5 + 2.0 / static_cast<double>(p.N), 1e-12));
    CHECK_THAT(ratio, WithinRel(2.5, 0.01));  // the vectors add at most 2/128
  }
}

TEST_CASE("unfused in the L2 regime: 1.5 when x and tmp fit, 2.0 just past that, 2.5 from L2 up",
          "[model]") {
  const Ceilings c = datasheet_h200();
  const double L = static_cast<double>(c.l2_bytes);

  SECTION("8MN <= L2: 3 passes, ratio 1.5") {
    for (const Problem& p : {dense(1024, 1024), dense(128, 32768), dense(7680, 1024)}) {
      CAPTURE(p.M, p.N);
      REQUIRE(8.0 * static_cast<double>(p.elements()) <= L);
      const ModelPoint u = predict(TrafficModel::unfused, p, c);
      CHECK(u.passes == 3.0);
      // tmp and the two vectors still reach DRAM: 3 x 4MN + 8M bytes.
      CHECK(u.dram_bytes == 12.0 * static_cast<double>(p.elements()) + 8.0 * static_cast<double>(p.M));
      CHECK_THAT(predicted_traffic_ratio(p, c), WithinRel(1.5 + 1.0 / static_cast<double>(p.N), 1e-12));
    }
  }
  SECTION("x just over half the L2: 4 passes, ratio 2.0") {
    const Problem p = dense(1921, 4096);  // x = 30 MiB + one row
    REQUIRE(4.0 * static_cast<double>(p.elements()) > L / 2);
    const ModelPoint u = predict(TrafficModel::unfused, p, c);
    CHECK_THAT(u.passes, WithinAbs(4.0, 0.002));
    CHECK_THAT(predicted_traffic_ratio(p, c), WithinRel(2.0, 0.001));
  }
  SECTION("in between: B's re-read of x is lost as the tmp it writes fills L2") {
    const Problem p = fp32_of_bytes(0.75 * L, 4096);  // x = 45 MiB: a third of it still hits
    CHECK_THAT(predict(TrafficModel::unfused, p, c).passes, WithinAbs(5.0 - 1.0 / 3.0, 1e-9));
  }
  SECTION("x fills L2: 5 passes, ratio 2.5") {
    const Problem p = fp32_of_bytes(L, 4096);
    CHECK(predict(TrafficModel::unfused, p, c).passes == 5.0);
  }
  SECTION("the ratio never falls as the problem grows") {
    double last = 0;
    for (std::int64_t M = 16; M <= 65536; M += 16) {
      const double r = predicted_traffic_ratio(dense(M, 2048), c);
      CAPTURE(M, r);
      CHECK(r >= last - 1e-12);
      last = r;
    }
    CHECK_THAT(last, WithinRel(2.5, 0.01));
  }
}

TEST_CASE("roofline bound: bytes / bandwidth when memory-bound", "[model]") {
  Ceilings c = datasheet_h200();
  const Problem p = dense(65536, 2048);
  for (TrafficModel t : {TrafficModel::fused, TrafficModel::unfused, TrafficModel::online,
                         TrafficModel::copy, TrafficModel::two_read}) {
    CAPTURE(to_string(t));
    const ModelPoint m = predict(t, p, c);
    CHECK(m.bound == "memory");
    CHECK_THAT(m.bound_time_s, WithinRel(m.dram_bytes / (c.dram_GBps * 1e9), 1e-12));
    CHECK_THAT(m.bound_GBps, WithinRel(p.min_bytes() / m.bound_time_s / 1e9, 1e-12));
  }
  SECTION("a slow FP32 ceiling makes it compute-bound") {
    c.fp32_GFLOPs = 100;
    const ModelPoint m = predict(TrafficModel::fused, p, c);
    CHECK(m.bound == "compute");
    CHECK_THAT(m.bound_time_s, WithinRel(m.flops / 100e9, 1e-12));
  }
  SECTION("a known, slow L2 bandwidth makes it L2-bound") {
    c.l2_GBps = 1000;
    const ModelPoint m = predict(TrafficModel::online, p, c);  // its second read hits L2
    CHECK(m.bound == "l2");
    CHECK_THAT(m.bound_time_s, WithinRel(m.l2_bytes / 1000e9, 1e-12));
  }
}

TEST_CASE("online: the second read hits L2 for short rows, DRAM for long ones", "[model]") {
  const Ceilings c = datasheet_h200();
  SECTION("132 rows of 8 KiB in flight fit: 2 passes") {
    const Problem p = dense(65536, 2048);
    const ModelPoint m = predict(TrafficModel::online, p, c);
    CHECK(m.passes == 2.0);
    CHECK(m.dram_read_bytes == x_bytes(p));
    CHECK(m.intensity == 0.375);
    // The default rows in flight is one per SM.
    CHECK(predict(TrafficModel::online, p, c, c.sm_count).dram_bytes == m.dram_bytes);
  }
  SECTION("32 rows of 16 MiB do not: 3 passes") {
    const Problem p = dense(32, std::int64_t{1} << 22);
    const ModelPoint m = predict(TrafficModel::online, p, c);
    CHECK(m.passes == 3.0);
    CHECK(m.dram_read_bytes == 2.0 * x_bytes(p));
    CHECK_THAT(m.intensity, WithinRel(0.25, 1e-12));
  }
  SECTION("between: x rows fit but not with their y") {
    // 132 rows in flight x 0.75 L2 / 132 bytes of x each: a third of the second read still hits.
    const std::int64_t N = c.l2_bytes * 3 / 4 / 132 / 4;
    const Problem p = dense(4096, N);
    const double f = (static_cast<double>(c.l2_bytes) - 132.0 * 4.0 * static_cast<double>(N)) /
                     (132.0 * 4.0 * static_cast<double>(N));
    CHECK_THAT(predict(TrafficModel::online, p, c).passes, WithinAbs(3.0 - f, 1e-12));
    CHECK(f > 0.3);
    CHECK(f < 0.4);
  }
  SECTION("more rows in flight push the second read out of L2") {
    const Problem p = dense(65536, 2048);
    CHECK(predict(TrafficModel::online, p, c, 8192).passes == 3.0);  // 8192 x 8 KiB = 64 MiB of x
    CHECK(predict(TrafficModel::online, p, c, 1024).passes == 2.0);
  }
}

TEST_CASE("two_read: every row's first read ends before the second", "[model]") {
  const Ceilings c = datasheet_h200();
  // M = 8 rows of 4 MiB: x (32 MiB) fits, x + y (64 MiB) does not: 7/8 of the second read hits.
  const Problem small = dense(8, std::int64_t{1} << 20);
  CHECK_THAT(predict(TrafficModel::two_read, small, c).passes, WithinAbs(2.125, 1e-12));
  // One row of 256 MiB: both reads from DRAM, 12 bytes per element.
  const Problem huge = dense(1, std::int64_t{1} << 26);
  const ModelPoint m = predict(TrafficModel::two_read, huge, c);
  CHECK(m.passes == 3.0);
  CHECK(m.dram_bytes == 12.0 * static_cast<double>(huge.elements()));
  CHECK_THAT(m.bound_GBps, WithinRel(c.dram_GBps * 8.0 / 12.0, 1e-12));
}

TEST_CASE("copy and compute ceilings", "[model]") {
  const Ceilings c = datasheet_h200();
  const Problem p = dense(65536, 2048);
  const ModelPoint copy = predict(TrafficModel::copy, p, c);
  CHECK(copy.flops == 0);
  CHECK(copy.dram_bytes == p.min_bytes());
  CHECK_THAT(copy.bound_GBps, WithinRel(c.dram_GBps, 1e-12));
  const ModelPoint fma = predict(TrafficModel::compute, p, c);
  CHECK(fma.dram_bytes == 0);
  CHECK(std::isnan(fma.flops));  // not modelled: the kernel's own count is measured
  CHECK(fma.bound == "compute");
}

TEST_CASE("notes say which L2 regime applied", "[model]") {
  const Ceilings c = datasheet_h200();
  const std::string far = predict(TrafficModel::unfused, dense(65536, 2048), c).note;
  CAPTURE(far);
  CHECK(far.find("fills L2") != std::string::npos);
  const std::string fits = predict(TrafficModel::unfused, dense(1024, 1024), c).note;
  CAPTURE(fits);
  CHECK(fits.find("fit in L2") != std::string::npos);
  const std::string online = predict(TrafficModel::online, dense(65536, 2048), c).note;
  CAPTURE(online);
  CHECK(online.find("132 rows in flight") != std::string::npos);
  CHECK(online.find("the second read hits") != std::string::npos);
}

TEST_CASE("touched_bytes: dense buffers and padded rows, sector by sector", "[model]") {
  CHECK(touched_bytes(1024, 1024, 1024, 4) == 4.0 * 1024 * 1024);
  CHECK(touched_bytes(1, 1, 1, 4) == 32.0);  // one sector at least
  CHECK(touched_bytes(0, 5, 5, 4) == 0.0);
  // ld = N + 1 in fp32, N = 128: every row is 512 bytes starting 4 bytes later than the last.
  CHECK(touched_bytes(8, 128, 129, 4) == brute_force_sectors(8, 128, 129, 4));
  CHECK(touched_bytes(8, 128, 129, 4) > 8.0 * 512);
  for (int b : {2, 4})
    for (std::int64_t cols : {1, 3, 7, 8, 31, 33, 100})
      for (std::int64_t pad : {0, 1, 2, 5, 8, 13, 64})
        for (std::int64_t rows : {1, 2, 7, 33, 70}) {
          CAPTURE(b, cols, pad, rows);
          CHECK(touched_bytes(rows, cols, cols + pad, b) == brute_force_sectors(rows, cols, cols + pad, b));
        }
  // The problem's strides enter x and y separately.
  const Problem p{64, 100, 101, 128, DType::f32};
  CHECK(x_bytes(p) == brute_force_sectors(64, 100, 101, 4));
  CHECK(y_bytes(p) == brute_force_sectors(64, 100, 128, 4));
}

TEST_CASE("bad problems are refused with the reason", "[model]") {
  const Ceilings c = datasheet_h200();
  CHECK_THROWS_WITH(predict(TrafficModel::fused, dense(0, 8), c), "model: M = 0 must be > 0");
  CHECK_THROWS_WITH(predict(TrafficModel::fused, Problem{4, 8, 7, 8, DType::f32}, c),
                    "model: ld_x = 7 is less than N = 8");
  Ceilings no_bw = c;
  no_bw.dram_GBps = 0;
  CHECK_THROWS_AS(predict(TrafficModel::fused, dense(4, 8), no_bw), std::invalid_argument);
}

TEST_CASE("traffic model names round-trip", "[model]") {
  for (TrafficModel t : {TrafficModel::fused, TrafficModel::unfused, TrafficModel::online,
                         TrafficModel::copy, TrafficModel::compute, TrafficModel::two_read})
    CHECK(parse_traffic_model(to_string(t)) == t);
  CHECK_FALSE(parse_traffic_model("fast").has_value());
}
