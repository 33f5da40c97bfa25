// The job format, checked against the agent that reads it: guests/agent/init.sh in its
// host-side "parse" mode, run by busybox sh exactly as in the guest. Hostile arguments
// must come out byte for byte, never interpreted.
#include <gtest/gtest.h>

#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "guest/job.hpp"

namespace fs = std::filesystem;
using namespace abvm;

namespace {

const fs::path kAgent = fs::path(ABVM_SOURCE_DIR) / "guests/agent/init.sh";

// Runs the agent's job parser; returns its NUL-separated key/value output as pairs.
std::vector<std::pair<std::string, std::string>> agent_parse(const std::string& job_text) {
  const fs::path dir = fs::temp_directory_path() / ("abvm-job-" + make_nonce().substr(0, 8));
  fs::create_directories(dir);
  write_file_atomic(dir / "job", job_text);
  const ProcessResult r = run_process({"busybox", "sh", kAgent.string()},
                                      {.extra_env = {"ABVM_AGENT_MODE=parse", "ABVM_JOB=" + (dir / "job").string(),
                                                     "ABVM_WORK=" + (dir / "work").string()}});
  fs::remove_all(dir);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  std::vector<std::string> fields;
  std::string cur;
  for (char c : r.out) {
    if (c == '\0') {
      fields.push_back(cur);
      cur.clear();
    } else {
      cur.push_back(c);
    }
  }
  std::vector<std::pair<std::string, std::string>> out;
  for (std::size_t i = 0; i + 1 < fields.size(); i += 2) out.emplace_back(fields[i], fields[i + 1]);
  return out;
}

std::vector<std::string> values_of(const std::vector<std::pair<std::string, std::string>>& kv, const std::string& key) {
  std::vector<std::string> out;
  for (const auto& [k, v] : kv) {
    if (k == key) out.push_back(v);
  }
  return out;
}

GuestJob sample_job() {
  GuestJob job{.trial_id = "t-001", .nonce = "0123456789abcdef"};
  DdWorkload dd;
  dd.block_size = "8M";
  dd.count = 1024;
  dd.iflag = {"fullblock"};
  Workload w1{.name = "dd-write", .spec = dd, .repetitions = 3, .warmup = 1};
  w1.pre_run.drop_caches = false;
  FioWorkload fio;
  fio.job_file = "[global]\ndirect=1\n  leading spaces kept\n[w]\nfilename=@scratch\nrw=write\n";
  Workload w2{.name = "fio.file", .spec = fio, .repetitions = 2};
  job.workloads = job_workloads({w1, w2});
  return job;
}

TEST(GuestJob, DdArgvFollowsTheWorkload) {
  DdWorkload dd;
  dd.block_size = "8M";
  dd.count = 1024;
  EXPECT_EQ(workload_argv(Workload{.name = "d", .spec = dd}),
            (std::vector<std::string>{"dd", "if=/dev/zero", "of=@scratch", "bs=8M", "count=1024", "oflag=direct"}));
  dd.iflag = {"direct", "fullblock"};
  dd.oflag = {};
  EXPECT_EQ(workload_argv(Workload{.name = "d", .spec = dd}),
            (std::vector<std::string>{"dd", "if=/dev/zero", "of=@scratch", "bs=8M", "count=1024",
                                      "iflag=direct,fullblock"}));
}

TEST(GuestJob, FioArgvUsesOptionsOrTheJobFile) {
  FioWorkload fio;
  EXPECT_EQ(workload_argv(Workload{.name = "f", .spec = fio}),
            (std::vector<std::string>{"fio", "--output-format=json", "--name=f", "--bs=1M", "--direct=1",
                                      "--filename=@scratch", "--ioengine=psync", "--rw=write", "--size=64M"}));
  fio.job_file = "[x]\n";
  fio.output_format = "json+";
  EXPECT_EQ(workload_argv(Workload{.name = "f", .spec = fio}),
            (std::vector<std::string>{"fio", "--output-format=json+", "@jobfile"}));
}

TEST(GuestJob, AgentReadsBackEverything) {
  const GuestJob job = sample_job();
  const auto kv = agent_parse(serialise_job(job));
  EXPECT_EQ(values_of(kv, "trial"), std::vector<std::string>{"t-001"});
  EXPECT_EQ(values_of(kv, "nonce"), std::vector<std::string>{"0123456789abcdef"});
  EXPECT_EQ(values_of(kv, "scratch"), std::vector<std::string>{"abvm-scratch"});
  EXPECT_EQ(values_of(kv, "name"), (std::vector<std::string>{"dd-write", "fio.file"}));
  EXPECT_EQ(values_of(kv, "kind"), (std::vector<std::string>{"dd", "fio"}));
  EXPECT_EQ(values_of(kv, "repetitions"), (std::vector<std::string>{"3", "2"}));
  EXPECT_EQ(values_of(kv, "warmup"), (std::vector<std::string>{"1", "0"}));
  EXPECT_EQ(values_of(kv, "drop_caches"), (std::vector<std::string>{"0", "1"}));
  EXPECT_EQ(values_of(kv, "sync"), (std::vector<std::string>{"1", "1"}));
  std::vector<std::string> args = workload_argv(job.workloads[0].workload);
  const auto fio_args = workload_argv(job.workloads[1].workload);
  args.insert(args.end(), fio_args.begin(), fio_args.end());
  EXPECT_EQ(values_of(kv, "arg"), args);
  EXPECT_EQ(values_of(kv, "jobline"), (std::vector<std::string>{"[global]", "direct=1", "  leading spaces kept", "[w]",
                                                               "filename=@scratch", "rw=write"}));
  // No step lines: the agent's default order, each workload's warm-ups then its runs.
  EXPECT_EQ(values_of(kv, "step"), (std::vector<std::string>{"0 1 0", "0 0 0", "0 0 1", "0 0 2", "1 0 0", "1 0 1"}));
  EXPECT_EQ(values_of(kv, "pace"), std::vector<std::string>{"free"});
  EXPECT_EQ(values_of(kv, "fill"), std::vector<std::string>{"0"});
  EXPECT_EQ(values_of(kv, "wait"), std::vector<std::string>{"600"});
  EXPECT_EQ(values_of(kv, "hold"), std::vector<std::string>{"60"});
  EXPECT_EQ(values_of(kv, "disk"), (std::vector<std::string>{"", ""}));
  const auto steps = default_steps(job.workloads);
  ASSERT_EQ(steps.size(), 6u);
  EXPECT_EQ(steps[0], (JobStep{.workload = 0, .warmup = true, .index = 0}));
  EXPECT_EQ(steps[5], (JobStep{.workload = 1, .warmup = false, .index = 1}));
}

// Each workload's own disk and report name, an explicit order, the pace and its deadlines.
TEST(GuestJob, AgentReadsDisksStepsAndPace) {
  GuestJob job = sample_job();
  job.workloads[0].report_name = "dd-write.A";
  job.workloads[0].disk_serial = "abvm-scratch-a";
  job.workloads[1].report_name = "dd-write.B";
  job.workloads[1].disk_serial = "abvm-scratch-b";
  job.steps = {{.workload = 1, .index = 1}, {.workload = 0, .warmup = true, .index = 0}, {.workload = 0, .index = 2}};
  job.pace = Pacing::together;
  job.fill = true;
  job.wait_seconds = 330;
  job.hold_seconds = 7;
  const std::string text = serialise_job(job);
  EXPECT_NE(text.find("workload dd-write.A\ndisk abvm-scratch-a\n"), std::string::npos) << text;
  const auto kv = agent_parse(text);
  EXPECT_EQ(values_of(kv, "name"), (std::vector<std::string>{"dd-write.A", "dd-write.B"}));
  EXPECT_EQ(values_of(kv, "disk"), (std::vector<std::string>{"abvm-scratch-a", "abvm-scratch-b"}));
  EXPECT_EQ(values_of(kv, "step"), (std::vector<std::string>{"1 0 1", "0 1 0", "0 0 2"}));
  EXPECT_EQ(values_of(kv, "pace"), std::vector<std::string>{"together"});
  EXPECT_EQ(values_of(kv, "fill"), std::vector<std::string>{"1"});
  EXPECT_EQ(values_of(kv, "wait"), std::vector<std::string>{"330"});
  EXPECT_EQ(values_of(kv, "hold"), std::vector<std::string>{"7"});
  job.pace = Pacing::turns;
  EXPECT_EQ(values_of(agent_parse(serialise_job(job)), "pace"), std::vector<std::string>{"turns"});
  // The tool's own name stays the experiment's (fio names its job after it: metrics match across sides).
  EXPECT_EQ(values_of(kv, "arg")[0], "dd");
  // A step beyond the workload's runs, or of a workload the job lacks, is refused on the host.
  job.steps = {{.workload = 0, .index = 3}};
  EXPECT_THROW(serialise_job(job), Error);
  job.steps = {{.workload = 2}};
  EXPECT_THROW(serialise_job(job), Error);
  job.steps.clear();
  job.workloads[1].report_name = "dd-write.A";
  EXPECT_THROW(serialise_job(job), Error);
}

TEST(GuestJob, HostileArgumentsArriveLiterally) {
  const std::vector<std::string> hostile = {
      "$(touch /tmp/abvm-pwned)", "`id`", "a;b", "  two  spaces  ", "\"quoted\" 'single'", "back\\slash\\n",
      "*", "-e", "$HOME", "tab\there", "end with space "};
  GuestJob job{.trial_id = "t", .nonce = "abcdefgh12"};
  FioWorkload fio;
  fio.options.clear();
  for (std::size_t i = 0; i < hostile.size(); ++i) fio.options["k" + std::to_string(10 + i)] = hostile[i];
  job.workloads = job_workloads({Workload{.name = "f", .spec = fio}});
  const auto kv = agent_parse(serialise_job(job));
  EXPECT_EQ(values_of(kv, "arg"), workload_argv(job.workloads[0].workload));
  EXPECT_FALSE(fs::exists("/tmp/abvm-pwned"));
}

TEST(GuestJob, NewlinesAndBadNamesAreRefused) {
  GuestJob job = sample_job();
  std::get<DdWorkload>(job.workloads[0].workload.spec).output = "/dev/vda\nrm -rf /";
  EXPECT_THROW(
      {
        try {
          serialise_job(job);
        } catch (const Error& e) {
          EXPECT_NE(std::string(e.what()).find("workload 'dd-write': argument contains a newline"), std::string::npos)
              << e.what();
          throw;
        }
      },
      Error);
  job = sample_job();
  std::get<FioWorkload>(job.workloads[1].workload.spec).job_file = "[a]\r\nrw=read\n";
  EXPECT_THROW(serialise_job(job), Error);
  job = sample_job();
  job.workloads[0].workload.name = "dd write";
  EXPECT_THROW(serialise_job(job), Error);
  job = sample_job();
  job.nonce = "short";
  EXPECT_THROW(serialise_job(job), Error);
  job = sample_job();
  job.nonce = "abc:defgh123";
  EXPECT_THROW(serialise_job(job), Error);
  job = sample_job();
  job.scratch_serial = "this-serial-is-longer-than-20";
  EXPECT_THROW(serialise_job(job), Error);
  job = sample_job();
  job.workloads[0].workload.repetitions = -1;
  EXPECT_THROW(serialise_job(job), Error);
}

TEST(GuestJob, AgentRejectsTruncatedOrForeignJobs) {
  const std::string text = serialise_job(sample_job());
  for (const std::string& bad : {text.substr(0, text.size() - 5), std::string("#!/bin/sh\nreboot\n"),
                                 std::string("abvm-job 4\nbogus key\ndone\n"), std::string("abvm-job 4\nstep 0 x\ndone\n"),
                                 std::string("abvm-job 4\npace sideways\ndone\n"), std::string("abvm-job 4\nwait 1s\ndone\n"),
                                 std::string("abvm-job 2\ndone\n")}) {
    const fs::path dir = fs::temp_directory_path() / ("abvm-job-" + make_nonce().substr(0, 8));
    fs::create_directories(dir);
    write_file_atomic(dir / "job", bad);
    const ProcessResult r = run_process({"busybox", "sh", kAgent.string()},
                                        {.extra_env = {"ABVM_AGENT_MODE=parse", "ABVM_JOB=" + (dir / "job").string(),
                                                       "ABVM_WORK=" + (dir / "work").string()}});
    fs::remove_all(dir);
    EXPECT_EQ(r.exit_code, 1) << bad;
    EXPECT_NE(r.out.find(":ERROR:"), std::string::npos) << r.out;  // reported as a record
  }
}

TEST(GuestJob, ArchiveHoldsTheJobFile) {
  const std::string archive = build_job_archive(sample_job());
  EXPECT_LT(archive.size(), 2048u);
  const std::string listing = run_checked({"cpio", "-t", "--quiet"}, {.stdin_data = archive});
  EXPECT_EQ(listing, "abvm\nabvm/job\n");
}

TEST(GuestJob, NoncesAreFreshAndValid) {
  const std::string a = make_nonce();
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, make_nonce());
  GuestJob job{.trial_id = "t", .nonce = a};
  EXPECT_NO_THROW(serialise_job(job));
}

}  // namespace
