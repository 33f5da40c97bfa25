#pragma once
// Internal to guest/: how libvirt says a domain stopped (guest/stop_events.cpp), from its
// lifecycle events.
#include <libvirt/libvirt.h>

#include <atomic>
#include <chrono>
#include <memory>

namespace abvm {

// How libvirt says a domain stopped. A QEMU that exits without the guest asking (kill -9, a QEMU
// crash) looks, from the console alone, like a guest that powered off early; libvirt tells them
// apart (VIR_DOMAIN_EVENT_STOPPED_FAILED: the monitor closed without a SHUTDOWN event).
struct StopWatch {
  std::atomic<int> detail{-1};  // a virDomainEventStoppedDetailType once the domain stopped
};

// Registers a lifecycle callback for one domain for its lifetime. The watch is shared with
// libvirt, which frees its reference when the callback is deregistered (possibly later, from the
// event loop thread).
// Registered for the domain itself, not for the whole connection: libvirt refuses a second
// registration of one callback for the same event and object on a connection ("event callback
// already tracked"), so while one guest ran, every other guest booted on the connection (a paced
// block's partner, another lane's) had no stop events, and its QEMU killed looked like a guest
// that powered off early (invalid-output instead of an infrastructure error). The domain's own
// filter (its UUID, new at every boot) also keeps out a late event of an earlier boot of the
// same name.
class StopEvents {
 public:
  StopEvents(virConnectPtr conn, virDomainPtr dom);
  ~StopEvents();
  StopEvents(const StopEvents&) = delete;
  StopEvents& operator=(const StopEvents&) = delete;
  // The stop detail, waiting up to `grace` for the event (it is queued as the domain goes away).
  int stop_detail(std::chrono::milliseconds grace) const;

 private:
  virConnectPtr conn_;
  std::shared_ptr<StopWatch> watch_;
  int id_ = -1;
};

}  // namespace abvm
