// The two claims the lab tests (and three more), evaluated from a run's records. Pure host code.
//
// results.json `claims` is an array of five objects, always in this order:
//   { "id": "fused_intensity" | "traffic_ratio" | "memory_bound" | "online_second_read" |
//           "model_traffic",
//     "title": "...", "statement": "what is claimed, in one sentence",
//     "criterion": "the test each row passes or fails, with its tolerance",
//     "verdict": "holds" | "does not hold" | "partly" | "not measured",
//     "summary": "one sentence with the numbers behind the verdict (or why it was not measured)",
//     "explanation": "...",                  // fused_intensity only, when counters were read
//     "columns": ["dtype", "M", "N", ...],   // display order of the row keys
//     "rows": [ { "dtype": "fp32", "M": ..., "N": ..., <number or string per column>,
//                 "verdict": "..." }, ... ] }
// Values that were not measured are left out of a row, never 0. Numbers are not rounded: the
// report formats them. Bytes are bytes, times seconds, rates GB/s (1e9 B/s) and GFLOP/s.
//
// Overall verdict: over the rows that were measured, "holds" when every one holds, "does not hold"
// when none does, "partly" otherwise; "not measured" when no row could be measured. A row is
// "not measured" when the counters it needs are absent (counters off, or CUPTI could not read them:
// the record's counters_reason says why); what time alone can say (the time ratio of
// traffic_ratio, the FLOP/s of memory_bound) is still given in the row.
//
// The rows, per claim (one per shape, status "ok" records only):
//   fused_intensity     the fused kernel: 3 FLOP per element over its measured DRAM bytes against
//                       the model's intensity (0.375 FLOP/B for dense fp32), within 2%; beside it the
//                       executed intensity (FADD + FMUL + 2 FFMA over the same bytes) and the FP32 and
//                       XU instructions per element.
//   traffic_ratio       unfused and fused at the same shape: measured DRAM bytes unfused / fused,
//                       2.5 within 5% where x is at least 4x the L2, the model's ratio within 10%
//                       elsewhere; and the same ratio for the median times.
//   memory_bound        each lab kernel (fused, unfused, online): achieved FLOP/s (the 3 algorithmic
//                       FLOP per element over the median time) under 5% of the FP32 ceiling while the
//                       measured DRAM bandwidth is at least 80% of the DRAM ceiling; the executed
//                       FLOP/s (what the FP32 units ran, several times the algorithm's) beside it.
//   online_second_read  the online kernel: measured DRAM reads of x (1 = second read from L2,
//                       2 = from DRAM) against the model's, within 0.2 of a read.
//   model_traffic       every record with a traffic model and counted bytes, any kernel, dtype and
//                       shape (the production families, cuDNN held to its measured passes, the
//                       peers): measured DRAM bytes against its model's within 5% where x is at
//                       least 4x the L2; nearer L2 the row says "not decidable here" (L2 residency
//                       and write-back timing decide the count there); a peer's row says "peer: no
//                       model of its own" (its bytes are shown against the fused floor). Such rows
//                       do not count toward the overall verdict.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "roofline/results.hpp"

namespace smr {

// Registry names of the lab kernels the claims are about.
struct ClaimKernels {
  std::string fused = "fused";
  std::string unfused = "unfused";
  std::string online = "online";
};

inline constexpr double kIntensityTolerance = 0.02;       // fused_intensity: relative
inline constexpr double kFarAboveL2 = 4.0;                // traffic_ratio: x bytes >= 4 x L2
inline constexpr double kNominalTrafficRatio = 2.5;       // 5 passes against 2
inline constexpr double kTrafficTolerance = 0.05;         // against 2.5, far above L2: relative
inline constexpr double kTrafficModelTolerance = 0.10;    // against the model elsewhere: relative
inline constexpr double kModelTrafficTolerance = 0.05;    // model_traffic, far above L2: relative
inline constexpr double kMemoryBoundMaxFlopFraction = 0.05;    // of the FP32 ceiling
inline constexpr double kMemoryBoundMinDramFraction = 0.80;    // of the DRAM ceiling
inline constexpr double kSecondReadTolerance = 0.2;       // reads of x, absolute

nlohmann::json evaluate_claims(const RunResults& run, const ClaimKernels& names = {});

}  // namespace smr
