// abvm nightly without libvirt: whole nights through the real Runner and Bisection with the tests'
// one fake driver, over a small git tree made here. A kernel's speed is scripted by what its
// commits add (a file holding SLOW: 0.57x; each file holding CREEP: 0.94x), read from the patches
// of the recipe the night wrote, so the test sees what the night really built. Covers the three
// nights of the rehearsal (the base, a harmless commit, a culprit and a harmless commit, named in
// the night's report), a night run again, a head that has not moved, an interrupted night, a
// rebased tree, the anchor kept from night to night, the drift
// comparison, the bisection's wall-time budget, and the command's door through the real binary.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <random>
#include <regex>
#include <cmath>
#include <filesystem>
#include <set>
#include <string>

#include "cli/nightly.hpp"
#include "cli/results_analysis.hpp"
#include "cli/run_session.hpp"
#include "core/error.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "core/vocabulary.hpp"
#include "environment_skip.hpp"
#include "fake_driver.hpp"
#include "kernels/kernel.hpp"
#include "nightly/history_page.hpp"
#include "nightly/kcidb.hpp"
#include "nightly/night.hpp"
#include "report/html.hpp"
#include "nightly_test_git.hpp"

namespace abvm {
namespace {
namespace fs = std::filesystem;

const std::string kUrl = "https://git.example.org/tree.git";  // nightly.url of the tests' files

int count_of(const std::string& text, const std::string& word) {
  int n = 0;
  for (auto at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) ++n;
  return n;
}

// "Builds" each side's recipe: the kernel's speed from the commits its patches hold.
struct ScriptedKernels : GuestPreparer {
  fs::path dir;
  std::string fail;  // not empty: the build's host fails with this
  PreparedGuests prepare(const Experiment& e) override {
    if (!fail.empty()) throw InfraError(fail);
    PreparedGuests g;
    g.base_image = dir / "base.cpio.gz";
    write_file_atomic(g.base_image, std::string(100, 'x'));
    for (Side s : kSides) {
      const KernelRecipe r = load_kernel_recipe(e.side(s).kernel);
      std::string patches;
      for (const auto& p : r.patches) patches += read_file(p.path);
      // CREEP: 6 % slower each; SLOW: the bounce; EDGE: 8.5 % slower; HEAVY: as fast, twice the guest's CPU.
      const double speed = std::pow(0.94, count_of(patches, "+CREEP")) * (count_of(patches, "+SLOW") > 0 ? 0.57 : 1) *
                           (count_of(patches, "+EDGE") > 0 ? 0.915 : 1);
      const std::string heavy = count_of(patches, "+HEAVY") > 0 ? "-heavy" : "";
      const fs::path image = dir / fmt::format("speed-{:.6f}{}", speed, heavy) / "vmlinuz";
      (s == Side::a ? g.a : g.b) = side_boot(e.side(s), image, "");
    }
    // kernels.json as the real preparer writes it (run/prepare.cpp), its identity reduced.
    for (Side s : kSides) {
      const std::string image = (s == Side::a ? g.a : g.b).kernel.string();
      g.kernels[to_string(s)] = {{"label", e.side(s).label}, {"recipe", e.side(s).kernel}, {"release", "6.1"},
                                 {"identity", {{"cache_key", text_sha256(image)}, {"config_sha256", text_sha256("c")},
                                               {"built_at", "2026-12-04T02:17:00Z"}, {"build_seconds", 9.5},
                                               {"source", {{"type", "git"}, {"commit", std::string(40, 'a')}}}}}};
    }
    g.image = {{"sha256", "00"}};
    return g;
  }
};

struct Notes : RunObserver {
  std::vector<std::string> lines;
  void note(const std::string& text) override { lines.push_back(text); }
  void progress(const ProgressState&) override {}
  void finish() override {}
};

class NightlyTest : public ::testing::Test {
 protected:
  fs::path root = fs::temp_directory_path() / fmt::format("abvm-nightly-{}-{}", ::getpid(),
                                                          ::testing::UnitTest::GetInstance()->current_test_info()->name());
  test::GitRepo repo{root / "tree"};
  std::string base;
  test::FakeDriver driver{"night-host"};
  ScriptedKernels preparer;
  Notes notes;
  std::function<bool()> stop = [] { return false; };
  std::chrono::steady_clock::time_point now{};
  std::chrono::minutes tick{0};  // how far the clock moves each time the bisection looks at it
  bool reanchor = false;         // abvm nightly --reanchor
  std::optional<NightlyExperiment> x;

  void SetUp() override {
    ::setenv("ABVM_PYTHON", "/nonexistent/python3", 1);  // report.html without plots: fast
    base = repo.commit("base", {{"drivers/block/virtio_blk.c", "int x;\n"}});
    preparer.dir = root;
    write_file_atomic(root / "frag.config", "CONFIG_VIRTIO=y\n");
    write_file_atomic(root / "recipe.toml", "source = \"linux-source\"\npackage = \"linux-source-6.1\"\n"
                                            "fragments = [\"frag.config\"]\n");
    write_nightly("");
    driver.answer = [this](const test::FakeBoot& b) { return scripted_answer(b); };
  }

  // The boot of a kernel ScriptedKernels "built": dd at its speed (each boot off by up to 1.5 %); with
  // `cpu_records`, each run's guest CPU too, 0.5 s of 2 (1 s on a HEAVY kernel), a tick more on odd runs.
  test::FakeAnswer scripted_answer(const test::FakeBoot& b, bool cpu_records = false) const {
    const double wobble = test::fake_boot_wobble(b, 0.015);
    const std::string dir = b.spec.kernel.parent_path().filename().string();
    const double speed = std::stod(dir.substr(dir.find('-') + 1));
    const std::string dd = test::fake_dd_output(2e9 * speed * wobble);
    const int busy = dir.ends_with("-heavy") ? 100 : 50;
    test::FakeCpuTicks cpu;
    if (cpu_records) cpu = [busy](const std::string&, int index) { return fmt::format("{},200", busy + index % 2); };
    return test::FakeAnswer{
        .console = test::fake_guest_console(b.trial, b.nonce, x->experiment.workloads,
                                            [&](const std::string&, int, bool) { return std::pair(0, dd); }, cpu)};
  }
  void TearDown() override {
    ::unsetenv("ABVM_PYTHON");
    fs::remove_all(root);
  }

