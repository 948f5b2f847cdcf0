// Host tests of the device profiles' restriction (device_profiles.hpp): a real card's limits
// capped to a smaller card's features, and SMR_DEVICE_PROFILE read from the environment.
#include <cstdlib>
#include <stdexcept>
#include <string>

#include "catch.hpp"
#include "kernels/device_profiles.hpp"

namespace {

using namespace smr;

const DeviceLimits& profile(const char* name) {
  const DeviceProfile* p = find_device_profile(name);
  REQUIRE(p != nullptr);
  return p->limits;
}

// Sets SMR_DEVICE_PROFILE for one scope, then restores what was there.
class ProfileEnv {
 public:
  explicit ProfileEnv(const char* value) {
    if (const char* was = std::getenv(kDeviceProfileEnv)) saved_ = was, had_ = true;
    if (value)
      ::setenv(kDeviceProfileEnv, value, 1);
    else
      ::unsetenv(kDeviceProfileEnv);
  }
  ~ProfileEnv() {
    if (had_)
      ::setenv(kDeviceProfileEnv, saved_.c_str(), 1);
    else
      ::unsetenv(kDeviceProfileEnv);
  }

 private:
  std::string saved_;
  bool had_ = false;
};

}  // namespace

TEST_CASE("an H100 restricted to the A100 or T4 profile has their features, its own sizes",
          "[profiles]") {
  const DeviceLimits& h100 = profile("h100");
  for (const char* name : {"a100", "t4", "l4"}) {
    INFO("profile " << name);
    const DeviceLimits& small = profile(name);
    const DeviceLimits d = restrict_to_profile(h100, small);
    CHECK(d.compute_capability() == small.compute_capability());
    CHECK_FALSE(d.has_clusters());
    CHECK(d.max_cluster == 1);
    CHECK(d.shared_bytes_per_block == small.shared_bytes_per_block);
    CHECK(d.shared_bytes_per_sm == small.shared_bytes_per_sm);
    // The card the kernels run on: its SMs, L2, memory and bandwidth.
    CHECK(d.sm_count == h100.sm_count);
    CHECK(d.l2_bytes == h100.l2_bytes);
    CHECK(d.global_bytes == h100.global_bytes);
    CHECK(d.dram_GBps == h100.dram_GBps);
  }
  // Never more than the card has: a T4 "restricted" to the H200 stays a T4.
  const DeviceLimits t4 = restrict_to_profile(profile("t4"), profile("h200"));
  CHECK(t4.compute_capability() == 75);
  CHECK_FALSE(t4.has_clusters());
  CHECK(t4.shared_bytes_per_block == profile("t4").shared_bytes_per_block);
  // The same card: no change.
  const DeviceLimits same = restrict_to_profile(h100, h100);
  CHECK(same.has_clusters());
  CHECK(same.max_cluster == h100.max_cluster);
}

TEST_CASE("SMR_DEVICE_PROFILE: unset or empty is no restriction, a name its profile, any other "
          "name an error naming the variable and the profiles",
          "[profiles]") {
  {
    const ProfileEnv env(nullptr);
    CHECK(restricting_profile() == nullptr);
  }
  {
    const ProfileEnv env("");
    CHECK(restricting_profile() == nullptr);
  }
  {
    const ProfileEnv env("a100");
    const DeviceProfile* p = restricting_profile();
    REQUIRE(p != nullptr);
    CHECK(p->name == "a100");
  }
  {
    const ProfileEnv env("A100");  // as a card is usually written
    const DeviceProfile* p = restricting_profile();
    REQUIRE(p != nullptr);
    CHECK(p->name == "a100");
  }
  {
    const ProfileEnv env("v100");
    try {
      restricting_profile();
      FAIL("no error for an unknown profile");
    } catch (const std::invalid_argument& e) {
      const std::string what = e.what();
      CHECK(what.find("SMR_DEVICE_PROFILE=v100") != std::string::npos);
      CHECK(what.find("t4, a100") != std::string::npos);
    }
  }
}
