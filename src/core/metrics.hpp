// The hardware metrics the project names, spelled once: the set the harness collects through the
// CUPTI Range Profiler (src/harness/counters_attribution.cpp's default_counter_metrics), the keys
// results.json's `counters` carry (src/roofline/claims.cpp, plots.cpp), and what the scripts ask
// Nsight Compute for. The scripts read this file too (scripts/metrics.py parses its `inline
// constexpr std::string_view kName = "...";` definitions): keep that form.
// tests/scripts/test_metric_names.py fails when a source or script spells one of these strings
// anywhere else.
#pragma once

#include <string_view>

namespace smr::metric {

// ---- The harness's counter set (default_counter_metrics(), in this order), Nsight Compute's too
inline constexpr std::string_view kDramRead = "dram__bytes_read.sum";
inline constexpr std::string_view kDramWrite = "dram__bytes_write.sum";
// L1 <-> L2 traffic: sectors requested by the SMs' L1TEX units. Not lts__t_bytes.sum,
// which on Hopper also counts the traffic between the two L2 partitions (~1.5x on the H200).
inline constexpr std::string_view kL2SectorsFromL1 = "lts__t_sectors_srcunit_tex.sum";
inline constexpr std::string_view kL1Bytes = "l1tex__t_bytes.sum";
inline constexpr std::string_view kFaddThreadInst =
    "smsp__sass_thread_inst_executed_op_fadd_pred_on.sum";
inline constexpr std::string_view kFmulThreadInst =
    "smsp__sass_thread_inst_executed_op_fmul_pred_on.sum";
inline constexpr std::string_view kFfmaThreadInst =
    "smsp__sass_thread_inst_executed_op_ffma_pred_on.sum";
// Warp-level instructions on the special-function pipe: MUFU.EX2, MUFU.RCP, conversions.
inline constexpr std::string_view kXuWarpInst = "smsp__inst_executed_pipe_xu.sum";
inline constexpr std::string_view kGpuTime = "gpu__time_duration.sum";

// ---- Nsight Compute only: scripts/ncu-stalls' stall breakdown of the production kernels
inline constexpr std::string_view kNcuStallReasons =
    "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\\.ratio";
inline constexpr std::string_view kNcuL2HitRate = "lts__t_sector_hit_rate.pct";
inline constexpr std::string_view kNcuWarpInst = "smsp__inst_executed.sum";
inline constexpr std::string_view kNcuWarpsActive = "sm__warps_active.avg.per_cycle_active";
inline constexpr std::string_view kNcuLocalLoads = "l1tex__t_requests_pipe_lsu_mem_local_op_ld.sum";

}  // namespace smr::metric
