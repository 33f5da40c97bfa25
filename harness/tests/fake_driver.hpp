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
#include <cmath>
#include <filesystem>
#include <functional>
#include <map>
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
  const std::size_t job = initrd.rfind("abvm-job 4\n");
  if (job == std::string::npos) return "";
  const std::size_t at = initrd.find("\n" + key + " ", job);
  if (at == std::string::npos) return "";
  const std::size_t begin = at + key.size() + 2;
  return initrd.substr(begin, initrd.find('\n', begin) - begin);
}

// The exit status and output of one run of a fake guest, by the run's record name, its index and
// whether it is a warm-up: e.g. {1, "dd: failed to open '/dev/null': Invalid argument\n"}.
using FakeRunResult = std::function<std::pair<int, std::string>(const std::string& name, int index, bool warmup)>;

// A run's CPU record's "busy,all" ticks (guest/records.hpp GuestCpuTicks), by the run's record
// name and index; unset: no CPU records (an agent before them).
using FakeCpuTicks = std::function<std::string(const std::string& name, int index)>;

// The console of a guest that runs every warm-up and measured run of `workloads` with the exit
// status and output `result` gives each (and the CPU ticks `cpu` gives), then its END record.
inline std::string fake_guest_console(const std::string& trial, const std::string& nonce,
                                      const std::vector<Workload>& workloads, const FakeRunResult& result,
                                      const FakeCpuTicks& cpu = {}) {
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
      const auto [status, output] = result(w.name, warm ? i : i - w.warmup, warm);
      rec("RUN", w.name + "," + index + (warm ? ",1" : ",0") + ",2.2");
      rec("OUT", base64_encode(output));
      rec("RUNEND", w.name + "," + index + "," + std::to_string(status) + ",2.3");
      if (cpu) rec("CPU", w.name + "," + index + "," + cpu(w.name, std::stoi(index)));
    }
  }
  rec("END", std::to_string(seq));
  return out;
}

// The same with exit status 0 and `output` for every run (e.g. real GNU dd output).
inline std::string fake_guest_console(const std::string& trial, const std::string& nonce,
                                      const std::vector<Workload>& workloads, const std::string& output) {
  return fake_guest_console(trial, nonce, workloads,
                            [&](const std::string&, int, bool) { return std::pair<int, std::string>(0, output); });
}

// GNU dd's summary of 16 x 8 MiB at `bytes_per_second`: what a scripted guest's dd prints.
inline std::string fake_dd_output(double bytes_per_second) {
  return fmt::format("16+0 records in\n16+0 records out\n134217728 bytes (134 MB, 128 MiB) copied, {:.6f} s, {:.1f} GB/s\n",
                     134217728 / bytes_per_second, bytes_per_second / 1e9);
}

// A boot's own factor, within 1 +- `spread` and fixed by its trial and nonce: boots that differ as
// real ones do, the same at every run of the test.
inline double fake_boot_wobble(const FakeBoot& boot, double spread) {
  return 1 + spread * std::sin(static_cast<double>(std::hash<std::string>{}(boot.trial + boot.nonce) % 1000));
}

// The job file inside an initrd's appended job archive (guest/job.hpp format), as the agent reads it.
struct FakeJob {
  struct Work {
    std::string name, disk;
    int repetitions = 0, warmup = 0;
  };
  std::vector<Work> workloads;
  std::vector<std::array<int, 3>> steps;  // workload, warmup, index
  std::string pace = "free";
  bool fill = false;
};

