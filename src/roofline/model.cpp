// The analytic model: model.hpp's header comment states the L2 rule this file applies.
#include "roofline/model.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>

#include <fmt/format.h>

namespace smr {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr int kVectorElemBytes = 4;  // the unfused pipeline's per-row max and sum are fp32

double clamp01(double v) { return std::clamp(v, 0.0, 1.0); }

// "512 MiB", "1.5 GiB", "8 KiB": sizes in the notes, binary units like the L2 size.
std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  while (b >= 1024.0 && u < 4) {
    b /= 1024.0;
    ++u;
  }
  if (b == std::floor(b)) return fmt::format("{:.0f} {}", b, units[u]);
  return fmt::format("{:.3g} {}", b, units[u]);
}

std::string pct(double f) { return fmt::format("{:.0f}%", 100.0 * f); }

void check_problem(const Problem& p) {
  if (p.M <= 0) throw std::invalid_argument(fmt::format("model: M = {} must be > 0", p.M));
  if (p.N <= 0) throw std::invalid_argument(fmt::format("model: N = {} must be > 0", p.N));
  if (p.ld_x < p.N)
    throw std::invalid_argument(fmt::format("model: ld_x = {} is less than N = {}", p.ld_x, p.N));
  if (p.ld_y < p.N)
    throw std::invalid_argument(fmt::format("model: ld_y = {} is less than N = {}", p.ld_y, p.N));
}

// Fills the roofline-bound fields from the byte and FLOP counts already in m.
void apply_roofline(ModelPoint& m, const Problem& p, const Ceilings& c) {
  m.dram_bytes = m.dram_read_bytes + m.dram_write_bytes;
  m.intensity = m.dram_bytes > 0 ? m.flops / m.dram_bytes : kNaN;
  const double t_dram = m.dram_bytes / (c.dram_GBps * 1e9);
  const double t_l2 = c.l2_GBps > 0 ? m.l2_bytes / (c.l2_GBps * 1e9) : 0.0;
  const double t_fp32 = m.flops / (c.fp32_GFLOPs * 1e9);  // NaN when the FLOPs are not modelled
  if (std::isnan(t_fp32)) {
    m.bound_time_s = kNaN;
    m.bound = "compute";
  } else if (t_fp32 > t_dram && t_fp32 > t_l2) {
    m.bound_time_s = t_fp32;
    m.bound = "compute";
  } else if (t_l2 > t_dram) {
    m.bound_time_s = t_l2;
    m.bound = "l2";
  } else {
    m.bound_time_s = t_dram;
    m.bound = "memory";
  }
  m.bound_GBps = m.bound_time_s > 0 ? p.min_bytes() / m.bound_time_s / 1e9 : kNaN;
}

// Online and two-read: R rows in flight, each read twice; a fraction f of the second read hits.
void two_reads(ModelPoint& m, const Problem& p, const Ceilings& c, std::int64_t rows) {
  const double sx = x_bytes(p), sy = y_bytes(p), l2 = static_cast<double>(c.l2_bytes);
  const double rx = sx / static_cast<double>(p.M), ry = sy / static_cast<double>(p.M);
  const double R = static_cast<double>(rows);
  const double f = clamp01((l2 - R * rx) / (R * ry));
  m.dram_read_bytes = sx + (1.0 - f) * sx;
  m.dram_write_bytes = sy;
  m.l2_bytes = 2.0 * sx + sy;
  m.passes = (m.dram_read_bytes + m.dram_write_bytes) / sx;
  const std::string who =
      m.traffic == TrafficModel::two_read
          ? fmt::format("every row's first read ends before its second ({} rows in flight)", rows)
          : fmt::format("{} rows in flight", rows);
  if (f >= 1.0) {
    m.note = fmt::format("{}: their x and y rows ({}) fit in L2 ({}), the second read hits; {:.3g} passes",
                         who, human_bytes(R * (rx + ry)), human_bytes(l2), m.passes);
  } else if (f <= 0.0) {
    m.note = fmt::format("{}: their x rows alone ({}) fill L2 ({}), the second read comes from DRAM; "
                         "{:.3g} passes",
                         who, human_bytes(R * rx), human_bytes(l2), m.passes);
  } else {
    m.note = fmt::format("{}: their x rows ({}) fit in L2 ({}) but not with the y they write; the "
                         "second read hits for the first {} of each row; {:.3g} passes",
                         who, human_bytes(R * rx), human_bytes(l2), pct(f), m.passes);
  }
}

}  // namespace

Ceilings datasheet_h200() { return Ceilings{}; }

double touched_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, int elem_bytes) {
  if (rows <= 0 || cols <= 0) return 0.0;
  const std::int64_t width = cols * elem_bytes;  // bytes of one row
  const std::int64_t pitch = ld * elem_bytes;    // bytes from one row's start to the next
  const std::int64_t s = kSectorBytes;
  if (pitch <= width) return static_cast<double>((rows * width + s - 1) / s * s);  // dense
  // Row i starts at byte i * pitch; only its offset inside a sector matters, and that offset
  // repeats every `period` rows. A row covers ceil((offset + width) / s) sectors; it shares its
  // first sector with the previous row when that row ends inside it (offset > the gap); no
  // earlier row can reach further, so that is the only sharing to subtract.
  const std::int64_t period = s / std::gcd(pitch % s, s);
  const std::int64_t gap = pitch - width;
  std::int64_t per_period = 0, in_remainder = 0;
  const std::int64_t remainder = rows % period;
  for (std::int64_t k = 0; k < period; ++k) {
    const std::int64_t offset = (k * pitch) % s;
    const std::int64_t sectors = (offset + width + s - 1) / s - (offset > gap ? 1 : 0);
    per_period += sectors;
    if (k < remainder) in_remainder += sectors;
  }
  return static_cast<double>((rows / period * per_period + in_remainder) * s);
}

