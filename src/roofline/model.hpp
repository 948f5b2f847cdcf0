// The analytic roofline model: what each design should move through DRAM and compute, and the
// time the roofline allows for it. Pure host code; `softmax-bench model` prints it with no GPU.
#pragma once

#include <cstdint>
#include <string>

#include "roofline/problem.hpp"

namespace smr {

// The ceilings a roofline is drawn against. Either the datasheet values (no GPU needed) or the
// ones measured in the same run by the harness (issue 4).
struct Ceilings {
  std::string source = "datasheet";  // "datasheet" or "measured"
  std::string device = "NVIDIA H200";
  double dram_GBps = 4800.0;       // sustained DRAM bandwidth, bytes read + written, 1e9 B/s
  double peak_dram_GBps = 4800.0;  // from memory clock x bus width (datasheet-style)
  double l2_GBps = 0.0;            // 0: unknown
  double fp32_GFLOPs = 66900.0;    // FP32 FMA throughput counting an FMA as 2 FLOP, 1e9 FLOP/s
  std::int64_t l2_bytes = 62914560;  // 60 MiB on the H200
  int sm_count = 132;
};

Ceilings datasheet_h200();

// How a kernel moves data: each registry entry names one of these.
enum class TrafficModel {
  fused,     // read x once, write y once: 2 passes
  unfused,   // A: read x -> max; B: read x, write tmp; C: read tmp, write y: 5 passes
  online,    // pass 1 reads x (running max/sum), pass 2 reads x again and writes y: 3 passes,
             // 2 when the rows in flight fit in L2 so the second read hits
  copy,      // the copy ceiling: read once, write once
  compute,   // the FMA ceiling: no DRAM traffic to speak of
};

struct ModelPoint {
  double dram_read_bytes = 0;
  double dram_write_bytes = 0;
  double dram_bytes = 0;          // read + write
  double flops = 0;               // algorithmic: 3 per element (subtract, exp, divide)
  double intensity = 0;           // flops / dram_bytes, FLOP/byte
  double bound_time_s = 0;        // max(bytes / dram_GBps, flops / fp32_GFLOPs)
  double bound_GBps = 0;          // min_bytes() / bound_time_s: the effective bandwidth the model allows
  std::string bound;              // "memory" or "compute"
  std::string note;               // which L2 regime applied, in words
};

// `rows_in_flight`: rows resident on the card at once (online model's L2 test); 0 = sm_count.
ModelPoint predict(TrafficModel model, const Problem& p, const Ceilings& c,
                   std::int64_t rows_in_flight = 0);

// Predicted DRAM bytes unfused / fused for the same problem (2.5 far above L2, less below it).
double predicted_traffic_ratio(const Problem& p, const Ceilings& c);

std::string_view to_string(TrafficModel m);

}  // namespace smr
