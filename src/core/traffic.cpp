#include "core/traffic.hpp"

namespace smr {

std::string_view to_string(TrafficModel m) {
  switch (m) {
    case TrafficModel::fused: return "fused";
    case TrafficModel::unfused: return "unfused";
    case TrafficModel::online: return "online";
    case TrafficModel::copy: return "copy";
    case TrafficModel::compute: return "compute";
    case TrafficModel::two_read: return "two_read";
  }
  return "?";
}

std::optional<TrafficModel> parse_traffic_model(std::string_view s) {
  for (TrafficModel m : {TrafficModel::fused, TrafficModel::unfused, TrafficModel::online,
                         TrafficModel::copy, TrafficModel::compute, TrafficModel::two_read})
    if (to_string(m) == s) return m;
  return std::nullopt;
}

}  // namespace smr
