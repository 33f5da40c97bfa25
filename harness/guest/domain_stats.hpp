#pragma once
// Internal to guest/: a running domain's statistics (guest/domain_stats.cpp), the reading behind
// ConsoleHooks::on_running's DomainStatsReader.
#include <libvirt/libvirt.h>

#include "guest/driver.hpp"

namespace abvm {

// The domain's statistics now (libvirt's virDomainListGetStats; the CPU of `qemu_pid`, a QEMU on
// this machine, when they have none); asked a second time when the first answer has no disk counters.
DomainStatsReading read_domain_stats(virDomainPtr dom, long qemu_pid);

}  // namespace abvm
