// placeholder: being written
#include "kernels/entries.hpp"
namespace smr::entries {
KernelInfo cudnn() {
  KernelInfo k;
  k.name = "cudnn";
  k.description = "(not written yet)";
  k.role = Role::library;
  k.traffic = TrafficModel::fused;
  k.unsupported = [](const Problem&, const DeviceLimits&) -> std::optional<std::string> { return "not written yet"; };
  return k;
}
}  // namespace smr::entries
