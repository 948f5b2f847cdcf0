// placeholder: being written
#include "kernels/entries.hpp"
namespace smr::entries {
KernelInfo online() {
  KernelInfo k;
  k.name = "online";
  k.description = "(not written yet)";
  k.role = Role::lab;
  k.traffic = TrafficModel::online;
  k.unsupported = [](const Problem&, const DeviceLimits&) -> std::optional<std::string> { return "not written yet"; };
  return k;
}
}  // namespace smr::entries
