#include "guest/image.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <toml++/toml.h>

#include "core/cache.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "core/resources.hpp"
#include "guest/cpio.hpp"

namespace fs = std::filesystem;

namespace abvm {
namespace {

struct Recipe {
  fs::path file;
  std::string text;
  std::string busybox_package, dd_package, fio_source;
  fs::path busybox, dd, init;
  std::vector<std::string> fio_build_packages, fio_configure;
};

std::string tail(const std::string& text, std::size_t lines) {
  std::size_t pos = text.size();
  for (std::size_t n = 0; n <= lines && pos != std::string::npos && pos > 0; ++n) pos = text.rfind('\n', pos - 1);
  return pos == std::string::npos ? text : text.substr(pos + 1);
}

std::string need_string(const toml::table& t, std::string_view table, std::string_view key, const fs::path& file) {
  const auto* v = t[table][key].as_string();
  if (v == nullptr) throw Error(located(file.string(), 0, fmt::format("[{}] needs a string '{}'", table, key)));
  return v->get();
}

std::vector<std::string> need_strings(const toml::table& t, std::string_view table, std::string_view key,
                                      const fs::path& file) {
  const auto* arr = t[table][key].as_array();
  if (arr == nullptr) throw Error(located(file.string(), 0, fmt::format("[{}] needs an array '{}'", table, key)));
  std::vector<std::string> out;
  for (const auto& e : *arr) {
    const auto* s = e.as_string();
    if (s == nullptr) throw Error(located(file.string(), 0, fmt::format("[{}] {} must hold strings", table, key)));
    out.push_back(s->get());
  }
  return out;
}

Recipe load_recipe(const fs::path& file) {
  Recipe r;
  r.file = file;
  r.text = read_file(file);
  toml::table t;
  try {
    t = toml::parse(r.text, file.string());
  } catch (const toml::parse_error& e) {
    throw Error(located(file.string(), e.source().begin.line, std::string(e.description())));
  }
  r.busybox_package = need_string(t, "busybox", "package", file);
  r.busybox = need_string(t, "busybox", "path", file);
  r.dd_package = need_string(t, "dd", "package", file);
  r.dd = need_string(t, "dd", "path", file);
  r.fio_source = need_string(t, "fio", "source_package", file);
  r.fio_build_packages = need_strings(t, "fio", "build_packages", file);
  r.fio_configure = need_strings(t, "fio", "configure", file);
  r.init = file.parent_path() / need_string(t, "agent", "init", file);
  return r;
}

void require_file(const fs::path& path, const std::string& package) {
  if (!fs::exists(path)) {
    throw Error(fmt::format("{} is missing: install the Debian package {} (run harness/setup.sh as root)",
                            path.string(), package));
  }
}

void require_program(const std::string& program, const std::string& package) {
  if (!find_program(program)) {
    throw Error(fmt::format("'{}' is not installed: install the Debian package {} (run harness/setup.sh as root)",
                            program, package));
  }
}

std::map<fs::path, std::string> sha256_files(const std::vector<fs::path>& files) {
  std::vector<std::string> argv = {"sha256sum", "--"};
  for (const auto& f : files) argv.push_back(f.string());
  std::map<fs::path, std::string> out;
  std::istringstream in(run_checked(argv));
  std::size_t i = 0;
  for (std::string line; std::getline(in, line) && i < files.size(); ++i) out[files[i]] = line.substr(0, 64);
  return out;
}

std::string sha256_text(std::string_view text) {
  return run_checked({"sha256sum"}, ProcessOptions{.stdin_data = std::string(text)}).substr(0, 64);
}

// Shared libraries (including the dynamic loader) that `ldd` lists for a binary.
std::vector<fs::path> shared_libraries(const fs::path& binary) {
  const ProcessResult r = run_process({"ldd", binary.string()});
  std::vector<fs::path> libs;
  if (r.exit_code != 0) return libs;  // "not a dynamic executable"
  std::istringstream in(r.out);
  for (std::string line; std::getline(in, line);) {
    // "\tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" or "\t/lib64/ld-linux-x86-64.so.2 (0x...)"
    const auto arrow = line.find("=> ");
    std::string rest = arrow != std::string::npos ? line.substr(arrow + 3) : line;
    rest.erase(0, rest.find_first_not_of(" \t"));
    const auto paren = rest.find(" (");
    if (paren != std::string::npos) rest.resize(paren);
    if (!rest.empty() && rest.front() == '/') libs.emplace_back(rest);
  }
  return libs;
}

// A static fio from Debian's source package, cached by the configure flags and source version.
fs::path ensure_static_fio(const Recipe& recipe, const fs::path& cache) {
  std::string flags;
  for (const auto& f : recipe.fio_configure) flags += f + "\n";
  const fs::path dir = cache / "tools" / ("fio-static-" + sha256_text(recipe.fio_source + "\n" + flags).substr(0, 16));
  const fs::path binary = dir / "fio";
  if (fs::exists(binary)) return binary;

  require_program("dpkg-source", "dpkg-dev");
  require_program("make", "build-essential");
  require_program("cc", "build-essential");
  for (const char* lib : {"/usr/include/libaio.h", "/usr/include/zlib.h"}) {
    require_file(lib, std::string_view(lib).find("aio") != std::string_view::npos ? "libaio-dev" : "zlib1g-dev");
  }
  fs::create_directories(cache / "tools");
  const fs::path work = cache / "tools" / fmt::format("fio-build.{}", ::getpid());
  fs::remove_all(work);
  fs::create_directories(work);
  const ProcessResult src = run_process({"apt-get", "source", "-qq", recipe.fio_source}, {.cwd = work});
  if (src.exit_code != 0) {
    fs::remove_all(work);
    throw InfraError(fmt::format(
        "apt-get source {} failed:\n{}\nEnable Debian source packages with {} (as root), then retry",
        recipe.fio_source, tail(src.err, 10), (recipe.file.parent_path() / "enable-deb-src.sh").string()));
  }
  fs::path tree;
  for (const auto& e : fs::directory_iterator(work)) {
    if (e.is_directory() && e.path().filename().string().rfind(recipe.fio_source + "-", 0) == 0) tree = e.path();
  }
  if (tree.empty()) throw InfraError("apt-get source " + recipe.fio_source + " left no source tree in " + work.string());
  std::vector<std::string> configure = {(tree / "configure").string()};
  configure.insert(configure.end(), recipe.fio_configure.begin(), recipe.fio_configure.end());
  const auto timeout = std::chrono::minutes(20);
  try {
    run_checked(configure, {.cwd = tree, .timeout = timeout});
    run_checked({"make", "-j2", "fio"}, {.cwd = tree, .timeout = timeout});
  } catch (...) {
    fs::remove_all(work);
    throw;
  }
  // A dynamic fio would fail in the guest, which has only dd's libraries: refuse it here.
  if (run_process({"ldd", (tree / "fio").string()}).exit_code == 0) {
    throw InfraError(fmt::format("{}: fio was linked dynamically despite --build-static; check the static "
                                 "libraries (libaio-dev, zlib1g-dev) and {}'s [fio] configure flags",
                                 (tree / "fio").string(), recipe.file.string()));
  }
  run_checked({"strip", "-o", (work / "fio").string(), (tree / "fio").string()});
  fs::create_directories(dir);
  fs::rename(work / "fio", binary);
  fs::remove_all(work);
  return binary;
}

std::string human_size(std::uint64_t bytes) {
  return fmt::format("{} bytes ({:.2f} MiB)", bytes, static_cast<double>(bytes) / (1024.0 * 1024.0));
}

}  // namespace

GuestImage build_guest_image(const GuestImageOptions& options) {
  const fs::path recipe_file =
      options.recipe.empty() ? resource("guests/base.toml") : options.recipe;
  const fs::path cache = options.cache_dir.empty() ? abvm_cache_dir() : options.cache_dir;
  const Recipe recipe = load_recipe(recipe_file);
  require_file(recipe.busybox, recipe.busybox_package);
  require_file(recipe.dd, recipe.dd_package);
  require_file(recipe.init, "(none: it is part of abvm's source tree)");
  require_program("gzip", "gzip");
  require_program("sha256sum", "coreutils");
  require_program("ldd", "libc-bin");

  const fs::path fio = ensure_static_fio(recipe, cache);
  const std::vector<fs::path> dd_libs = shared_libraries(recipe.dd);

  // The image key: the recipe, the agent, and every binary that goes in.
  std::vector<fs::path> inputs = {recipe.busybox, recipe.dd, fio};
  inputs.insert(inputs.end(), dd_libs.begin(), dd_libs.end());
  const auto hashes = sha256_files(inputs);
  std::string key_text = "abvm-guest-image 1\n" + recipe.text + "\n" + read_file(recipe.init) + "\n";
  for (const auto& f : inputs) key_text += f.string() + " " + hashes.at(f) + "\n";
  const std::string key = sha256_text(key_text).substr(0, 24);

  const fs::path images = cache / "images";
  const fs::path image_path = images / ("base-" + key + ".cpio.gz");
  const fs::path meta_path = images / ("base-" + key + ".contents");
  GuestImage image;
  image.path = image_path;
  if (!options.rebuild && fs::exists(image_path) && fs::exists(meta_path)) {
    std::istringstream in(read_file(meta_path));
    std::string line;
    std::getline(in, image.sha256);
    for (; std::getline(in, line);) image.contents.push_back(line);
    image.compressed_size = fs::file_size(image_path);
    return image;
  }

  CpioWriter cpio;
  for (const char* d : {"bin", "sbin", "usr", "usr/bin", "usr/sbin", "lib", "lib64", "proc", "sys", "dev", "run",
                        "tmp", "abvm", "abvm/modules"}) {
    cpio.add_directory(d);
  }
  // The kernel opens /dev/console for init before anything is mounted.
  cpio.add_char_device("dev/console", 0600, 5, 1);
  cpio.add_char_device("dev/null", 0666, 1, 3);
  cpio.add_file("bin/busybox", read_file(recipe.busybox), 0755);
  std::istringstream applets(run_checked({recipe.busybox.string(), "--list"}));
  for (std::string applet; std::getline(applets, applet);) {
    // GNU dd is the only dd: busybox's prints no timing.
    if (applet.empty() || applet == "busybox" || applet == "dd") continue;
    cpio.add_symlink("bin/" + applet, "busybox");
  }
  cpio.add_file("usr/bin/dd", read_file(recipe.dd), 0755);
  std::set<std::string> dirs = {"lib", "lib64"};
  for (const auto& lib : dd_libs) {
    const fs::path rel = lib.relative_path();
    for (fs::path p = rel.parent_path(); !p.empty(); p = p.parent_path()) {
      if (dirs.insert(p.string()).second) cpio.add_directory(p.string());
    }
    cpio.add_file(rel.string(), read_file(fs::canonical(lib)), 0755);
  }
  cpio.add_file("usr/bin/fio", read_file(fio), 0755);
  cpio.add_file("init", read_file(recipe.init), 0755);

  // Through a file, not stdin: run_process writes stdin with a blocking write, so megabytes
  // of input would deadlock against gzip's full output pipe.
  fs::create_directories(images);
  const fs::path raw = images / fmt::format("base-{}.cpio.{}", key, ::getpid());
  write_file_atomic(raw, cpio.finish());
  std::string compressed;
  try {
    compressed = run_checked({"gzip", "-9", "-n", "-c", raw.string()});
  } catch (...) {
    fs::remove(raw);
    throw;
  }
  fs::remove(raw);
  write_file_atomic(image_path, compressed);
  image.compressed_size = compressed.size();
  image.sha256 = sha256_files({image_path}).at(image_path);
  image.contents = cpio.paths();
  std::string meta = image.sha256 + "\n";
  for (const auto& p : image.contents) meta += p + "\n";
  write_file_atomic(meta_path, meta);
  return image;
}

std::string describe_guest_image(const GuestImage& image) {
  return fmt::format("image   {}\nsize    {}\nsha256  {}\nfiles   {}\n", image.path.string(),
                     human_size(image.compressed_size), image.sha256, image.contents.size());
}

void write_guest_initrd(const fs::path& out, const GuestImage& image, std::string_view modules_archive,
                        std::string_view job_archive) {
  std::string initrd = read_file(image.path);
  // After a compressed piece the kernel expects the next cpio header at a 4-byte boundary
  // and skips zero bytes to find it.
  while (initrd.size() % 512 != 0) initrd.push_back('\0');
  initrd += modules_archive;
  initrd += job_archive;
  write_file_atomic(out, initrd);
}

}  // namespace abvm
