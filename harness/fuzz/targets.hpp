#pragma once
// Fuzz entry points: one plain function per parser or writer that hostile bytes can reach.
// Shared by the libFuzzer programs (fuzz_<name>.cpp, built by harness/fuzz/run.sh with clang)
// and the replay test (tests/cli_fuzz_regressions_test.cpp, built with everything else), so a
// kept crash input is checked by the ordinary test run without clang.
//
// Contract of every fuzz_<name>(bytes): it returns normally when the input is handled, i.e.
// accepted, or refused with abvm::Error (the user's input was bad; the message is what the
// user sees). Anything else is a bug and must crash: another exception type escaping, a
// sanitizer report, or a broken invariant (fuzz_check aborts with the reason). The invariants
// are the promises the rest of abvm relies on: names that become file names or domain names are
// safe, XML is well-formed and says exactly what was asked, a guest job carries exactly the
// arguments asked for, and whatever a parser reports (values, error messages) can be written
// to the run journal.
//
// Header-only (inline) so that the test binary needs no extra CMake wiring.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <pugixml.hpp>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "run/journal_sink.hpp"
#include "bisect/directory.hpp"
#include "config/experiment.hpp"
#include "config/rules.hpp"
#include "core/error.hpp"
#include "core/json_read.hpp"
#include "kernels/cache_entry.hpp"
#include "plan/calibration.hpp"
#include "plan/plan.hpp"
#include "report/report_data.hpp"
#include "results/directory.hpp"
#include "core/utf8.hpp"
#include "guest/domain_xml.hpp"
#include "guest/job.hpp"
#include "guest/records.hpp"
#include "run/trial.hpp"
#include "samples/dd.hpp"
#include "samples/fio.hpp"
#include "samples/journal.hpp"
#include "samples/numbers.hpp"

namespace abvm::fuzz {

// A broken promise: print it and abort, so libFuzzer keeps the input and the test fails.
[[noreturn]] inline void fuzz_fail(std::string_view what) {
  std::fprintf(stderr, "abvm fuzz invariant broken: %.*s\n", static_cast<int>(what.size()), what.data());
  std::fflush(stderr);
  std::abort();
}

inline void fuzz_check(bool ok, std::string_view what) {
  if (!ok) fuzz_fail(what);
}

// Well-formed UTF-8 as XML 1.0 and JSON writers need it (core/utf8.hpp).
inline bool valid_utf8(std::string_view s) { return first_invalid_utf8(s) == std::string_view::npos; }

// Names that become file or directory names under the results directory (workload names of
// the guest's runs, trial ids): no separator, no "." or "..", no control characters.
inline bool safe_file_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || static_cast<unsigned char>(c) < 0x20) return false;
  }
  return true;
}

// The input split at ASCII RS (0x1e) into fields, so one input can fill several strings; a
// missing field is empty. RS is the one byte the field values cannot hold.
class Fields {
 public:
  explicit Fields(std::string_view data) {
    while (true) {
      const auto p = data.find('\x1e');
      parts_.emplace_back(data.substr(0, p));
      if (p == std::string_view::npos) break;
      data.remove_prefix(p + 1);
    }
  }
  std::string next() { return i_ < parts_.size() ? parts_[i_++] : std::string(); }
  std::string next_or(std::string fallback) {
    std::string v = next();
    return v.empty() ? fallback : v;
  }

 private:
  std::vector<std::string> parts_;
  std::size_t i_ = 0;
};

// What the journal writer does with any text a parser produced (a metric, an error message
// quoting tool output): it must become one journal line that reads back the same.
inline void check_journal_line(const JournalEntry& entry) {
  const std::string line = to_journal_line(entry);
  fuzz_check(line.find('\n') == std::string::npos, "journal line contains a newline");
  fuzz_check(valid_utf8(line), "journal line is not UTF-8");
  const JournalEntry back = parse_journal_line(line, "fuzz-roundtrip", 1);
  fuzz_check(to_journal_line(back) == line, "journal line does not read back the same");
}

inline JournalEntry failed_entry(std::string detail) {
  JournalEntry e;
  e.trial = "t0000";
  e.boot = "t0000";
  e.workload = "w";
  e.outcome = Outcome::invalid_output;
  e.host = "fuzz";
  e.accelerator = Accelerator::tcg;
  e.time = "2026-01-01T00:00:00Z";
  e.detail = std::move(detail);
  return e;
}

