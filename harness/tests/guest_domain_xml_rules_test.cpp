// guest/domain_xml.cpp against config/rules.hpp: the bounds and choices of the machine and disk
// keys are the same in the three places that use them -- the key table (`abvm config keys`), the
// experiment loader and the domain XML validation. For every bounded [guest]/[device] key, the
// table's min and max pass the loader and the loaded spec becomes a domain; one step outside
// fails both, and both messages name the same bounds. A new bounded key fails here until this test
// knows how to set it, so copies cannot drift apart unnoticed again.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "config/experiment.hpp"
#include "config/keys.hpp"
#include "core/error.hpp"
#include "guest/domain_xml.hpp"

using namespace abvm;

namespace {

DomainSpec basic() {
  DomainSpec s;
  s.name = "abvm-1-rules-A-0";
  s.kernel = "/k/vmlinuz";
  s.disks = {{.path = "/r/scratch.img"}};
  s.console_log = "/r/console.log";
  return s;
}

// "" when the spec becomes a domain, else the error.
std::string domain_error(const DomainSpec& s) {
  try {
    domain_xml(s);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// How to put one integer into a DomainSpec, and the same into an experiment file (the keys'
// own section), per bounded key of the shared tables.
struct IntKey {
  std::function<void(DomainSpec&, std::int64_t)> set;
  std::string toml;  // fmt pattern, {} is the value
};

// An <iotune> value alone, or with what it needs at the smallest values that allow it (a burst
// rate needs its rate, not above it; a burst length its burst rate; an iops size an iops limit).
std::pair<std::string, IntKey> iotune_key(const IotuneField& f) {
  const std::string name(f.name);
  std::string needs;
  IotuneOptions base;
  if (name.ends_with("_max") || name.ends_with("_max_length")) {
    const std::string rate = name.substr(0, name.find("_sec") + 4);
    needs = rate + " = 1\n";
    base.*std::find_if(kIotuneFields.begin(), kIotuneFields.end(), [&](auto& x) { return x.name == rate; })->member = 1;
    if (name.ends_with("_max_length")) {
      needs += rate + "_max = 1\n";
      base.*std::find_if(kIotuneFields.begin(), kIotuneFields.end(), [&](auto& x) { return x.name == rate + "_max"; })
                ->member = 1;
    }
  } else if (name == "size_iops_sec") {
    needs = "total_iops_sec = 1\n";
    base.total_iops_sec = 1;
  }
  const auto member = f.member;
  return {"device.iotune." + name,
          {[base, member](DomainSpec& s, std::int64_t v) {
             s.disks[0].options.iotune = base;
             s.disks[0].options.iotune.*member = static_cast<std::uint64_t>(v);
           },
           "[device.iotune]\n" + needs + name + " = {}\n"}};
}

const std::map<std::string, IntKey>& int_keys() {
  static const std::map<std::string, IntKey> keys = [] {
    std::map<std::string, IntKey> out = {
      {"guest.vcpus", {[](DomainSpec& s, std::int64_t v) { s.machine.vcpus = static_cast<int>(v); },
                       "[guest]\nvcpus = {}\n"}},
      {"guest.memory_mib", {[](DomainSpec& s, std::int64_t v) { s.machine.memory_mib = static_cast<int>(v); },
                            "[guest]\nmemory_mib = {}\n"}},
      {"guest.vcpu_pins", {[](DomainSpec& s, std::int64_t v) { s.machine.vcpu_pins = {static_cast<int>(v)}; },
                           "[guest]\nvcpu_pins = [{}]\n"}},
      {"device.queues", {[](DomainSpec& s, std::int64_t v) { s.disks[0].options.queues = static_cast<int>(v); },
                         "[device]\nqueues = {}\n"}},
      {"device.queue_size", {[](DomainSpec& s, std::int64_t v) { s.disks[0].options.queue_size = static_cast<int>(v); },
                             "[device]\nqueue_size = {}\n"}},
    };
    for (const IotuneField& f : kIotuneFields) out.insert(iotune_key(f));
    return out;
  }();
  return keys;
}

// Choice keys: the other setting is chosen so that every choice is valid on its own (io 'native'
// needs cache 'none').
struct ChoiceKey {
  std::function<void(DomainSpec&, const std::string&)> set;
  std::string toml;
};

const std::map<std::string, ChoiceKey>& choice_keys() {
  static const std::map<std::string, ChoiceKey> keys = {
      {"device.cache", {[](DomainSpec& s, const std::string& v) {
                          s.disks[0].options.cache = v;
                          s.disks[0].options.io = "threads";
                        },
                        "[device]\ncache = \"{}\"\nio = \"threads\"\n"}},
      {"device.io", {[](DomainSpec& s, const std::string& v) {
                       s.disks[0].options.io = v;
                       s.disks[0].options.cache = "none";
                     },
                     "[device]\nio = \"{}\"\ncache = \"none\"\n"}},
  };
  return keys;
}

// A valid experiment with `section` (TOML tables) added; the sides differ only in the kernel.
Experiment load(const std::string& section) {
  const std::string text = "name = \"rules\"\n" + section +
                           "[sides.B]\nkernel = \"other\"\n[[workload]]\nname = \"d\"\ntype = \"dd\"\n";
  return load_experiment_text(text, "rules.toml", ".");
}

std::string load_error(const std::string& section) {
  try {
    load(section);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// Side A of the loaded experiment as a domain: what `abvm run` would hand to libvirt.
DomainSpec side_a_domain(const std::string& section) {
  const Experiment e = load(section);
  DomainSpec s = basic();
  s.machine = e.a.machine;
  s.disks[0].options = e.a.device;
  return s;
}

// The two lines `abvm config keys` prints for a key.
std::string table_entry(const std::string& path) {
  const std::string table = describe_key_table();
  const auto at = table.find("\n  " + path + " ");
  if (at == std::string::npos) return "";
  const auto first_end = table.find('\n', at + 1);
  return table.substr(at + 1, table.find('\n', first_end + 1) - at - 1);
}

// A shared key a side may override: a field of MachineOptions or VirtioBlkOptions, which the
// domain XML validates again ("guest.vcpus", "device.cache"; not "guest.image").
bool is_machine_or_device_key(const KeySpec& k) {
  const bool shared = k.path.rfind("guest.", 0) == 0 || k.path.rfind("device.", 0) == 0;
  return shared && find_key("sides.*." + k.path) != nullptr;
}

}  // namespace

TEST(GuestDomainXmlRules, EveryBoundedMachineOrDeviceKeyIsCoveredHere) {
  std::size_t seen = 0;
  for (const KeySpec& k : key_table()) {
    if (!is_machine_or_device_key(k)) continue;
    ++seen;
    if (k.range) {
      EXPECT_EQ(int_keys().count(k.path), 1u) << k.path << ": teach this test to set it in a DomainSpec";
    }
    if (!k.choices.empty()) {
      EXPECT_EQ(choice_keys().count(k.path), 1u) << k.path << ": teach this test to set it in a DomainSpec";
    }
  }
  EXPECT_EQ(seen, 29u) << "3 machine and 6 device keys, [device.iotune] and its 19 keys; update this count with "
                          "MachineOptions/VirtioBlkOptions";
}

TEST(GuestDomainXmlRules, SidesHaveTheSharedKeysBoundsAndChoices) {
  for (const KeySpec& k : key_table()) {
    if (!is_machine_or_device_key(k)) continue;
    const KeySpec* side = find_key("sides.*." + k.path);
    EXPECT_EQ(side->choices, k.choices) << k.path;
    ASSERT_EQ(side->range.has_value(), k.range.has_value()) << k.path;
    if (k.range) {
      EXPECT_TRUE(side->range->min == k.range->min && side->range->max == k.range->max) << k.path;
    }
  }
}

TEST(GuestDomainXmlRules, TableBoundsPassTheLoaderAndTheDomainAndOneStepOutsideFailsBoth) {
  for (const auto& [path, key] : int_keys()) {
    SCOPED_TRACE(path);
    const KeySpec* spec = find_key(path);
    ASSERT_NE(spec, nullptr);
    ASSERT_TRUE(spec->range.has_value());
    ASSERT_FALSE(spec->range->min_open || spec->range->max_open);
    const auto min = static_cast<std::int64_t>(spec->range->min);
    const auto max = static_cast<std::int64_t>(spec->range->max);
    // "1..255", or for a size "1..1T": as `abvm config keys` shows it.
    const std::string bounds = describe_allowed(*spec);
    EXPECT_EQ(bounds.find(".."), bounds.rfind("..")) << bounds;
    EXPECT_NE(table_entry(path).find(bounds), std::string::npos) << table_entry(path);

    for (std::int64_t inside : {min, max}) {
      const std::string section = fmt::format(fmt::runtime(key.toml), inside);
      ASSERT_EQ(load_error(section), "") << inside;
      EXPECT_EQ(domain_error(side_a_domain(section)), "") << inside;
      DomainSpec s = basic();
      key.set(s, inside);
      EXPECT_EQ(domain_error(s), "") << inside;
    }
    for (std::int64_t outside : {min - 1, max + 1}) {
      const std::string loader = load_error(fmt::format(fmt::runtime(key.toml), outside));
      EXPECT_NE(loader.find("key '" + path + "'"), std::string::npos) << loader;
      EXPECT_NE(loader.find(bounds), std::string::npos) << loader;
      DomainSpec s = basic();
      key.set(s, outside);
      const std::string domain = domain_error(s);
      EXPECT_NE(domain.find(bounds), std::string::npos) << outside << ": " << domain;
    }
  }
}

TEST(GuestDomainXmlRules, EveryTableChoicePassesBothAndOthersFailBoth) {
  for (const auto& [path, key] : choice_keys()) {
    SCOPED_TRACE(path);
    const KeySpec* spec = find_key(path);
    ASSERT_NE(spec, nullptr);
    ASSERT_FALSE(spec->choices.empty());
    for (const std::string& choice : spec->choices) {
      const std::string section = fmt::format(fmt::runtime(key.toml), choice);
      ASSERT_EQ(load_error(section), "") << choice;
      EXPECT_EQ(domain_error(side_a_domain(section)), "") << choice;
      EXPECT_NE(table_entry(path).find(choice), std::string::npos) << choice;
    }
    EXPECT_NE(load_error(fmt::format(fmt::runtime(key.toml), "bogus")).find("key '" + path + "'"), std::string::npos);
    DomainSpec s = basic();
    key.set(s, "bogus");
    const std::string domain = domain_error(s);
    for (const std::string& choice : spec->choices) EXPECT_NE(domain.find(choice), std::string::npos) << domain;
  }
}

TEST(GuestDomainXmlRules, TableDefaultsAreTheLoadersAndTheDomainsDefaults) {
  const Experiment e = load("");
  EXPECT_EQ(e.a.machine, MachineOptions{});
  EXPECT_EQ(e.a.device, VirtioBlkOptions{});
  EXPECT_EQ(DomainSpec{}.machine, MachineOptions{});
  EXPECT_EQ(ScratchDisk{}.options, VirtioBlkOptions{});
  EXPECT_EQ(domain_error(side_a_domain("")), "");
  for (const EffectiveValue& v : e.effective) {
    const KeySpec* spec = find_key(v.key);
    if (spec == nullptr || !is_machine_or_device_key(*spec)) continue;
    EXPECT_EQ(v.value, spec->default_text) << v.key;
    EXPECT_NE(table_entry(v.key).find("default " + spec->default_text), std::string::npos) << v.key;
  }
}