  // `base_rev`: nightly.base, when not the base commit's sha.
  void write_nightly(const std::string& extra, const std::string& base_rev = "") {
    write_file_atomic(root / "nightly.toml",
                      "name = \"tree\"\n[nightly]\ntree = \"tree\"\nbranch = \"master\"\nbase = \"" +
                          (base_rev.empty() ? base : base_rev) + "\"\nurl = \"" + kUrl + "\"\nrecipe = \"recipe.toml\"\n" + extra +
                          "\n[guest]\naccelerator = \"tcg\"\n[disk]\nsize = \"1M\"\n"
                          "[[workload]]\nname = \"dd-write\"\ntype = \"dd\"\nrepetitions = 2\n[schedule]\n"
                          "boots_per_side = 10\ndesign = \"co-scheduled\"\nmin_overlap = 0.0\n"
                          "[schedule.sequential]\nenabled = true\nmax_boots_per_side = 20\nlook_every = 5\n"
                          "correction = \"pocock\"\n"
                          "[analysis]\nmargin = 0.1\nmetrics = [{ name = \"dd-write.bandwidth\" }]\n");
    x = load_nightly_experiment(root / "nightly.toml");
  }

  NightEnd night() {
    const History h(root / "history");
    return run_night(*x, h, {.uri = "fake:///night", .reanchor = reanchor},
                     {.connect = [this]() -> GuestDriver& { return driver; },
                      .preparer = preparer,
                      .observer = notes,
                      .finish = [](const Experiment& e, const ResultsDir& d,
                                   const RunEnd& end) { return cli::write_run_outputs(e, d, end).analysis; },
                      .looks = [](const Experiment& e) { return cli::sequential_looks(e); },
                      .stop_requested = [this] { return stop(); },
                      .clock = [this] { return now += tick; }});
  }
  std::vector<NightRecord> history() const { return History(root / "history").read(); }

  // The next night as a CI runner may run it: the same experiment file beside a fresh clone of the
  // tree, at another path (root/<where>/tree), with the history kept. x is that file's.
  void clone_elsewhere(const std::string& where) {
    const fs::path dir = root / where;
    fs::create_directories(dir);
    run_checked({"git", "clone", "-q", repo.dir().string(), (dir / "tree").string()});
    for (const char* file : {"nightly.toml", "recipe.toml", "frag.config"}) fs::copy_file(root / file, dir / file);
    const std::string sha256 = x->sha256;
    x = load_nightly_experiment(dir / "nightly.toml");
    ASSERT_EQ(x->nightly.tree, fs::weakly_canonical(dir / "tree"));
    ASSERT_EQ(x->sha256, sha256) << "the same file";
  }

  // The rehearsal's three nights; returns night 3's culprit.
  std::string three_nights() {
    night();
    repo.commit("virtio_blk: a harmless comment", {{"drivers/block/virtio_blk.c", "int x; /* */\n"}});
    EXPECT_EQ(night().record.outcome, "no_change");
    const std::string culprit = repo.commit("virtio_blk: bounce every request", {{"slow.txt", "SLOW\n"}});
    repo.commit("virtio_ring: a harmless comment", {{"README", "harmless\n"}});
    EXPECT_EQ(night().record.outcome, "regression");
    return culprit;
  }
  fs::path night_dir(std::size_t i) const { return root / "history" / "nights" / history().at(i).night; }
  // The recipe of the night's kernel k (A plus its first k commits), as the night wrote it.
  KernelRecipe kernel_of(const NightEnd& n, int k) const {
    return load_kernel_recipe(
        (root / "history" / "nights" / n.record.night / "kernels" / fmt::format("kernel-{}.toml", k)).string());
  }
  // The night's report.html (the history's link "report").
  std::string report_of(const NightEnd& n) const { return read_file(root / "history" / n.record.report); }

