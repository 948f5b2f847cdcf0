// The two claims the lab tests (and two more), evaluated from a run's records. Pure host code.
//
// results.json `claims` is an array; each element:
//   { "id": "fused_intensity" | "traffic_ratio" | "memory_bound" | "online_second_read",
//     "title": "...", "statement": "what is claimed, in one sentence",
//     "verdict": "holds" | "does not hold" | "partly" | "not measured",
//     "summary": "one sentence with the numbers behind the verdict",
//     "columns": ["M", "N", ...],            // display order of the row keys
//     "rows": [ { "M": ..., "N": ..., <number or string per column>, "verdict": "..." }, ... ] }
// Values that were not measured are left out of a row, never 0.
#pragma once

#include <nlohmann/json.hpp>

#include "roofline/results.hpp"

namespace smr {

nlohmann::json evaluate_claims(const RunResults& run);

}  // namespace smr
