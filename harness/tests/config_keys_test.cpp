#include "config/keys.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "config/device.hpp"
#include "config/experiment.hpp"

namespace abvm {
namespace {

// A file that sets only what must be set: every other key shows its default.
const char* kMinimal =
    "name = \"m\"\n"
    "[sides.B]\n"
    "label = \"b\"\n"
    "kernel = \"other\"\n"
    "[[workload]]\nname = \"d\"\ntype = \"dd\"\n"
    "[[workload]]\nname = \"f\"\ntype = \"fio\"\n"
    "[analysis]\nmetrics = [{ name = \"d.bandwidth\" }]\n";

TEST(ConfigKeys, PatternsMapConcretePaths) {
  EXPECT_EQ(key_pattern("guest.vcpus"), "guest.vcpus");
  EXPECT_EQ(key_pattern("sides.B.device.cache"), "sides.*.device.cache");
  EXPECT_EQ(key_pattern("sides.A"), "sides.*");
  EXPECT_EQ(key_pattern("workload[12].bs"), "workload[].bs");
  EXPECT_EQ(key_pattern("analysis.metrics[0].name"), "analysis.metrics[].name");
  EXPECT_NE(find_key("sides.*.device.iommu_platform"), nullptr);
  EXPECT_EQ(find_key("sides.A.label"), nullptr);
}

TEST(ConfigKeys, TableDefaultsAreTheLoadersDefaults) {
  const Experiment e = load_experiment_text(kMinimal, "m.toml", ".");
  std::set<std::string> defaulted;
  for (const EffectiveValue& v : e.effective) {
    const KeySpec* spec = find_key(key_pattern(v.key));
    ASSERT_NE(spec, nullptr) << v.key << " is shown but not in the key table";
    if (v.origin == "default" && spec->path == "sides.*.label") {
      EXPECT_EQ(v.value, "\"" + v.key.substr(6, 1) + "\"") << v.key;  // the side's letter
      defaulted.insert(spec->path);
    } else if (v.origin == "default") {
      EXPECT_EQ(v.value, spec->default_text) << v.key;
      defaulted.insert(spec->path);
    } else if (v.origin.rfind("default for ", 0) == 0) {
      // A default that follows another key (dd's flags follow if and of): the table states each case.
      const std::string when = v.origin.substr(12, v.origin.find(" (") - 12);  // "of = \"@scratch\""
      const std::string stated = v.value == "[]" ? ", else []" : v.value + " when " + when;
      EXPECT_NE(spec->default_text.find(stated), std::string::npos) << v.key << ": " << spec->default_text;
      defaulted.insert(spec->path);
    } else if (v.origin.rfind("side ", 0) == 0) {
      // "side A inherits guest.kernel (...)": the default names the shared key, whose value it is.
      EXPECT_NE(v.origin.find("inherits " + spec->default_text + " ("), std::string::npos) << v.key;
      const auto shared = std::find_if(e.effective.begin(), e.effective.end(),
                                       [&](const EffectiveValue& s) { return s.key == spec->default_text; });
      ASSERT_NE(shared, e.effective.end()) << v.key;
      EXPECT_EQ(v.value, shared->value) << v.key;
      defaulted.insert(spec->path);
    }
  }
  // Every non-required value key was exercised by its default (or inherited) here, except the
  // ones this file had to set and a side's label (default: its letter).
  // schedule.min_overlap is no longer used (issue 26): shown only when a file still writes it.
  const std::set<std::string> set_here = {"sides.*.kernel", "analysis.metrics",
                                          "analysis.metrics[].better", "schedule.min_overlap"};
  for (const KeySpec& k : key_table()) {
    if (k.required || k.type == KeyType::table || set_here.count(k.path) != 0) continue;
    if (k.type == KeyType::table_list) continue;
    EXPECT_EQ(defaulted.count(k.path), 1u) << k.path << " never showed its default";
  }
}

TEST(ConfigKeys, ShowNamesOrigins) {
  const Experiment e = load_experiment_text(kMinimal, "m.toml", ".");
  const std::string shown = describe_effective_config(e);
  EXPECT_NE(shown.find("\nname "), std::string::npos);
  const auto line_of = [&](const std::string& key) {
    const auto start = shown.find("\n" + key + " ");
    return shown.substr(start + 1, shown.find('\n', start + 1) - start - 1);
  };
  EXPECT_NE(line_of("sides.B.kernel").find("m.toml:4"), std::string::npos);
  EXPECT_NE(line_of("sides.A.kernel").find("side A inherits guest.kernel (default)"), std::string::npos);
  EXPECT_NE(line_of("guest.vcpus").find("default"), std::string::npos);
  EXPECT_NE(line_of("workload[1].rw").find("\"write\""), std::string::npos);
}

// `abvm config show` says where dd's flags came from: the end of dd that decided them (issue 20).
TEST(ConfigKeys, ShowSaysWhichEndOfDdDecidedItsFlags) {
  const Experiment e = load_experiment_text(
      "name = \"r\"\n[sides.B]\nkernel = \"other\"\n[[workload]]\nname = \"rd\"\ntype = \"dd\"\nif = \"@scratch\"\n"
      "of = \"/dev/null\"\n[[workload]]\nname = \"wr\"\ntype = \"dd\"\noflag = [\"direct\", \"dsync\"]\n",
      "r.toml", ".");
  std::map<std::string, std::pair<std::string, std::string>> shown;
  for (const EffectiveValue& v : e.effective) shown[v.key] = {v.value, v.origin};
  using P = std::pair<std::string, std::string>;
  EXPECT_EQ(shown["workload[0].iflag"],
            P("[\"direct\"]", "default for if = \"@scratch\" (the scratch disk: O_DIRECT)"));
  EXPECT_EQ(shown["workload[0].oflag"], P("[]", "default for of = \"/dev/null\" (not the scratch disk: no O_DIRECT)"));
  EXPECT_EQ(shown["workload[1].iflag"], P("[]", "default for if = \"/dev/zero\" (not the scratch disk: no O_DIRECT)"));
  EXPECT_EQ(shown["workload[1].oflag"], P("[\"direct\", \"dsync\"]", "r.toml:12"));
  EXPECT_NE(describe_effective_config(e).find("default for of = \"/dev/null\" (not the scratch disk: no O_DIRECT)"),
            std::string::npos);
}

TEST(ConfigKeys, EveryKeyIsDocumented) {
  const std::string table = describe_key_table();
  for (const KeySpec& k : key_table()) {
    EXPECT_FALSE(k.doc.empty()) << k.path;
    EXPECT_NE(table.find(k.path), std::string::npos) << k.path;
    if (!k.required && k.type != KeyType::table && k.type != KeyType::table_list) {
      EXPECT_FALSE(k.default_text.empty()) << k.path;
    }
  }
  EXPECT_EQ(describe_allowed(*find_key("guest.vcpus")), "1..255");
  EXPECT_EQ(describe_allowed(*find_key("disk.size")), "1M..1T");
  EXPECT_EQ(describe_allowed(*find_key("analysis.confidence")), "0.5 < x < 1");
  EXPECT_EQ(describe_allowed(*find_key("schedule.order")), "interleaved|sequential");
}

// libvirt's <iotune> settings, each once for [device.iotune] and once for a side's, with its unit.
TEST(ConfigKeys, IotuneKeysAreListedWithTheirUnits) {
  const std::string table = describe_key_table();
  EXPECT_NE(table.find("\n[device.iotune]  disk throttling"), std::string::npos);
  EXPECT_NE(table.find("\n[sides.*.device.iotune]  "), std::string::npos);
  for (const IotuneField& f : kIotuneFields) {
    for (const std::string prefix : {"device.iotune.", "sides.*.device.iotune."}) {
      const KeySpec* k = find_key(prefix + std::string(f.name));
      ASSERT_NE(k, nullptr) << prefix << f.name;
      EXPECT_NE(table.find("\n  " + k->path + " "), std::string::npos) << k->path;
      const bool bytes = f.unit == IotuneUnit::bytes_per_second || f.unit == IotuneUnit::bytes;
      EXPECT_EQ(k->type, bytes ? KeyType::size : KeyType::integer) << k->path;
      EXPECT_NE(k->doc.find(f.unit == IotuneUnit::bytes_per_second       ? "bytes per second, a size such as"
                            : f.unit == IotuneUnit::requests_per_second ? "requests per second"
                            : f.unit == IotuneUnit::seconds             ? "seconds"
                                                                        : "bytes that count as one request"),
                std::string::npos)
          << k->path << ": " << k->doc;
    }
  }
  EXPECT_EQ(find_key("device.iotune.total_bytes_sec")->doc,
            "limit of the throughput of reads and writes together: bytes per second, a size such as \"16M\" (16 "
            "MiB/s); not with read_bytes_sec or write_bytes_sec");
  EXPECT_EQ(find_key("device.iotune.write_iops_sec_max")->doc,
            "burst rate of write_iops_sec, requests per second, at least write_iops_sec (unset: QEMU lets a tenth of "
            "a second at the rate through at once)");
  EXPECT_EQ(describe_allowed(*find_key("device.iotune.total_bytes_sec")), "1..1T");
  EXPECT_EQ(describe_allowed(*find_key("device.iotune.read_iops_sec")), "1..1000000000000000");
  EXPECT_EQ(describe_allowed(*find_key("sides.*.device.iotune.total_iops_sec_max_length")), "1..4294967295");
  EXPECT_EQ(find_key("sides.*.device.iotune.size_iops_sec")->default_text, "device.iotune.size_iops_sec");
}

}  // namespace
}  // namespace abvm
