// Hostile names, strings and paths (issue 6, "Hostile and broken input"): nothing a user or a
// guest writes can make abvm write outside the results directory, stop an experiment by
// printing bytes, or defeat the scratch-disk rules through the way a path is spelled.
// Config-level cases already covered elsewhere are not repeated: absolute block device and a
// symlink to one, relative path against the config directory, directory, missing parent,
// non-empty file (tests/config_experiment_test.cpp, DiskSafety).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "fake_driver.hpp"
#include "run/journal_sink.hpp"
#include "config/experiment.hpp"
#include "core/base64.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "environment_skip.hpp"
#include "guest/domain_xml.hpp"
#include "guest/records.hpp"
#include "run/orchestrator.hpp"
#include "results/directory.hpp"
#include "run/scratch.hpp"
#include "samples/journal.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

const std::string kDdOutput = read_file(fs::path(ABVM_TEST_DATA) / "dd" / "gnu-8M-16-direct.txt");

std::string experiment_text(const std::string& name, const std::string& label_a, const std::string& label_b) {
  return "name = \"" + name + "\"\n[sides.A]\nlabel = \"" + label_a + "\"\n[sides.B]\nlabel = \"" + label_b +
         "\"\ndevice.iommu_platform = true\n[[workload]]\nname = \"w\"\ntype = \"dd\"\n";
}

