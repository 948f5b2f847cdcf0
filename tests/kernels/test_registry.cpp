// Host-only checks of the kernel registry: they run on a machine without a GPU.
#include <set>
#include <string>

#include "catch.hpp"
#include "kernels/lab/fused_row.hpp"
#include "kernels/registry.hpp"
#include "roofline/model.hpp"

using namespace smr;

namespace {
const DeviceLimits kH200{};  // the defaults describe the H200
}

TEST_CASE("every entry has a unique name, a one-line description, and a launcher or a reason",
          "[registry]") {
  std::set<std::string> names;
  REQUIRE(!kernels().empty());
  for (const KernelInfo& k : kernels()) {
    INFO("entry " << k.name);
    CHECK(!k.name.empty());
    CHECK(k.name.find(' ') == std::string::npos);
    CHECK(names.insert(k.name).second);  // unique
    CHECK(!k.description.empty());
    CHECK(k.description.find('\n') == std::string::npos);
    CHECK(!k.dtypes.empty());
    if (!k.launch) {
      // Not built (cuDNN absent) or not written yet: the entry must say why, for any problem.
      REQUIRE(k.unsupported != nullptr);
      const auto why = k.unsupported(dense(4, 1024), kH200);
      REQUIRE(why.has_value());
      CHECK(!why->empty());
    }
    CHECK(find_kernel(k.name) == &k);
  }
  CHECK(find_kernel("no-such-kernel") == nullptr);
}

TEST_CASE("the lab kernels, the peers and the ceilings are registered as what they are",
          "[registry]") {
  struct Expect {
    const char* name;
    Role role;
    TrafficModel traffic;
  };
  for (const Expect& e : {Expect{"unfused", Role::lab, TrafficModel::unfused},
                          Expect{"fused", Role::lab, TrafficModel::fused},
                          Expect{"online", Role::lab, TrafficModel::online},
                          Expect{"cudnn", Role::library, TrafficModel::fused},
                          Expect{"copy", Role::ceiling, TrafficModel::copy},
                          Expect{"fma", Role::ceiling, TrafficModel::compute}}) {
    INFO("entry " << e.name);
    const KernelInfo* k = find_kernel(e.name);
    REQUIRE(k != nullptr);
    CHECK(k->role == e.role);
    CHECK(k->traffic == e.traffic);
    CHECK(k->is_softmax() == (e.role != Role::ceiling));
    if (e.role == Role::lab) {
      CHECK(k->launch != nullptr);  // always built
      CHECK(k->dtypes == std::vector<DType>{DType::f32});
      CHECK(!why_unsupported(*k, dense(1, 1), kH200));
      CHECK(!why_unsupported(*k, Problem{131, 1025, 1026, 1027, DType::f32}, kH200));
      const auto bf16 = why_unsupported(*k, dense(8, 64, DType::bf16), kH200);
      REQUIRE(bf16);
      CHECK(bf16->find("bf16") != std::string::npos);
    }
  }
  // `all` in a config: every softmax, never a ceiling.
  for (const std::string& n : default_kernel_names()) CHECK(find_kernel(n)->is_softmax());
  // The names only a lab build registers: a lab kernel there, absent from this build otherwise.
  REQUIRE(!lab_build_kernel_names().empty());
  for (const std::string_view n : lab_build_kernel_names()) {
    INFO("lab-build entry " << n);
    const KernelInfo* k = find_kernel(n);
    if (k) CHECK(k->role == Role::lab);
  }
  // The names only the full build registers: production there, absent from a lab build.
  REQUIRE(!full_build_kernel_names().empty());
  for (const std::string_view n : full_build_kernel_names()) {
    INFO("full-build entry " << n);
    const KernelInfo* k = find_kernel(n);
    if (k) CHECK(k->role == Role::production);
  }
}

TEST_CASE("cudnn is held to the passes its counters measured, not to the fused model",
          "[registry]") {
  // results/h200/default/results.json: 2 passes up to N = 32768, 5 (unfused) from N = 65536.
  const KernelInfo* k = find_kernel("cudnn");
  REQUIRE(k != nullptr);
  REQUIRE(k->traffic_for != nullptr);
  CHECK(traffic_model(*k, dense(4096, 32768), kH200) == TrafficModel::fused);
  CHECK(traffic_model(*k, dense(1 << 20, 128), kH200) == TrafficModel::fused);
  CHECK(traffic_model(*k, dense(2048, 65536), kH200) == TrafficModel::unfused);
  CHECK(traffic_model(*k, dense(32, 1 << 22), kH200) == TrafficModel::unfused);
  // Far above L2 the model then says 5 passes, as the counters do.
  const ModelPoint m = predict(traffic_model(*k, dense(32, 1 << 22), kH200), dense(32, 1 << 22),
                               datasheet_h200());
  CHECK(m.passes > 4.9);
  CHECK(m.passes < 5.1);
}

