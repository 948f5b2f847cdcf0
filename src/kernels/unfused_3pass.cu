// placeholder: being written
#include "kernels/entries.hpp"
namespace smr::entries {
KernelInfo unfused_3pass() {
  KernelInfo k;
  k.name = "unfused";
  k.description = "(not written yet)";
  k.role = Role::lab;
  k.traffic = TrafficModel::unfused;
  k.unsupported = [](const Problem&, const DeviceLimits&) -> std::optional<std::string> { return "not written yet"; };
  return k;
}
}  // namespace smr::entries
