#pragma once
// The command-line interface: subcommands, the one top-level catch, and exit codes.
namespace abvm::cli {

// Parses argv, runs the subcommand, maps errors to exit codes (see core/error.hpp).
int main(int argc, char** argv);

}  // namespace abvm::cli