// ---- experiment file: TOML text -> Experiment ----
inline void fuzz_experiment(std::string_view data) {
  // Relative paths (disk.path, job_file) resolve against a directory that does not exist, so a
  // fuzz input can never create or read the fuzzer's own files through them.
  const std::filesystem::path base = "/nonexistent/abvm-fuzz";
  try {
    const Experiment e = load_experiment_text(data, "fuzz.toml", base);
    fuzz_check(!e.name.empty() && e.name.find('/') == std::string::npos && e.name != "." && e.name != "..",
               "experiment name that is not a plain directory name was accepted");
    fuzz_check(e.a.label != e.b.label, "two sides with one label were accepted");
    fuzz_check(!e.workloads.empty(), "experiment without workloads accepted");
    for (const auto& w : e.workloads) fuzz_check(safe_file_name(w.name), "unsafe workload name accepted");
    (void)describe_effective_config(e);
  } catch (const Error&) {
  }
}

// ---- dd summary lines ----
inline void fuzz_dd(std::string_view data) {
  (void)looks_like_dd(data);
  try {
    const auto runs = parse_dd(data, "fuzz.txt");
    fuzz_check(!runs.empty(), "parse_dd returned no run without an Error");
    for (const auto& r : runs) {
      fuzz_check(std::isfinite(r.seconds) && r.seconds > 0, "dd run with a time that is not positive and finite");
      fuzz_check(std::isfinite(r.bandwidth) && r.bandwidth >= 0, "dd run with a bandwidth that is not finite");
      JournalEntry e = failed_entry("");
      e.outcome = Outcome::ok;
      e.metrics = dd_metrics("w", r);
      if (r.bandwidth > 0) check_journal_line(e);
    }
  } catch (const Error& ex) {
    check_journal_line(failed_entry(ex.what()));
  }
}

// ---- fio JSON documents ----
inline void fuzz_fio(std::string_view data) {
  (void)looks_like_fio(data);
  try {
    const auto docs = parse_fio(data, "fuzz.json");
    fuzz_check(!docs.empty(), "parse_fio returned no document without an Error");
    for (const auto& doc : docs) {
      for (const auto& job : doc.jobs) {
        if (job.error != 0) check_journal_line(failed_entry(describe_fio_error(job)));
      }
      JournalEntry e = failed_entry("");
      e.outcome = Outcome::ok;
      e.metrics = fio_metrics("w", doc);
      bool finite = !e.metrics.empty();
      for (const auto& m : e.metrics) finite = finite && std::isfinite(m.value);
      // Non-finite values are the sink's to refuse (as invalid-output); everything else must journal.
      if (finite) check_journal_line(e);
    }
  } catch (const Error& ex) {
    check_journal_line(failed_entry(ex.what()));
  }
}

// ---- plain numbers ----
inline void fuzz_numbers(std::string_view data) {
  std::size_t first_bad = 0;
  (void)looks_like_numbers(data, &first_bad);
  try {
    const auto values = parse_numbers(data, "fuzz.txt");
    fuzz_check(!values.empty(), "parse_numbers returned no value without an Error");
    for (const auto& v : values) fuzz_check(std::isfinite(v.value), "parse_numbers returned a non-finite value");
  } catch (const Error& ex) {
    check_journal_line(failed_entry(ex.what()));
  }
}

// ---- one journal line ----
inline void fuzz_journal(std::string_view data) {
  try {
    const JournalEntry e = parse_journal_line(data, "fuzz.jsonl", 1);
    check_journal_line(e);
  } catch (const Error&) {
  }
}

// ---- the files abvm reads back (core/json_read.hpp): one document read as each type of a family ----
// Each reader either accepts the bytes or refuses them with an Error that names the file; a
// nlohmann exception escaping, or any other, is a bug. Reading one document as every type of the
// family lets one corpus reach all of them.
template <class... T>
void read_as_each(std::string_view data, std::size_t line = 0) {
  std::optional<JsonDocument> doc;
  try {
    doc.emplace(data, JsonSource{.file = "fuzz.json", .line = line});
  } catch (const Error& e) {
    fuzz_check(std::string_view(e.what()).starts_with("fuzz.json"), "a JSON error that does not name the file");
    return;
  }
  const auto one = [&]<class U>() {
    try {
      (void)doc->root().as<U>();
    } catch (const Error& e) {
      fuzz_check(std::string_view(e.what()).starts_with("fuzz.json"), "a reader's error that does not name the file");
      fuzz_check(valid_utf8(e.what()), "a reader's error that is not UTF-8");
    }
  };
  (one.template operator()<T>(), ...);
}

