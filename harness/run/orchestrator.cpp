#include "run/orchestrator.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <exception>
#include <future>
#include <map>
#include <nlohmann/json.hpp>

#include "core/error.hpp"
#include "core/files.hpp"
#include "guest/domain_xml.hpp"
#include "guest/job.hpp"
#include "guest/records.hpp"
#include "results/directory.hpp"

namespace abvm {
namespace fs = std::filesystem;
using json = nlohmann::json;

namespace {

json trial_result_json(const TrialResult& r) {
  json runs = json::array();
  for (const auto& run : r.runs) {
    runs.push_back({{"workload", run.workload},
                    {"index", run.index},
                    {"outcome", to_string(run.outcome)},
                    {"exit_status", run.exit_status},
                    {"detail", run.detail}});
  }
  json report = {
      {"begun", r.report.begun},
      {"ended", r.report.ended},
      {"boot_uptime", r.report.boot_uptime},
      {"kernel_release", r.report.kernel_release},
      {"kernel_version", r.report.kernel_version},
      {"cmdline", r.report.cmdline},
      {"blk_features", r.report.blk_features ? json(*r.report.blk_features) : json(nullptr)},
      {"access_platform", r.report.access_platform},
      {"module_params", r.report.module_params},
      {"dmesg", r.report.dmesg},
      {"agent_errors", r.report.agent_errors},
      {"problems", r.report.problems},
  };
  return {{"trial", r.trial.id},
          {"side", to_string(r.trial.side)},
          {"block", r.trial.block},
          {"position", r.trial.position},
          {"outcome", to_string(r.outcome)},
          {"detail", r.detail},
          {"attempts", r.attempts},
          {"retried", r.retried},
          {"seconds", r.seconds},
          {"time", r.time},
          {"accelerator", to_string(r.accelerator)},
          {"runs", runs},
          {"guest", report}};
}

// Raw tool output of every run the guest reported (warm-ups too), one file each.
void save_run_outputs(const TrialFiles& files, const GuestReport& report) {
  for (const auto& run : report.runs) write_file_atomic(files.run_output(run.workload, run.warmup, run.index), run.output);
}

}  // namespace

std::chrono::milliseconds trial_timeout(const ExecutionSpec& spec) {
  std::int64_t runs = 0;
  for (const auto& w : spec.workloads) runs += w.repetitions + w.warmup;
  return spec.boot_timeout + spec.run_timeout * runs;
}

Orchestrator::Orchestrator(GuestDriver& driver, ExecutionSpec spec, TrialSink& sink)
    : driver_(driver), spec_(std::move(spec)), sink_(sink) {}

DomainSpec trial_domain(const ExecutionSpec& spec, const Trial& trial) {
  const SideBoot& side = spec.side(trial.side);
  const TrialFiles files = ResultsDir(spec.results_dir).trial(trial.id);
  DomainSpec d;
  d.name = domain_name(trial.id, static_cast<long>(trial.position));
  d.kernel = side.kernel;
  d.initrd = files.initrd();
  d.cmdline = side.cmdline;
  d.machine = side.machine;
  d.host_cpus = spec.host_cpus;
  const bool second_of_block = spec.design == Design::co_scheduled && trial.position % 2 == 1;
  d.scratch_disk = second_of_block ? spec.second_scratch_disk : spec.scratch_disk;
  d.disk = side.disk;
  d.console_log = files.console_log();
  d.console_limit = spec.console_limit;
  d.accelerator = spec.accelerator;
  return d;
}

std::optional<TrialResult> Orchestrator::run_trial(const Trial& trial,
                                                   const std::function<bool()>& stop_requested) {
  const TrialFiles files = ResultsDir(spec_.results_dir).trial(trial.id);
  std::error_code ec;
  fs::create_directories(files.dir, ec);
  if (ec) throw InfraError(fmt::format("cannot create {}: {}", files.dir.string(), ec.message()));

  TrialResult result;
  result.trial = trial;
  result.accelerator = spec_.accelerator;
  const DomainSpec domain = trial_domain(spec_, trial);
  write_file_atomic(files.domain_xml(), domain_xml(domain));
  const int max_attempts = 1 + std::max(0, spec_.infra_retries);
  for (int attempt = 1; attempt <= max_attempts; ++attempt) {
    // A fresh nonce per boot: records of an earlier attempt can never count for this one.
    GuestJob job{.trial_id = trial.id, .nonce = make_nonce(), .workloads = spec_.workloads};
    GuestImage image;
    image.path = spec_.base_image;
    write_guest_initrd(domain.initrd, image, spec_.side(trial.side).modules_archive, build_job_archive(job));
    const std::string nonce = job.nonce;
    bool interrupted = false;
    const auto done = [&](std::string_view console) {
      if (stop_requested && stop_requested()) {
        interrupted = true;
        return true;
      }
      return console_has_end_record(console, nonce);
    };
    GuestOutcome outcome = driver_.run_guest(domain, trial_timeout(spec_), done);
    if (!spec_.keep_initrd) fs::remove(domain.initrd, ec);
    if (interrupted) return std::nullopt;
    // What the driver booted: a remote host's volume paths instead of this machine's files.
    if (!outcome.domain_xml.empty()) write_file_atomic(files.domain_xml(), outcome.domain_xml);
    write_file_atomic(domain.console_log, outcome.console);
    result.report = parse_guest_console(outcome.console, nonce);
    result.attempts = attempt;
    classify_trial(outcome, result.report, spec_.workloads, result);
    check_side(spec_.side(trial.side).expect, spec_.workloads, result);
    if (result.outcome != Outcome::infra_error || attempt == max_attempts) break;
    // Keep what the failed attempt left, then boot again: an infra error says nothing about
    // the kernel, so a new boot is a fair replacement (and it is recorded).
    result.retried.push_back(fmt::format("attempt {}: {}", attempt, result.detail));
    fs::rename(domain.console_log, files.attempt_console_log(attempt), ec);
    if (stop_requested && stop_requested()) return std::nullopt;
  }
  result.time = utc_iso8601(std::chrono::system_clock::now());
  save_run_outputs(files, result.report);
  // The guest's text (dmesg, agent errors, command line) can be any bytes: a lying or broken
  // guest must not end the experiment here, so bytes that are not UTF-8 become U+FFFD.
  write_file_atomic(files.result(),
                    trial_result_json(result).dump(2, ' ', false, json::error_handler_t::replace) + "\n");
  return result;
}

std::vector<std::optional<TrialResult>> Orchestrator::run_together(const std::vector<Trial>& batch,
                                                                   const std::function<bool()>& stop_requested) {
  // The first trial runs on this thread, the others on one thread each; every thread is waited
  // for before an exception of any of them goes on (no guest is left running unwatched).
  std::vector<std::future<std::optional<TrialResult>>> others;
  for (std::size_t k = 1; k < batch.size(); ++k) {
    others.push_back(std::async(std::launch::async, [this, &stop_requested, trial = batch[k]] {
      return run_trial(trial, stop_requested);
    }));
  }
  std::vector<std::optional<TrialResult>> out;
  std::exception_ptr error;
  try {
    out.push_back(run_trial(batch[0], stop_requested));
  } catch (...) {
    error = std::current_exception();
  }
  for (auto& other : others) {
    try {
      out.push_back(other.get());
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  if (error) std::rethrow_exception(error);
  return out;
}

RunSummary Orchestrator::run(std::vector<Trial> trials, const std::set<std::string>& done,
                             const Controls& controls) {
  RunSummary summary;
  std::set<std::string> finished = done;
  const fs::path ledger = ResultsDir(spec_.results_dir).ledger();
  const auto session_start = std::chrono::steady_clock::now();
  double trial_seconds_sum = 0;
  const auto stop = [&] { return controls.stop_requested && controls.stop_requested(); };
  const auto block_complete = [&](int block) {
    for (const auto& t : trials) {
      if (t.block == block && !finished.contains(t.id)) return false;
    }
    return true;
  };
  // A finished trial goes to the sink, then to the ledger (only then is it done).
  const auto record = [&](const TrialResult& result, double seconds) {
    sink_.on_trial_finished(result);
    append_line_durable(ledger, to_ledger_line({.trial = result.trial.id,
                                                .side = result.trial.side,
                                                .outcome = result.outcome,
                                                .attempts = result.attempts,
                                                .seconds = result.seconds,
                                                .time = result.time,
                                                .detail = result.detail}));
    finished.insert(result.trial.id);
    ++summary.ran;
    trial_seconds_sum += seconds;
    if (controls.on_trial_end) {
      controls.on_trial_end({.result = &result,
                             .done = finished.size(),
                             .total = trials.size(),
                             .session_seconds = std::chrono::duration<double>(
                                                    std::chrono::steady_clock::now() - session_start)
                                                    .count(),
                             .mean_trial_seconds = trial_seconds_sum / static_cast<double>(summary.ran)});
    }
  };

  std::size_t i = 0;
  while (true) {
    if (i == trials.size()) {
      std::vector<Trial> more = controls.extend ? controls.extend() : std::vector<Trial>{};
      if (more.empty()) break;
      trials.insert(trials.end(), more.begin(), more.end());
    }
    const Trial trial = trials[i++];
    if (finished.contains(trial.id)) {
      ++summary.skipped;
      continue;
    }
    if (stop()) {
      summary.interrupted = true;
      break;
    }
    // Co-scheduled: the block's other unfinished trials (they follow in the plan) start with it.
    std::vector<Trial> batch{trial};
    while (spec_.design == Design::co_scheduled && i < trials.size() && trials[i].block == trial.block) {
      const Trial& t = trials[i++];
      if (finished.contains(t.id)) {
        ++summary.skipped;
      } else {
        batch.push_back(t);
      }
    }
    for (const Trial& t : batch) {
      if (controls.on_trial_start) controls.on_trial_start(t, finished.size(), trials.size());
    }
    const auto t0 = std::chrono::steady_clock::now();
    const auto results = run_together(batch, controls.stop_requested);
    // An interrupted block is dropped whole: its trials run again, together, on --resume.
    if (std::any_of(results.begin(), results.end(), [](const auto& r) { return !r; })) {
      summary.interrupted = true;
      break;
    }
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (const auto& result : results) record(*result, seconds / static_cast<double>(batch.size()));
    if (controls.at_block_end && block_complete(trial.block) &&
        controls.at_block_end(trial.block) == BlockDecision::stop) {
      summary.stopped_early = true;
      break;
    }
  }
  summary.trials = std::move(trials);
  return summary;
}

}  // namespace abvm
