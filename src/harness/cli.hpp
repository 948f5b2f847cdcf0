// The `softmax-bench` command line (CLI11): run, model, list, report, ceilings.
// docs/cli.md documents every subcommand, option and exit code.
#pragma once

namespace smr {

// Exit codes of softmax-bench.
namespace exit_code {
inline constexpr int ok = 0;
inline constexpr int runtime_failure = 1;  // a CUDA error, an unwritable directory ...
inline constexpr int bad_input = 2;        // a bad config, flag or results file; nothing was run
inline constexpr int needs_gpu = 3;        // the subcommand needs a CUDA GPU and there is none
inline constexpr int interrupted = 130;    // Ctrl-C during `run`: everything so far is saved
}  // namespace exit_code

// Parses argv, runs the subcommand, returns the process exit code. Never throws.
int run_cli(int argc, char** argv);

}  // namespace smr
