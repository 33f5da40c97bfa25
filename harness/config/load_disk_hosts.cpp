#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "config/load_sections.hpp"
#include "core/units.hpp"

namespace abvm::loader {

namespace fs = std::filesystem;

// A URI is one libvirt connection: "<driver>[+<transport>]://[user@][host[:port]]/<path>[?...]".
void read_hosts(KeyReader& r, Experiment& e) {
  const std::string key = "hosts.uris";
  e.hosts.uris = r.get_strings(key).value_or(std::vector<std::string>{});
  for (std::size_t i = 0; i < e.hosts.uris.size(); ++i) {
    const std::string& uri = e.hosts.uris[i];
    const bool control = std::any_of(uri.begin(), uri.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
    if (uri.find("://") == std::string::npos || uri.find("://") == 0 || control || uri.find(' ') != std::string::npos) {
      r.fail(r.line_of(key), fmt::format("key '{}': {} is not a libvirt URI: write e.g. \"qemu+ssh://root@lab3/system\" "
                                         "or \"qemu+tcp://10.0.0.7:16509/system\"", key, quote(uri)));
    }
    for (std::size_t j = 0; j < i; ++j) {
      if (e.hosts.uris[j] == uri) {
        r.fail(r.line_of(key),
               fmt::format("key '{}': {} is named twice: a host runs its own blocks once", key, quote(uri)));
      }
    }
  }
  if (!e.hosts.uris.empty() && !e.disk.path.empty()) {
    r.fail(r.line_of("disk.path"), "disk.path names a file on this machine, but the blocks run on [hosts]: remove it (abvm "
                                   "creates a scratch volume on each host)");
  }
  std::vector<std::string> quoted;
  for (const auto& u : e.hosts.uris) quoted.push_back(quote(u));
  r.note(key, fmt::format("[{}]", fmt::join(quoted, ", ")));
  e.hosts.pool_path = r.get_string("hosts.pool_path");
  if (!e.hosts.pool_path) return r.note("hosts.pool_path", "(unset)");
  if (!fs::path(*e.hosts.pool_path).is_absolute()) {
    r.fail(r.line_of("hosts.pool_path"), fmt::format("key 'hosts.pool_path' = {} must be an absolute path on the hosts",
                                                     quote(*e.hosts.pool_path)));
  }
  r.note("hosts.pool_path", quote(*e.hosts.pool_path));
}

namespace {

// Only stat()s: a mistaken path must never be opened, let alone written.
void check_disk(const KeyReader& r, const DiskSettings& disk, const std::string& written) {
  const std::size_t line = r.line_of("disk.path");
  const std::string shown = disk.path.string() == written
                                ? quote(written)
                                : fmt::format("{} ({})", quote(written), disk.path.string());
  std::error_code ec;
  const fs::file_status status = fs::status(disk.path, ec);
  if (status.type() == fs::file_type::not_found) {
    // A link to something missing (a disk not plugged in yet) would be followed to create a
    // file wherever it points.
    if (fs::is_symlink(fs::symlink_status(disk.path, ec))) {
      r.fail(line, fmt::format("key 'disk.path' = {} is a symlink to a missing file ({}): name the image file "
                               "itself", shown, fs::read_symlink(disk.path, ec).string()));
    }
    if (!fs::is_directory(disk.path.parent_path().empty() ? fs::path(".") : disk.path.parent_path())) {
      r.fail(line, fmt::format("key 'disk.path' = {}: its directory does not exist: create it first", shown));
    }
    return;
  }
  if (ec) r.fail(line, fmt::format("key 'disk.path' = {}: cannot check it: {}", shown, ec.message()));
  std::string via;
  if (fs::is_symlink(fs::symlink_status(disk.path, ec))) {
    via = fmt::format(" (through a symlink to {})", fs::canonical(disk.path, ec).string());
  }
  switch (status.type()) {
    case fs::file_type::block:
      r.fail(line, fmt::format("key 'disk.path' = {} is a block device{}: abvm writes only to image files; "
                             "name a file, or leave disk.path empty for a scratch image in the results "
                             "directory", shown, via));
    case fs::file_type::regular: {
      const auto size = fs::file_size(disk.path, ec);
      if (!ec && size > 0 && !disk.overwrite) {
        r.fail(line, fmt::format("key 'disk.path' = {} is an existing non-empty file ({} bytes): the "
                                 "experiment would destroy its contents; set disk.overwrite = true if that is "
                                 "intended, or name a new file", shown, size));
      }
      return;
    }
    case fs::file_type::directory:
      r.fail(line, fmt::format("key 'disk.path' = {} is a directory: name an image file in it", shown));
    default:
      r.fail(line, fmt::format("key 'disk.path' = {} is not a regular file{}: name an image file", shown, via));
  }
}

}  // namespace

void read_disk(KeyReader& r, Experiment& e) {
  const std::string path = r.get_string("disk.path").value_or("");
  r.note("disk.path", quote(path));
  e.disk.size_bytes = r.get_size("disk.size").value_or(e.disk.size_bytes);
  r.note("disk.size", quote(format_size(e.disk.size_bytes)));
  e.disk.preallocate = r.get_bool("disk.preallocate").value_or(false);
  r.note("disk.preallocate", render(e.disk.preallocate));
  e.disk.overwrite = r.get_bool("disk.overwrite").value_or(false);
  r.note("disk.overwrite", render(e.disk.overwrite));
  if (path.empty()) return;
  e.disk.path = fs::path(path).is_absolute() ? fs::path(path) : r.base_dir() / path;
  check_disk(r, e.disk, path);
}

}  // namespace abvm::loader