  // python3-jsonschema's verdict on `data` against report/kcidb_schema.json, as kcidb-io validates
  // (Draft 7 with its format checker): "" when valid, else the error.
  std::string kcidb_errors(const nlohmann::json& data) {
    if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code != 0) {
      ADD_FAILURE() << "no python3-jsonschema";
      return "no python3-jsonschema";
    }
    write_file_atomic(root / "kcidb.json", data.dump());
    const ProcessResult r = run_process(
        {"/usr/bin/python3", "-c",
         "import json, sys, jsonschema\n"
         "schema = json.load(open(sys.argv[1]))\n"
         "v = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)\n"
         "errors = [e.message for e in v.iter_errors(json.load(open(sys.argv[2])))]\n"
         "print('; '.join(errors)[:2000])\n",
         (fs::path(ABVM_SOURCE_DIR) / "report" / "kcidb_schema.json").string(), (root / "kcidb.json").string()});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return r.out.substr(0, r.out.find_last_not_of('\n') + 1);
  }
};

TEST_F(NightlyTest, TheRehearsalsThreeNights) {
  // Night 1: the base. Nothing to compare it with: the history says so.
  NightEnd n1 = night();
  EXPECT_EQ(n1.exit_code, 0);
  EXPECT_EQ(n1.record.outcome, "unchanged");
  EXPECT_EQ(n1.record.a, base);
  EXPECT_EQ(n1.record.a_reason, "base");
  EXPECT_EQ(driver.boots.size(), 0u);
  // Night 2: a harmless commit: no change, and it becomes the last good commit.
  const std::string c1 = repo.commit("virtio_blk: a harmless comment", {{"drivers/block/virtio_blk.c", "int x; /* */\n"}});
  NightEnd n2 = night();
  EXPECT_EQ(n2.exit_code, 0);
  EXPECT_EQ(n2.record.outcome, "no_change");
  EXPECT_EQ(n2.record.a, base);
  EXPECT_EQ(n2.record.b, c1);
  EXPECT_TRUE(n2.record.good);
  ASSERT_EQ(n2.record.metrics.size(), 1u);
  EXPECT_NEAR(n2.record.metrics[0].estimate, 1, 0.02);
  EXPECT_TRUE(fs::exists(root / "history" / n2.record.report));
  EXPECT_TRUE(fs::exists(root / "history" / "nights" / n2.record.night / "night.json"));
  const std::size_t boots_after_night2 = driver.boots.size();
  EXPECT_EQ(boots_after_night2, 20u);
  // The same night again: nothing runs, no second line.
  NightEnd again = night();
  EXPECT_EQ(again.exit_code, 0);
  EXPECT_EQ(driver.boots.size(), boots_after_night2);
  ASSERT_EQ(history().size(), 2u);
  EXPECT_EQ(history()[1].unchanged_checks, 1);
  // Night 3: the culprit, then a harmless commit: a regression, bisected to the culprit.
  const std::string culprit = repo.commit("virtio_blk: bounce every request", {{"slow.txt", "SLOW\n"}});
  const std::string c3 = repo.commit("virtio_ring: a harmless comment", {{"README", "harmless\n"}});
  NightEnd n3 = night();
  EXPECT_EQ(n3.exit_code, 1);
  EXPECT_EQ(n3.record.outcome, "regression");
  EXPECT_EQ(n3.record.a, c1) << "A is the last good commit";
  EXPECT_EQ(n3.record.a_reason, "last_good");
  EXPECT_EQ(n3.record.b, c3);
  EXPECT_FALSE(n3.record.good);
  EXPECT_EQ(n3.record.commits.size(), 2u);
  ASSERT_TRUE(n3.record.bisection);
  EXPECT_EQ(n3.record.bisection->outcome, "culprits");
  ASSERT_EQ(n3.record.bisection->culprits.size(), 1u);
  ASSERT_EQ(n3.record.bisection->culprits[0].commits.size(), 1u);
  EXPECT_EQ(n3.record.bisection->culprits[0].commits[0].commit, culprit);
  EXPECT_EQ(n3.record.bisection->culprits[0].commits[0].subject, "virtio_blk: bounce every request");
  EXPECT_TRUE(fs::exists(root / "history" / n3.record.bisection->report));
  // The night's report, written by its run before the bisection began, names the culprit after the
  // verdict and links the bisection's page.
  const std::string report = report_of(n3);
  EXPECT_NE(report.find(fmt::format("<li class=\"culprit\"><code title=\"{}\">{}</code> virtio_blk: bounce every "
                                    "request</li>", culprit, short_sha(culprit))),
            std::string::npos)
      << report;
  EXPECT_LT(report.find("id=\"verdict\""), report.find("id=\"bisection\""));
  std::smatch link;
  ASSERT_TRUE(std::regex_search(report, link, std::regex("<a href=\"([^\"]+)\">the bisection's page</a>")));
  EXPECT_EQ(fs::weakly_canonical((root / "history" / n3.record.report).parent_path() / link[1].str()),
            fs::weakly_canonical(root / "history" / n3.record.bisection->report));
  // The bisection's first question, the head against A, is the night's own comparison: judged from
  // the night's results at the step's level, not measured again. Steps 2 and 3 ran; step 1 has no
  // results directory of its own.
  const fs::path bisection = root / "history" / n3.record.bisection->dir;
  const auto steps = nlohmann::json::parse(read_file(bisection / "bisect.json")).at("steps");
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].at("kernel"), 2);
  EXPECT_EQ(steps[0].at("reference"), 0);
  EXPECT_EQ(steps[0].at("finding"), "slower");
  EXPECT_EQ(fs::weakly_canonical(bisection / steps[0].at("results_dir").get<std::string>()),
            fs::weakly_canonical(root / "history" / n3.record.run_dir));
  EXPECT_NE(steps[0].at("stop_reason").get<std::string>().find("taken from the comparison already measured"),
            std::string::npos);
  EXPECT_TRUE(fs::exists(bisection / steps[0].at("report").get<std::string>()));
  std::set<std::string> step_runs;
  for (const auto& d : fs::directory_iterator(bisection / "steps")) step_runs.insert(d.path().filename().string());
  EXPECT_EQ(step_runs.size(), 2u);
  EXPECT_TRUE(std::none_of(step_runs.begin(), step_runs.end(), [](const std::string& n) { return n.find("-step1-") != std::string::npos; }));
  // Every kernel of night 3 is built from one anchor, the base (an ancestor of A), with A's difference as
  // patch 0000 and each commit after it as one more: the kept build tree's one source.
  const fs::path kernels = root / "history" / "nights" / n3.record.night / "kernels";
  for (const int k : {0, 2}) {
    const KernelRecipe r = load_kernel_recipe((kernels / fmt::format("kernel-{}.toml", k)).string());
    EXPECT_EQ(r.commit, base) << k;
    ASSERT_EQ(r.patches.size(), static_cast<std::size_t>(k + 1)) << k;
    EXPECT_TRUE(r.patches[0].name.starts_with("0000-")) << r.patches[0].name;
    if (k == 2) {
      EXPECT_NE(r.patches[1].name.find("virtio-blk--bounce"), std::string::npos) << r.patches[1].name;
    }
  }
  // A fourth night with the head where night 3 left it: nothing runs, B stays bad.
  EXPECT_EQ(night().exit_code, 0);
  const auto lines = history();
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(last_good(lines, kUrl, "master"), c1);
  EXPECT_EQ(lines[2].unchanged_checks, 1);
}

TEST_F(NightlyTest, AnInterruptedNightChangesNothingAndIsReplacedWhenRunAgain) {
  const std::string c1 = repo.commit("one", {{"README", "1\n"}});
  stop = [] { return true; };
  NightEnd n = night();
  EXPECT_EQ(n.exit_code, 130);
  EXPECT_EQ(n.record.outcome, "interrupted");
  EXPECT_FALSE(n.record.good);
  EXPECT_EQ(last_good(history(), kUrl, "master"), std::nullopt);
  stop = [] { return false; };
  NightEnd again = night();
  EXPECT_EQ(again.exit_code, 0);
  ASSERT_EQ(history().size(), 1u) << "the night run again replaces its line";
  EXPECT_EQ(history()[0].outcome, "no_change");
  EXPECT_EQ(last_good(history(), kUrl, "master"), c1);
}

TEST_F(NightlyTest, ARebasedTreeIsComparedWithTheMergeBase) {
  repo.commit("one", {{"README", "1\n"}});
  ASSERT_EQ(night().record.outcome, "no_change");
  repo.git({"reset", "-q", "--hard", base});
  const std::string rebased = repo.commit("one, rebased", {{"README", "1 rebased\n"}});
  const NightEnd n = night();
  EXPECT_EQ(n.record.a, base);
  EXPECT_EQ(n.record.b, rebased);
  EXPECT_EQ(n.record.a_reason, "merge_base");
  EXPECT_NE(n.record.a_why.find("rebased"), std::string::npos) << n.record.a_why;
}

