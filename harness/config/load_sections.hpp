#pragma once
// Internal to config/: the experiment loader's sections, one file each (config/load_<section>.cpp),
// called by load_experiment_text (config/experiment.cpp) in the order the effective values are
// listed. Each reads its keys through the KeyReader and throws Error at the line of the key at fault.
#include <string>

#include "config/experiment.hpp"
#include "config/key_reader.hpp"

namespace abvm::loader {

// Every key known and every value of the key table's type; else Error at the first problem by
// line (load_schema.cpp).
void check_schema(const toml::table& root, const std::string& file);

// What the sides inherit: [guest]'s kernel and command line, its machine options and [device].
struct SharedSideValues {
  std::string kernel;
  std::string cmdline;
  MachineOptions machine;
  VirtioBlkOptions device;
};

void read_top(KeyReader& r, Experiment& e);                             // experiment.cpp
void read_guest(KeyReader& r, Experiment& e, SharedSideValues& shared);  // load_guest.cpp
void read_disk(KeyReader& r, Experiment& e);                             // load_disk_hosts.cpp
void read_hosts(KeyReader& r, Experiment& e);                            // load_disk_hosts.cpp

// One device table at `prefix` (load_device.cpp). With `shared`, unset keys inherit from it (a
// side's table, `side_name` naming the side in origins and messages).
void read_device(KeyReader& r, const std::string& prefix, VirtioBlkOptions& device, const VirtioBlkOptions* shared,
                 const std::string& side_name);

// load_sides.cpp
void read_side(KeyReader& r, const SharedSideValues& shared, const LoadOptions& options, Side id, SideSpec& side);
void check_sides(const KeyReader& r, const Experiment& e);

void read_workloads(KeyReader& r, Experiment& e);  // load_workloads.cpp
void read_schedule(KeyReader& r, Experiment& e);   // load_schedule.cpp
void read_analysis(KeyReader& r, Experiment& e);   // load_analysis.cpp

// One reader per workload kind, `p` naming its [[workload]] table ("workload[2]"): the kind's own
// keys, into the default spec read_workloads made of the kind the table's `type` names
// (load_<kind>.cpp).
void read_kind(KeyReader& r, const std::string& p, DdWorkload& dd);
void read_kind(KeyReader& r, const std::string& p, FioWorkload& fio);

}  // namespace abvm::loader
