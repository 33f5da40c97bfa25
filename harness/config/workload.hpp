#pragma once
// What runs inside a guest: the workloads of an experiment, as values. The experiment file
// (config/) produces them, the plan (plan/) orders them into trials, and the guest job
// (guest/job) serialises them for the in-guest agent. Plain data, no behaviour.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace abvm {

// GNU dd with direct I/O, as in the seed: dd if=/dev/zero of=/dev/vda bs=8M count=1024 oflag=direct
struct DdWorkload {
  std::string block_size = "1M";          // dd's bs= (dd's own suffixes: K, M, G; kB, MB ...)
  std::uint64_t count = 64;               // dd's count=
  std::string input = "/dev/zero";        // if=
  std::string output = "@scratch";        // of=; "@scratch" is the guest's virtio-blk scratch disk
  std::vector<std::string> iflag;         // e.g. {"direct"}
  std::vector<std::string> oflag = {"direct"};
};

// fio with JSON output. Either a job file's text, or options for one job (fio's
// --name=value command-line form). "@scratch" in filename= means the scratch disk.
struct FioWorkload {
  std::optional<std::string> job_file;    // the text of a fio job file
  std::map<std::string, std::string> options = {
      {"rw", "write"}, {"bs", "1M"}, {"size", "64M"}, {"direct", "1"},
      {"ioengine", "psync"}, {"filename", "@scratch"}};
  std::string output_format = "json";     // "json" or "json+"
};

// Steps before each measured run; all on by default because each removes a known source
// of noise (dirty page cache, scheduler reordering).
struct PreRunSteps {
  bool sync = true;
  bool drop_caches = true;
  bool scheduler_none = true;   // echo none > /sys/block/<scratch>/queue/scheduler
};

struct Workload {
  std::string name;                              // unique in the experiment, e.g. "dd-write"
  std::variant<DdWorkload, FioWorkload> spec;
  int repetitions = 1;                           // measured runs per boot
  int warmup = 0;                                // discarded runs before them
  PreRunSteps pre_run;
};

}  // namespace abvm
