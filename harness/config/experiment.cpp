#include "config/experiment.hpp"

#include <fmt/format.h>
#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "config/keys.hpp"
#include "config/rules.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/units.hpp"

namespace abvm {

const char* to_string(ScheduleOrder order) {
  return order == ScheduleOrder::interleaved ? "interleaved" : "sequential";
}

const char* to_string(Design design) { return traits(design).name.data(); }

std::optional<Design> design_from_string(std::string_view text) {
  for (const DesignTraits& t : kDesignTraits) {
    if (text == t.name) return t.design;
  }
  return std::nullopt;
}

const char* to_string(LookCorrection correction) {
  switch (correction) {
    case LookCorrection::obrien_fleming: return "obrien-fleming";
    case LookCorrection::pocock: return "pocock";
    case LookCorrection::pocock_spending: return "pocock-spending";
    case LookCorrection::bonferroni: break;
  }
  return "bonferroni";
}

namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

std::string node_type_name(const toml::node& node) {
  switch (node.type()) {
    case toml::node_type::string: return "a string";
    case toml::node_type::integer: return "an integer";
    case toml::node_type::floating_point: return "a floating-point number";
    case toml::node_type::boolean: return "a boolean";
    case toml::node_type::table: return "a table";
    case toml::node_type::array: return "an array";
    default: return "a date/time";
  }
}

std::string quote(std::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

// The value as the user wrote it, for messages.
std::string render_node(const toml::node& node) {
  if (const auto* s = node.as_string()) return quote(s->get());
  if (const auto* i = node.as_integer()) return fmt::format("{}", i->get());
  if (const auto* f = node.as_floating_point()) return fmt::format("{}", f->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  return node_type_name(node);
}

std::string render(bool value) { return value ? "true" : "false"; }
std::string render_list(const std::vector<std::string>& items) {
  std::vector<std::string> quoted;
  for (const auto& item : items) quoted.push_back(quote(item));
  return fmt::format("[{}]", fmt::join(quoted, ", "));
}
std::string render_list(const std::vector<int>& items) { return fmt::format("[{}]", fmt::join(items, ", ")); }
template <class T>
std::string render_optional(const std::optional<T>& value) {
  return value ? fmt::format("{}", *value) : "unset";
}

// Optimal string alignment distance: like Levenshtein, plus a transposition costs 1
// ("lable" is one step from "label").
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) {
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
      }
    }
  }
  return d[a.size()][b.size()];
}

std::pair<std::string, std::string> split_parent(std::string_view path) {
  const auto dot = path.rfind('.');
  if (dot == std::string_view::npos) return {"", std::string(path)};
  return {std::string(path.substr(0, dot)), std::string(path.substr(dot + 1))};
}

constexpr std::uintmax_t kMaxJobFileBytes = 1 << 20;

bool valid_name(std::string_view name, bool allow_dot) {
  if (name.empty()) return false;
  return std::all_of(name.begin(), name.end(), [&](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || (allow_dot && c == '.');
  });
}

class Loader {
 public:
  Loader(std::string file, fs::path base_dir, const LoadOptions& options)
      : file_(std::move(file)), base_dir_(std::move(base_dir)), options_(options) {}

  Experiment load(std::string_view text) {
    try {
      root_ = toml::parse(text, file_);
    } catch (const toml::parse_error& e) {
      fail(e.source().begin.line, fmt::format("invalid TOML: {}", e.description()));
    }
    check_table(root_, "");
    if (!problems_.empty()) {
      const auto first = std::min_element(problems_.begin(), problems_.end(),
                                          [](const auto& x, const auto& y) { return x.first < y.first; });
      throw Error(located(file_, first->first, first->second));
    }
    Experiment e;
    e.source = file_;
    e.source_text = std::string(text);
    read_top(e);
    read_guest(e);
    read_disk(e);
    read_hosts(e);
    read_device("device", shared_device_, nullptr);
    read_side(e, Side::a, e.a);
    read_side(e, Side::b, e.b);
    check_sides(e);
    read_workloads(e);
    read_schedule(e);
    read_analysis(e);
    e.effective = std::move(effective_);
    return e;
  }

 private:
  [[noreturn]] void fail(std::size_t line, const std::string& message) const {
    throw Error(located(file_, line, message));
  }

  // ---- Schema check: every key known, every value of the right type. ----

  void problem(const toml::node& node, std::string message) {
    problems_.emplace_back(node.source().begin.line, std::move(message));
  }

  void check_table(const toml::table& table, const std::string& prefix) {
    for (const auto& [key, node] : table) {
      const std::string concrete = prefix.empty() ? std::string(key.str()) : prefix + "." + std::string(key.str());
      if (prefix == "sides" && key.str() != "A" && key.str() != "B") {
        problem(node, fmt::format("unknown side '{}': the sides are named A and B", concrete));
        continue;
      }
      const std::string pattern = key_pattern(concrete);
      const KeySpec* spec = find_key(pattern);
      if (spec == nullptr) {
        problem(node, unknown_key_message(concrete, pattern));
        continue;
      }
      check_value(node, concrete, *spec);
    }
  }

  static std::string unknown_key_message(const std::string& concrete, const std::string& pattern) {
    const auto [parent, leaf] = split_parent(pattern);
    const std::size_t limit = leaf.size() <= 4 ? 1 : 2;
    const KeySpec* best = nullptr;
    std::size_t best_distance = limit + 1;
    for (const KeySpec& spec : key_table()) {
      const auto [spec_parent, spec_leaf] = split_parent(spec.path);
      if (spec_parent != parent) continue;
      const std::size_t d = edit_distance(leaf, spec_leaf);
      if (d < best_distance) best = &spec, best_distance = d;
    }
    if (best != nullptr) {
      return fmt::format("unknown key '{}' (did you mean '{}'?)", concrete, split_parent(best->path).second);
    }
    // The right key in the wrong section ("vcpus" at the top instead of in [guest]).
    for (const KeySpec& spec : key_table()) {
      if (split_parent(spec.path).second == leaf && spec.type != KeyType::table) {
        return fmt::format("unknown key '{}' (did you mean '{}'?)", concrete, spec.path);
      }
    }
    return fmt::format("unknown key '{}': remove it, or check its spelling and its [section]", concrete);
  }