// nightly.base named by the branch ("master~1", as configs/nightly.toml names it) moves with the
// head; the anchor does not: nights 2 and 3 build from night 1's anchor, in its kept build tree, with
// A's difference from it as patch 0000. --reanchor starts again from nightly.base.
TEST_F(NightlyTest, ASymbolicBaseKeepsTheFirstNightsAnchor) {
  write_nightly("", "master~1");
  repo.commit("one", {{"one.txt", "ONE\n"}});
  const NightEnd n1 = night();
  ASSERT_EQ(n1.record.outcome, "no_change");
  EXPECT_EQ(n1.record.a, base) << "the first night: master~1";
  EXPECT_EQ(n1.record.anchor, base);
  repo.commit("two", {{"two.txt", "TWO\n"}});
  const NightEnd n2 = night();
  const std::string c3 = repo.commit("three", {{"three.txt", "THREE\n"}});
  const NightEnd n3 = night();
  for (const NightEnd* n : {&n2, &n3}) {
    ASSERT_EQ(n->record.outcome, "no_change") << n->record.detail;
    EXPECT_EQ(n->record.anchor, base) << "not master~1, which is A " << n->record.a;
    for (const int k : {0, 1}) {
      const KernelRecipe r = kernel_of(*n, k);
      EXPECT_EQ(r.commit, base) << n->record.night << " kernel " << k;
      ASSERT_EQ(r.patches.size(), static_cast<std::size_t>(k + 1));
      EXPECT_EQ(r.patches[0].name, fmt::format("0000-{}..{}.patch", short_sha(base), short_sha(n->record.a)));
    }
  }
  // Night 3's patch 0000 is base..A, both commits before A; its own commit is patch 0001.
  const std::string squash = read_file(kernel_of(n3, 0).patches[0].path);
  EXPECT_NE(squash.find("+ONE"), std::string::npos) << squash;
  EXPECT_NE(squash.find("+TWO"), std::string::npos) << squash;
  EXPECT_EQ(squash.find("+THREE"), std::string::npos) << squash;
  for (const auto& line : history()) EXPECT_EQ(line.anchor, base) << line.night;
  // --reanchor: master~1 (A, night 3's head) again, and the nights after keep it.
  repo.commit("four", {{"four.txt", "FOUR\n"}});
  reanchor = true;
  const NightEnd n4 = night();
  EXPECT_EQ(n4.record.a, c3);
  EXPECT_EQ(n4.record.anchor, c3);
  EXPECT_EQ(kernel_of(n4, 0).commit, c3);
  EXPECT_TRUE(kernel_of(n4, 0).patches.empty()) << "A is the anchor: no patch 0000";
  EXPECT_EQ(last_anchor(history(), kUrl, "master"), c3);
}

// A rebased tree: the kept anchor is no longer an ancestor of A (the merge base), nor is nightly.base
// (master~1, in the rebased commits): the night anchors at A, says why, and the nights after keep it.
TEST_F(NightlyTest, ARebasedTreeAnchorsAgain) {
  write_nightly("", "master~1");
  const std::string c1 = repo.commit("one", {{"one.txt", "ONE\n"}});
  repo.commit("two", {{"two.txt", "TWO\n"}});
  ASSERT_EQ(night().record.anchor, c1);
  repo.git({"reset", "-q", "--hard", base});
  repo.commit("one, rebased", {{"one.txt", "ONE rebased\n"}});
  const std::string head = repo.commit("two, rebased", {{"two.txt", "TWO rebased\n"}});
  const NightEnd n2 = night();
  EXPECT_EQ(n2.record.a, base);
  EXPECT_EQ(n2.record.a_reason, "merge_base");
  EXPECT_EQ(n2.record.anchor, base) << "A";
  EXPECT_EQ(kernel_of(n2, 0).commit, base);
  EXPECT_NE(std::find(notes.lines.begin(), notes.lines.end(),
                      fmt::format("anchor: {} (A: the kept {} is no longer an ancestor of A (a rebased tree, or a clone "
                                  "without it): a new build tree)", short_sha(base), short_sha(c1))),
            notes.lines.end());
  repo.commit("three", {{"three.txt", "THREE\n"}});
  const NightEnd n3 = night();
  EXPECT_EQ(n3.record.a, head);
  EXPECT_EQ(n3.record.anchor, base) << "kept, not master~1";
  EXPECT_EQ(kernel_of(n3, 1).commit, base);
}

// A history written before the anchor was kept (abvm up to 53e7f15): its lines read without one, and
// the next night anchors as a first night would.
TEST_F(NightlyTest, AHistoryWithoutAnchorsAnchorsAtTheBase) {
  write_nightly("", "master~1");
  const std::string c1 = repo.commit("one", {{"one.txt", "ONE\n"}});
  ASSERT_EQ(night().record.outcome, "no_change");
  nlohmann::json old = to_json(history().at(0));
  old.erase("anchor");
  write_file_atomic(root / "history" / "history.jsonl", old.dump() + "\n");
  EXPECT_EQ(history().at(0).anchor, "");
  repo.commit("two", {{"two.txt", "TWO\n"}});
  const NightEnd n = night();
  EXPECT_EQ(n.record.a, c1);
  EXPECT_EQ(n.record.anchor, c1) << "nightly.base master~1, which is A";
}

TEST_F(NightlyTest, TheDriftComparisonCatchesACreepOfSubMarginSteps) {
  write_nightly("drift_every = 2\n");
  repo.commit("creep 1", {{"creep1.txt", "CREEP\n"}});
  const NightEnd n1 = night();
  EXPECT_EQ(n1.record.outcome, "no_change") << "0.94x is within the 10 % margin";
  EXPECT_FALSE(n1.record.drift);
  const std::string c2 = repo.commit("creep 2", {{"creep2.txt", "CREEP\n"}});
  const NightEnd n2 = night();
  EXPECT_EQ(n2.record.outcome, "no_change");
  ASSERT_TRUE(n2.record.drift);
  EXPECT_EQ(n2.record.drift->a, base) << "the last good commit two nights before";
  EXPECT_EQ(n2.record.drift->verdict, "regression");
  EXPECT_NEAR(n2.record.drift->metrics.at(0).estimate, 0.94 * 0.94, 0.02);
  EXPECT_EQ(n2.exit_code, 1);
  EXPECT_FALSE(n2.record.good);
  EXPECT_EQ(n2.record.b, c2);
}

// The history knows the tree by its URL: a night in a clone at another path goes on from the
// nights of the others (keyed by the local path, each clone would start again from the base).
TEST_F(NightlyTest, AClonedTreeAtAnotherPathGoesOnFromItsHistory) {
  night();  // the base
  const std::string c1 = repo.commit("one", {{"README", "1\n"}});
  ASSERT_EQ(night().record.outcome, "no_change");
  const std::size_t boots = driver.boots.size();
  // The head has not moved: nothing runs in the clone, and the night that measured it counts the check.
  clone_elsewhere("runner-2");
  EXPECT_EQ(night().exit_code, 0);
  EXPECT_EQ(driver.boots.size(), boots);
  ASSERT_EQ(history().size(), 2u);
  EXPECT_EQ(history()[1].unchanged_checks, 1);
  // A new commit, in a third clone: A is the last good commit the first clone's night made.
  const std::string c2 = repo.commit("two", {{"README", "2\n"}});
  clone_elsewhere("runner-3");
  const NightEnd n = night();
  EXPECT_EQ(n.record.a, c1);
  EXPECT_EQ(n.record.a_reason, "last_good");
  EXPECT_EQ(n.record.b, c2);
  EXPECT_EQ(n.record.url, kUrl);
  EXPECT_EQ(history().size(), 3u);
  EXPECT_EQ(last_good(history(), kUrl, "master"), c2);
}

