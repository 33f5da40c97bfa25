#pragma once
// Staging a guest's files on a libvirt host that cannot see this machine's files: every
// connection but the embedded driver (qemu:///system, qemu+tcp://, qemu+ssh://, qemu+tls://).
// Nothing assumes a shared filesystem: the files reach the host as storage volumes of a 'dir'
// pool that abvm manages there (by default "abvm" at /var/lib/abvm/pool; defined, built and
// started when missing), uploaded through the connection (virStorageVolUpload).
//
//   kernel        a content volume, named by the file's SHA-256: uploaded once per host and
//                 found again by later runs. It counts only with its ".complete" marker volume,
//                 made after the upload finished, so a half-uploaded kernel is never booted.
//   initrd        the trial's own (the guest image with the trial's job appended): uploaded
//                 for the trial and deleted after it.
//   scratch disk  a raw volume of the local image's size (allocated on the host when the local
//                 one is: disk.preallocate), created per local image (a co-scheduled run's two
//                 lanes get two) and deleted when the run ends. The guest's writes go there;
//                 nothing is copied either way.
//   console copy  an empty volume QEMU writes its copy of the serial console into
//                 (guest/console_stream.hpp says why), read back only when the console stream
//                 ended without what the trial waits for, and deleted after the trial.
//
// abvm never writes to a volume it did not create: every name carries this run's owner tag
// "<client host>_<pid>_<random>", and a name that exists already is an error, not a reuse (the
// content volumes alone are shared, and they are only read). Volumes a killed abvm process of
// this machine left (its pid is dead here) are deleted when the next run connects; volumes of
// other machines are never touched.
//
// Thread-safe: co-scheduled trials stage from two threads at once. Every call takes the
// connection to use, so a driver that connected again after losing its daemon goes on.
#include <libvirt/libvirt.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "guest/domain_xml.hpp"
#include "guest/driver.hpp"

namespace abvm {

inline constexpr std::string_view kDefaultPoolPath = "/var/lib/abvm/pool";

struct StagingOptions {
  std::string pool = "abvm";
  // Unset: the existing pool's path, or kDefaultPoolPath when abvm creates the pool. Set: the
  // pool must be there (or is created there); a pool of that name elsewhere is an Error.
  std::optional<std::filesystem::path> pool_path;
};

// What the staging did so far (tests, benchmarks, the README's figures).
struct StagingStats {
  int kernel_uploads = 0;            // content volumes uploaded
  int kernels_found = 0;             // content volumes found complete on the host
  int trial_uploads = 0;             // per-trial initrds uploaded
  int scratch_created = 0;           // scratch volumes created
  std::uint64_t bytes_uploaded = 0;  // everything uploaded
  double upload_seconds = 0;         // time spent uploading (create, stream, finish)
};

// One volume name of abvm's: "abvm-<kind>-<host>_<pid>_<random>-<rest>". The host is reduced to
// [A-Za-z0-9.-] (no '_'), so the name parses back whatever `rest` holds.
struct VolumeName {
  std::string kind;  // content, initrd, scratch, console
  std::string host;
  long pid = 0;
  std::string random;
  std::string rest;  // the SHA-256 of a content volume, the domain of a trial's, the lane of a scratch
};
std::string format_volume_name(const VolumeName& n);
std::optional<VolumeName> parse_volume_name(std::string_view name);
// The marker that says a content volume's upload finished.
std::string complete_marker(std::string_view content_volume);

class VolumeStaging {
 public:
  VolumeStaging(std::string uri, StagingOptions options);

  // Readies the pool on a (new) connection: finds it, or defines, builds and starts it; starts it
  // when it is inactive; deletes what dead abvm processes of this machine left, and what this
  // run could not delete before. Throws InfraError naming the URI when the pool cannot be had,
  // abvm::Error when a pool of that name has another path than the one asked for.
  void attach(virConnectPtr conn);

  // The host's paths for `spec`'s files, uploading or creating what the host lacks (see above).
  // Throws InfraError naming the file, the volume and the URI.
  HostFiles stage(virConnectPtr conn, const DomainSpec& spec);

  // QEMU's copy of `spec`'s console (at most `limit` bytes), or nothing when it cannot be read.
  std::optional<std::string> console_copy(virConnectPtr conn, const DomainSpec& spec, std::uint64_t limit);

  // Deletes the trial volumes of `spec` (initrd, console copy). What cannot be deleted now (a
  // lost connection) is tried again at the next attach() and at finish().
  void release(virConnectPtr conn, const DomainSpec& spec) noexcept;

  // The end of the run: deletes the scratch volumes and whatever trial volume is left. Content
  // volumes stay for later runs. Best effort: what fails goes at a later run's attach().
  void finish(virConnectPtr conn) noexcept;

  StagingStats stats() const;
  const std::string& owner() const { return owner_; }    // "<host>_<pid>_<random>"
  std::filesystem::path pool_path() const;               // on the host; known after attach()

 private:
  std::string content_volume(virConnectPtr conn, virStoragePoolPtr pool, const std::filesystem::path& file);
  std::string scratch_volume(virStoragePoolPtr pool, const std::filesystem::path& local);
  void delete_names(virStoragePoolPtr pool, std::vector<std::string> names) noexcept;
  void remove_stale(virStoragePoolPtr pool);
  std::string name(std::string_view kind, std::string_view rest) const;

  std::string uri_;
  StagingOptions options_;
  std::string host_;  // this machine's name as it appears in volume names
  std::string owner_;
  mutable std::mutex mutex_;             // everything below
  std::mutex content_mutex_;             // one content upload at a time (A and B share a kernel)
  std::filesystem::path pool_path_;
  std::map<std::string, std::string> content_paths_;   // SHA-256 -> path on the host
  std::map<std::string, std::string> file_hashes_;     // "path size mtime" -> SHA-256
  std::map<std::filesystem::path, std::string> scratch_paths_;  // local image -> path on the host
  std::vector<std::string> scratch_names_;
  std::set<std::string> to_delete_;      // trial volumes whose deletion failed
  StagingStats stats_;
};

}  // namespace abvm
