#pragma once
// The scratch disk the guests write to. Either abvm's own raw image in the results directory
// (created here, sparse or preallocated) or a file the user named, re-checked right before use
// with the same rules the config loader applies (a config can be loaded long before it runs,
// and the file can change in between).
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>

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

// A sparse scratch image grows as the guests write. When the filesystem holding one of this run's
// images (disk.path, or the results directory's scratch*.raw) has less space available than that
// image still lacks to reach its full size, the guests' write errors may be the host's disk filling
// up rather than the workload: this says so, naming the file, what is free and what to do.
// nullopt when every existing image could grow to its size (or none exists on this machine).
std::optional<std::string> scratch_space_shortfall(const DiskSettings& disk,
                                                   const std::filesystem::path& results_dir);

}  // namespace abvm