TEST_CASE("fused takes N up to its register cap and says why past it", "[registry]") {
  const KernelInfo* k = find_kernel("fused");
  REQUIRE(k != nullptr);
  for (const std::int64_t n : {std::int64_t{1}, std::int64_t{127}, std::int64_t{4097},
                               kFusedMaxN - 1, kFusedMaxN}) {
    INFO("N = " << n);
    CHECK(!why_unsupported(*k, dense(64, n), kH200));
  }
  for (const std::int64_t n : {kFusedMaxN + 1, 2 * kFusedMaxN, std::int64_t{1} << 22}) {
    INFO("N = " << n);
    const auto why = why_unsupported(*k, dense(64, n), kH200);
    REQUIRE(why);
    CHECK(why->find(std::to_string(n)) != std::string::npos);           // names the N
    CHECK(why->find(std::to_string(kFusedMaxN)) != std::string::npos);  // and the cap
  }
  CHECK(kFusedMaxN == 32768);
}

TEST_CASE("preconditions give one-line reasons", "[registry]") {
  for (const char* name : {"unfused", "fused", "online", "copy", "fma"}) {
    INFO("entry " << name);
    const KernelInfo* k = find_kernel(name);
    REQUIRE(k != nullptr);
    for (const Problem& bad : {Problem{0, 10, 10, 10, DType::f32}, Problem{4, 0, 0, 0, DType::f32},
                               Problem{4, 10, 9, 10, DType::f32}, Problem{4, 10, 10, 3, DType::f32}}) {
      const auto why = why_unsupported(*k, bad, kH200);
      REQUIRE(why);
      CHECK(why->find("invalid problem") != std::string::npos);
      CHECK(why->find('\n') == std::string::npos);
    }
  }
  // One block per row: the grid's 2^31 - 1 blocks.
  for (const char* name : {"unfused", "fused", "online"}) {
    const auto why = why_unsupported(*find_kernel(name), dense(std::int64_t{1} << 31, 1), kH200);
    REQUIRE(why);
    CHECK(why->find("grid") != std::string::npos);
  }
  // The copy ceiling wants dense rows and says so.
  const auto copy_why = why_unsupported(*find_kernel("copy"), Problem{4, 10, 12, 10, DType::f32}, kH200);
  REQUIRE(copy_why);
  CHECK(copy_why->find("dense") != std::string::npos);
  CHECK(!why_unsupported(*find_kernel("copy"), dense(4, 10, DType::bf16), kH200));
}

TEST_CASE("unfused needs its intermediate, and says so when the card cannot hold it",
          "[registry]") {
  const KernelInfo* k = find_kernel("unfused");
  REQUIRE(k != nullptr);
  REQUIRE(k->workspace_bytes != nullptr);
  const Problem p = dense(131, 1000);
  // The (M, N) intermediate, the M row maxima and the M row sums.
  CHECK(k->workspace_bytes(p) == static_cast<std::size_t>(131 * 1000 + 2 * 131) * sizeof(float));
  DeviceLimits small = kH200;
  small.global_bytes = 1'000'000;
  const auto why = why_unsupported(*k, dense(1000, 1000), small);
  REQUIRE(why);
  CHECK(why->find("intermediate") != std::string::npos);
  for (const char* name : {"fused", "online"}) {
    const KernelInfo* other = find_kernel(name);
    CHECK((other->workspace_bytes == nullptr || other->workspace_bytes(p) == 0));
  }
}

TEST_CASE("online tells the model how many rows are resident at once", "[registry]") {
  const KernelInfo* k = find_kernel("online");
  REQUIRE(k != nullptr);
  REQUIRE(k->rows_in_flight != nullptr);
  // Never more rows than the problem has; at least one per SM when it has enough.
  CHECK(k->rows_in_flight(dense(7, 1 << 20), kH200) == 7);
  const std::int64_t long_rows = k->rows_in_flight(dense(100000, 1 << 20), kH200);
  CHECK(long_rows >= kH200.sm_count);
  CHECK(long_rows <= 32 * kH200.sm_count);
  // Short rows use smaller blocks: at least as many of them fit.
  CHECK(k->rows_in_flight(dense(100000, 128), kH200) >= long_rows);
  DeviceLimits half = kH200;
  half.sm_count = 66;
  CHECK(k->rows_in_flight(dense(100000, 1 << 20), half) * 2 == long_rows);
}

TEST_CASE("cudnn is not offered padded rows, which cuDNN 9.14 was seen to mishandle", "[registry]") {
  const KernelInfo* k = find_kernel("cudnn");
  REQUIRE(k != nullptr);
  const DeviceLimits d;
  const auto padded = why_unsupported(*k, Problem{37, 33, 34, 34, DType::f32}, d);
  REQUIRE(padded.has_value());
  const bool built = k->launch != nullptr;
  if (built) {
    CHECK(padded->find("padded row strides") != std::string::npos);
    CHECK_FALSE(why_unsupported(*k, dense(37, 33), d).has_value());
  }
}