  void check_value(const toml::node& node, const std::string& concrete, const KeySpec& spec) {
    const auto wrong = [&] {
      problem(node, fmt::format("key '{}' must be {}, not {}", concrete, describe_type(spec.type),
                                node_type_name(node)));
    };
    const auto check_elements = [&](const toml::array& array, auto is_ok, const char* element_type) {
      std::size_t i = 0;
      for (const toml::node& element : array) {
        if (!is_ok(element)) {
          problem(element, fmt::format("key '{}' must be {}: element {} is {}, not {}", concrete,
                                       describe_type(spec.type), i, node_type_name(element), element_type));
          return;
        }
        ++i;
      }
    };
    switch (spec.type) {
      case KeyType::string:
      case KeyType::duration:
        if (!node.is_string()) wrong();
        break;
      case KeyType::boolean:
        if (!node.is_boolean()) wrong();
        break;
      case KeyType::integer:
        if (!node.is_integer()) wrong();
        break;
      case KeyType::number:
        if (!node.is_integer() && !node.is_floating_point()) wrong();
        break;
      case KeyType::size:
        if (!node.is_string() && !node.is_integer()) wrong();
        break;
      case KeyType::string_list:
        if (const auto* array = node.as_array()) {
          check_elements(*array, [](const toml::node& n) { return n.is_string(); }, "a string");
        } else {
          wrong();
        }
        break;
      case KeyType::integer_list:
        if (const auto* array = node.as_array()) {
          check_elements(*array, [](const toml::node& n) { return n.is_integer(); }, "an integer");
        } else {
          wrong();
        }
        break;
      case KeyType::string_table:
        if (const auto* table = node.as_table()) {
          for (const auto& [key, value] : *table) {
            if (!value.is_string() && !value.is_integer()) {
              problem(value, fmt::format("key '{}.{}' must be a string or an integer, not {}", concrete,
                                         key.str(), node_type_name(value)));
            }
          }
        } else {
          wrong();
        }
        break;
      case KeyType::table:
        if (const auto* table = node.as_table()) {
          check_table(*table, concrete);
        } else {
          wrong();
        }
        break;
      case KeyType::table_list:
        if (const auto* array = node.as_array()) {
          std::size_t i = 0;
          for (const toml::node& element : *array) {
            if (const auto* table = element.as_table()) {
              check_table(*table, fmt::format("{}[{}]", concrete, i));
            } else {
              problem(element, fmt::format("key '{}' must be {}: element {} is {}, not a table", concrete,
                                           describe_type(spec.type), i, node_type_name(element)));
            }
            ++i;
          }
        } else {
          wrong();
        }
        break;
    }
  }

  // ---- Reading typed values (types are checked above; ranges and choices here). ----

  const toml::node* at(std::string_view path) const { return root_.at_path(path).node(); }
  std::size_t line_of(std::string_view path) const {
    const toml::node* n = at(path);
    return n == nullptr ? 0 : n->source().begin.line;
  }
  std::string origin_of(std::string_view path) const {
    const toml::node* n = at(path);
    return n == nullptr ? "default" : fmt::format("{}:{}", file_, n->source().begin.line);
  }
  void note(std::string key, std::string value, std::string origin) {
    effective_.push_back({std::move(key), std::move(value), std::move(origin)});
  }
  void note(const std::string& key, std::string value) { note(key, std::move(value), origin_of(key)); }

  static const KeySpec& spec_of(std::string_view path) {
    const KeySpec* spec = find_key(key_pattern(path));
    if (spec == nullptr) throw std::logic_error("key missing from the key table: " + std::string(path));
    return *spec;
  }

  void check_range(std::string_view path, double value, const std::string& shown) const {
    const KeySpec& spec = spec_of(path);
    if (!spec.range) return;
    const KeyRange& r = *spec.range;
    const bool below = r.min_open ? value <= r.min : value < r.min;
    const bool above = r.max_open ? value >= r.max : value > r.max;
    if (below || above) {
      fail(line_of(path), fmt::format("key '{}' = {} is out of range: use {}", path, shown, describe_allowed(spec)));
    }
  }

  std::optional<std::string> get_string(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    std::string value = n->as_string()->get();
    const KeySpec& spec = spec_of(path);
    if (!spec.choices.empty() && std::find(spec.choices.begin(), spec.choices.end(), value) == spec.choices.end()) {
      fail(line_of(path), fmt::format("key '{}' = {} is not one of {}", path, quote(value),
                                      fmt::join(spec.choices, ", ")));
    }
    return value;
  }
  std::optional<bool> get_bool(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    return n->as_boolean()->get();
  }
  std::optional<std::int64_t> get_integer(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    const std::int64_t value = n->as_integer()->get();
    check_range(path, static_cast<double>(value), fmt::format("{}", value));
    return value;
  }
  std::optional<int> get_int(std::string_view path) const {
    const auto value = get_integer(path);
    if (!value) return std::nullopt;
    return static_cast<int>(*value);  // every int key's range fits in int
  }
  std::optional<double> get_number(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    const double value = n->is_integer() ? static_cast<double>(n->as_integer()->get()) : n->as_floating_point()->get();
    if (!std::isfinite(value)) fail(line_of(path), fmt::format("key '{}' must be a finite number", path));
    check_range(path, value, render_node(*n));
    return value;
  }
  std::optional<std::uint64_t> get_size(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    std::uint64_t bytes = 0;
    if (const auto* i = n->as_integer()) {
      if (i->get() < 0) fail(line_of(path), fmt::format("key '{}' = {} is negative", path, i->get()));
      bytes = static_cast<std::uint64_t>(i->get());
    } else {
      try {
        bytes = parse_size(n->as_string()->get());
      } catch (const Error& e) {
        fail(line_of(path), fmt::format("key '{}': {}", path, e.what()));
      }
    }
    check_range(path, static_cast<double>(bytes), render_node(*n));
    return bytes;
  }
  std::optional<milliseconds> get_duration(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    milliseconds value{};
    try {
      value = parse_duration(n->as_string()->get());
    } catch (const Error& e) {
      fail(line_of(path), fmt::format("key '{}': {}", path, e.what()));
    }
    check_range(path, static_cast<double>(value.count()), render_node(*n));
    return value;
  }
  std::optional<std::vector<std::string>> get_strings(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    std::vector<std::string> out;
    for (const toml::node& element : *n->as_array()) out.push_back(element.as_string()->get());
    return out;
  }
  std::optional<std::vector<int>> get_ints(std::string_view path) const {
    const toml::node* n = at(path);
    if (n == nullptr) return std::nullopt;
    std::vector<int> out;
    for (const toml::node& element : *n->as_array()) {
      const std::int64_t value = element.as_integer()->get();
      const KeyRange& r = *spec_of(path).range;
      if (value < r.min || value > r.max) {
        fail(element.source().begin.line,
             fmt::format("key '{}' has {}, out of range: use {}", path, value, describe_allowed(spec_of(path))));
      }
      out.push_back(static_cast<int>(value));
    }
    return out;
  }

