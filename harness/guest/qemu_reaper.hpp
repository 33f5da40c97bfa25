#pragma once
// Internal to guest/: the reaper of the embedded driver's zombie QEMU children
// (guest/qemu_reaper.cpp, with LibvirtDriver::reapable_zombie, which says which ones it may take).

namespace abvm {

// Starts, once per process, the thread that reaps the zombie QEMU children of this process
// (the embedded driver's, once this process is their subreaper).
void start_reaper();

}  // namespace abvm
