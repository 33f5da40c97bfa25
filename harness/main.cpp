// abvm: a thin main over the library; cli/ owns parsing, the one catch and the exit codes.
#include "cli/cli.hpp"

int main(int argc, char** argv) { return abvm::cli::main(argc, argv); }
