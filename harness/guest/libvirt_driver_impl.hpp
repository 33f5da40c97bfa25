#pragma once
// Internal to guest/: LibvirtDriver's state, shared by the files that define its members
// (guest/libvirt_driver.cpp: its connection's life and the host's domains; guest/domain_boot.cpp:
// run_guest).
#include <chrono>
#include <memory>
#include <string>

#include "guest/driver.hpp"
#include "guest/libvirt_driver.hpp"
#include "guest/libvirt_handles.hpp"
#include "guest/volume_staging.hpp"

namespace abvm {

struct LibvirtDriver::Impl {
  std::string uri;
  ConnHandle conn;
  HostVersions versions;
  std::chrono::milliseconds reconnect_window;
  // Every connection but the embedded driver: the host may not see this machine's files.
  std::unique_ptr<VolumeStaging> staging;
};

}  // namespace abvm