// ---- plan.json: what reads back is a plan that writes the same plan.json ----
inline void fuzz_plan(std::string_view data) {
  read_as_each<Plan>(data);
  try {
    const JsonDocument doc(data, JsonSource{.file = "fuzz.json"});
    const Plan plan = doc.root().as<Plan>();
    fuzz_check(plan_from_json(plan_to_json(plan)) == plan, "a plan read back does not read back the same");
  } catch (const Error&) {
  }
}

// ---- the host calibration (harness/bench/calibrate_designs.py writes it) ----
inline void fuzz_calibration(std::string_view data) {
  read_as_each<HostCalibration>(data);
  try {
    const JsonDocument doc(data, JsonSource{.file = "fuzz.json"});
    const HostCalibration c = doc.root().as<HostCalibration>();
    for (const auto& d : c.designs) {
      (void)calibrated_blocks(d, 0.025, 0.05);
      (void)truth_summary(c, d.design);
    }
  } catch (const Error&) {
  }
}

// ---- a results directory's run.json and trials.jsonl lines ----
inline void fuzz_results(std::string_view data) { read_as_each<RunManifest, LedgerEntry>(data, 1); }

// ---- a kernel cache entry's identity.json and a build tree's patched-paths.json ----
struct CachedKernel {
  KernelArtifact artifact;
};
inline void read_json(const JsonField& f, CachedKernel& k) {
  k.artifact = kernel_build::cached_artifact(f, "/nonexistent/abvm-fuzz/kernel");
}
inline void fuzz_kernels(std::string_view data) { read_as_each<CachedKernel, std::vector<std::string>>(data); }

// ---- a bisection's bisect-plan.json and steps.jsonl lines ----
inline void fuzz_bisect(std::string_view data) { read_as_each<BisectPlan, StepRecord>(data, 1); }

// ---- analysis.json, environment.json and kernels.json (report/report_data.hpp) ----
struct AnalysisFiles {};
inline void read_json(const JsonField& f, AnalysisFiles&) {
  const JsonOrigin origin{.file = f.source().file, .advice = "fuzz"};
  try {
    (void)read_report_data(f.json(), origin);
  } catch (const Error&) {
  }
  try {
    (void)read_host_environment(f.json(), origin);
  } catch (const Error&) {
  }
  (void)read_side_kernels(f.json(), origin);
}
inline void fuzz_analysis(std::string_view data) { read_as_each<AnalysisFiles>(data); }

// ---- the guest's console: records -> report -> trial outcome -> journal lines ----
// Mode byte 'F': the rest is "TYPE:payload" lines which are framed here as valid records (the
// right nonce, sequence numbers, MD5), so the fuzzer reaches the meaning of the records (what a
// lying guest can claim) instead of spending itself on checksums. Otherwise the bytes are the
// console as it is.
inline constexpr std::string_view kFuzzNonce = "0123456789abcdef";

inline void fuzz_records(std::string_view data) {
  std::string console;
  if (!data.empty() && data.front() == 'F') {
    std::string_view rest = data.substr(1);
    std::uint64_t seq = 0;
    while (!rest.empty()) {
      const auto nl = rest.find('\n');
      const std::string_view line = rest.substr(0, nl);
      const auto colon = line.find(':');
      console += format_guest_record(kFuzzNonce, seq++, line.substr(0, colon),
                                     colon == std::string_view::npos ? std::string_view() : line.substr(colon + 1));
      console += "\n";
      if (nl == std::string_view::npos) break;
      rest.remove_prefix(nl + 1);
    }
  } else {
    console = std::string(data);
  }
  // parse_guest_console promises never to throw: no catch here.
  const GuestReport report = parse_guest_console(console, kFuzzNonce);
  for (const auto& run : report.runs) {
    // The orchestrator saves each run's output as trials/<id>/<workload>-run<i>.out.
    fuzz_check(safe_file_name(run.workload), "guest run with a workload name that is not a plain file name");
  }

  // The rest of a trial's way: the journal sink must turn whatever the guest said into lines.
  DdWorkload dd;
  Workload w{.name = "w", .spec = dd, .repetitions = 1, .warmup = 0};
  Workload f{.name = "f", .spec = FioWorkload{}, .repetitions = 1, .warmup = 0};
  const std::vector<Workload> workloads = {w, f};
  const std::vector<TrialWorkload> measured = {
      {.workload = "w", .report_name = "w", .side = Side::a, .disk_serial = "abvm-scratch", .repetitions = 1},
      {.workload = "f", .report_name = "f", .side = Side::a, .disk_serial = "abvm-scratch", .repetitions = 1}};
  for (auto end : {GuestOutcome::End::finished, GuestOutcome::End::crashed}) {
    GuestOutcome outcome;
    outcome.end = end;
    outcome.console = console;
    TrialResult result;
    result.trial = {.id = "t0000", .side = Side::a};
    result.accelerator = Accelerator::tcg;
    result.time = "2026-01-01T00:00:00Z";
    result.report = report;
    classify_trial(outcome, report, measured, result);
    const JournalSink sink("/nonexistent/abvm-fuzz/journal.jsonl", workloads, "fuzz");
    for (const auto& entry : sink.entries_for(result)) {
      bool finite = true;
      for (const auto& m : entry.metrics) finite = finite && std::isfinite(m.value);
      fuzz_check(finite, "journal sink passed a non-finite metric");
      check_journal_line(entry);
    }
  }
}

