#pragma once
// The one fake GuestDriver of abvm's tests (the real one, guest/libvirt_driver, is exercised by
// the guest tests). It boots nothing: it records what it was asked to boot, reads the trial id
// and nonce out of the job archive abvm appended to the initrd (as the guest agent would), and
// answers with the console text a test scripts, in the real record format when the test uses
// fake_guest_console(). `done` is applied as the real driver applies it. Like the real driver it
// takes calls from several threads at once (co-scheduled blocks); `hold` keeps each fake guest
// "running" that long, and max_running says how many ran at the same time.
#include <algorithm>
#include <array>
#include <sstream>
#include <fmt/format.h>
#include <chrono>
#include <filesystem>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "config/workload.hpp"
#include "core/base64.hpp"
#include "core/files.hpp"
#include "guest/console_cap.hpp"
#include "guest/driver.hpp"
#include "guest/records.hpp"

namespace abvm::test {

// One boot the fake was asked for.
struct FakeBoot {
  DomainSpec spec;
  std::chrono::milliseconds timeout{0};
  std::string trial, nonce;       // from the job inside the initrd ("" when there is none)
  bool initrd_existed = false;
};

// How the fake guest ends. When the console satisfies the caller's `done`, the boot is
// `finished` whatever `end` says (the real driver then destroys the guest).
struct FakeAnswer {
  std::string console;
  GuestOutcome::End end = GuestOutcome::End::powered_off;
  double seconds = 1.5;
  std::string detail;
};

// A field ("trial", "nonce") of the job file inside an initrd's appended job archive.
inline std::string job_field(const std::string& initrd, const std::string& key) {
  const std::size_t job = initrd.rfind("abvm-job 2\n");
  if (job == std::string::npos) return "";
  const std::size_t at = initrd.find("\n" + key + " ", job);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size() + 2;
  return initrd.substr(begin, initrd.find('\n', begin) - begin);
}

// The console of a guest that runs every warm-up and measured run of `workloads` with exit
// status 0 and prints `output` for each (e.g. real GNU dd output), then its END record.
inline std::string fake_guest_console(const std::string& trial, const std::string& nonce,
                                      const std::vector<Workload>& workloads, const std::string& output) {
  std::uint64_t seq = 0;
  std::string out = "[    0.000000] Linux version 6.1.0-28-cloud-amd64\nRun /init as init process\n";
  const auto rec = [&](std::string_view type, const std::string& payload) {
    out += format_guest_record(nonce, seq++, type, payload) + "\n";
  };
  rec("BEGIN", base64_encode(trial) + ",1.31");
  rec("UNAME", base64_encode("6.1.0-28-cloud-amd64"));
  rec("CMDLINE", base64_encode("console=ttyS0 panic=-1 quiet rdinit=/init"));
  rec("FEATURES", "0110000000000000000000000000000001000000000000000000000000000000");
  for (const auto& w : workloads) {
    for (int i = 0; i < w.warmup + w.repetitions; ++i) {
      const bool warm = i < w.warmup;
      const std::string index = std::to_string(warm ? i : i - w.warmup);
      rec("RUN", w.name + "," + index + (warm ? ",1" : ",0") + ",2.2");
      rec("OUT", base64_encode(output));
      rec("RUNEND", w.name + "," + index + ",0,2.3");
    }
  }
  rec("END", std::to_string(seq));
  return out;
}

// The job file inside an initrd's appended job archive (guest/job.hpp format), as the agent reads it.
struct FakeJob {
  struct Work {
    std::string name, disk;
    int repetitions = 0, warmup = 0;
  };
  std::vector<Work> workloads;
  std::vector<std::array<int, 3>> steps;  // workload, warmup, index
  bool lockstep = false;
};

inline FakeJob fake_job(const std::string& initrd) {
  FakeJob job;
  const std::size_t at = initrd.rfind("abvm-job 2\n");
  if (at == std::string::npos) return job;
  std::istringstream in(initrd.substr(at));
  for (std::string line; std::getline(in, line) && line != "done";) {
    const std::string key = line.substr(0, line.find(' '));
    const std::string val = line.find(' ') == std::string::npos ? "" : line.substr(line.find(' ') + 1);
    if (key == "workload") job.workloads.push_back({.name = val});
    else if (key == "disk") job.workloads.back().disk = val;
    else if (key == "repetitions") job.workloads.back().repetitions = std::stoi(val);
    else if (key == "warmup") job.workloads.back().warmup = std::stoi(val);
    else if (key == "lockstep") job.lockstep = val == "1";
    else if (key == "step") {
      std::istringstream f(val);
      std::array<int, 3> s{};
      f >> s[0] >> s[1] >> s[2];
      job.steps.push_back(s);
    }
  }
  if (job.steps.empty()) {
    for (int w = 0; w < static_cast<int>(job.workloads.size()); ++w) {
      for (int k = 0; k < job.workloads[w].warmup; ++k) job.steps.push_back({w, 1, k});
      for (int k = 0; k < job.workloads[w].repetitions; ++k) job.steps.push_back({w, 0, k});
    }
  }
  return job;
}

// One run a fake agent made: which trial, its record name and index, and when (steady clock).
struct FakeRun {
  std::string trial, name;
  int index = 0;
  bool warmup = false;
  std::chrono::steady_clock::time_point start, end;
};

class FakeDriver : public GuestDriver {
 public:
  explicit FakeDriver(std::string host = "fake") : host_(std::move(host)) {}

