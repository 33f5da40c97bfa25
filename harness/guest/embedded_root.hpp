#pragma once
// Internal to guest/: the embedded driver's root (guest/embedded_root.cpp), beside
// LibvirtDriver's embedded_root(), embedded_uri() and embedded_qemu_conf_text(): what the other
// parts of the driver ask of it.
#include <filesystem>
#include <string>
#include <string_view>

namespace abvm {

// The pid of the QEMU running an embedded-driver domain (from the driver's pid file, checked by
// its command line), or 0.
long embedded_qemu_pid(std::string_view uri, const std::string& name);

// Where abvm processes that find the shared root in use keep a root of their own, one per pid
// (<dir>/<pid>).
std::filesystem::path private_roots_dir();

}  // namespace abvm
