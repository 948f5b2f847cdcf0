// The staged copy (staged_copy.cu), an experiment beside the copy ceiling: host interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <cuda_runtime_api.h>

namespace smr::experiments {

// The staged copy (staged_copy.cu): the same bytes moved through shared memory the way the slice
// kernels move a row -- a persistent grid of blocks_per_sm 512-thread blocks per SM, stages of
// stage_bytes copied in by TMA (or the threads' cp.async: thread_copy) in `chunks` chunks into
// `buffers` buffers per block, optionally read once more from shared memory (read_pass, the
// softmax's statistics), optionally with an exponential per element in each pass and a pause per
// stage (the softmax's exchange), then stored chunk by chunk (by the threads, or by the copy
// engine: bulk_store), each freed chunk refilled with the block's stage `buffers` ahead. An
// experiment timed beside the copy ceiling (docs/performance.md), not a ceiling. 16-byte aligned
// buffers, a multiple of 16 bytes; throws std::invalid_argument for a variant that is not built or
// does not fit on an SM.
struct StagedCopy {
  int buffers = 2;                  // 1, 2 or 3 (chunks 4); 2 with chunks 8
  int chunks = 4;
  std::int64_t stage_bytes = 95328;  // a multiple of 16
  int blocks_per_sm = 1;
  bool read_pass = false;
  bool thread_copy = false;
  bool exp_work = false;   // an exponential per element in each pass (its result not stored)
  double delay_us = 0.0;   // a block-wide pause per stage, before its stores
  bool bulk_store = false;  // the copy engine stores each chunk (cp.async.bulk shared -> global);
                            // with exp_work the threads first rewrite it in shared memory
};
std::vector<StagedCopy> staged_copy_variants();
std::string to_string(const StagedCopy& v);
void staged_copy_bytes(const void* src, void* dst, std::size_t bytes, cudaStream_t stream,
                       const StagedCopy& v);

}  // namespace smr::experiments