// ---- hostile strings into the guest job and the domain XML ----
// Fields (RS-separated): trial id, nonce, workload name, dd bs, dd if, dd of, iflag, oflag,
// fio option key, fio option value, fio job file text, domain name, kernel path, initrd path,
// cmdline, scratch path, console path, disk serial, cache, io, side label, then one per <iotune>
// value in kIotuneFields' order (decimal digits; empty or not a number: unset).

// The agent's reading of a job (guests/agent/init.sh parse_job), in C++: key = up to the first
// space, value = after it. Returns the args and job lines per workload, and the header values.
struct AgentView {
  std::string trial, nonce, scratch;
  std::vector<std::string> names;
  std::vector<std::vector<std::string>> args, joblines;
  bool done = false;
};

inline AgentView agent_read(std::string_view text) {
  AgentView v;
  bool first = true;
  while (!text.empty()) {
    const auto nl = text.find('\n');
    fuzz_check(nl != std::string_view::npos, "job text does not end with a newline");
    const std::string_view line = text.substr(0, nl);
    text.remove_prefix(nl + 1);
    fuzz_check(!v.done, "job has lines after 'done'");
    if (first) {
      fuzz_check(line == "abvm-job 4", "job does not start with 'abvm-job 4'");
      first = false;
      continue;
    }
    const auto sp = line.find(' ');
    const std::string key(line.substr(0, sp));
    const std::string val = sp == std::string_view::npos ? "" : std::string(line.substr(sp + 1));
    if (key == "trial") v.trial = val;
    else if (key == "nonce") v.nonce = val;
    else if (key == "scratch") v.scratch = val;
    else if (key == "workload") { v.names.push_back(val); v.args.emplace_back(); v.joblines.emplace_back(); }
    else if (key == "arg") { fuzz_check(!v.args.empty(), "arg outside a workload"); v.args.back().push_back(val); }
    else if (key == "jobline") { fuzz_check(!v.joblines.empty(), "jobline outside a workload"); v.joblines.back().push_back(val); }
    else if (key == "done") v.done = true;
    else if (key == "kind" || key == "repetitions" || key == "warmup" || key == "sync" || key == "drop_caches" ||
             key == "scheduler_none" || key == "end" || key == "pace" || key == "fill" || key == "wait" || key == "hold" ||
             key == "disk" || key == "step") {}
    else fuzz_fail("job has an unknown key: " + key);
  }
  fuzz_check(v.done, "job has no 'done' line");
  return v;
}

