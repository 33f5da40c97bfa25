#include "guest/volume_staging.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <pugixml.hpp>
#include <random>
#include <sstream>

#include "core/error.hpp"
#include "core/process.hpp"
#include "guest/libvirt_handles.hpp"

namespace abvm {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr std::string_view kPrefix = "abvm-";
constexpr std::string_view kCompleteSuffix = ".complete";

// This machine's name as volume names carry it: [A-Za-z0-9.-] only, so '_' separates the owner
// tag's fields and '/' (which a volume name cannot hold) never appears.
std::string name_safe_host() {
  std::string out;
  for (char c : host_name()) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '-';
    out += ok ? c : '-';
  }
  return out.empty() ? std::string("host") : out;
}

std::string random_hex() {
  std::random_device rd;
  return fmt::format("{:08x}", rd());
}

std::string xml_text(const pugi::xml_document& doc) {
  std::ostringstream out;
  doc.save(out, "  ", pugi::format_indent | pugi::format_no_declaration);
  return out.str();
}

// A raw file volume; libvirt's dir backend allocates `allocation` bytes of it at once.
std::string volume_xml(const std::string& name, std::uint64_t capacity, std::uint64_t allocation) {
  pugi::xml_document doc;
  auto vol = doc.append_child("volume");
  vol.append_child("name").text().set(name.c_str());
  auto cap = vol.append_child("capacity");
  cap.append_attribute("unit").set_value("bytes");
  cap.text().set(static_cast<unsigned long long>(capacity));
  auto alloc = vol.append_child("allocation");
  alloc.append_attribute("unit").set_value("bytes");
  alloc.text().set(static_cast<unsigned long long>(allocation));
  auto target = vol.append_child("target");
  target.append_child("format").append_attribute("type").set_value("raw");
  target.append_child("permissions").append_child("mode").text().set("0600");
  return xml_text(doc);
}

std::string pool_xml(const std::string& name, const fs::path& path) {
  pugi::xml_document doc;
  auto pool = doc.append_child("pool");
  pool.append_attribute("type").set_value("dir");
  pool.append_child("name").text().set(name.c_str());
  auto target = pool.append_child("target");
  target.append_child("path").text().set(path.c_str());
  target.append_child("permissions").append_child("mode").text().set("0711");
  return xml_text(doc);
}

fs::path pool_target_path(virStoragePoolPtr pool, const std::string& name, const std::string& uri) {
  char* xml = virStoragePoolGetXMLDesc(pool, 0);
  if (!xml) throw InfraError(fmt::format("libvirt: cannot read storage pool '{}' on '{}': {}", name, uri, libvirt_error()));
  pugi::xml_document doc;
  const bool parsed = static_cast<bool>(doc.load_string(xml));
  std::free(xml);
  const std::string path = parsed ? doc.select_node("/pool/target/path").node().text().get() : "";
  if (path.empty()) throw InfraError(fmt::format("storage pool '{}' on '{}' names no target path", name, uri));
  return path;
}

PoolHandle lookup_pool(virConnectPtr conn, const std::string& name, const std::string& uri) {
  PoolHandle pool(virStoragePoolLookupByName(conn, name.c_str()));
  if (!pool) {
    throw InfraError(fmt::format("libvirt: storage pool '{}' on '{}' is gone: {}", name, uri, libvirt_error()));
  }
  return pool;
}

// Defines, builds (mkdir) and marks for autostart the pool abvm keeps its volumes in.
PoolHandle define_pool(virConnectPtr conn, const StagingOptions& o, const std::string& uri) {
  const fs::path path = o.pool_path.value_or(fs::path(kDefaultPoolPath));
  const std::string xml = pool_xml(o.pool, path);
  PoolHandle pool(virStoragePoolDefineXML(conn, xml.c_str(), 0));
  if (!pool) {
    const std::string why = libvirt_error();
    // Another abvm may have defined it this very moment.
    if (PoolHandle again{virStoragePoolLookupByName(conn, o.pool.c_str())}) return again;
    throw InfraError(fmt::format("libvirt: cannot define storage pool '{}' (dir, {}) on '{}': {}", o.pool,
                                 path.native(), uri, why));
  }
  if (virStoragePoolBuild(pool.get(), 0) < 0) {
    const std::string why = libvirt_error();
    virStoragePoolUndefine(pool.get());
    throw InfraError(fmt::format("libvirt: cannot create the directory {} of storage pool '{}' on '{}': {}; give the "
                                 "host a pool path its libvirt daemon can create",
                                 path.native(), o.pool, uri, why));
  }
  virStoragePoolSetAutostart(pool.get(), 1);  // later runs find it running; not essential
  return pool;
}