double x_bytes(const Problem& p) { return touched_bytes(p.M, p.N, p.ld_x, dtype_bytes(p.dtype)); }
double y_bytes(const Problem& p) { return touched_bytes(p.M, p.N, p.ld_y, dtype_bytes(p.dtype)); }

ModelPoint predict(TrafficModel model, const Problem& p, const Ceilings& c,
                   std::int64_t rows_in_flight) {
  check_problem(p);
  check_ceilings(c);
  ModelPoint m;
  m.traffic = model;
  m.flops = kFlopsPerElement * static_cast<double>(p.elements());
  const double sx = x_bytes(p), sy = y_bytes(p), l2 = static_cast<double>(c.l2_bytes);

  switch (model) {
    case TrafficModel::fused:
    case TrafficModel::copy: {
      m.dram_read_bytes = sx;
      m.dram_write_bytes = sy;
      m.l2_bytes = sx + sy;
      m.passes = (sx + sy) / sx;
      if (model == TrafficModel::copy) {
        m.flops = 0;
        m.note = "the copy ceiling: one read of x, one write of y; no FLOPs";
      } else {
        m.note = "one read of x, one write of y, the row kept on chip in between; 2 passes";
      }
      break;
    }
    case TrafficModel::unfused: {
      const double st = touched_bytes(p.M, p.N, p.N, dtype_bytes(p.dtype));  // dense tmp
      const double vec = touched_bytes(1, p.M, p.M, kVectorElemBytes);       // max or sum
      const double f_b = clamp01((l2 - sx) / st);  // B's re-read of x
      const double f_c = sx + st <= l2 ? 1.0 : 0.0;  // C's read of tmp
      // A: read x, write max.  B: re-read x and max, write tmp and sum.  C: read tmp and sum, write y.
      m.dram_read_bytes = sx + (1.0 - f_b) * (sx + vec) + (1.0 - f_c) * (st + vec);
      m.dram_write_bytes = vec + (st + vec) + sy;
      m.l2_bytes = (sx + vec) + (sx + vec + st + vec) + (st + vec + sy);
      m.passes = (sx + (1.0 - f_b) * sx + st + (1.0 - f_c) * st + sy) / sx;
      if (f_c >= 1.0) {
        m.note = fmt::format("x and tmp ({}) fit in L2 ({}): B's re-read of x and C's read of tmp "
                             "hit, tmp still reaches DRAM once; {:.3g} passes",
                             human_bytes(sx + st), human_bytes(l2), m.passes);
      } else if (f_b > 0.0) {
        m.note = fmt::format("x ({}) fits in L2 ({}) but not with tmp ({} together): B's re-read "
                             "of x hits for {} of x before the tmp it writes pushes the rest out, "
                             "C reads tmp from DRAM; {:.3g} passes",
                             human_bytes(sx), human_bytes(l2), human_bytes(sx + st), pct(f_b),
                             m.passes);
      } else {
        m.note = fmt::format("x ({}) fills L2 ({}): B re-reads x and C reads tmp from DRAM; "
                             "{:.3g} passes",
                             human_bytes(sx), human_bytes(l2), m.passes);
      }
      break;
    }
    case TrafficModel::online:
    case TrafficModel::two_read: {
      std::int64_t rows = rows_in_flight > 0 ? rows_in_flight
                          : model == TrafficModel::online ? c.sm_count
                                                          : p.M;
      rows = std::clamp<std::int64_t>(rows, 1, p.M);
      two_reads(m, p, c, rows);
      break;
    }
    case TrafficModel::compute: {
      m.flops = kNaN;
      m.passes = 0;
      m.note = "the FP32 FMA ceiling: no DRAM traffic to speak of; its FLOPs are its own, "
               "measured, not modelled";
      break;
    }
  }
  apply_roofline(m, p, c);
  return m;
}

void check_ceilings(const Ceilings& c) {
  if (!(c.dram_GBps > 0))
    throw std::invalid_argument(fmt::format("model: ceilings.dram_GBps = {} must be > 0", c.dram_GBps));
  if (!(c.fp32_GFLOPs > 0))
    throw std::invalid_argument(
        fmt::format("model: ceilings.fp32_GFLOPs = {} must be > 0", c.fp32_GFLOPs));
  if (c.l2_bytes < 0)
    throw std::invalid_argument(fmt::format("model: ceilings.l2_bytes = {} must be >= 0", c.l2_bytes));
}

double predicted_traffic_ratio(const Problem& p, const Ceilings& c) {
  return predict(TrafficModel::unfused, p, c).dram_bytes / predict(TrafficModel::fused, p, c).dram_bytes;
}

}  // namespace smr
