#pragma once
// The scratch disk the guests write to. Either abvm's own raw image in the results directory
// (created here, sparse or preallocated) or a file the user named, re-checked right before use
// with the same rules the config loader applies (a config can be loaded long before it runs,
// and the file can change in between).
#include <cstdint>
#include <filesystem>

#include "config/experiment.hpp"

namespace abvm {

// Creates ResultsDir(results_dir).scratch_disk(slot) of disk.size_bytes when disk.path is empty (an existing one
// from an interrupted run is reused at that size), else checks disk.path: not a block device
// (also through a symlink), not a directory, not an existing non-empty file unless
// disk.overwrite, and creates it (sparse) when missing. `first_use` is false on --resume, when
// the file being non-empty is our own doing. Returns the path to give the guest.
// Throws Error (unsafe path) or InfraError (cannot create).
std::filesystem::path prepare_scratch_disk(const DiskSettings& disk, const std::filesystem::path& results_dir,
                                           bool first_use, int slot = 0);

}  // namespace abvm