// The pool, active, at the path asked for.
PoolHandle ensure_pool(virConnectPtr conn, const StagingOptions& o, const std::string& uri) {
  PoolHandle pool(virStoragePoolLookupByName(conn, o.pool.c_str()));
  if (!pool && libvirt_error_code() != VIR_ERR_NO_STORAGE_POOL) {
    throw InfraError(fmt::format(
        "libvirt at '{}' cannot look up storage pools ({}): abvm sends kernels, initrds and scratch disks to a host "
        "as volumes of a 'dir' pool, which needs libvirt's storage driver there (Debian: libvirt-daemon)",
        uri, libvirt_error()));
  }
  if (!pool) pool = define_pool(conn, o, uri);
  const fs::path path = pool_target_path(pool.get(), o.pool, uri);
  if (o.pool_path && fs::path(*o.pool_path).lexically_normal() != path.lexically_normal()) {
    throw Error(fmt::format("storage pool '{}' on '{}' keeps its volumes in {}, not in {} as asked: give that path, or "
                            "remove the pool there (virsh -c '{}' pool-destroy {} && virsh -c '{}' pool-undefine {})",
                            o.pool, uri, path.native(), o.pool_path->native(), uri, o.pool, uri, o.pool));
  }
  const int active = virStoragePoolIsActive(pool.get());
  if (active < 0 || (active == 0 && virStoragePoolCreate(pool.get(), 0) < 0)) {
    throw InfraError(fmt::format("libvirt: cannot start storage pool '{}' ({}) on '{}': {}", o.pool, path.native(),
                                 uri, libvirt_error()));
  }
  return pool;
}

std::vector<std::string> volume_names(virStoragePoolPtr pool, const std::string& uri) {
  virStorageVolPtr* vols = nullptr;
  const int n = virStoragePoolListAllVolumes(pool, &vols, 0);
  if (n < 0) throw InfraError(fmt::format("libvirt: cannot list the volumes of the abvm pool on '{}': {}", uri, libvirt_error()));
  std::vector<std::string> names;
  for (int i = 0; i < n; ++i) {
    if (const char* name = virStorageVolGetName(vols[i])) names.emplace_back(name);
    virStorageVolFree(vols[i]);
  }
  std::free(vols);
  return names;
}

std::string volume_path(virStorageVolPtr vol, const std::string& name, const std::string& uri) {
  char* p = virStorageVolGetPath(vol);
  if (!p) throw InfraError(fmt::format("libvirt: no path for volume {} on '{}': {}", name, uri, libvirt_error()));
  std::string path = p;
  std::free(p);
  return path;
}

VolHandle create_volume(virStoragePoolPtr pool, const std::string& name, std::uint64_t capacity,
                        std::uint64_t allocation, const std::string& uri) {
  const std::string xml = volume_xml(name, capacity, allocation);
  VolHandle vol(virStorageVolCreateXML(pool, xml.c_str(), 0));
  if (vol) return vol;
  if (libvirt_error_code() == VIR_ERR_STORAGE_VOL_EXIST) {
    throw InfraError(fmt::format("a volume named {} already exists in the abvm pool on '{}', and this run did not create "
                                 "it: abvm writes only to volumes it made itself. If it is a leftover, delete it (virsh "
                                 "-c '{}' vol-delete --pool abvm {})",
                                 name, uri, uri, name));
  }
  throw InfraError(fmt::format("libvirt: cannot create volume {} ({} bytes) in the abvm pool on '{}': {}", name,
                               capacity, uri, libvirt_error()));
}

