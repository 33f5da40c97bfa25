#pragma once
// Internal to guest/: the libvirt driver's connections (guest/libvirt_connection.cpp): libvirt's
// process-wide setup, what kind of host a URI names, opening a connection within a time limit,
// and what the host says of itself.
#include <libvirt/libvirt.h>

#include <chrono>
#include <string>
#include <string_view>

#include "guest/driver.hpp"
#include "guest/libvirt_handles.hpp"

namespace abvm {

// Once per process: silence libvirt's own stderr printing, route its log to a file, and run the
// event loop that libvirt's QEMU driver needs to watch its monitors and processes.
void init_libvirt_once();

inline bool is_embedded(std::string_view uri) { return uri.starts_with("qemu:///embed"); }

// A URI that names a daemon of this machine (no host part, or its UNIX socket named outright):
// its guests' QEMUs run here.
inline bool is_local(std::string_view uri) { return uri.starts_with("qemu:///") || uri.starts_with("qemu+unix://"); }

// A URI libvirt reaches over TLS: qemu+tls://, or qemu://HOST/ (TLS is libvirt's default transport).
inline bool is_tls(std::string_view uri) { return uri.starts_with("qemu+tls://") || (uri.starts_with("qemu://") && !is_local(uri)); }

// A connection, or why there is none.
struct OpenedConnection {
  ConnHandle conn;
  std::string error;
};

// A connection to `uri` opened within `limit` (keepalive on for a daemon), or the reason there is none.
OpenedConnection open_connection_within(const std::string& uri, std::chrono::milliseconds limit);

// The first connection of a driver: a daemon's within `window`, the embedded driver's unbounded.
OpenedConnection open_first_connection(const std::string& uri, std::chrono::milliseconds window);

// What libvirt tells about the host over the connection; InfraError naming `uri` without versions.
HostVersions read_versions(virConnectPtr conn, const std::string& uri);

// read_versions for the embedded driver, which asks libvirt to probe QEMU again once when the
// first probe had failed.
HostVersions read_embedded_versions(virConnectPtr conn, const std::string& uri);

}  // namespace abvm
