// placeholder: being written
#include "kernels/entries.hpp"
namespace smr::entries {
KernelInfo fused_row() {
  KernelInfo k;
  k.name = "fused";
  k.description = "(not written yet)";
  k.role = Role::lab;
  k.traffic = TrafficModel::fused;
  k.unsupported = [](const Problem&, const DeviceLimits&) -> std::optional<std::string> { return "not written yet"; };
  return k;
}
}  // namespace smr::entries