TEST_F(NightlyTest, TheDriftComparisonCountsTheNightsOfEveryClone) {
  write_nightly("drift_every = 2\n");
  repo.commit("creep 1", {{"creep1.txt", "CREEP\n"}});
  ASSERT_EQ(night().record.outcome, "no_change");
  repo.commit("creep 2", {{"creep2.txt", "CREEP\n"}});
  clone_elsewhere("runner-2");
  const NightEnd n2 = night();
  ASSERT_TRUE(n2.record.drift) << "the tree's second night, though this clone's first";
  EXPECT_EQ(n2.record.drift->a, base);
  EXPECT_EQ(n2.record.drift->verdict, "regression");
  EXPECT_EQ(n2.exit_code, 1);
}

// A history written up to 4eaa00a keys its lines by the local path: it goes on where it was, and
// the night rewrites it keyed by the URL.
TEST_F(NightlyTest, AHistoryKeyedByTheLocalPathGoesOnWhereItWas) {
  night();
  const std::string c1 = repo.commit("one", {{"README", "1\n"}});
  ASSERT_EQ(night().record.outcome, "no_change");
  std::string old;
  for (const auto& line : history()) {
    nlohmann::json j = to_json(line);
    j["key"]["tree"] = x->nightly.tree.string();
    old += j.dump() + "\n";
  }
  write_file_atomic(root / "history" / "history.jsonl", old);
  const std::size_t boots = driver.boots.size();
  EXPECT_EQ(night().exit_code, 0);
  EXPECT_EQ(driver.boots.size(), boots) << "the old line measured this head";
  ASSERT_EQ(history().size(), 2u);
  EXPECT_EQ(history()[1].unchanged_checks, 1);
  const std::string c2 = repo.commit("two", {{"README", "2\n"}});
  const NightEnd n = night();
  EXPECT_EQ(n.record.a, c1) << "the old line's B is the last good commit";
  EXPECT_EQ(history().size(), 3u);
  EXPECT_EQ(read_file(root / "history" / "history.jsonl").find(x->nightly.tree.string() + "\""), std::string::npos)
      << "no key is a local path any more";
}

// A drift comparison that did not finish leaves the night unfinished: Ctrl-C exits 130, an
// infrastructure failure 3, and neither makes B the last good commit (issue 28: only 0 and 4 do).
TEST_F(NightlyTest, ADriftComparisonThatDoesNotFinishChangesNothing) {
  write_nightly("drift_every = 2\n");
  const std::string c1 = repo.commit("one", {{"README", "1\n"}});
  ASSERT_EQ(night().exit_code, 0);
  repo.commit("two", {{"README", "2\n"}});
  const auto drifting = [this] {
    return std::any_of(notes.lines.begin(), notes.lines.end(), [](const std::string& l) { return l.starts_with("drift: "); });
  };
  stop = drifting;  // Ctrl-C once the drift comparison has begun
  const NightEnd interrupted = night();
  EXPECT_EQ(interrupted.record.outcome, "no_change") << "the night's own comparison stands";
  ASSERT_TRUE(interrupted.record.drift);
  EXPECT_EQ(interrupted.record.drift->verdict, "interrupted");
  EXPECT_EQ(interrupted.exit_code, 130);
  EXPECT_FALSE(interrupted.record.good);
  EXPECT_EQ(last_good(history(), kUrl, "master"), c1);

  stop = [] { return false; };
  notes.lines.clear();
  const auto answer = driver.answer;
  driver.answer = [&, answer](const test::FakeBoot& b) {
    if (!drifting()) return answer(b);
    return test::FakeAnswer{.end = GuestOutcome::End::infra_error, .detail = "fake: the host lost its QEMU"};
  };
  const NightEnd lost = night();
  ASSERT_TRUE(lost.record.drift);
  EXPECT_EQ(lost.record.drift->verdict, "infrastructure");
  EXPECT_EQ(lost.exit_code, 3);
  EXPECT_FALSE(lost.record.good);
  EXPECT_EQ(last_good(history(), kUrl, "master"), c1);
  EXPECT_EQ(history().size(), 2u) << "the night run again replaces its line";
}

// A night whose own comparison fails on the host exits 3, changes nothing, and exports as MISS.
TEST_F(NightlyTest, AnInfrastructureFailureChangesNothingAndExportsAsMiss) {
  repo.commit("one", {{"README", "1\n"}});
  driver.answer = [](const test::FakeBoot&) {
    return test::FakeAnswer{.end = GuestOutcome::End::infra_error, .detail = "fake: the host lost its QEMU"};
  };
  const NightEnd n = night();
  EXPECT_EQ(n.exit_code, 3);
  EXPECT_EQ(n.record.outcome, "infrastructure");
  EXPECT_FALSE(n.record.good);
  EXPECT_EQ(last_good(history(), kUrl, "master"), std::nullopt);
  const nlohmann::json e = kcidb_export(night_dir(0));
  ASSERT_GE(e.at("tests").size(), 1u) << e.dump(2);
  for (const auto& t : e["tests"]) EXPECT_EQ(t["status"], "MISS") << t.dump();
  if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code == 0) {
    EXPECT_EQ(kcidb_errors(e), "");
  }
}

// A night whose kernels were never ready has no build to name: it is still one MISS test on B's
// checkout, valid KCIDB, and it changes nothing.
TEST_F(NightlyTest, ANightWhoseKernelsWereNeverReadyExportsAsMiss) {
  const std::string c1 = repo.commit("one", {{"README", "1\n"}});
  preparer.fail = "fake: the build host went away";
  EXPECT_THROW(night(), InfraError);
  ASSERT_EQ(history().size(), 1u);
  EXPECT_EQ(history()[0].outcome, "infrastructure");
  EXPECT_EQ(history()[0].exit_code, 3);
  EXPECT_EQ(last_good(history(), kUrl, "master"), std::nullopt);
  const nlohmann::json e = kcidb_export(night_dir(0));
  ASSERT_EQ(e.at("tests").size(), 1u) << e.dump(2);
  EXPECT_EQ(e["tests"][0]["status"], "MISS");
  EXPECT_EQ(e["tests"][0]["comment"], "fake: the build host went away");
  EXPECT_EQ(e["checkouts"][1]["git_commit_hash"], c1);
  if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code == 0) {
    EXPECT_EQ(kcidb_errors(e), "");
  }
}

