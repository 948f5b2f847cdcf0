// softmax-bench: everything is in harness/cli.cpp; `softmax-bench --help` lists the subcommands.
#include "harness/cli.hpp"

int main(int argc, char** argv) { return smr::run_cli(argc, argv); }
