#include "guest/modules.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/cpio.hpp"

namespace fs = std::filesystem;

namespace abvm {
namespace {

std::string canonical_name(std::string name) {
  std::replace(name.begin(), name.end(), '-', '_');
  return name;
}

// "kernel/drivers/block/virtio_blk.ko.xz" -> "virtio_blk"
std::string module_name_of(const std::string& path) {
  std::string base = fs::path(path).filename().string();
  const auto ko = base.find(".ko");
  if (ko != std::string::npos) base.resize(ko);
  return canonical_name(base);
}

bool is_module_file(const fs::path& p) {
  const std::string name = p.filename().string();
  for (const char* ext : {".ko", ".ko.xz", ".ko.zst", ".ko.gz"}) {
    const std::string e(ext);
    if (name.size() > e.size() && name.compare(name.size() - e.size(), e.size(), e) == 0) return true;
  }
  return false;
}

std::vector<std::string> split_words(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::string word;
  std::istringstream in(s);
  while (std::getline(in, word, sep)) {
    while (!word.empty() && (word.back() == ' ' || word.back() == '\n' || word.back() == '\t')) word.pop_back();
    while (!word.empty() && (word.front() == ' ' || word.front() == '\t')) word.erase(0, 1);
    if (!word.empty()) out.push_back(word);
  }
  return out;
}

}  // namespace

std::vector<ModuleFile> resolve_modules(const fs::path& modules_dir, const std::vector<std::string>& wanted) {
  if (!fs::is_directory(modules_dir)) {
    throw Error(fmt::format("{}: not a directory; pass the kernel's lib/modules/<version> directory",
                            modules_dir.string()));
  }
  std::set<std::string> builtin;
  if (fs::exists(modules_dir / "modules.builtin")) {
    std::istringstream in(read_file(modules_dir / "modules.builtin"));
    for (std::string line; std::getline(in, line);) {
      if (!line.empty()) builtin.insert(module_name_of(line));
    }
  }
  std::map<std::string, fs::path> files;                      // name -> file
  std::map<std::string, std::vector<std::string>> deps;       // name -> dependency names
  const fs::path dep_file = modules_dir / "modules.dep";
  const bool have_dep = fs::exists(dep_file);
  if (have_dep) {
    std::istringstream in(read_file(dep_file));
    std::size_t lineno = 0;
    for (std::string line; std::getline(in, line);) {
      ++lineno;
      if (line.empty()) continue;
      const auto colon = line.find(':');
      if (colon == std::string::npos) {
        throw Error(located(dep_file.string(), lineno, "missing ':' (is this a modules.dep file?)"));
      }
      const std::string mod = line.substr(0, colon);
      const std::string name = module_name_of(mod);
      files[name] = modules_dir / mod;
      auto& d = deps[name];
      for (const auto& dep : split_words(line.substr(colon + 1), ' ')) d.push_back(module_name_of(dep));
    }
  } else {
    for (const auto& entry : fs::recursive_directory_iterator(modules_dir)) {
      if (entry.is_regular_file() && is_module_file(entry.path())) files[module_name_of(entry.path().string())] = entry.path();
    }
  }

  std::vector<ModuleFile> order;
  std::set<std::string> done;
  std::set<std::string> visiting;
  std::function<void(const std::string&, const std::string&)> visit = [&](const std::string& name,
                                                                          const std::string& needed_by) {
    if (done.count(name) != 0) return;
    if (visiting.count(name) != 0) throw Error(fmt::format("kernel modules: dependency cycle at '{}'", name));
    const auto file = files.find(name);
    if (file == files.end()) {
      if (builtin.count(name) != 0) {
        done.insert(name);
        return;
      }
      throw Error(fmt::format("kernel module '{}'{} not found under {} (neither a module file nor listed in "
                              "modules.builtin): is this kernel built without it? Use a kernel with virtio-blk "
                              "and virtio-pci, built in or as modules",
                              name, needed_by.empty() ? "" : " (needed by " + needed_by + ")", modules_dir.string()));
    }
    visiting.insert(name);
    std::vector<std::string> direct;
    if (have_dep) {
      direct = deps[name];
    } else {
      // kmod's modinfo reads .ko, .ko.xz and .ko.zst alike.
      direct = split_words(run_checked({"modinfo", "-F", "depends", file->second.string()}), ',');
      for (auto& d : direct) d = canonical_name(d);
    }
    for (const auto& d : direct) visit(d, name);
    visiting.erase(name);
    done.insert(name);
    order.push_back({name, file->second});
  };
  for (const auto& w : wanted) visit(canonical_name(w), "");
  return order;
}

std::string build_modules_archive(const fs::path& modules_dir, const std::vector<std::string>& wanted) {
  const auto modules = resolve_modules(modules_dir, wanted);
  if (modules.empty()) return {};
  CpioWriter cpio;
  cpio.add_directory("abvm");
  cpio.add_directory("abvm/modules");
  std::string order;
  for (const auto& m : modules) {
    const std::string path = m.path.string();
    std::string content;
    auto ends_with = [&](std::string_view ext) {
      return path.size() > ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
    };
    if (ends_with(".ko.xz")) content = run_checked({"xz", "-dc", path});
    else if (ends_with(".ko.zst")) content = run_checked({"zstd", "-dcq", path});
    else if (ends_with(".ko.gz")) content = run_checked({"gzip", "-dc", path});
    else content = read_file(m.path);
    cpio.add_file("abvm/modules/" + m.name + ".ko", content, 0644);
    order += m.name + ".ko\n";
  }
  cpio.add_file("abvm/modules.order", order, 0644);
  return cpio.finish();
}

}  // namespace abvm
