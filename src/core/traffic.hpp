// How a kernel moves data through DRAM, the name every registry entry gives its traffic: the
// vocabulary the kernels and the roofline model (roofline/model.hpp) share. Pure host code.
#pragma once

#include <optional>
#include <string_view>

namespace smr {

// How a kernel moves data: each registry entry names one of these. New values go at the end.
enum class TrafficModel {
  fused,     // read x once, write y once: 2 passes
  unfused,   // A: read x -> max; B: read x, write tmp; C: read tmp, write y: 5 passes,
             // 3 when x and tmp fit in L2 together, a ramp from 4 to 5 between
  online,    // pass 1 reads x (running max/sum), pass 2 reads x again and writes y: 3 passes,
             // 2 when the rows in flight fit in L2 so the second read hits
  copy,      // the copy ceiling: read once, write once, no FLOPs
  compute,   // the FMA ceiling: no DRAM traffic to speak of; its FLOPs are its own (not modelled)
  two_read,  // rows too long for chip: read x, then (after every row's first read) read x again
             // and write y: 3 passes, 2 when all of x and y fit in L2
};

std::string_view to_string(TrafficModel m);                     // "fused", "unfused", ...
std::optional<TrafficModel> parse_traffic_model(std::string_view s);  // inverse of to_string

}  // namespace smr