std::string load_error_in(const std::string& text, const fs::path& base) {
  try {
    load_experiment_text(text, "h.toml", base);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

std::string load_error(const std::string& text) { return load_error_in(text, "/nonexistent"); }

// Every path under `root`, relative to it (to see what a run created, and where).
std::set<std::string> tree(const fs::path& root) {
  std::set<std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(root)) out.insert(fs::relative(e.path(), root).string());
  return out;
}

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("abvm-hostile-" + std::string(::testing::UnitTest::GetInstance()->current_test_info()->name()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

// ---- names that become paths ----

TEST(CliHostileInput, ExperimentNamesWithSeparatorsAreRefused) {
  for (const std::string name : {"../escape", "a/b", "/abs", "..\\\\x", "x\\n"}) {
    EXPECT_NE(load_error(experiment_text(name, "A", "B")).find("key 'name' = "), std::string::npos) << name;
    EXPECT_NE(load_error(experiment_text(name, "A", "B")).find("(it names the results directory)"),
              std::string::npos)
        << name;
  }
}

using ResultsRoot = TempDir;

TEST_F(ResultsRoot, EveryAcceptedNameStaysInsideTheResultsRoot) {
  const auto now = std::chrono::system_clock::now();
  for (const std::string name : {".", "..", "...", "-", "a..b"}) {
    const Experiment e = load_experiment_text(experiment_text(name, "A", "B"), "h.toml", "/nonexistent");
    const fs::path made = create_results_dir(dir_, e.name, now);
    EXPECT_EQ(fs::canonical(made).parent_path(), fs::canonical(dir_)) << name;
  }
}

TEST(CliHostileInput, SideLabelsAreTextNeverPaths) {
  // Labels name the sides in reports (escaped there); they may hold anything TOML can, and
  // where abvm derives a name from them (the libvirt domain) it is reduced to safe characters.
  const Experiment e = load_experiment_text(experiment_text("h", "../../../tmp/evil", "<b>&\\\"/x"), "h.toml",
                                            "/nonexistent");
  EXPECT_EQ(e.a.label, "../../../tmp/evil");
  EXPECT_EQ(e.b.label, "<b>&\"/x");
  for (const auto& label : {e.a.label, e.b.label, std::string(300, '/')}) {
    const std::string name = domain_name(label, 3);
    EXPECT_NO_THROW(validate_domain_name(name)) << name;
    EXPECT_EQ(name.find('/'), std::string::npos) << name;
  }
}

// ---- a guest that lies, through the real orchestrator ----

// A guest that knows its nonce (it reads the job) and reports what it likes, correctly framed:
// the shared fake with a console of the test's choosing.
struct LyingDriver : test::FakeDriver {
  std::function<std::string(const std::string& trial, const std::string& nonce)> console;
  LyingDriver() : FakeDriver("lying") {
    answer = [this](const test::FakeBoot& b) { return test::FakeAnswer{.console = console(b.trial, b.nonce)}; };
  }
};

class LyingGuest : public TempDir {
 protected:
  void SetUp() override {
    TempDir::SetUp();
    results_ = dir_ / "results" / "h-20260101T000000Z";
    fs::create_directories(results_);
    write_file_atomic(dir_ / "base.cpio.gz", std::string(100, 'x'));
    spec_.results_dir = results_;
    spec_.base_image = dir_ / "base.cpio.gz";
    // Labels that would escape if they were ever used as path components.
    spec_.a = {.label = "../../../escape-a", .kernel = "/k/vmlinuz", .cmdline = "console=ttyS0"};
    spec_.b = {.label = "/tmp/escape-b", .kernel = "/k/vmlinuz", .cmdline = "console=ttyS0 b"};
    spec_.workloads = {Workload{.name = "w", .spec = DdWorkload{}, .repetitions = 1}};
    spec_.lanes = {{.name = "unpinned", .scratch = {results_ / "scratch.raw"}}};
  }

  // Runs two trials (A, B) through the orchestrator and the journal sink, as `abvm run` does.
  void run_two_trials() {
    JournalSink sink(results_ / "journal.jsonl", spec_.workloads, "host");
    Orchestrator orchestrator(driver_, spec_, sink);
    const std::vector<Trial> trials = {{.id = "t0000", .side = Side::a, .position = 0},
                                            {.id = "t0001", .side = Side::b, .position = 1}};
    const RunSummary summary = orchestrator.run(trials, {}, {});
    EXPECT_EQ(summary.ran, 2u);
  }

  fs::path results_;
  ExecutionSpec spec_;
  LyingDriver driver_;
};

std::string framed(const std::string& nonce, const std::string& trial,
                    const std::vector<std::pair<std::string, std::string>>& records) {
  std::string out = "Linux version 6.1\n";
  std::uint64_t seq = 0;
  out += format_guest_record(nonce, seq++, "BEGIN", base64_encode(trial) + ",1.0") + "\n";
  for (const auto& [type, payload] : records) out += format_guest_record(nonce, seq++, type, payload) + "\n";
  out += format_guest_record(nonce, seq, "END", std::to_string(seq)) + "\n";
  return out;
}

TEST_F(LyingGuest, ForgedWorkloadNamesCannotWriteOutsideTheTrialDirectory) {
  driver_.console = [](const std::string& trial, const std::string& nonce) {
    return framed(nonce, trial,
                  {{"RUN", "w,0,0,2.0"}, {"OUT", base64_encode(kDdOutput)}, {"RUNEND", "w,0,0,2.1"},
                   // The record alphabet allows '/' and '.', so a guest can name a run like a path.
                   {"RUN", "../../../../escape,0,0,2.2"}, {"OUT", base64_encode("owned\n")},
                   {"RUNEND", "../../../../escape,0,0,2.3"},
                   {"RUN", "/tmp/abvm-hostile-abs,0,1,2.4"}, {"OUT", base64_encode("owned\n")},
                   {"RUNEND", "/tmp/abvm-hostile-abs,0,0,2.5"}});
  };
  const auto before = tree(dir_);
  run_two_trials();
  // Everything new is inside the results directory.
  for (const auto& p : tree(dir_)) {
    if (before.count(p) == 0) {
      EXPECT_TRUE(p.starts_with("results")) << p;
    }
  }
  EXPECT_FALSE(fs::exists("/tmp/abvm-hostile-abs-warmup0.out"));
  EXPECT_FALSE(fs::exists("/tmp/abvm-hostile-abs-run0.out"));
  // The forged runs are problems, not runs, and a trial with problems is not trusted.
  const std::string result = read_file(results_ / "trials" / "t0000" / "result.json");
  EXPECT_NE(result.find("workload name"), std::string::npos) << result;
  const auto journal = read_journal(results_ / "journal.jsonl");
  ASSERT_EQ(journal.size(), 2u);
  EXPECT_EQ(journal[0].outcome, Outcome::invalid_output);
  EXPECT_NE(journal[0].detail.find("workload name"), std::string::npos) << journal[0].detail;
}

TEST_F(LyingGuest, GarbageBytesAreRecordedNotFatal) {
  // Bytes that are not UTF-8 in every free-text record, and as the tool's output.
  const std::string garbage = "\xff\xfe\xc3(\x80 bytes\x01\x02 \"quoted\" <x>&";
  driver_.console = [&](const std::string& trial, const std::string& nonce) {
    return framed(nonce, trial,
                  {{"UNAME", base64_encode(garbage)}, {"CMDLINE", base64_encode(garbage)},
                   {"DMESG", base64_encode(garbage)}, {"ERROR", base64_encode(garbage)},
                   {"RUN", "w,0,0,2.0"}, {"OUT", base64_encode(garbage + "\n1 bytes copied, \xff s, 1 B/s\n")},
                   {"RUNEND", "w,0,0,2.1"}});
  };
  run_two_trials();
  // Both trials are in the ledger and the journal, each run with its outcome and reason.
  EXPECT_EQ(read_ledger(results_ / "trials.jsonl").size(), 2u);
  const auto journal = read_journal(results_ / "journal.jsonl");
  ASSERT_EQ(journal.size(), 2u);
  for (const auto& e : journal) {
    EXPECT_NE(e.outcome, Outcome::ok);
    EXPECT_FALSE(e.detail.empty());
  }
  EXPECT_TRUE(fs::exists(results_ / "trials" / "t0001" / "result.json"));
}

// ---- scratch disk under every path form ----

fs::path any_block_device() {
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator("/dev", ec)) {
    if (entry.is_block_file(ec)) return entry.path();
  }
  return {};
}

using ScratchPaths = TempDir;

TEST_F(ScratchPaths, BlockDeviceIsRefusedHoweverThePathIsSpelled) {
  const fs::path device = any_block_device();
  if (device.empty()) ABVM_SKIP_WITHOUT("no block device in /dev to test with");
  fs::create_directories(dir_ / "cfg" / "sub");
  fs::create_symlink(device, dir_ / "direct-link");
  fs::create_symlink(dir_ / "direct-link", dir_ / "chain-link");         // symlink to a symlink
  fs::create_symlink("../direct-link", dir_ / "cfg" / "relative-link");  // relative target
  fs::create_symlink(device.parent_path(), dir_ / "devdir");             // directory symlink
  const std::vector<std::string> spellings = {
      "../direct-link",                                      // relative, with ..
      "sub/../../chain-link",                                // .. inside, symlink chain
      "relative-link",                                       // relative symlink
      "./sub/.././relative-link",                            // . and .. components
      "../devdir/" + device.filename().string(),             // through a directory symlink
      (dir_ / "cfg" / ".." / "chain-link").string(),         // absolute with ..
      device.parent_path().string() + "/../" + device.parent_path().filename().string() + "/" +
          device.filename().string(),                        // /dev/../dev/x
  };
  for (const auto& p : spellings) {
    const std::string text = experiment_text("h", "A", "B") + "[disk]\npath = \"" + p + "\"\noverwrite = true\n";
    try {
      load_experiment_text(text, "h.toml", dir_ / "cfg");
      ADD_FAILURE() << p << ": accepted by the config loader";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is a block device"), std::string::npos) << p << ": " << e.what();
    }
    // The check right before use (run/scratch), given the path as the loader resolves it.
    DiskSettings disk{.path = fs::path(p).is_absolute() ? fs::path(p) : dir_ / "cfg" / p, .overwrite = true};
    try {
      prepare_scratch_disk(disk, dir_, true);
      ADD_FAILURE() << p << ": accepted by prepare_scratch_disk";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("is a block device"), std::string::npos) << p << ": " << e.what();
    }
  }
}

TEST_F(ScratchPaths, DanglingSymlinkIsRefusedNotFollowedToCreateAFile) {
  // A link to a device that is not there yet (a USB disk not plugged in) must not become a
  // regular file wherever it points.
  fs::create_directories(dir_ / "cfg");
  fs::create_symlink(dir_ / "missing" / "disk", dir_ / "cfg" / "dangling");
  fs::create_directories(dir_ / "missing");
  const std::string text = experiment_text("h", "A", "B") + "[disk]\npath = \"dangling\"\n";
  EXPECT_NE(load_error_in(text, dir_ / "cfg").find("is a symlink to a missing file"), std::string::npos)
      << load_error_in(text, dir_ / "cfg");
  DiskSettings disk{.path = dir_ / "cfg" / "dangling"};
  EXPECT_THROW(prepare_scratch_disk(disk, dir_, true), Error);
  EXPECT_FALSE(fs::exists(dir_ / "missing" / "disk"));
}

TEST_F(ScratchPaths, RelativeImagePathsResolveAgainstTheConfigDirectory) {
  fs::create_directories(dir_ / "cfg" / "sub");
  fs::create_directories(dir_ / "images");
  const std::string text = experiment_text("h", "A", "B") + "[disk]\npath = \"sub/../../images/s.raw\"\nsize = \"1M\"\n";
  const Experiment e = load_experiment_text(text, "h.toml", dir_ / "cfg");
  EXPECT_EQ(fs::weakly_canonical(e.disk.path), dir_ / "images" / "s.raw");
  const fs::path made = prepare_scratch_disk(e.disk, dir_ / "results", true);
  EXPECT_EQ(fs::file_size(dir_ / "images" / "s.raw"), 1u << 20);
  EXPECT_EQ(fs::weakly_canonical(made), dir_ / "images" / "s.raw");
}

}  // namespace
}  // namespace abvm