  // ---- The sections. ----

  void read_top(Experiment& e) {
    const auto name = get_string("name");
    if (!name) {
      fail(0, "missing key 'name': add name = \"...\" ([A-Za-z0-9._-]+; results go to "
              "results/<name>-<timestamp>/)");
    }
    if (!valid_name(*name, true)) {
      fail(line_of("name"), fmt::format("key 'name' = {} may only contain letters, digits, '.', '_' and '-' "
                                        "(it names the results directory)", quote(*name)));
    }
    e.name = *name;
    note("name", quote(e.name));
    e.description = get_string("description").value_or("");
    note("description", quote(e.description));
  }

  void read_guest(Experiment& e) {
    shared_machine_.vcpus = get_int("guest.vcpus").value_or(shared_machine_.vcpus);
    note("guest.vcpus", fmt::format("{}", shared_machine_.vcpus));
    shared_machine_.memory_mib = get_int("guest.memory_mib").value_or(shared_machine_.memory_mib);
    note("guest.memory_mib", fmt::format("{}", shared_machine_.memory_mib));
    shared_machine_.vcpu_pins = get_ints("guest.vcpu_pins").value_or(shared_machine_.vcpu_pins);
    note("guest.vcpu_pins", render_list(shared_machine_.vcpu_pins));
    e.guest.image = get_string("guest.image").value_or(e.guest.image);
    note("guest.image", quote(e.guest.image));
    const std::string accel = get_string("guest.accelerator").value_or("auto");
    e.guest.accelerator = parse_accelerator(accel);
    note("guest.accelerator", quote(accel));
    shared_kernel_ = get_string("guest.kernel").value_or("debian-cloud");
    note("guest.kernel", quote(shared_kernel_));
    shared_cmdline_ = get_string("guest.cmdline").value_or("");
    note("guest.cmdline", quote(shared_cmdline_));
  }

  // Reads one device table. With `shared`, unset keys inherit from it (a side's table).
  void read_device(const std::string& prefix, VirtioBlkOptions& device, const VirtioBlkOptions* shared) {
    const auto origin = [&](const std::string& key) {
      const std::string path = prefix + "." + key;
      if (shared == nullptr || at(path) != nullptr) return origin_of(path);
      return fmt::format("{} inherits device.{} ({})", side_name_, key, origin_of("device." + key));
    };
    if (shared != nullptr) device = *shared;
    device.iommu_platform = get_bool(prefix + ".iommu_platform").value_or(device.iommu_platform);
    note(prefix + ".iommu_platform", render(device.iommu_platform), origin("iommu_platform"));
    if (auto q = get_int(prefix + ".queues")) device.queues = q;
    note(prefix + ".queues", render_optional(device.queues), origin("queues"));
    if (auto q = get_int(prefix + ".queue_size")) {
      if (!rules::is_power_of_two(*q)) {
        fail(line_of(prefix + ".queue_size"),
             fmt::format("key '{}.queue_size' = {} is not a power of two: use {}, {}, ... {}", prefix, *q,
                         rules::queue_size.min, 2 * rules::queue_size.min, rules::queue_size.max));
      }
      device.queue_size = q;
    }
    note(prefix + ".queue_size", render_optional(device.queue_size), origin("queue_size"));
    device.cache = get_string(prefix + ".cache").value_or(device.cache);
    note(prefix + ".cache", quote(device.cache), origin("cache"));
    device.io = get_string(prefix + ".io").value_or(device.io);
    note(prefix + ".io", quote(device.io), origin("io"));
    device.iothread = get_bool(prefix + ".iothread").value_or(device.iothread);
    note(prefix + ".iothread", render(device.iothread), origin("iothread"));
    for (const IotuneField& f : kIotuneFields) {
      const std::string key = "iotune." + std::string(f.name);
      const std::string path = prefix + "." + key;
      std::optional<std::uint64_t>& value = device.iotune.*f.member;
      if (f.unit == IotuneUnit::bytes_per_second || f.unit == IotuneUnit::bytes) {
        if (auto v = get_size(path)) value = *v;
      } else if (auto v = get_integer(path)) {
        value = static_cast<std::uint64_t>(*v);  // the key table's range starts at 1
      }
      note(path, render_iotune(f, value), origin(key));
    }
    check_iotune(prefix, device.iotune);
  }

  static std::string render_iotune(const IotuneField& f, const std::optional<std::uint64_t>& value) {
    if (!value) return "unset";
    const bool size = f.unit == IotuneUnit::bytes_per_second || f.unit == IotuneUnit::bytes;
    return size ? quote(format_size(*value)) : std::to_string(*value);
  }

  // The combinations libvirt or QEMU refuse (rules::iotune_conflict), at the line of the key at
  // fault. In a side's table a value may come from [device.iotune]; the message then says so.
  void check_iotune(const std::string& prefix, const IotuneOptions& t) const {
    const auto conflict = rules::iotune_conflict(t);
    if (!conflict) return;
    const auto where = [&](std::string_view name) {
      const std::string own = prefix + ".iotune." + std::string(name);
      return at(own) != nullptr ? own : "device.iotune." + std::string(name);
    };
    const auto inherited = [&](const std::string& path) {
      return path.starts_with(prefix + ".") ? "" : fmt::format(" (which {} inherits)", side_name_);
    };
    const auto value = [&](std::string_view name) {
      const auto f = std::find_if(kIotuneFields.begin(), kIotuneFields.end(),
                                  [&](const IotuneField& x) { return x.name == name; });
      return render_iotune(*f, t.*f->member);
    };
    const std::string key_path = where(conflict->key), other_path = where(conflict->other);
    const std::string key = fmt::format("'{}'{}", key_path, inherited(key_path));
    const std::string other = other_path + inherited(other_path);
    // A shared table's conflict is reported there, so a side's involves a key of its own.
    const std::size_t line = line_of(inherited(key_path).empty() ? key_path : other_path);
    using K = rules::IotuneConflict::Kind;
    std::string message;
    switch (conflict->kind) {
      case K::total_and_one_way:
        message = fmt::format("key {} cannot be set with {}: libvirt takes a total limit or read and write "
                              "limits, not both; remove one of them", key, other);
        break;
      case K::max_without_rate:
        message = fmt::format("key {} needs {}: a burst rate belongs to a rate limit; set {}, or remove {}", key,
                              other, conflict->other, conflict->key);
        break;
      case K::max_below_rate:
        message = fmt::format("key {} = {} is lower than {} = {}: QEMU refuses a burst rate below its rate; raise "
                              "it, or remove it (unset, QEMU lets a tenth of a second at the rate through at once)",
                              key, value(conflict->key), other, value(conflict->other));
        break;
      case K::length_without_max:
        message = fmt::format("key {} needs {}: it is how long that burst rate may last; set {}, or remove {}", key,
                              other, conflict->other, conflict->key);
        break;
      case K::burst_too_large:
        message = fmt::format("key {} = {} seconds at {} = {} is more than QEMU's limit of {} {} per burst: "
                              "shorten the burst or lower its rate", key, value(conflict->key), other,
                              value(conflict->other), rules::iotune_value_max,
                              conflict->key.find("_bytes_") != std::string_view::npos ? "bytes" : "requests");
        break;
      case K::size_without_iops:
        message = fmt::format("key {} needs an iops limit (total_iops_sec, read_iops_sec or write_iops_sec): it "
                              "says how many bytes count as one request; set one, or remove size_iops_sec", key);
        break;
    }
    fail(line, message);
  }

