// `softmax-bench plan`: what the production softmax runs for each shape, on the GPU at hand or on a
// named device profile (kernels/device_profiles.hpp); and the device line `list` prints.
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace smr {

struct PlanArgs {
  std::vector<std::string> shapes;            // "MxN"
  std::vector<std::string> dtypes{"fp32"};
  std::string device_profile;                 // empty: the GPU at hand
};

// Registers the `plan` subcommand on app, its options bound to a.
CLI::App* add_plan_command(CLI::App& app, PlanArgs& a);

// Prints each shape's plan (summary and the dispatch's reason). Returns the exit code; bad input
// (an unknown profile or dtype, a malformed shape) is std::invalid_argument, one line.
int cmd_plan(const PlanArgs& a);

// For `list`: the GPU at hand and the production families it runs ("" without a GPU).
std::string device_families_text();

}  // namespace smr