// Exit 4 (inconclusive at the budget) completes the night: B becomes the last good commit, as with 0.
// B 8.5 % slower, each boot's speed off by a normal 4 % (drawn from its trial id, and the plan's seed fixed,
// so the night is the same every time): at 20 blocks the interval reaches past the 10 % margin while
// the estimate is inside it.
TEST_F(NightlyTest, AnInconclusiveNightMakesBTheLastGoodCommit) {
  std::string text = read_file(root / "nightly.toml");
  text.replace(text.find("[schedule]\n"), 11, "[schedule]\nseed = 7\n");
  write_file_atomic(root / "nightly.toml", text);
  x = load_nightly_experiment(root / "nightly.toml");
  driver.answer = [this](const test::FakeBoot& b) {
    std::mt19937 draw(static_cast<std::uint32_t>(std::hash<std::string>{}(b.trial)));
    const double wobble = 1 + std::normal_distribution<double>(0, 0.04)(draw);
    const bool b_side = b.spec.kernel.parent_path().filename().string() == "speed-0.915000";
    return test::FakeAnswer{.console = test::fake_guest_console(b.trial, b.nonce, x->experiment.workloads,
                                                                 test::fake_dd_output(2e9 * (b_side ? 0.915 : 1) * wobble))};
  };
  const std::string edge = repo.commit("edge", {{"edge.txt", "EDGE\n"}});
  const NightEnd n = night();
  ASSERT_EQ(n.record.metrics.size(), 1u);
  const MetricResult& m = n.record.metrics[0];
  EXPECT_EQ(n.record.outcome, "inconclusive") << m.estimate << " [" << m.low << ", " << m.high << "]";
  EXPECT_EQ(n.exit_code, 4);
  EXPECT_TRUE(n.record.good);
  EXPECT_FALSE(n.record.bisection);
  EXPECT_EQ(last_good(history(), kUrl, "master"), edge);
}

// Ctrl-C while a regression is bisected: exit 130, B not made good, the bisection said stopped.
TEST_F(NightlyTest, ANightInterruptedWhileBisectingChangesNothing) {
  repo.commit("slow", {{"slow.txt", "SLOW\n"}});
  repo.commit("harmless", {{"README", "h\n"}});
  stop = [this] {
    return std::any_of(notes.lines.begin(), notes.lines.end(),
                       [](const std::string& l) { return l.starts_with("night: regression; bisecting"); });
  };
  const NightEnd n = night();
  EXPECT_EQ(n.record.outcome, "regression");
  EXPECT_EQ(n.exit_code, 130);
  EXPECT_FALSE(n.record.good);
  ASSERT_TRUE(n.record.bisection);
  EXPECT_EQ(n.record.bisection->outcome, "stopped");
  EXPECT_EQ(n.record.bisection->end, "interrupted");
  EXPECT_EQ(last_good(history(), kUrl, "master"), std::nullopt);
}

TEST_F(NightlyTest, TheBisectionStopsAtItsWallTimeAndReportsTheRangeLeft) {
  write_nightly("[nightly.bisect]\nmax_wall_time = \"30m\"\n");
  tick = std::chrono::minutes(20);  // the clock passes 30 minutes at the second look at it
  const std::string one = repo.commit("slow", {{"slow.txt", "SLOW\n"}});
  const std::string two = repo.commit("harmless", {{"README", "h\n"}});
  const NightEnd n = night();
  EXPECT_EQ(n.exit_code, 1);
  ASSERT_TRUE(n.record.bisection);
  EXPECT_EQ(n.record.bisection->outcome, "stopped");
  EXPECT_EQ(n.record.bisection->end, "wall time (30m spent)");
  ASSERT_EQ(n.record.bisection->culprits.size(), 1u);
  ASSERT_EQ(n.record.bisection->culprits[0].commits.size(), 2u) << "the range the budget left: both commits";
  EXPECT_EQ(n.record.bisection->culprits[0].commits[0].commit, one);
  EXPECT_EQ(n.record.bisection->culprits[0].commits[1].commit, two);
  // The night's report says so too: why the bisection ended, and the range it left.
  const std::string report = report_of(n);
  EXPECT_NE(report.find("ended before naming one commit (stopped: wall time (30m spent))"), std::string::npos) << report;
  EXPECT_NE(report.find("one of these 2 commits"), std::string::npos);
  for (const auto& c : {one, two}) EXPECT_NE(report.find("<code title=\"" + c + "\">"), std::string::npos) << c;
}

TEST_F(NightlyTest, TheKcidbExportOfEachNightBisectionAndRunValidatesWithItsStatuses) {
  if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code != 0) {
    ABVM_SKIP_WITHOUT("python3-jsonschema is not installed (harness/setup.sh --tests installs it)");
  }
  const std::string culprit = three_nights();
  const auto lines = history();
  const nlohmann::json n3 = kcidb_export(night_dir(2));
  EXPECT_EQ(kcidb_errors(n3), "");
  EXPECT_EQ(n3.at("version"), (nlohmann::json{{"major", 5}, {"minor", 3}}));
  ASSERT_EQ(n3.at("checkouts").size(), 2u);
  EXPECT_EQ(n3["checkouts"][0]["git_commit_hash"], lines[2].a);
  EXPECT_EQ(n3["checkouts"][1]["git_commit_hash"], lines[2].b);
  EXPECT_EQ(n3["checkouts"][1]["git_repository_url"], "https://git.example.org/tree.git");
  EXPECT_EQ(n3["checkouts"][1]["git_repository_branch"], "master");
  ASSERT_EQ(n3.at("tests").size(), 1u);
  const nlohmann::json& t = n3["tests"][0];
  EXPECT_EQ(t["status"], "FAIL");
  EXPECT_EQ(t["misc"]["judged"], true);
  EXPECT_EQ(t["path"], "abvm.tree.dd-write.bandwidth");
  EXPECT_NEAR(t["number"]["value"].get<double>(), 0.57, 0.02);
  EXPECT_EQ(t["misc"]["bisection"]["culprits"][0]["commit"], culprit);
  EXPECT_EQ(t["misc"]["baseline_build_id"], n3["builds"][0]["id"]) << "A's build";
  EXPECT_EQ(t["build_id"], n3["builds"][1]["id"]) << "the test is B's";
  ASSERT_EQ(n3.at("builds").size(), 2u);
  for (const auto& build : n3["builds"]) {
    EXPECT_EQ(build.at("misc").value("config_sha256", ""), text_sha256("c")) << "the config's hash kernels.json holds";
  }
  const nlohmann::json n2 = kcidb_export(night_dir(1));
  EXPECT_EQ(kcidb_errors(n2), "");
  EXPECT_EQ(n2["tests"][0]["status"], "PASS");
  // The bisection: one test per step, slower FAIL and not slower PASS.
  const nlohmann::json b = kcidb_export(root / "history" / lines[2].bisection->dir, {.url = lines[2].url});
  EXPECT_EQ(kcidb_errors(b), "");
  std::multiset<std::string> statuses;
  for (const auto& step : b.at("tests")) statuses.insert(step.at("status").get<std::string>());
  EXPECT_EQ(statuses.count("FAIL") + statuses.count("PASS"), b.at("tests").size());
  EXPECT_GE(statuses.count("FAIL"), 1u);
  EXPECT_GE(statuses.count("PASS"), 1u);
  // A run's directory on its own, and through the binary.
  const fs::path run = root / "history" / lines[2].run_dir;
  EXPECT_EQ(kcidb_errors(kcidb_export(run)), "");
  const ProcessResult cli = run_process({ABVM_BINARY, "export", "--kcidb", night_dir(2).string()});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_EQ(nlohmann::json::parse(cli.out), n3);
  // The validator does reject what the schema forbids (a status KCIDB does not know).
  nlohmann::json broken = n3;
  broken["tests"][0]["status"] = "REGRESSION";
  EXPECT_NE(kcidb_errors(broken), "");
}