  // A URI is one libvirt connection: "<driver>[+<transport>]://[user@][host[:port]]/<path>[?...]".
  void read_hosts(Experiment& e) {
    const std::string key = "hosts.uris";
    e.hosts.uris = get_strings(key).value_or(std::vector<std::string>{});
    for (std::size_t i = 0; i < e.hosts.uris.size(); ++i) {
      const std::string& uri = e.hosts.uris[i];
      const bool control = std::any_of(uri.begin(), uri.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; });
      if (uri.find("://") == std::string::npos || uri.find("://") == 0 || control || uri.find(' ') != std::string::npos) {
        fail(line_of(key), fmt::format("key '{}': {} is not a libvirt URI: write e.g. \"qemu+ssh://root@lab3/system\" "
                                       "or \"qemu+tcp://10.0.0.7:16509/system\"", key, quote(uri)));
      }
      for (std::size_t j = 0; j < i; ++j) {
        if (e.hosts.uris[j] == uri) {
          fail(line_of(key), fmt::format("key '{}': {} is named twice: a host runs its own blocks once", key, quote(uri)));
        }
      }
    }
    if (!e.hosts.uris.empty() && !e.disk.path.empty()) {
      fail(line_of("disk.path"), "disk.path names a file on this machine, but the blocks run on [hosts]: remove it (abvm "
                                 "creates a scratch volume on each host)");
    }
    std::vector<std::string> quoted;
    for (const auto& u : e.hosts.uris) quoted.push_back(quote(u));
    note(key, fmt::format("[{}]", fmt::join(quoted, ", ")));
    e.hosts.pool_path = get_string("hosts.pool_path");
    if (!e.hosts.pool_path) return note("hosts.pool_path", "(unset)");
    if (!fs::path(*e.hosts.pool_path).is_absolute()) {
      fail(line_of("hosts.pool_path"), fmt::format("key 'hosts.pool_path' = {} must be an absolute path on the hosts",
                                                   quote(*e.hosts.pool_path)));
    }
    note("hosts.pool_path", quote(*e.hosts.pool_path));
  }

  void read_disk(Experiment& e) {
    const std::string path = get_string("disk.path").value_or("");
    note("disk.path", quote(path));
    e.disk.size_bytes = get_size("disk.size").value_or(e.disk.size_bytes);
    note("disk.size", quote(format_size(e.disk.size_bytes)));
    e.disk.preallocate = get_bool("disk.preallocate").value_or(false);
    note("disk.preallocate", render(e.disk.preallocate));
    e.disk.overwrite = get_bool("disk.overwrite").value_or(false);
    note("disk.overwrite", render(e.disk.overwrite));
    if (path.empty()) return;
    e.disk.path = fs::path(path).is_absolute() ? fs::path(path) : base_dir_ / path;
    check_disk(e.disk, path);
  }

  // Only stat()s: a mistaken path must never be opened, let alone written.
  void check_disk(const DiskSettings& disk, const std::string& written) const {
    const std::size_t line = line_of("disk.path");
    const std::string shown = disk.path.string() == written
                                  ? quote(written)
                                  : fmt::format("{} ({})", quote(written), disk.path.string());
    std::error_code ec;
    const fs::file_status status = fs::status(disk.path, ec);
    if (status.type() == fs::file_type::not_found) {
      // A link to something missing (a disk not plugged in yet) would be followed to create a
      // file wherever it points.
      if (fs::is_symlink(fs::symlink_status(disk.path, ec))) {
        fail(line, fmt::format("key 'disk.path' = {} is a symlink to a missing file ({}): name the image file "
                               "itself", shown, fs::read_symlink(disk.path, ec).string()));
      }
      if (!fs::is_directory(disk.path.parent_path().empty() ? fs::path(".") : disk.path.parent_path())) {
        fail(line, fmt::format("key 'disk.path' = {}: its directory does not exist: create it first", shown));
      }
      return;
    }
    if (ec) fail(line, fmt::format("key 'disk.path' = {}: cannot check it: {}", shown, ec.message()));
    std::string via;
    if (fs::is_symlink(fs::symlink_status(disk.path, ec))) {
      via = fmt::format(" (through a symlink to {})", fs::canonical(disk.path, ec).string());
    }
    switch (status.type()) {
      case fs::file_type::block:
        fail(line, fmt::format("key 'disk.path' = {} is a block device{}: abvm writes only to image files; "
                               "name a file, or leave disk.path empty for a scratch image in the results "
                               "directory", shown, via));
      case fs::file_type::regular: {
        const auto size = fs::file_size(disk.path, ec);
        if (!ec && size > 0 && !disk.overwrite) {
          fail(line, fmt::format("key 'disk.path' = {} is an existing non-empty file ({} bytes): the "
                                 "experiment would destroy its contents; set disk.overwrite = true if that is "
                                 "intended, or name a new file", shown, size));
        }
        return;
      }
      case fs::file_type::directory:
        fail(line, fmt::format("key 'disk.path' = {} is a directory: name an image file in it", shown));
      default:
        fail(line, fmt::format("key 'disk.path' = {} is not a regular file{}: name an image file", shown, via));
    }
  }

  void read_side(Experiment& e, Side id, SideSpec& side) {
    const std::string p = fmt::format("sides.{}", to_string(id));
    side_name_ = fmt::format("side {}", to_string(id));
    const auto inherited = [&](const std::string& key, const std::string& shared_key) {
      if (at(p + "." + key) != nullptr) return origin_of(p + "." + key);
      return fmt::format("{} inherits {} ({})", side_name_, shared_key, origin_of(shared_key));
    };
    side.label = get_string(p + ".label").value_or(to_string(id));
    note(p + ".label", quote(side.label));
    side.kernel = get_string(p + ".kernel").value_or(shared_kernel_);
    note(p + ".kernel", quote(side.kernel), inherited("kernel", "guest.kernel"));
    if (side.kernel.empty()) fail(line_of(p + ".kernel"), fmt::format("key '{}.kernel' is empty: name a kernel recipe", p));
    if (options_.kernel_exists && !options_.kernel_exists(side.kernel)) {
      const std::string key = at(p + ".kernel") != nullptr ? p + ".kernel" : "guest.kernel";
      fail(line_of(key), fmt::format("key '{}' = {}: no such kernel recipe or file: see kernels/ for the "
                                     "recipes, or give a path to a kernel image", key, quote(side.kernel)));
    }
    side.cmdline = get_string(p + ".cmdline").value_or(shared_cmdline_);
    const std::string append = get_string(p + ".cmdline_append").value_or("");
    std::string cmdline_origin = inherited("cmdline", "guest.cmdline");
    if (!append.empty()) {
      side.cmdline = side.cmdline.empty() ? append : side.cmdline + " " + append;
      cmdline_origin += fmt::format(" + {}.cmdline_append ({})", p, origin_of(p + ".cmdline_append"));
    }
    note(p + ".cmdline", quote(side.cmdline), cmdline_origin);
    note(p + ".cmdline_append", quote(append));

    side.machine = shared_machine_;
    if (auto v = get_int(p + ".guest.vcpus")) side.machine.vcpus = *v;
    note(p + ".guest.vcpus", fmt::format("{}", side.machine.vcpus), inherited("guest.vcpus", "guest.vcpus"));
    if (auto v = get_int(p + ".guest.memory_mib")) side.machine.memory_mib = *v;
    note(p + ".guest.memory_mib", fmt::format("{}", side.machine.memory_mib),
         inherited("guest.memory_mib", "guest.memory_mib"));
    if (auto v = get_ints(p + ".guest.vcpu_pins")) side.machine.vcpu_pins = *v;
    note(p + ".guest.vcpu_pins", render_list(side.machine.vcpu_pins),
         inherited("guest.vcpu_pins", "guest.vcpu_pins"));
    if (!side.machine.vcpu_pins.empty() &&
        side.machine.vcpu_pins.size() != static_cast<std::size_t>(side.machine.vcpus)) {
      const std::string key = at(p + ".guest.vcpu_pins") != nullptr ? p + ".guest.vcpu_pins" : "guest.vcpu_pins";
      fail(line_of(key), fmt::format("key '{}' has {} CPUs for {} vCPUs on {}: give one host CPU per vCPU",
                                     key, side.machine.vcpu_pins.size(), side.machine.vcpus, side_name_));
    }

    read_device(p + ".device", side.device, &shared_device_);
    if (!rules::io_allowed_with_cache(side.device.io, side.device.cache)) {
      const std::string key = at(p + ".device.io") != nullptr     ? p + ".device.io"
                              : at(p + ".device.cache") != nullptr ? p + ".device.cache"
                              : at("device.cache") != nullptr      ? "device.cache"
                                                                   : "device.io";
      fail(line_of(key), fmt::format("{}: device.io = \"native\" needs device.cache = \"none\" or \"directsync\" "
                                     "(QEMU's native AIO opens the disk with O_DIRECT): change one of them",
                                     side_name_));
    }
    (void)e;
  }

  void check_sides(const Experiment& e) {
    const bool allow = get_bool("schedule.allow_identical_sides").value_or(false);
    if (e.a.label == e.b.label) {
      fail(line_of(at("sides.B.label") != nullptr ? "sides.B.label" : "sides.A.label"), fmt::format("sides A and B have the same label {}: give them different "
                                                 "labels (reports name the sides by them)", quote(e.a.label)));
    }
    SideSpec a = e.a;
    a.label = e.b.label;
    if (a == e.b && !allow) {
      fail(line_of("sides.B"),
           "sides A and B are identical (same kernel, command line, device and guest options): set what B "
           "changes in [sides.B], or set schedule.allow_identical_sides = true for an A/A run");
    }
  }

  void read_workloads(Experiment& e) {
    const toml::node* list = at("workload");
    if (list == nullptr || list->as_array()->empty()) {
      fail(0, "no [[workload]]: add at least one, e.g. [[workload]] name = \"dd-write\" type = \"dd\"");
    }
    std::map<std::string, std::size_t> first_line;
    for (std::size_t i = 0; i < list->as_array()->size(); ++i) {
      const std::string p = fmt::format("workload[{}]", i);
      const toml::table& table = *list->as_array()->get(i)->as_table();
      const std::size_t table_line = table.source().begin.line;
      Workload w;
      const auto name = get_string(p + ".name");
      if (!name) fail(table_line, fmt::format("{} has no name: add name = \"...\" (unique, [A-Za-z0-9_-]+)", p));
      if (!valid_name(*name, false)) {
        fail(line_of(p + ".name"), fmt::format("key '{}.name' = {} may only contain letters, digits, '_' and "
                                               "'-' (metrics are named <workload>.<metric>)", p, quote(*name)));
      }
      if (const auto [it, inserted] = first_line.emplace(*name, line_of(p + ".name")); !inserted) {
        fail(line_of(p + ".name"), fmt::format("workload name {} is used twice (first at {}:{}): give each "
                                               "workload its own name", quote(*name), file_, it->second));
      }
      w.name = *name;
      note(p + ".name", quote(w.name));
      const auto type = get_string(p + ".type");
      if (!type) fail(table_line, fmt::format("workload {} has no type: add type = \"dd\" or type = \"fio\"", quote(w.name)));
      note(p + ".type", quote(*type));
      for (const auto& [key, node] : table) {
        const KeySpec& spec = spec_of(p + "." + std::string(key.str()));
        if (!spec.only_for.empty() && spec.only_for != *type) {
          fail(node.source().begin.line,
               fmt::format("key '{}.{}' is for {} workloads, but workload {} is {}: remove it", p, key.str(),
                           spec.only_for, quote(w.name), *type));
        }
      }
      w.repetitions = get_int(p + ".repetitions").value_or(w.repetitions);
      note(p + ".repetitions", fmt::format("{}", w.repetitions));
      w.warmup = get_int(p + ".warmup").value_or(w.warmup);
      note(p + ".warmup", fmt::format("{}", w.warmup));
      w.pre_run.sync = get_bool(p + ".sync").value_or(w.pre_run.sync);
      note(p + ".sync", render(w.pre_run.sync));
      w.pre_run.drop_caches = get_bool(p + ".drop_caches").value_or(w.pre_run.drop_caches);
      note(p + ".drop_caches", render(w.pre_run.drop_caches));
      w.pre_run.scheduler_none = get_bool(p + ".scheduler_none").value_or(w.pre_run.scheduler_none);
      note(p + ".scheduler_none", render(w.pre_run.scheduler_none));
      if (*type == "dd") {
        w.spec = read_dd(p);
      } else {
        w.spec = read_fio(p);
      }
      e.workloads.push_back(std::move(w));
    }
  }

  DdWorkload read_dd(const std::string& p) {
    DdWorkload dd;
    if (auto bs = get_size(p + ".bs")) dd.block_size = format_size(*bs);
    note(p + ".bs", quote(dd.block_size));
    if (auto count = get_integer(p + ".count")) dd.count = static_cast<std::uint64_t>(*count);
    note(p + ".count", fmt::format("{}", dd.count));
    dd.input = get_string(p + ".if").value_or(dd.input);
    note(p + ".if", quote(dd.input));
    dd.output = get_string(p + ".of").value_or(dd.output);
    note(p + ".of", quote(dd.output));
    dd.iflag = read_dd_flags(p + ".iflag", "if", dd.input);
    dd.oflag = read_dd_flags(p + ".oflag", "of", dd.output);
    return dd;
  }

  // A dd flag list as written, else dd's default for that end (rules::dd_default_flags: O_DIRECT
  // on the scratch disk only), its origin saying which end decided it.
  std::vector<std::string> read_dd_flags(const std::string& key, const std::string& end, const std::string& path) {
    const auto written = get_strings(key);
    if (!written) {
      std::vector<std::string> flags = rules::dd_default_flags(path);
      note(key, render_list(flags),
           fmt::format("default for {} = {} ({})", end, quote(path),
                       flags.empty() ? "not the scratch disk: no O_DIRECT" : "the scratch disk: O_DIRECT"));
      return flags;
    }
    note(key, render_list(*written));
    if (std::find(written->begin(), written->end(), "direct") != written->end() && rules::refuses_direct(path)) {
      fail(line_of(key), fmt::format("key '{}' = {} asks for O_DIRECT on {} = {}, which cannot be opened with "
                                     "O_DIRECT (dd fails in every run: Invalid argument): remove \"direct\" from "
                                     "it",
                                     key, render_list(*written), end, quote(path)));
    }
    return *written;
  }

  FioWorkload read_fio(const std::string& p) {
    FioWorkload fio;
    static const std::vector<std::string> job_keys = {"rw", "bs", "size", "direct", "ioengine", "filename",
                                                      "iodepth", "numjobs", "runtime", "options"};
    const std::string job_file = get_string(p + ".job_file").value_or("");
    note(p + ".job_file", quote(job_file));
    if (!job_file.empty()) {
      for (const std::string& key : job_keys) {
        if (at(p + "." + key) != nullptr) {
          fail(line_of(p + "." + key), fmt::format("key '{}.{}' conflicts with job_file: set it in the job "
                                                   "file {}", p, key, quote(job_file)));
        }
      }
      const fs::path path = fs::path(job_file).is_absolute() ? fs::path(job_file) : base_dir_ / job_file;
      // Only a regular, job-file-sized file: reading /dev/zero or a FIFO would never end, and
      // the text travels to the guest inside its initramfs.
      std::error_code ec;
      const fs::file_status st = fs::status(path, ec);
      if (st.type() != fs::file_type::not_found && st.type() != fs::file_type::none &&
          st.type() != fs::file_type::regular) {
        fail(line_of(p + ".job_file"), fmt::format("key '{}.job_file' = {} is not a regular file: name a fio job "
                                                   "file", p, quote(job_file)));
      }
      if (st.type() == fs::file_type::regular && fs::file_size(path, ec) > kMaxJobFileBytes) {
        fail(line_of(p + ".job_file"), fmt::format("key '{}.job_file' = {} is larger than {} bytes: a fio job file "
                                                   "is a few lines; name the right file", p, quote(job_file),
                                                   kMaxJobFileBytes));
      }
      try {
        fio.job_file = read_file(path);
      } catch (const Error& e) {
        fail(line_of(p + ".job_file"), fmt::format("key '{}.job_file': {}", p, e.what()));
      }
      fio.options.clear();
    } else {
      const auto set = [&](const std::string& key, std::string value) { fio.options[key] = std::move(value); };
      if (auto v = get_string(p + ".rw")) set("rw", *v);
      note(p + ".rw", quote(fio.options["rw"]));
      if (auto v = get_size(p + ".bs")) set("bs", format_size(*v));
      note(p + ".bs", quote(fio.options["bs"]));
      if (auto v = get_size(p + ".size")) set("size", format_size(*v));
      note(p + ".size", quote(fio.options["size"]));
      if (auto v = get_bool(p + ".direct")) set("direct", *v ? "1" : "0");
      note(p + ".direct", render(fio.options["direct"] == "1"));
      if (auto v = get_string(p + ".ioengine")) set("ioengine", *v);
      note(p + ".ioengine", quote(fio.options["ioengine"]));
      if (auto v = get_string(p + ".filename")) set("filename", *v);
      note(p + ".filename", quote(fio.options["filename"]));
      const auto iodepth = get_int(p + ".iodepth");
      if (iodepth) set("iodepth", std::to_string(*iodepth));
      note(p + ".iodepth", render_optional(iodepth));
      const auto numjobs = get_int(p + ".numjobs");
      if (numjobs) set("numjobs", std::to_string(*numjobs));
      note(p + ".numjobs", render_optional(numjobs));
      const auto runtime = get_duration(p + ".runtime");
      if (runtime) {
        set("runtime", format_duration(*runtime));
        set("time_based", "1");
      }
      note(p + ".runtime", runtime ? quote(format_duration(*runtime)) : "unset");
      check_fio_options(p, fio);
      std::vector<std::string> extra;
      if (const toml::node* options = at(p + ".options")) {
        for (const auto& [key, value] : *options->as_table()) {
          const std::string name(key.str());
          if (std::find(job_keys.begin(), job_keys.end(), name) != job_keys.end() || name == "time_based" ||
              name == "output-format" || name == "name") {
            fail(value.source().begin.line, fmt::format("key '{}.options.{}': set it with {}.{} instead, or "
                                                        "leave it to abvm", p, name, p, name));
          }
          const std::string text = value.is_string() ? value.as_string()->get()
                                                     : std::to_string(value.as_integer()->get());
          set(name, text);
          extra.push_back(fmt::format("{} = {}", name, quote(text)));
        }
      }
      note(p + ".options", fmt::format("{{{}}}", fmt::join(extra, ", ")));
    }
    fio.output_format = get_string(p + ".output_format").value_or(fio.output_format);
    note(p + ".output_format", quote(fio.output_format));
    return fio;
  }

  // What fio would refuse or silently not do, at the key to change: O_DIRECT on a device that has
  // none, a queue depth a synchronous engine ignores.
  void check_fio_options(const std::string& p, const FioWorkload& fio) const {
    const std::string& filename = fio.options.at("filename");
    if (fio.options.at("direct") == "1" && rules::refuses_direct(filename)) {
      fail(line_of(p + ".filename"), fmt::format("key '{}.filename' = {} with direct = true asks for O_DIRECT on a "
                                                 "device that cannot be opened with it (fio fails in every run): set "
                                                 "direct = false, or filename = \"@scratch\" (the default)",
                                                 p, quote(filename)));
    }
    const auto depth = fio.options.find("iodepth");
    const std::string& engine = fio.options.at("ioengine");
    const bool synchronous = std::find(rules::synchronous_ioengines.begin(), rules::synchronous_ioengines.end(),
                                       engine) != rules::synchronous_ioengines.end();
    if (depth != fio.options.end() && depth->second != "1" && synchronous) {
      fail(line_of(p + ".iodepth"), fmt::format("key '{}.iodepth' = {} has no effect with ioengine = {}: a synchronous "
                                                "engine keeps one request in flight whatever iodepth says; set "
                                                "ioengine = \"libaio\" or \"io_uring\" for a queue depth, or "
                                                "remove iodepth",
                                                p, depth->second, quote(engine)));
    }
  }

  // schedule.design, schedule.cpu_set and schedule.cpu_sets (after schedule.order, which the
  // designs that pair A with B need, and after the sides, which same-guest compares).
  void read_design(const Experiment& e, ScheduleSettings& s) {
    if (auto design = get_string("schedule.design")) s.design = *design_from_string(*design);  // choices checked
    note("schedule.design", quote(to_string(s.design)));
    const std::string name = quote(to_string(s.design));
    if (traits(s.design).pairs_sides && s.order != ScheduleOrder::interleaved) {
      fail(line_of("schedule.design"), fmt::format("schedule.design = {} pairs each block's A and B boots: it needs "
                                                   "schedule.order = \"interleaved\"; remove the order", name));
    }
    if (traits(s.design).guests_at_once && at("disk.path") != nullptr) {
      fail(line_of("schedule.design"), fmt::format("schedule.design = {} runs two guests at once, each on a scratch "
                                                   "image of its own: remove disk.path and let abvm create them", name));
    }
    if (traits(s.design).disks_per_guest == 2) check_same_guest(e);
    read_cpu_sets(s);
  }

  // One guest holds both sides' disks: the sides may differ in their device options only.
  void check_same_guest(const Experiment& e) {
    const auto fail_here = [&](const std::string& why) {
      fail(line_of("schedule.design"), fmt::format("schedule.design = \"same-guest\" boots one guest with both "
                                                   "sides' disks, so the sides may differ only in device options, "
                                                   "but {}: use another design", why));
    };
    if (e.a.kernel != e.b.kernel) fail_here("their kernels differ");
    if (e.a.cmdline != e.b.cmdline) fail_here("their kernel command lines differ");
    if (!(e.a.machine == e.b.machine)) fail_here("their machine options differ");
    if (at("disk.path") != nullptr) fail_here("disk.path names one disk (remove it: abvm creates one per side)");
  }

  void read_cpu_sets(ScheduleSettings& s) {
    const bool one = at("schedule.cpu_set") != nullptr, many = at("schedule.cpu_sets") != nullptr;
    if (one && many) {
      fail(line_of("schedule.cpu_sets"), "schedule.cpu_set and schedule.cpu_sets both name the host CPUs: keep "
                                         "cpu_sets (a list; one block runs on each set at once)");
    }
    const std::string key = one ? "schedule.cpu_set" : "schedule.cpu_sets";
    if (one) s.cpu_sets = {*get_string(key)};
    if (many) s.cpu_sets = *get_strings(key);
    if (!one && !many && traits(s.design).guests_at_once) s.cpu_sets = {kDefaultCoScheduledCpuSet};
    std::map<std::int64_t, std::string> owner;
    for (const auto& set : s.cpu_sets) {
      if (!rules::valid_cpu_set(set)) {
        fail(line_of(key), fmt::format("key '{}' = {} is not a host CPU set: write CPU numbers and ranges such as "
                                       "\"0\", \"2-3\" or \"0,2\"", key, quote(set)));
      }
      for (auto cpu : rules::cpu_set_members(set)) {
        if (auto [it, fresh] = owner.emplace(cpu, set); !fresh) {
          fail(line_of(key), fmt::format("key '{}': CPU {} is in {} and in {}: the lanes' CPU sets must not overlap "
                                         "(each runs its own block at the same time)", key, cpu, quote(it->second),
                                         quote(set)));
        }
      }
    }
    if (s.cpu_sets.size() > 1 && at("disk.path") != nullptr) {
      fail(line_of(key), fmt::format("key '{}' runs {} blocks at once, each on scratch images of its own: remove "
                                     "disk.path and let abvm create them", key, s.cpu_sets.size()));
    }
    std::vector<std::string> quoted;
    for (const auto& set : s.cpu_sets) quoted.push_back(quote(set));
    note("schedule.cpu_set", one ? quote(s.cpu_sets[0]) : "unset");
    note("schedule.cpu_sets", many ? fmt::format("[{}]", fmt::join(quoted, ", ")) : "unset");
  }

  void read_schedule(Experiment& e) {
    ScheduleSettings& s = e.schedule;
    s.boots_per_side = get_int("schedule.boots_per_side").value_or(s.boots_per_side);
    note("schedule.boots_per_side", std::to_string(s.boots_per_side));
    if (auto order = get_string("schedule.order")) {
      s.order = *order == "sequential" ? ScheduleOrder::sequential : ScheduleOrder::interleaved;
    }
    note("schedule.order", quote(to_string(s.order)));
    if (auto w = get_string("schedule.workload_order")) s.draw_workload_order = *w == "drawn";
    note("schedule.workload_order", s.draw_workload_order ? "\"drawn\"" : "\"as-listed\"");
    read_design(e, s);
    s.min_overlap = get_number("schedule.min_overlap").value_or(s.min_overlap);
    note("schedule.min_overlap", fmt::format("{}", s.min_overlap));
    if (auto seed = get_integer("schedule.seed")) s.seed = static_cast<std::uint64_t>(*seed);
    note("schedule.seed", std::to_string(s.seed));
    s.boot_timeout = get_duration("schedule.boot_timeout").value_or(s.boot_timeout);
    note("schedule.boot_timeout", quote(format_duration(s.boot_timeout)));
    s.run_timeout = get_duration("schedule.run_timeout").value_or(s.run_timeout);
    note("schedule.run_timeout", quote(format_duration(s.run_timeout)));
    s.allow_identical_sides = get_bool("schedule.allow_identical_sides").value_or(false);
    note("schedule.allow_identical_sides", render(s.allow_identical_sides));
    s.infra_retries = get_int("schedule.infra_retries").value_or(s.infra_retries);
    note("schedule.infra_retries", std::to_string(s.infra_retries));
    s.console_limit = get_size("schedule.console_limit").value_or(s.console_limit);
    note("schedule.console_limit", quote(format_size(s.console_limit)));

    SequentialSettings& q = s.sequential;
    q.enabled = get_bool("schedule.sequential.enabled").value_or(q.enabled);
    note("schedule.sequential.enabled", render(q.enabled));
    q.max_boots_per_side = get_int("schedule.sequential.max_boots_per_side").value_or(q.max_boots_per_side);
    note("schedule.sequential.max_boots_per_side", std::to_string(q.max_boots_per_side));
    q.max_wall_time = get_duration("schedule.sequential.max_wall_time").value_or(q.max_wall_time);
    note("schedule.sequential.max_wall_time", quote(format_duration(q.max_wall_time)));
    q.look_every = get_int("schedule.sequential.look_every").value_or(q.look_every);
    note("schedule.sequential.look_every", std::to_string(q.look_every));
    if (auto c = get_string("schedule.sequential.correction")) {
      // The key table's choices have been checked: one of these matches.
      for (auto k : {LookCorrection::obrien_fleming, LookCorrection::pocock, LookCorrection::pocock_spending,
                     LookCorrection::bonferroni}) {
        if (*c == to_string(k)) q.correction = k;
      }
    }
    note("schedule.sequential.correction", quote(to_string(q.correction)));
    if (q.enabled && q.max_boots_per_side < s.boots_per_side) {
      const std::string key = at("schedule.sequential.max_boots_per_side") != nullptr
                                  ? "schedule.sequential.max_boots_per_side"
                                  : "schedule.boots_per_side";
      fail(line_of(key), fmt::format("schedule.sequential.max_boots_per_side = {} is less than "
                                     "schedule.boots_per_side = {}: the budget must allow the first look; "
                                     "raise it or lower boots_per_side",
                                     q.max_boots_per_side, s.boots_per_side));
    }
  }

  void read_analysis(Experiment& e) {
    AnalysisSettings& a = e.analysis;
    a.margin = get_number("analysis.margin").value_or(a.margin);
    note("analysis.margin", fmt::format("{}", a.margin));
    a.confidence = get_number("analysis.confidence").value_or(a.confidence);
    note("analysis.confidence", fmt::format("{}", a.confidence));
    if (auto seed = get_integer("analysis.seed")) a.seed = static_cast<std::uint64_t>(*seed);
    note("analysis.seed", std::to_string(a.seed));
    std::vector<std::string> shown;
    if (const toml::node* list = at("analysis.metrics")) {
      for (std::size_t i = 0; i < list->as_array()->size(); ++i) {
        const std::string p = fmt::format("analysis.metrics[{}]", i);
        MetricSelection m;
        const auto name = get_string(p + ".name");
        if (!name) {
          fail(list->as_array()->get(i)->source().begin.line,
               fmt::format("{} has no name: add name = \"<workload>.<metric>\"", p));
        }
        m.name = *name;
        const auto dot = m.name.find('.');
        const std::string workload = m.name.substr(0, dot);
        const bool known = std::any_of(e.workloads.begin(), e.workloads.end(),
                                       [&](const Workload& w) { return w.name == workload; });
        if (dot == std::string::npos || dot + 1 == m.name.size() || !known) {
          std::vector<std::string> names;
          for (const Workload& w : e.workloads) names.push_back(w.name);
          fail(line_of(p + ".name"),
               fmt::format("key '{}.name' = {} does not name a metric of a workload: use "
                           "\"<workload>.<metric>\" with one of the workloads {}",
                           p, quote(m.name), fmt::join(names, ", ")));
        }
        for (const MetricSelection& other : a.metrics) {
          if (other.name == m.name) {
            fail(line_of(p + ".name"), fmt::format("metric {} is listed twice in analysis.metrics", quote(m.name)));
          }
        }
        if (auto better = get_string(p + ".better")) {
          m.better = parse_better(*better).value_or(Better::lower);
        }
        shown.push_back(fmt::format("{{ name = {}{} }}", quote(m.name),
                                    m.better ? fmt::format(", better = \"{}\"",
                                                           to_string(*m.better))
                                             : ""));
        a.metrics.push_back(std::move(m));
      }
    }
    note("analysis.metrics", fmt::format("[{}]", fmt::join(shown, ", ")));
  }

  std::string file_;
  fs::path base_dir_;
  const LoadOptions& options_;
  toml::table root_;
  std::vector<std::pair<std::size_t, std::string>> problems_;
  std::vector<EffectiveValue> effective_;
  // The shared values the sides inherit.
  std::string shared_kernel_;
  std::string shared_cmdline_;
  MachineOptions shared_machine_;
  VirtioBlkOptions shared_device_;
  std::string side_name_;
};

}  // namespace

Experiment load_experiment(const fs::path& file, const LoadOptions& options) {
  const std::string text = read_file(file);
  fs::path base = file.parent_path();
  if (base.empty()) base = ".";
  return load_experiment_text(text, file.string(), base, options);
}

Experiment load_experiment_text(std::string_view text, std::string display_name, const fs::path& base_dir,
                                const LoadOptions& options) {
  Loader loader(std::move(display_name), base_dir, options);
  return loader.load(text);
}

std::string describe_effective_config(const Experiment& experiment) {
  std::size_t key_width = 0;
  std::size_t value_width = 0;
  for (const EffectiveValue& v : experiment.effective) {
    key_width = std::max(key_width, v.key.size());
    value_width = std::max(value_width, std::min<std::size_t>(v.value.size(), 40));
  }
  std::string out = fmt::format("# experiment {} from {}: every value and where it came from\n",
                                experiment.name, experiment.source);
  for (const EffectiveValue& v : experiment.effective) {
    out += fmt::format("{:<{}}  {:<{}}  {}\n", v.key, key_width, v.value, value_width, v.origin);
  }
  return out;
}

}  // namespace abvm
