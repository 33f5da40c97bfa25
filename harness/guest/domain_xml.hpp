#pragma once
// libvirt domain XML for one trial's guest, built with pugixml (never by pasting strings, so
// that any path, name or command line is escaped correctly).
//
// The domain: type 'qemu' (TCG) or 'kvm'; direct kernel boot on x86_64 'pc'; ACPI on so the guest
// can power off; no network, graphics or balloon; the serial console on a pty (read and written
// through a libvirt stream, guest/console_stream.hpp) with QEMU writing a copy of everything it
// printed to a log file; every ending (poweroff, reboot, crash) destroys the domain, so a
// panicking guest with panic=-1 ends at once instead of booting again; the scratch disks as
// virtio-blk 'vda', 'vdb' with their options.
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "guest/driver.hpp"

namespace abvm {

// The files as the host that runs the guest sees them. For a driver on this machine they are
// the DomainSpec's own paths (local_host_files); a remote host gets storage volumes instead
// (guest/volume_staging.hpp), and the domain XML names their paths there.
struct HostFiles {
  std::filesystem::path kernel;
  std::filesystem::path initrd;        // empty: none
  std::vector<std::filesystem::path> disks;  // one per DomainSpec::disks, in order
  std::filesystem::path console_log;   // where QEMU writes its copy of the serial console
};

// The spec's paths as they are: QEMU's console copy is the spec's console log itself.
HostFiles local_host_files(const DomainSpec& spec);

// The domain XML for `spec` with its files at `files`. Throws abvm::Error naming the offending
// field when the spec cannot become a domain libvirt would accept (bad name, control characters
// in a path or the command line, unknown cache/io mode, impossible queue settings, iotune values
// libvirt or QEMU would refuse (config/rules.hpp), pins that do
// not match the vCPUs).
std::string domain_xml(const DomainSpec& spec, const HostFiles& files);

// The same on this machine: domain_xml(spec, local_host_files(spec)).
std::string domain_xml(const DomainSpec& spec);

// Throws abvm::Error unless `name` is a domain name abvm uses: 1-200 characters from
// [A-Za-z0-9._+-], not starting with '-' or '.'. libvirt itself refuses only '/' and newlines,
// but names also become file names (console logs, QEMU logs) and command-line arguments.
void validate_domain_name(std::string_view name);

// Names every abvm domain starts with; leftovers with it are ours to clean up.
inline constexpr std::string_view domain_name_prefix = "abvm-";

// A unique name for one trial's domain: "abvm-<pid>.<boot>-<label>-<serial>" (boot: boot_tag()),
// `label` reduced to the allowed characters. The pid and boot let a later abvm tell leftovers of
// dead abvm processes of this machine from domains of a live one, on this machine's daemon and on a
// remote one; `serial` (e.g. the trial index) keeps names unique within the process.
std::string domain_name(std::string_view label, long serial);

// The abvm process a domain name says it belongs to: its pid and the boot tag ("" in names from
// before the tag, "abvm-<pid>-..."); nullopt when the name is not abvm's.
struct DomainOwner {
  long pid = 0;
  std::string boot;
};
std::optional<DomainOwner> domain_owner(std::string_view name);

// Whether the domain `name` is a leftover that abvm, running in boot `this_boot`, may destroy: its
// abvm process was of this boot and is gone (`alive(pid)` false). A name with another boot's tag
// belongs to another machine (or an earlier boot, whose domains did not survive it) and is never
// ours to judge. An untagged name is judged by its pid alone, and only on this machine's own daemon
// (`local_daemon`): a remote one also runs other machines' guests.
bool is_leftover_domain(std::string_view name, bool local_daemon, std::string_view this_boot,
                        const std::function<bool(long)>& alive);

}  // namespace abvm