  // Emulates the agent instead of `answer`: reads the job out of the initrd, reports each disk's
  // features (VIRTIO_F_ACCESS_PLATFORM as its options say), runs the steps in the job's order
  // (each taking run_time, printing agent_output), and in a lockstep job says READY and waits
  // for "go <step>" through the caller's input hook, as guests/agent/init.sh does.
  bool emulate_agent = false;
  std::string agent_output;
  std::chrono::milliseconds run_time{0};
  std::vector<FakeRun> runs;  // every run the emulated agents made, in the order they ended

  // The guest's behaviour per boot. Unset: an empty console that powers off.
  std::function<FakeAnswer(const FakeBoot&)> answer;
  // Called while the "guest runs", e.g. to deliver a signal mid-trial.
  std::function<void()> during_boot;
  std::vector<FakeBoot> boots;
  std::chrono::milliseconds hold{0};
  int max_running = 0;

  using GuestDriver::run_guest;
  GuestOutcome run_guest(const DomainSpec& spec, std::chrono::milliseconds timeout,
                         const ConsoleHooks& hooks) override {
    if (emulate_agent) return agent(spec, timeout, hooks);
    FakeBoot b{.spec = spec, .timeout = timeout, .initrd_existed = !spec.initrd.empty() && std::filesystem::exists(spec.initrd)};
    if (b.initrd_existed) {
      const std::string initrd = read_file(spec.initrd);
      b.trial = job_field(initrd, "trial");
      b.nonce = job_field(initrd, "nonce");
    }
    {
      std::lock_guard lock(mutex_);
      max_running = std::max(max_running, ++running_);
    }
    std::this_thread::sleep_for(hold);
    std::unique_lock lock(mutex_);
    --running_;
    boots.push_back(b);
    if (during_boot) during_boot();
    const FakeAnswer a = answer ? answer(b) : FakeAnswer{};
    lock.unlock();
    GuestOutcome o{.end = a.end, .seconds = a.seconds, .detail = a.detail};
    // The scripted console goes through the same cap as the real driver's.
    ConsoleCap console(spec.console_limit);
    console.add(a.console);
    keep_console(console, o);
    if (o.end != GuestOutcome::End::infra_error && !o.console_cut && hooks.done(o.console)) {
      o.end = GuestOutcome::End::finished;
    }
    return o;
  }
  std::string describe() const override { return host_; }

  GuestOutcome agent(const DomainSpec& spec, std::chrono::milliseconds timeout, const ConsoleHooks& hooks) {
    const std::string initrd = read_file(spec.initrd);
    const std::string trial = job_field(initrd, "trial"), nonce = job_field(initrd, "nonce");
    const FakeJob job = fake_job(initrd);
    {
      std::lock_guard lock(mutex_);
      boots.push_back({.spec = spec, .timeout = timeout, .trial = trial, .nonce = nonce, .initrd_existed = true});
      max_running = std::max(max_running, ++running_);
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    std::uint64_t seq = 0;
    std::string console = "Run /init as init process\n";
    GuestOutcome o{.end = GuestOutcome::End::finished, .seconds = 1};
    const auto rec = [&](std::string_view type, const std::string& payload) {
      console += format_guest_record(nonce, seq++, type, payload) + "\n";
      return hooks.done(console);
    };
    rec("BEGIN", base64_encode(trial) + ",1.31");
    rec("UNAME", base64_encode("6.1.0-28-cloud-amd64"));
    rec("CMDLINE", base64_encode("console=ttyS0 panic=-1 quiet rdinit=/init"));
    for (const auto& d : spec.disks) {
      std::string bits(64, '0');
      bits[1] = bits[2] = bits[32] = '1';
      bits[33] = d.options.iommu_platform ? '1' : '0';
      rec("FEATURES", d.serial + "," + bits);
    }
    std::string typed;
    for (std::size_t n = 0; n < job.steps.size(); ++n) {
      const auto& [w, warm, index] = job.steps[n];
      const auto& work = job.workloads.at(static_cast<std::size_t>(w));
      if (job.lockstep) {
        if (rec("READY", std::to_string(n))) break;
        const std::string go = fmt::format("go {}\n", n);
        while (typed.find(go) == std::string::npos) {
          if (std::chrono::steady_clock::now() > deadline) {
            o.end = GuestOutcome::End::timeout;
            break;
          }
          if (hooks.input) typed += hooks.input();
          if (hooks.done(console)) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
        if (o.end == GuestOutcome::End::timeout) break;
      }
      FakeRun run{.trial = trial, .name = work.name, .index = index, .warmup = warm == 1,
                  .start = std::chrono::steady_clock::now()};
      if (rec("RUN", fmt::format("{},{},{},2.2", work.name, index, warm))) break;
      std::this_thread::sleep_for(run_time);
      run.end = std::chrono::steady_clock::now();
      rec("OUT", base64_encode(agent_output));
      {
        std::lock_guard lock(mutex_);
        runs.push_back(run);
      }
      if (rec("RUNEND", fmt::format("{},{},0,2.3", work.name, index))) break;
    }
    if (o.end != GuestOutcome::End::timeout) rec("END", std::to_string(seq));
    {
      std::lock_guard lock(mutex_);
      --running_;
    }
    ConsoleCap cap(spec.console_limit);
    cap.add(console);
    keep_console(cap, o);
    return o;
  }
  HostVersions versions() override {
    HostVersions v{"fake:///" + host_, "0", "0"};
    v.cpus = cpus;
    return v;
  }
  int cpus = 0;  // what versions() says the host has; 0: not said

 private:
  std::string host_;
  std::mutex mutex_;
  int running_ = 0;
};

}  // namespace abvm::test
