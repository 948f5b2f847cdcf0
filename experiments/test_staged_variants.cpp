// Host checks of the experiments (no GPU): the staged copy's variants.
#include <cstddef>
#include <set>
#include <string>

#include "catch.hpp"
#include "experiments/staged_copy.hpp"
#include "kernels/registry.hpp"

namespace {

using namespace smr;

const DeviceLimits kH200{};  // the defaults describe the H200

}  // namespace

TEST_CASE("the staged copy's variants are named apart and fit an H200's shared memory",
          "[experiments]") {
  // The [.staged] table prints one line a variant, by its name: two variants with one name could
  // not be told apart there. And a variant's buffers (blocks_per_sm blocks of them on an SM) must
  // fit in what an SM holds, or its launch is refused on the GPU.
  constexpr std::size_t kSmemPerSm = 233472;  // 228 KB; a block opts in to 227 KB (kH200)
  std::set<std::string> names;
  std::size_t bulk = 0;
  for (const experiments::StagedCopy& v : experiments::staged_copy_variants()) {
    const std::string name = experiments::to_string(v);
    INFO(name);
    CHECK(names.insert(name).second);
    const auto block_bytes = static_cast<std::size_t>(v.buffers * v.stage_bytes);
    CHECK(v.stage_bytes % 16 == 0);
    CHECK(block_bytes <= kH200.shared_bytes_per_block);
    CHECK(block_bytes * static_cast<std::size_t>(v.blocks_per_sm) <= kSmemPerSm);
    CHECK((name.find("bulk stores") != std::string::npos) == v.bulk_store);
    bulk += v.bulk_store ? 1 : 0;
  }
  CHECK(bulk >= 3);  // stores only, with the statistics' pass, with the softmax's exponentials
}