// Sends `file` into `vol` through the connection; InfraError naming both when anything fails.
void upload_file(virConnectPtr conn, virStorageVolPtr vol, const fs::path& file, std::uint64_t size,
                 const std::string& name, const std::string& uri) {
  const auto fail = [&](const std::string& why) {
    return InfraError(fmt::format("cannot upload {} to volume {} on '{}': {}", file.native(), name, uri, why));
  };
  StreamHandle st(virStreamNew(conn, 0));
  if (!st || virStorageVolUpload(vol, st.get(), 0, size, 0) < 0) throw fail(libvirt_error());
  const int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw fail(std::strerror(errno));
  std::vector<char> buf(std::size_t{1} << 20);
  std::uint64_t sent = 0;
  for (;;) {
    const ssize_t n = ::read(fd, buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    for (ssize_t off = 0; off < n;) {
      const int r = virStreamSend(st.get(), buf.data() + off, static_cast<std::size_t>(n - off));
      if (r < 0) {
        ::close(fd);
        throw fail(libvirt_error());
      }
      off += r;
    }
    sent += static_cast<std::uint64_t>(n);
  }
  ::close(fd);
  if (sent != size) throw fail(fmt::format("the file changed while it was sent ({} bytes of {})", sent, size));
  if (virStreamFinish(st.get()) < 0) throw fail(libvirt_error());
  st.finished();
}

// The first `length` bytes of `vol`, or nothing.
std::optional<std::string> download(virConnectPtr conn, virStorageVolPtr vol, std::uint64_t length) {
  StreamHandle st(virStreamNew(conn, 0));
  if (!st || virStorageVolDownload(vol, st.get(), 0, length, 0) < 0) return std::nullopt;
  std::string out;
  char buf[65536];
  for (;;) {
    const int n = virStreamRecv(st.get(), buf, sizeof buf);
    if (n < 0) return std::nullopt;
    if (n == 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  if (virStreamFinish(st.get()) < 0) return std::nullopt;
  st.finished();
  return out;
}

std::string sha256_of(const fs::path& file) {
  const std::string out = run_checked({"sha256sum", "--", file.native()});
  return out.substr(0, out.find(' '));
}

}  // namespace

std::string format_volume_name(const VolumeName& n) {
  return fmt::format("{}{}-{}_{}_{}-{}", kPrefix, n.kind, n.host, n.pid, n.random, n.rest);
}

std::optional<VolumeName> parse_volume_name(std::string_view name) {
  if (!name.starts_with(kPrefix)) return std::nullopt;
  name.remove_prefix(kPrefix.size());
  VolumeName n;
  const auto take = [&](char sep) -> std::optional<std::string> {
    const auto at = name.find(sep);
    if (at == std::string_view::npos || at == 0) return std::nullopt;
    std::string part(name.substr(0, at));
    name.remove_prefix(at + 1);
    return part;
  };
  const auto kind = take('-'), host = take('_'), pid = take('_'), random = take('-');
  if (!kind || !host || !pid || !random || name.empty()) return std::nullopt;
  if (pid->find_first_not_of("0123456789") != std::string::npos || pid->size() > 9) return std::nullopt;
  n.kind = *kind;
  n.host = *host;
  n.pid = std::strtol(pid->c_str(), nullptr, 10);
  n.random = *random;
  n.rest = std::string(name);
  return n;
}

std::string complete_marker(std::string_view content_volume) {
  return std::string(content_volume) + std::string(kCompleteSuffix);
}

VolumeStaging::VolumeStaging(std::string uri, StagingOptions options)
    : uri_(std::move(uri)), options_(std::move(options)), host_(name_safe_host()) {
  owner_ = fmt::format("{}_{}_{}", host_, static_cast<long>(::getpid()), random_hex());
}

std::string VolumeStaging::name(std::string_view kind, std::string_view rest) const {
  return fmt::format("{}{}-{}-{}", kPrefix, kind, owner_, rest);
}

fs::path VolumeStaging::pool_path() const {
  std::lock_guard lock(mutex_);
  return pool_path_;
}

StagingStats VolumeStaging::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void VolumeStaging::attach(virConnectPtr conn) {
  PoolHandle pool = ensure_pool(conn, options_, uri_);
  const fs::path path = pool_target_path(pool.get(), options_.pool, uri_);
  std::vector<std::string> retry;
  bool first = false;
  {
    std::lock_guard lock(mutex_);
    first = pool_path_.empty();
    pool_path_ = path;
    retry.assign(to_delete_.begin(), to_delete_.end());
    to_delete_.clear();
  }
  // libvirt learns of files changed behind its back (a pool directory cleaned by hand) only from
  // a refresh; one that fails (another client's upload under way) changes nothing abvm needs.
  // Only at the first connection: a daemon that restarted refreshed its pools itself, and this
  // run's other trials may be uploading now.
  if (first) virStoragePoolRefresh(pool.get(), 0);
  remove_stale(pool.get());
  delete_names(pool.get(), std::move(retry));
}

void VolumeStaging::remove_stale(virStoragePoolPtr pool) {
  const std::vector<std::string> names = volume_names(pool, uri_);
  const std::set<std::string> all(names.begin(), names.end());
  std::vector<std::string> stale;
  for (const auto& n : names) {
    const auto v = parse_volume_name(n);
    // Only this machine's abvm processes, and only dead ones: their volumes have no owner left.
    if (!v || v->host != host_ || v->pid == static_cast<long>(::getpid()) || process_alive(v->pid)) continue;
    if (v->kind == "content" && (n.ends_with(kCompleteSuffix) || all.contains(complete_marker(n)))) continue;
    stale.push_back(n);
  }
  delete_names(pool, std::move(stale));
}

void VolumeStaging::delete_names(virStoragePoolPtr pool, std::vector<std::string> names) noexcept {
  for (const auto& n : names) {
    VolHandle vol(virStorageVolLookupByName(pool, n.c_str()));
    if (!vol && libvirt_error_code() == VIR_ERR_NO_STORAGE_VOL) continue;  // gone already
    if (vol && virStorageVolDelete(vol.get(), 0) == 0) continue;
    std::lock_guard lock(mutex_);
    to_delete_.insert(n);
  }
}

std::string VolumeStaging::content_volume(virConnectPtr conn, virStoragePoolPtr pool, const fs::path& file) {
  std::error_code ec;
  const auto size = fs::file_size(file, ec);
  if (ec) throw InfraError(fmt::format("cannot read {} to send it to '{}': {}", file.native(), uri_, ec.message()));
  const auto mtime = fs::last_write_time(file, ec).time_since_epoch().count();
  const std::string key = fmt::format("{} {} {}", file.native(), size, mtime);
  std::string sha;
  {
    std::lock_guard lock(mutex_);
    if (auto it = file_hashes_.find(key); it != file_hashes_.end()) sha = it->second;
  }
  if (sha.empty()) {
    sha = sha256_of(file);
    std::lock_guard lock(mutex_);
    file_hashes_[key] = sha;
  }
  std::lock_guard one_upload(content_mutex_);
  {
    std::lock_guard lock(mutex_);
    if (auto it = content_paths_.find(sha); it != content_paths_.end()) return it->second;
  }
  const std::vector<std::string> names = volume_names(pool, uri_);
  const std::set<std::string> all(names.begin(), names.end());
  for (const auto& n : names) {
    const auto v = parse_volume_name(n);
    if (!v || v->kind != "content" || v->rest != sha || !all.contains(complete_marker(n))) continue;
    VolHandle vol(virStorageVolLookupByName(pool, n.c_str()));
    if (!vol) continue;  // deleted meanwhile
    const std::string path = volume_path(vol.get(), n, uri_);
    std::lock_guard lock(mutex_);
    ++stats_.kernels_found;
    return content_paths_[sha] = path;
  }
  const auto start = Clock::now();
  const std::string vname = name("content", sha);
  VolHandle vol = create_volume(pool, vname, size, 0, uri_);
  try {
    upload_file(conn, vol.get(), file, size, vname, uri_);
    create_volume(pool, complete_marker(vname), 0, 0, uri_);
  } catch (...) {
    // Half sent: it must go, now or (the connection lost) at the next attach().
    if (virStorageVolDelete(vol.get(), 0) < 0) {
      std::lock_guard lock(mutex_);
      to_delete_.insert(vname);
    }
    throw;
  }
  const std::string path = volume_path(vol.get(), vname, uri_);
  std::lock_guard lock(mutex_);
  ++stats_.kernel_uploads;
  stats_.bytes_uploaded += size;
  stats_.upload_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  return content_paths_[sha] = path;
}

std::string VolumeStaging::scratch_volume(virStoragePoolPtr pool, const fs::path& local) {
  std::lock_guard lock(mutex_);
  if (auto it = scratch_paths_.find(local); it != scratch_paths_.end()) return it->second;
  struct stat st {};
  if (::stat(local.c_str(), &st) != 0) {
    throw InfraError(fmt::format("cannot read scratch image {} to make its volume on '{}': {}", local.native(), uri_,
                                 std::strerror(errno)));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  // A preallocated local image (disk.preallocate) gets a preallocated volume: a host whose disk
  // cannot hold it fails here, before any guest boots, as the local image would.
  const bool allocated = static_cast<std::uint64_t>(st.st_blocks) * 512 >= size;
  const std::string vname = name("scratch", std::to_string(scratch_names_.size()));
  VolHandle vol = create_volume(pool, vname, size, allocated ? size : 0, uri_);
  scratch_names_.push_back(vname);
  ++stats_.scratch_created;
  return scratch_paths_[local] = volume_path(vol.get(), vname, uri_);
}

HostFiles VolumeStaging::stage(virConnectPtr conn, const DomainSpec& spec) {
  PoolHandle pool = lookup_pool(conn, options_.pool, uri_);
  HostFiles f;
  f.kernel = content_volume(conn, pool.get(), spec.kernel);
  for (const ScratchDisk& d : spec.disks) f.disks.push_back(scratch_volume(pool.get(), d.path));
  const std::string console = name("console", spec.name);
  f.console_log = volume_path(create_volume(pool.get(), console, 0, 0, uri_).get(), console, uri_);
  if (!spec.initrd.empty()) {
    std::error_code ec;
    const auto size = fs::file_size(spec.initrd, ec);
    if (ec) throw InfraError(fmt::format("cannot read {} to send it to '{}': {}", spec.initrd.native(), uri_, ec.message()));
    const auto start = Clock::now();
    const std::string initrd = name("initrd", spec.name);
    VolHandle vol = create_volume(pool.get(), initrd, size, 0, uri_);
    f.initrd = volume_path(vol.get(), initrd, uri_);
    upload_file(conn, vol.get(), spec.initrd, size, initrd, uri_);
    std::lock_guard lock(mutex_);
    ++stats_.trial_uploads;
    stats_.bytes_uploaded += size;
    stats_.upload_seconds += std::chrono::duration<double>(Clock::now() - start).count();
  }
  return f;
}

std::optional<std::string> VolumeStaging::console_copy(virConnectPtr conn, const DomainSpec& spec,
                                                       std::uint64_t limit) {
  PoolHandle pool(virStoragePoolLookupByName(conn, options_.pool.c_str()));
  if (!pool) return std::nullopt;
  VolHandle vol(virStorageVolLookupByName(pool.get(), name("console", spec.name).c_str()));
  virStorageVolInfo info{};
  if (!vol || virStorageVolGetInfo(vol.get(), &info) < 0) return std::nullopt;
  const std::uint64_t length = std::min<std::uint64_t>(info.capacity, limit);
  if (length == 0) return std::string();
  return download(conn, vol.get(), length);
}

void VolumeStaging::release(virConnectPtr conn, const DomainSpec& spec) noexcept {
  std::vector<std::string> names{name("console", spec.name)};
  if (!spec.initrd.empty()) names.push_back(name("initrd", spec.name));
  PoolHandle pool(virStoragePoolLookupByName(conn, options_.pool.c_str()));
  if (!pool) {
    std::lock_guard lock(mutex_);
    to_delete_.insert(names.begin(), names.end());
    return;
  }
  delete_names(pool.get(), std::move(names));
}

void VolumeStaging::finish(virConnectPtr conn) noexcept {
  std::vector<std::string> names;
  {
    std::lock_guard lock(mutex_);
    names = scratch_names_;
    names.insert(names.end(), to_delete_.begin(), to_delete_.end());
    scratch_names_.clear();
    scratch_paths_.clear();
    to_delete_.clear();
  }
  if (names.empty()) return;
  PoolHandle pool(virStoragePoolLookupByName(conn, options_.pool.c_str()));
  if (pool) delete_names(pool.get(), std::move(names));
}

}  // namespace abvm