inline void fuzz_job_xml(std::string_view data) {
  Fields in(data);
  GuestJob job;
  job.trial_id = in.next_or("t0000");
  job.nonce = in.next_or("0123456789abcdef");
  const std::string name = in.next_or("w");
  DdWorkload dd;
  dd.block_size = in.next_or("1M");
  dd.input = in.next_or("/dev/zero");
  dd.output = in.next_or("@scratch");
  if (auto f = in.next(); !f.empty()) dd.iflag = {f};
  if (auto f = in.next(); !f.empty()) dd.oflag = {f};
  FioWorkload fio;
  const std::string key = in.next(), value = in.next();
  if (!key.empty()) fio.options[key] = value;
  FioWorkload fio_file;
  fio_file.job_file = in.next();
  job.workloads = job_workloads({Workload{.name = name, .spec = dd}, Workload{.name = name + "f", .spec = fio},
                                 Workload{.name = name + "j", .spec = fio_file}});
  try {
    const std::string text = serialise_job(job);
    const AgentView v = agent_read(text);
    fuzz_check(v.trial == job.trial_id && v.nonce == job.nonce && v.scratch == job.scratch_serial,
               "job header does not read back as written");
    fuzz_check(v.names.size() == job.workloads.size(), "job has a different number of workloads");
    for (std::size_t i = 0; i < job.workloads.size(); ++i) {
      fuzz_check(v.names[i] == job.workloads[i].name(), "workload name does not read back");
      fuzz_check(v.args[i] == workload_argv(job.workloads[i].workload), "workload arguments do not read back exactly");
    }
    // The job file text comes back line by line (a final newline is not a line of its own).
    std::string joined;
    for (const auto& l : v.joblines[2]) joined += l + "\n";
    std::string expected = *fio_file.job_file;
    if (!expected.empty() && expected.back() != '\n') expected += "\n";
    fuzz_check(joined == expected, "fio job file does not read back exactly");
    (void)build_job_archive(job);
  } catch (const Error&) {
  }

  DomainSpec spec;
  spec.name = in.next_or("abvm-1-A-0");
  spec.kernel = in.next_or("/k/vmlinuz");
  spec.initrd = in.next();
  spec.cmdline = in.next();
  const std::string scratch = in.next();
  spec.console_log = in.next_or("/r/console.log");
  ScratchDisk disk{.path = scratch, .serial = in.next_or("abvm-scratch")};
  disk.options.cache = in.next_or("none");
  disk.options.io = in.next_or("native");
  if (!scratch.empty()) spec.disks.push_back(disk);
  const std::string label = in.next();
  for (const IotuneField& f : kIotuneFields) {
    const std::string text = in.next();
    std::uint64_t v = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (!text.empty() && ec == std::errc() && end == text.data() + text.size()) disk.options.iotune.*f.member = v;
  }
  if (!scratch.empty()) spec.disks.back().options.iotune = disk.options.iotune;
  const std::string generated = domain_name(label, 7);
  try {
    validate_domain_name(generated);
  } catch (const Error&) {
    fuzz_fail("domain_name() made a name validate_domain_name() refuses");
  }
  try {
    const std::string xml = domain_xml(spec);
    fuzz_check(valid_utf8(xml), "domain XML is not UTF-8 (libvirt would refuse it)");
    pugi::xml_document doc;
    // libvirt reads the XML with libxml2, which keeps an element's whitespace-only text (a command
    // line of one space is one space); pugixml drops it unless told, so tell it for lone text.
    const auto parsed = doc.load_buffer(xml.data(), xml.size(), pugi::parse_default | pugi::parse_ws_pcdata_single,
                                        pugi::encoding_utf8);
    fuzz_check(static_cast<bool>(parsed), "domain XML does not parse");
    fuzz_check(std::distance(doc.children().begin(), doc.children().end()) == 1, "domain XML has more than one root");
    const auto domain = doc.child("domain");
    const auto os = domain.child("os");
    fuzz_check(domain.child("name").text().as_string() == spec.name, "domain name does not read back");
    fuzz_check(os.child("kernel").text().as_string() == spec.kernel.native(), "kernel path does not read back");
    fuzz_check(os.child("cmdline").text().as_string() == spec.cmdline, "command line does not read back");
    fuzz_check(std::string(os.child("initrd").text().as_string()) == spec.initrd.native(), "initrd does not read back");
    const auto devices = domain.child("devices");
    const auto disks = std::distance(devices.children("disk").begin(), devices.children("disk").end());
    fuzz_check(disks == static_cast<std::ptrdiff_t>(spec.disks.size()), "domain XML has an unexpected number of disks");
    if (!spec.disks.empty()) {
      const auto xml_disk = devices.child("disk");
      fuzz_check(xml_disk.child("source").attribute("file").as_string() == spec.disks[0].path.native(),
                 "scratch disk path does not read back");
      fuzz_check(xml_disk.child("serial").text().as_string() == spec.disks[0].serial, "disk serial does not read back");
      // Exactly the values set, in libvirt's order, each as its decimal number; and only values the
      // loader's rules allow reach the XML.
      fuzz_check(!rules::iotune_conflict(spec.disks[0].options.iotune), "domain XML has iotune values QEMU refuses");
      auto element = xml_disk.child("iotune").first_child();
      for (const IotuneField& f : kIotuneFields) {
        const auto& v = spec.disks[0].options.iotune.*f.member;
        if (!v) continue;
        fuzz_check(element && element.name() == f.name && element.text().as_string() == std::to_string(*v),
                   "iotune value does not read back in libvirt's order");
        element = element.next_sibling();
      }
      fuzz_check(!element, "iotune has an element that was not set");
      fuzz_check(any_set(spec.disks[0].options.iotune) == !xml_disk.child("iotune").empty(),
                 "iotune element without a value, or values without it");
    }
    fuzz_check(devices.child("serial").child("log").attribute("file").as_string() == spec.console_log.native(),
               "console log path does not read back");
  } catch (const Error&) {
  }
}

}  // namespace abvm::fuzz
