// The analytic roofline model: what each design should move through DRAM and compute, and the
// time the roofline allows for it. Pure host code; `softmax-bench model` prints it with no GPU.
//
// Bytes. A buffer of R rows x C columns with row stride ld touches whole 32-byte sectors: its
// bytes are the distinct sectors its rows cover (touched_bytes), which for a dense buffer is just
// R x C x element bytes. x and y are in the problem's dtype (2 bytes for bf16/fp16, 4 for fp32);
// the unfused pipeline's intermediate `tmp` is dense and in the same dtype as x; its per-row max
// and sum vectors are fp32 (arithmetic is always fp32).
//
// The L2 rule (docs/results-schema.md, "The L2 rule", states it too). The L2 starts cold: x is in
// DRAM when the kernel starts (the harness flushes L2 before every timed launch). Then
//   1. every buffer a kernel writes reaches DRAM once: dirty lines are written back eventually,
//      whether or not anything re-reads them from L2 first;
//   2. a re-read of a byte is served by L2 when the bytes touched (read or written, distinct)
//      since that byte was last touched -- its reuse distance -- fit in the L2; otherwise it
//      comes from DRAM. This is what an LRU cache does with streaming passes. Rows are taken in
//      order, so the reuse distance grows along a pass and a re-read can hit for part of a buffer.
// Applied to the designs (S_x, S_t, S_y: bytes of x, tmp, y; L: the L2 size):
//   unfused  A reads x and writes max; B re-reads x and writes tmp; C reads tmp and writes y.
//            B's re-read of an element has reuse distance S_x plus the tmp written before it, so
//            the fraction f_B = clamp((L - S_x) / S_t, 0, 1) of it hits. C's read of tmp has reuse
//            distance S_x + S_t (the rest of x and tmp from B, tmp and y before it from C): it
//            hits entirely when x and tmp together fit (8MN bytes in fp32), else not at all.
//            DRAM passes over an x-sized buffer: 5 far above L2 (ratio 2.5 to fused), 3 when
//            8MN <= L (ratio 1.5), and between L/2 < 4MN <= L a ramp from 4 (ratio 2.0) to 5:
//            B's re-read is lost row by row as the tmp it writes pushes x out.
//   online   one pass reads a row (running max and sum), a second pass re-reads it and writes y.
//            With R rows in flight at once (each block streaming its own row), a re-read at
//            position p of a row has reuse distance R x (row of x) + R x (p elements of y): the
//            fraction f = clamp((L - R r_x) / (R r_y), 0, 1) of the second read hits. 2 passes
//            when the rows in flight hold their x and y rows in L2 (R (r_x + r_y) <= L), 3 when
//            their x rows alone overflow it (R r_x >= L).
//   two_read the same two reads, but the whole first pass ends before the second starts (a
//            grid-wide barrier, or a row split across blocks that all finish pass 1 first): the
//            online rule with every row in flight (R = M by default).
// The M-element fp32 vectors (max, sum) are counted in the bytes (they add 2/N to the unfused
// ratio far above L2); they are too small to matter in the reuse distances and are left out there.
// A re-read that L1 could serve is not modelled: l2_bytes counts every load as an L2 request.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/problem.hpp"
#include "core/traffic.hpp"

namespace smr {

// The ceilings a roofline is drawn against. Either the datasheet values (no GPU needed) or the
// ones measured in the same run by the harness (issue 4).
struct Ceilings {
  std::string source = "datasheet";  // "datasheet" or "measured"
  std::string device = "NVIDIA H200";
  double dram_GBps = 4800.0;       // sustained DRAM bandwidth, bytes read + written, 1e9 B/s
  double peak_dram_GBps = 4800.0;  // from memory clock x bus width (datasheet-style)
  double l2_GBps = 0.0;            // 0: unknown (left out of results.json, and of the bound)
  double fp32_GFLOPs = 66900.0;    // FP32 FMA throughput counting an FMA as 2 FLOP, 1e9 FLOP/s
  std::int64_t l2_bytes = 62914560;  // 60 MiB on the H200
  int sm_count = 132;
};

Ceilings datasheet_h200();

// Bytes of 32-byte DRAM sectors a row-major buffer touches: its rows are `cols` elements of
// `elem_bytes` bytes every `ld` elements, starting at a 32-byte aligned address. Sectors shared
// by two neighbouring rows count once. Dense (ld == cols): rows x cols x elem_bytes, rounded up
// to a whole sector.
inline constexpr int kSectorBytes = 32;
double touched_bytes(std::int64_t rows, std::int64_t cols, std::int64_t ld, int elem_bytes);
double x_bytes(const Problem& p);  // touched_bytes of the input
double y_bytes(const Problem& p);  // touched_bytes of the output

// Algorithmic FLOPs per element: subtract the max, exp, divide by the sum. (The max and the sum
// themselves are not counted: the roofline convention the claims use.)
inline constexpr double kFlopsPerElement = 3.0;

struct ModelPoint {
  TrafficModel traffic = TrafficModel::fused;  // the model that was applied
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double dram_bytes = 0;          // read + write
  double l2_bytes = 0;            // bytes the SMs move through L2 (every load and store, hits included)
  double passes = 0;              // DRAM bytes over one x-sized buffer, the fp32 vectors left out
  double flops = 0;               // algorithmic: 3 per element (subtract, exp, divide); NaN: not modelled
  double intensity = 0;           // flops / dram_bytes, FLOP/byte; NaN where not modelled
  double bound_time_s = 0;        // max(dram_bytes / dram_GBps, l2_bytes / l2_GBps, flops / fp32_GFLOPs)
  double bound_GBps = 0;          // min_bytes() / bound_time_s: the effective bandwidth the model allows
  std::string bound;              // "memory" (DRAM), "l2" or "compute"
  std::string note;               // which L2 regime applied, in words
};

// `rows_in_flight`: rows resident on the card at once (online model's L2 test); 0 = sm_count for
// online, M for two_read; clamped to M. Throws std::invalid_argument for M or N <= 0 or ld < N.
ModelPoint predict(TrafficModel model, const Problem& p, const Ceilings& c,
                   std::int64_t rows_in_flight = 0);

// Throws std::invalid_argument naming the field when the ceilings cannot draw a roofline (a DRAM
// or FP32 ceiling that is not > 0, a negative L2 size); predict() checks them so.
void check_ceilings(const Ceilings& c);

// Predicted DRAM bytes unfused / fused for the same problem (2.5 far above L2, less below it).
double predicted_traffic_ratio(const Problem& p, const Ceilings& c);

}  // namespace smr
