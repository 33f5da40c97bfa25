#pragma once
// Internal to guest/: one running guest followed to its end (guest/domain_watch.cpp): its console
// read and typed into, the caller's hooks asked, and why it ended said in the outcome.
#include <libvirt/libvirt.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "guest/console_cap.hpp"
#include "guest/console_stream.hpp"
#include "guest/driver.hpp"
#include "guest/stop_events.hpp"

namespace abvm {

// QEMU's copy of a guest's console (HostFiles::console_log), read when the stream ended short.
using ConsoleCopy = std::function<std::optional<std::string>()>;

// One running guest as run_guest watches it.
struct WatchedGuest {
  virConnectPtr conn;
  const std::string& uri;
  const DomainSpec& spec;
  virDomainPtr dom;
  ConsoleStream& stream;
  ConsoleCap& console;
  const StopEvents& events;
  const ConsoleHooks& hooks;
  const ConsoleCopy& console_copy;
  std::vector<std::string>& lost_domains;  // guests a lost connection left running
};

// Follows the console until `done` says so, the domain stops, or the deadline passes, typing
// what the caller's input hook returns as it goes.
void watch_guest(WatchedGuest& g, std::chrono::steady_clock::time_point deadline, std::chrono::milliseconds timeout,
                 GuestOutcome& outcome);

}  // namespace abvm