// A cost metric the experiment does not name is reported, not judged (issue 27). B costing twice the
// guest's CPU per GiB is that metric's own regression and no part of the night's verdict: the night
// is no_change and makes B good; its line keeps the metric unjudged, and the night's summary says
// so; KCIDB has it DONE, valid, with its own verdict in misc; the history page does not mark it as a
// regression.
TEST_F(NightlyTest, AMetricReportedNotJudgedIsDoneInKcidbAndNoRegressionOnThePage) {
  driver.answer = [this](const test::FakeBoot& b) { return scripted_answer(b, true); };
  const std::string heavy = repo.commit("virtio_blk: a heavier path", {{"heavy.txt", "HEAVY\n"}});
  const NightEnd n = night();
  EXPECT_EQ(n.record.outcome, "no_change");
  EXPECT_EQ(n.exit_code, 0);
  EXPECT_FALSE(n.record.bisection) << "nothing the night judged regressed";
  EXPECT_EQ(last_good(history(), kUrl, "master"), heavy);
  const auto lines = history();
  const auto metric = [&](const std::string& name) {
    const auto& ms = lines.at(0).metrics;
    const auto m = std::find_if(ms.begin(), ms.end(), [&](const MetricResult& r) { return r.name == name; });
    return m == ms.end() ? MetricResult{} : *m;
  };
  const MetricResult cost = metric("dd-write.guest_cpu_per_gib");
  EXPECT_EQ(cost.verdict, "regression");
  EXPECT_FALSE(cost.judged);
  EXPECT_NEAR(cost.estimate, 2, 0.05);
  EXPECT_TRUE(metric("dd-write.bandwidth").judged);
  const int unjudged = static_cast<int>(std::count_if(lines[0].metrics.begin(), lines[0].metrics.end(),
                                                      [](const MetricResult& m) { return !m.judged; }));
  const std::string summary = cli::night_summary(n.record, History(root / "history"));
  EXPECT_NE(summary.find(fmt::format("  dd-write.guest_cpu_per_gib: B/A {:.3f} [{:.3f}, {:.3f}] regression (reported, "
                                     "not judged)\n", cost.estimate, cost.low, cost.high)),
            std::string::npos)
      << summary;
  EXPECT_EQ(count_of(summary, "(reported, not judged)"), unjudged) << "the judged metric is not said to be";

  const nlohmann::json e = kcidb_export(night_dir(0));
  const auto test_of = [](const nlohmann::json& data, const std::string& path) {
    for (const auto& t : data.at("tests")) {
      if (t.at("path") == path) return t;
    }
    return nlohmann::json::object();
  };
  const nlohmann::json t = test_of(e, "abvm.tree.dd-write.guest_cpu_per_gib");
  EXPECT_EQ(t.value("status", ""), "DONE") << e.dump(2);
  EXPECT_NEAR(t["number"]["value"].get<double>(), 2, 0.05);
  EXPECT_EQ(t["misc"]["judged"], false);
  EXPECT_EQ(t["misc"]["verdict"], "regression");
  EXPECT_NE(t["comment"].get<std::string>().find(": regression; reported, not judged"), std::string::npos) << t["comment"];
  const nlohmann::json bandwidth = test_of(e, "abvm.tree.dd-write.bandwidth");
  EXPECT_EQ(bandwidth.value("status", ""), "PASS");
  EXPECT_EQ(bandwidth["misc"]["judged"], true);
  EXPECT_EQ(test_of(kcidb_export(root / "history" / lines[0].run_dir), "abvm.tree.dd-write.guest_cpu_per_gib")
                .value("status", ""),
            "DONE")
      << "the run's own directory exports it the same";
  if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code == 0) {
    EXPECT_EQ(kcidb_errors(e), "");
  }

  const std::string html = history_html(
      {{.nights = lines}}, [](const std::string& p) -> std::optional<std::string> { return p; }, load_html_template());
  EXPECT_EQ(count_of(html, "class=\"v-regression\""), 0) << "no cell marks a regression";
  EXPECT_EQ(count_of(html, "<td class=\"not-judged\" title=\"its own verdict: regression;"), 1);
  EXPECT_EQ(count_of(html, "<span class=\"muted\">reported, not judged</span>"), unjudged);
}

TEST_F(NightlyTest, AnInterruptedNightExportsAsMiss) {
  repo.commit("one", {{"README", "1\n"}});
  stop = [] { return true; };
  ASSERT_EQ(night().exit_code, 130);
  const nlohmann::json n = kcidb_export(night_dir(0));
  ASSERT_EQ(n.at("tests").size(), 1u);
  EXPECT_EQ(n["tests"][0]["status"], "MISS");
  if (run_process({"/usr/bin/python3", "-c", "import jsonschema"}).exit_code == 0) {
    EXPECT_EQ(kcidb_errors(n), "");
  }
  EXPECT_EQ(kcidb_status("inconclusive"), "DONE");
  EXPECT_EQ(kcidb_status("improvement"), "PASS");
  EXPECT_EQ(kcidb_status("infrastructure"), "MISS");
}

