#include "guest/job.hpp"

#include <fmt/format.h>

#include <cctype>
#include <random>
#include <string_view>

#include "core/error.hpp"
#include "guest/cpio.hpp"

namespace abvm {
namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
         c == '-';
}

void check_name(std::string_view what, std::string_view value) {
  if (value.empty()) throw Error(fmt::format("guest job: {} is empty", what));
  for (char c : value) {
    if (!is_name_char(c)) {
      throw Error(fmt::format("guest job: {} '{}' may only contain letters, digits, '_', '.' and '-'", what, value));
    }
  }
}

// One value per line is the whole injection defence of the format: refuse what would break it.
void check_line(std::string_view where, std::string_view value) {
  for (char c : value) {
    if (c == '\n' || c == '\r' || c == '\0') {
      throw Error(fmt::format("guest job: {} contains a {} (value: {:?}); the guest job format carries one value "
                              "per line: remove it",
                              where, c == '\n' ? "newline" : c == '\r' ? "carriage return" : "NUL byte", value));
    }
  }
}

std::string join(const std::vector<std::string>& parts, char sep) {
  std::string out;
  for (const auto& p : parts) {
    if (!out.empty()) out.push_back(sep);
    out += p;
  }
  return out;
}

}  // namespace

std::string_view to_string(Pacing p) {
  switch (p) {
    case Pacing::together: return "together";
    case Pacing::turns: return "turns";
    case Pacing::free: break;
  }
  return "free";
}

namespace {

// What the agent runs for one workload: the tool's command line ("@jobfile" standing for the job
// file's path in the guest) and, for a tool that reads one, the job file's text.
struct ToolCommand {
  std::vector<std::string> argv;
  const std::string* job_file = nullptr;
};

// ---- One job writer per workload kind. ----

ToolCommand dd_command(const DdWorkload& dd) {
  ToolCommand out{.argv = {"dd", "if=" + dd.input, "of=" + dd.output, "bs=" + dd.block_size,
                           fmt::format("count={}", dd.count)}};
  if (!dd.iflag.empty()) out.argv.push_back("iflag=" + join(dd.iflag, ','));
  if (!dd.oflag.empty()) out.argv.push_back("oflag=" + join(dd.oflag, ','));
  return out;
}

ToolCommand fio_command(const FioWorkload& fio, const std::string& workload_name) {
  ToolCommand out{.argv = {"fio", "--output-format=" + fio.output_format}};
  if (fio.job_file) {
    out.argv.push_back("@jobfile");
    out.job_file = &*fio.job_file;
    return out;
  }
  out.argv.push_back("--name=" + workload_name);
  for (const auto& [key, value] : fio.options) out.argv.push_back(fmt::format("--{}={}", key, value));
  return out;
}

ToolCommand tool_command(const Workload& workload) {
  return visit_kind(overloaded{[](const DdWorkload& dd) { return dd_command(dd); },
                               [&](const FioWorkload& fio) { return fio_command(fio, workload.name); }},
                    workload.spec);
}

}  // namespace

std::vector<std::string> workload_argv(const Workload& workload) { return tool_command(workload).argv; }

std::vector<JobWorkload> job_workloads(const std::vector<Workload>& workloads) {
  std::vector<JobWorkload> out;
  for (const auto& w : workloads) out.push_back({.workload = w});
  return out;
}

std::vector<JobStep> default_steps(const std::vector<JobWorkload>& workloads) {
  std::vector<JobStep> out;
  for (std::size_t i = 0; i < workloads.size(); ++i) {
    for (int k = 0; k < workloads[i].workload.warmup; ++k) out.push_back({.workload = i, .warmup = true, .index = k});
    for (int k = 0; k < workloads[i].workload.repetitions; ++k) out.push_back({.workload = i, .index = k});
  }
  return out;
}