inline FakeJob fake_job(const std::string& initrd) {
  FakeJob job;
  const std::size_t at = initrd.rfind("abvm-job 4\n");
  if (at == std::string::npos) return job;
  std::istringstream in(initrd.substr(at));
  for (std::string line; std::getline(in, line) && line != "done";) {
    const std::string key = line.substr(0, line.find(' '));
    const std::string val = line.find(' ') == std::string::npos ? "" : line.substr(line.find(' ') + 1);
    if (key == "workload") job.workloads.push_back({.name = val});
    else if (key == "disk") job.workloads.back().disk = val;
    else if (key == "repetitions") job.workloads.back().repetitions = std::stoi(val);
    else if (key == "warmup") job.workloads.back().warmup = std::stoi(val);
    else if (key == "pace") job.pace = val;
    else if (key == "fill") job.fill = val == "1";
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

// One run a fake agent made: which trial, its record name and index, and when (steady clock): its
// go, the measured run, and the end of its load (the filler's end in a paced block).
struct FakeRun {
  std::string trial, name;
  int index = 0;
  bool warmup = false;
  std::chrono::steady_clock::time_point go, start, end, load_end;
};

// A paced guest's misbehaviour, per boot (guests/agent/init.sh's test faults).
enum class FakeFault {
  none,
  never_ready,   // hangs before its first READY
  hang_window,   // hangs after its first go
  deaf,          // never hears the first go
  die_window,    // its boot ends (QEMU killed) in the middle of its first run
  die_after_done,  // its boot ends (QEMU killed) after its first DONE, before its stop and records
};

class FakeDriver : public GuestDriver {
 public:
  explicit FakeDriver(std::string host = "fake") : host_(std::move(host)) {}

  // Emulates the agent instead of `answer`: reads the job out of the initrd, reports each disk's
  // features (VIRTIO_F_ACCESS_PLATFORM as its options say), runs the steps in the job's order
  // (each taking run_time, or run_time_of(trial), printing agent_output), and in a paced job says
  // READY, waits for "go <step>" through the caller's input hook, runs, says DONE, keeps its load
  // until "stop <step>" (or "abort"), and only then prints the run's records, as
  // guests/agent/init.sh does. Its guest clock is the steady clock plus guest_clock_offset.
  bool emulate_agent = false;
  std::string agent_output;
  // The exit status and output of each run (trial, then as FakeRunResult); unset: 0 and agent_output.
  std::function<std::pair<int, std::string>(const std::string& trial, const std::string& name, int index, bool warmup)>
      run_result;
  std::chrono::milliseconds run_time{0};
  std::function<std::chrono::milliseconds(const std::string& trial)> run_time_of;
  std::function<FakeFault(const std::string& trial)> fault;
  double guest_clock_offset = -1000;
  // The host's statistics of an emulated guest (ConsoleHooks::on_running): counters that grow by
  // stats_step at every read, so that a window read at its go and its stop costs one step; unless
  // stats_error(trial) says why every read of that trial's guest fails.
  DomainStats stats_step{.cpu_seconds = 0.5, .user_seconds = 0.375, .system_seconds = 0.125, .vcpu_seconds = 0.25,
                         .disk_bytes = std::uint64_t{1} << 30, .disk_requests = 1000};
  std::function<std::string(const std::string& trial)> stats_error;
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

  // One emulated boot of the agent (see emulate_agent).
  class Agent {
   public:
    Agent(FakeDriver& d, const DomainSpec& spec, std::chrono::milliseconds timeout, const ConsoleHooks& hooks)
        : d_(d), spec_(spec), hooks_(hooks), deadline_(std::chrono::steady_clock::now() + timeout) {
      const std::string initrd = read_file(spec.initrd);
      trial_ = job_field(initrd, "trial");
      nonce_ = job_field(initrd, "nonce");
      job_ = fake_job(initrd);
      fault_ = d.fault ? d.fault(trial_) : FakeFault::none;
      run_time_ = d.run_time_of ? d.run_time_of(trial_) : d.run_time;
    }

    GuestOutcome run() {
      console_ = "Run /init as init process\n";
      if (hooks_.on_running) hooks_.on_running([this] { return read_stats(); });
      rec("BEGIN", base64_encode(trial_) + "," + now());
      rec("UNAME", base64_encode("6.1.0-28-cloud-amd64"));
      rec("CMDLINE", base64_encode("console=ttyS0 panic=-1 quiet rdinit=/init"));
      for (const auto& disk : spec_.disks) {
        std::string bits(64, '0');
        bits[1] = bits[2] = bits[32] = '1';
        bits[33] = disk.options.iommu_platform ? '1' : '0';
        rec("FEATURES", disk.serial + "," + bits);
      }
      for (std::size_t n = 0; n < job_.steps.size() && !over(); ++n) {
        if (job_.pace == "free" ? !free_step(n) : !paced_step(n)) break;
      }
      if (!over()) rec("END", std::to_string(seq_));
      if (!over() && outcome_.end == GuestOutcome::End::finished) outcome_.end = GuestOutcome::End::powered_off;
      ConsoleCap cap(spec_.console_limit);
      cap.add(console_);
      keep_console(cap, outcome_);
      return outcome_;
    }

   private:
    DomainStatsReading read_stats() {
      if (d_.stats_error) {
        if (std::string why = d_.stats_error(trial_); !why.empty()) return {.error = why};
      }
      const DomainStats& s = d_.stats_step;
      const double k = static_cast<double>(++stats_reads_);
      const auto n = static_cast<std::uint64_t>(stats_reads_);
      return {.stats = DomainStats{.cpu_seconds = k * s.cpu_seconds, .user_seconds = k * s.user_seconds,
                                   .system_seconds = k * s.system_seconds, .vcpu_seconds = k * s.vcpu_seconds,
                                   .disk_bytes = n * s.disk_bytes, .disk_requests = n * s.disk_requests}};
    }
    std::string now() const {
      return fmt::format("{:.6f}", std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count() +
                                       d_.guest_clock_offset);
    }
    // The guest's end has come: the caller accepted the console, gave the guest up or it timed out.
    bool over() const { return outcome_.end != GuestOutcome::End::finished || ended_; }
    void rec(std::string_view type, const std::string& payload) {
      if (over()) return;
      console_ += format_guest_record(nonce_, seq_++, type, payload) + "\n";
      if (hooks_.done(console_)) ended_ = true;
    }
    void hang() {
      while (!over() && !waited_too_long()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    // Polls the caller as the driver does: its input, its give-up, the timeout. True when over.
    bool waited_too_long() {
      if (hooks_.input) typed_ += hooks_.input();
      if (hooks_.give_up) {
        if (auto why = hooks_.give_up()) {
          outcome_ = {.end = GuestOutcome::End::timeout, .detail = *why};
          return true;
        }
      }
      if (std::chrono::steady_clock::now() > deadline_) {
        outcome_ = {.end = GuestOutcome::End::timeout, .detail = "fake: no end within the timeout"};
        return true;
      }
      return hooks_.done(console_) ? (ended_ = true) : false;
    }
    // Waits for the typed line `word` or "abort": 0 the word, 1 abort, 2 over.
    int wait_word(const std::string& word) {
      while (true) {
        const std::size_t at = typed_.find('\n', read_);
        if (at != std::string::npos) {
          const std::string line = typed_.substr(read_, at - read_);
          read_ = at + 1;
          if (line == word) return 0;
          if (line == "abort") return 1;
          continue;
        }
        if (waited_too_long()) return 2;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
    }
    void measure(FakeRun& run) {
      run.start = std::chrono::steady_clock::now();
      const auto until = run.start + run_time_;
      while (std::chrono::steady_clock::now() < until) {
        if (waited_too_long()) return;
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }
      run.end = std::chrono::steady_clock::now();
    }
    std::pair<int, std::string> result(const std::string& name, int index, bool warmup) const {
      if (d_.run_result) return d_.run_result(trial_, name, index, warmup);
      return {0, d_.agent_output};
    }
    void keep(FakeRun run) {
      std::lock_guard lock(d_.mutex_);
      d_.runs.push_back(std::move(run));
    }
    bool free_step(std::size_t n) {
      const auto& [w, warm, index] = job_.steps[n];
      const auto& name = job_.workloads.at(static_cast<std::size_t>(w)).name;
      FakeRun run{.trial = trial_, .name = name, .index = index, .warmup = warm == 1};
      rec("RUN", fmt::format("{},{},{},{}", name, index, warm, now()));
      measure(run);
      if (over()) return false;
      const auto [status, output] = result(name, index, warm == 1);
      rec("OUT", base64_encode(output));
      run.load_end = run.end;
      keep(run);
      rec("RUNEND", fmt::format("{},{},{},{}", name, index, status, now()));
      return true;
    }
    bool paced_step(std::size_t n) {
      const auto& [w, warm, index] = job_.steps[n];
      const auto& name = job_.workloads.at(static_cast<std::size_t>(w)).name;
      if (fault_ == FakeFault::never_ready) return hang(), false;
      const std::string t_ready = now();
      rec("READY", fmt::format("{},{}", n, t_ready));
      const int go = wait_word(fault_ == FakeFault::deaf && n == 0 ? "go never" : fmt::format("go {}", n));
      if (go != 0) return false;
      FakeRun run{.trial = trial_, .name = name, .index = index, .warmup = warm == 1,
                  .go = std::chrono::steady_clock::now()};
      const std::string t_go = now();
      if (fault_ == FakeFault::hang_window) return hang(), false;
      const std::string t0 = now();
      if (fault_ == FakeFault::die_window) {
        std::this_thread::sleep_for(run_time_ / 2);
        outcome_ = {.end = GuestOutcome::End::infra_error, .detail = "fake: QEMU killed mid-window"};
        return false;
      }
      measure(run);
      if (over()) return false;
      const std::string t1 = now(), t_fill = now(), t_done = now();
      rec("DONE", fmt::format("{}", n));  // the agent's DONE: its time comes with RUNEND
      if (fault_ == FakeFault::die_after_done) {
        outcome_ = {.end = GuestOutcome::End::infra_error, .detail = "fake: QEMU killed after DONE"};
        return false;
      }
      const int stop = wait_word(fmt::format("stop {}", n));
      if (stop == 2) return false;
      const std::string t_stop = now();
      run.load_end = std::chrono::steady_clock::now();
      rec("RUN", fmt::format("{},{},{},{},{},{},{}", name, index, warm, t0, n, t_ready, t_go));
      const auto [status, output] = result(name, index, warm == 1);
      rec("OUT", base64_encode(output));
      rec("RUNEND", fmt::format("{},{},{},{},{},{},{},{},{}", name, index, status, t1, job_.fill ? t_fill : t1, t_stop,
                                job_.fill ? t_stop : t1, job_.fill ? 1 : 0, t_done));
      rec("CPU", fmt::format("{},{},50,200", name, index));  // 0.5 s busy of 2 s on the guest's CPUs
      keep(run);
      return stop == 0;
    }

    FakeDriver& d_;
    const DomainSpec& spec_;
    const ConsoleHooks& hooks_;
    std::chrono::steady_clock::time_point deadline_;
    std::string trial_, nonce_;
    FakeJob job_;
    FakeFault fault_ = FakeFault::none;
    std::chrono::milliseconds run_time_{0};
    std::uint64_t seq_ = 0;
    int stats_reads_ = 0;
    std::string console_, typed_;
    std::size_t read_ = 0;
    bool ended_ = false;  // the caller accepted the console
    GuestOutcome outcome_{.end = GuestOutcome::End::finished, .seconds = 1};
  };

  GuestOutcome agent(const DomainSpec& spec, std::chrono::milliseconds timeout, const ConsoleHooks& hooks) {
    {
      const std::string initrd = read_file(spec.initrd);
      std::lock_guard lock(mutex_);
      boots.push_back({.spec = spec, .timeout = timeout, .trial = job_field(initrd, "trial"),
                       .nonce = job_field(initrd, "nonce"), .initrd_existed = true});
      max_running = std::max(max_running, ++running_);
    }
    GuestOutcome o = Agent(*this, spec, timeout, hooks).run();
    std::lock_guard lock(mutex_);
    --running_;
    boot_ends_[job_field(read_file(spec.initrd), "trial")] = std::chrono::steady_clock::now();
    return o;
  }
  // When the last emulated boot of `trial` ended.
  std::chrono::steady_clock::time_point boot_end(const std::string& trial) {
    std::lock_guard lock(mutex_);
    return boot_ends_.at(trial);
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
  std::map<std::string, std::chrono::steady_clock::time_point> boot_ends_;
};

}  // namespace abvm::test