TEST_F(NightlyTest, TheHistoryPageShowsEveryNightItsPlotAndTheCulprit) {
  three_nights();
  const auto lines = history();
  ::unsetenv("ABVM_PYTHON");  // the plots are the page's: made with the real matplotlib
  const HistoryPlots plots = history_plots(lines);
  ASSERT_EQ(plots.missing, std::vector<std::string>{});
  ASSERT_EQ(plots.plots.size(), 1u);
  EXPECT_EQ(plots.plots[0].png.substr(1, 3), "PNG");
  const std::string html = history_html(
      {{lines, plots}}, [](const std::string& p) -> std::optional<std::string> { return "here/" + p; }, load_html_template());
  int rows = 0;
  for (auto at = html.find("class=\"night-row\""); at != std::string::npos; at = html.find("class=\"night-row\"", at + 1)) ++rows;
  EXPECT_EQ(rows, 3);
  EXPECT_NE(html.find("data:image/png;base64,"), std::string::npos);
  EXPECT_NE(html.find("virtio_blk: bounce every request"), std::string::npos) << "the culprit";
  EXPECT_NE(html.find("<a href=\"here/" + lines[2].report + "\">report</a>"), std::string::npos);
  EXPECT_NE(html.find("<td class=\"v-regression\">regression</td>"), std::string::npos);
  const std::string gone =
      history_html({{lines, plots}}, [](const std::string&) { return std::nullopt; }, load_html_template());
  EXPECT_NE(gone.find("report <span class=\"muted\">(no longer kept)</span>"), std::string::npos);
  // Through the binary: the page next to the nights, its links relative to it.
  const ProcessResult cli = run_process({ABVM_BINARY, "history", (root / "history").string()});
  EXPECT_EQ(cli.exit_code, 0) << cli.err;
  EXPECT_NE(read_file(root / "history" / "history.html").find("<a href=\"" + lines[2].report + "\">report</a>"),
            std::string::npos);
}

// One history directory may follow two trees (or two branches): each is a section with its own nights,
// plots and table, never one plot of both.
TEST_F(NightlyTest, AHistoryOfTwoTreesShowsEachInASectionOfItsOwn) {
  three_nights();
  std::vector<NightRecord> lines = history();
  ASSERT_EQ(lines.size(), 3u);
  NightRecord other = lines[1];
  other.url = "https://example.org/other.git";
  lines.insert(lines.begin() + 2, other);
  NightRecord other_branch = lines[0];
  other_branch.branch = "next";
  lines.push_back(other_branch);
  const auto series = history_series(lines);
  ASSERT_EQ(series.size(), 3u);
  EXPECT_EQ(series[0].size(), 3u) << "the first tree's master, in the history's order";
  EXPECT_EQ(series[0][2].night, lines[3].night);
  EXPECT_EQ(series[1].size(), 1u);
  EXPECT_EQ(series[1][0].url, "https://example.org/other.git");
  EXPECT_EQ(series[2].size(), 1u);
  EXPECT_EQ(series[2][0].branch, "next");
  std::vector<HistorySeries> page;
  for (const auto& nights : series) page.push_back({.nights = nights});
  const std::string html =
      history_html(page, [](const std::string& p) -> std::optional<std::string> { return p; }, load_html_template());
  EXPECT_EQ(count_of(html, "<h2>"), 3);
  EXPECT_EQ(count_of(html, "class=\"night-row\""), 5);
  const auto first = html.find("<h2>" + lines[0].url + " master</h2>\n<p>3 nights");
  const auto second = html.find("<h2>https://example.org/other.git master</h2>\n<p>1 night (");
  const auto third = html.find("<h2>" + lines[0].url + " next</h2>\n<p>1 night (");
  ASSERT_NE(first, std::string::npos) << html;
  ASSERT_NE(second, std::string::npos) << html;
  ASSERT_NE(third, std::string::npos) << html;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
  EXPECT_EQ(count_of(html.substr(first, second - first), "class=\"night-row\""), 3);
  EXPECT_EQ(count_of(html.substr(second, third - second), "class=\"night-row\""), 1);
}

TEST_F(NightlyTest, TheCommandNamesBadInputAndDocumentsItself) {
  const ProcessResult help = run_process({ABVM_BINARY, "nightly", "--help"});
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("--history"), std::string::npos);
  EXPECT_NE(help.out.find("only 0 and 4 make B the last good commit"), std::string::npos);
  EXPECT_NE(help.out.find("Both run co-scheduled with sequential stopping"), std::string::npos);
  EXPECT_NE(help.out.find("configs/nightly.toml"), std::string::npos);
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(ABVM_SOURCE_DIR) / "configs" / "nightly.toml"));
  write_file_atomic(root / "bad.toml", "name = \"x\"\n[nightly]\ntree = \"tree\"\n");
  const ProcessResult bad = run_process({ABVM_BINARY, "nightly", (root / "bad.toml").string(), "--history",
                                         (root / "h").string()});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("bad.toml:2: [nightly] needs branch"), std::string::npos) << bad.err;
  EXPECT_FALSE(fs::exists(root / "h" / "history.jsonl"));
}

// The long options `abvm <subcommand>` parses, from its parser (--help aside).
std::set<std::string> parsed_options(const std::string& subcommand) {
  CLI::App app;
  const std::vector<cli::Command> commands = cli::add_nightly_family(app);
  std::set<std::string> out;
  for (const CLI::Option* option : app.get_subcommand(subcommand)->get_options()) {
    for (const auto& name : option->get_lnames()) {
      if (name != "help") out.insert("--" + name);
    }
  }
  return out;
}

// The long options README's Nightly CI section gives `abvm <subcommand>`: in its backquoted spans
// that begin with "abvm <subcommand>" (`abvm export --kcidb DIR [--output PATH]`).
std::set<std::string> readme_options(const std::string& subcommand) {
  std::string readme = read_file(fs::path(ABVM_SOURCE_DIR) / "README.md");
  const auto start = readme.find("\n### Nightly CI\n");
  EXPECT_NE(start, std::string::npos) << "README has no section Nightly CI";
  readme = readme.substr(start, readme.find("\n## ", start + 1) - start);
  std::replace(readme.begin(), readme.end(), '\n', ' ');
  std::set<std::string> out;
  const std::regex span("`abvm " + subcommand + " ([^`]*)`"), option("--[a-z][a-z-]*");
  for (std::sregex_iterator s(readme.begin(), readme.end(), span), end; s != end; ++s) {
    const std::string text = (*s)[1];
    for (std::sregex_iterator o(text.begin(), text.end(), option); o != end; ++o) out.insert(o->str());
  }
  return out;
}

// --help and README name exactly the options the code parses, for each command of the family.
TEST(NightlyFamilyHelp, HelpAndReadmeNameEveryOptionTheParserTakes) {
  for (const std::string subcommand : {"nightly", "history", "export"}) {
    const std::set<std::string> parsed = parsed_options(subcommand);
    EXPECT_TRUE(parsed.contains("--output") || parsed.contains("--history")) << subcommand << ": the parser was read";
    const ProcessResult help = run_process({ABVM_BINARY, subcommand, "--help"});
    EXPECT_EQ(help.exit_code, 0) << subcommand << help.err;
    EXPECT_EQ(help.err, "") << subcommand;
    for (const auto& option : parsed) {
      EXPECT_NE(help.out.find(option), std::string::npos) << "abvm " << subcommand << " --help: " << option;
    }
    EXPECT_EQ(readme_options(subcommand), parsed) << "README, Nightly CI: abvm " << subcommand;
  }
}

}  // namespace
}  // namespace abvm