namespace {

void check_serial(std::string_view what, const std::string& serial) {
  check_name(what, serial);
  // virtio-blk serials are at most 20 bytes (VIRTIO_BLK_ID_BYTES); a longer one never matches.
  if (serial.size() > 20) throw Error(fmt::format("guest job: {} '{}' is longer than virtio-blk's 20 bytes", what, serial));
}

std::string serialise_workload(const JobWorkload& jw) {
  const Workload& w = jw.workload;
  check_name("workload name", jw.name());
  if (w.repetitions < 0 || w.warmup < 0) {
    throw Error(fmt::format("guest job: workload '{}': repetitions and warmup must not be negative", jw.name()));
  }
  std::string out = "workload " + jw.name() + "\n";
  if (!jw.disk_serial.empty()) {
    check_serial("disk serial", jw.disk_serial);
    out += "disk " + jw.disk_serial + "\n";
  }
  out += fmt::format("kind {}\nrepetitions {}\nwarmup {}\nsync {}\ndrop_caches {}\nscheduler_none {}\n",
                     kind_name(w.spec), w.repetitions, w.warmup, w.pre_run.sync ? 1 : 0,
                     w.pre_run.drop_caches ? 1 : 0, w.pre_run.scheduler_none ? 1 : 0);
  const ToolCommand command = tool_command(w);
  for (const auto& arg : command.argv) {
    check_line(fmt::format("workload '{}': argument", jw.name()), arg);
    out += "arg " + arg + "\n";
  }
  if (command.job_file != nullptr) {
    std::string_view text = *command.job_file;
    while (!text.empty()) {
      const auto nl = text.find('\n');
      std::string_view line = text.substr(0, nl);
      check_line(fmt::format("workload '{}': {} job file line", jw.name(), kind_name(w.spec)), line);
      out += "jobline ";
      out += line;
      out += "\n";
      if (nl == std::string_view::npos) break;
      text.remove_prefix(nl + 1);
    }
  }
  return out + "end\n";
}

std::string serialise_step(const GuestJob& job, const JobStep& step) {
  if (step.workload >= job.workloads.size()) {
    throw Error(fmt::format("guest job: step of workload {} of {}", step.workload, job.workloads.size()));
  }
  const Workload& w = job.workloads[step.workload].workload;
  if (step.index < 0 || step.index >= (step.warmup ? w.warmup : w.repetitions)) {
    throw Error(fmt::format("guest job: step {} #{} of workload '{}' is out of range", step.warmup ? "warm-up" : "run",
                            step.index, job.workloads[step.workload].name()));
  }
  return fmt::format("step {} {} {}\n", step.workload, step.warmup ? 1 : 0, step.index);
}

}  // namespace

std::string serialise_job(const GuestJob& job) {
  check_name("trial id", job.trial_id);
  if (job.nonce.size() < 8 || job.nonce.size() > 64) {
    throw Error(fmt::format("guest job: nonce '{}' must have 8 to 64 characters", job.nonce));
  }
  for (char c : job.nonce) {
    if (!std::isalnum(static_cast<unsigned char>(c))) {
      throw Error(fmt::format("guest job: nonce '{}' may only contain letters and digits", job.nonce));
    }
  }
  check_serial("scratch serial", job.scratch_serial);
  if (job.wait_seconds < 1 || job.hold_seconds < 1) {
    throw Error(fmt::format("guest job: wait ({}) and hold ({}) must be at least 1 s", job.wait_seconds,
                            job.hold_seconds));
  }
  std::string out = "abvm-job 4\n";
  out += "trial " + job.trial_id + "\n";
  out += "nonce " + job.nonce + "\n";
  out += "scratch " + job.scratch_serial + "\n";
  out += fmt::format("pace {}\nfill {}\nwait {}\nhold {}\n", to_string(job.pace), job.fill ? 1 : 0, job.wait_seconds,
                     job.hold_seconds);
  for (std::size_t i = 0; i < job.workloads.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (job.workloads[j].name() == job.workloads[i].name()) {
        throw Error(fmt::format("guest job: workload name '{}' is used twice", job.workloads[i].name()));
      }
    }
    out += serialise_workload(job.workloads[i]);
  }
  for (const auto& step : job.steps) out += serialise_step(job, step);
  out += "done\n";
  return out;
}

std::string build_job_archive(const GuestJob& job) {
  CpioWriter cpio;
  cpio.add_directory("abvm");
  cpio.add_file("abvm/job", serialise_job(job), 0644);
  return cpio.finish();
}

std::string make_nonce() {
  std::random_device rd;
  std::string out;
  for (int i = 0; i < 4; ++i) out += fmt::format("{:08x}", static_cast<std::uint32_t>(rd()));
  return out;
}

}  // namespace abvm
