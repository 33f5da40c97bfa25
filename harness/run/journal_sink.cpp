#include "run/journal_sink.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/error.hpp"
#include "core/files.hpp"
#include "results/directory.hpp"
#include "samples/run_output.hpp"

namespace abvm {
namespace fs = std::filesystem;

namespace {

Outcome journal_outcome(Outcome o) {
  // The two enums use the same words (run/trial.hpp, samples/journal.hpp).
  return parse_outcome(to_string(o)).value_or(Outcome::invalid_output);
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// What a run cost: the guest's view from the tool (fio) or the guest's ticks (dd), the host's from its
// window. fio reports its own CPU; dd does not, and the guest's /proc/stat ticks stand for it (kept for
// fio too, beside fio's own figure).
RunCost run_cost(const RunResult& run, const RunMetrics& parsed) {
  RunCost cost{.tool_bytes = parsed.bytes, .tool_runs = run.window_runs, .guest_cpu_seconds = parsed.cpu_seconds,
               .fio_ctx = parsed.ctx, .host = run.host_cost, .host_missing = run.host_cost_missing};
  if (run.guest_cpu && run.guest_cpu->all > 0) {
    cost.guest_ticks = GuestTicks{.busy = run.guest_cpu->busy, .all = run.guest_cpu->all};
    if (!cost.guest_cpu_seconds) cost.guest_cpu_seconds = static_cast<double>(run.guest_cpu->busy) / kUserHz;
  }
  return cost;
}

}  // namespace

JournalSink::JournalSink(fs::path journal, std::vector<Workload> workloads, std::string host, int sides_per_trial)
    : journal_(std::move(journal)), workloads_(std::move(workloads)), host_(std::move(host)),
      sides_per_trial_(sides_per_trial) {}

std::vector<JournalEntry> JournalSink::entries_for(const TrialResult& result) const {
  std::int64_t per_trial = 0;
  for (const auto& w : workloads_) per_trial += w.repetitions * sides_per_trial_;
  std::vector<JournalEntry> out;
  std::int64_t k = 0;
  for (const auto& run : result.runs) {
    JournalEntry e;
    e.trial = result.trial.id;
    e.side = run.side;
    e.boot = result.trial.id;
    e.run = run.index;
    // Runs of a trial follow each other; trials keep their plan positions, so the order is the
    // same whether or not the run was resumed.
    e.order = result.trial.position * per_trial + k++;
    e.block = result.trial.block;
    e.workload = run.workload;
    e.host = result.host.empty() ? host_ : result.host;
    e.accelerator = result.accelerator;
    e.time = result.time;
    e.outcome = journal_outcome(run.outcome);
    e.detail = run.detail;
    e.timing = run.timing;
    e.overlap = run.overlap;
    // Repeated on each run of the boot: a journal line stands alone (analysis counts boots).
    e.kernel_release = result.report.kernel_release;
    e.module_params = result.report.module_params;
    if (result.report.begun) e.facts = guest_facts(result.report, run.disk_serial);
    const auto w = std::find_if(workloads_.begin(), workloads_.end(),
                                [&](const Workload& x) { return x.name == run.workload; });
    if (w != workloads_.end()) {
      e.size = run_size(w->spec);
      const auto scale = scales_.find(run.workload);
      e.scale = scale == scales_.end() ? 1 : scale->second;
    }
    e.sizing_block = sizing_block_ && result.trial.block == *sizing_block_;
    if (run.outcome == Outcome::ok) {
      const std::string source =
          (ResultsDir::trial_relative(result.trial.id) /
           TrialFiles{}.run_output(run.report_name.empty() ? run.workload : run.report_name, false, run.index))
              .string();
      try {
        if (w == workloads_.end()) throw Error(fmt::format("unknown workload '{}'", run.workload));
        RunMetrics parsed = parse_run_output(w->spec, run.workload, run.output, source);
        if (!parsed.failure.empty()) {
          e.outcome = Outcome::workload_failed;
          e.detail = std::move(parsed.failure);
        }
        e.metrics = std::move(parsed.metrics);
        if (e.outcome == Outcome::ok && e.metrics.empty()) throw Error(source + ": no metric in the output");
        if (e.outcome == Outcome::ok) {
          e.cost = run_cost(run, parsed);
          for (auto& m : cost_metrics(run.workload, *e.cost, parsed.per_request)) e.metrics.push_back(std::move(m));
        }
        for (const auto& m : e.metrics) {
          if (!std::isfinite(m.value) || m.value <= 0) {
            throw Error(fmt::format("{}: metric {} = {} is not a positive number", source, m.name, m.value));
          }
        }
      } catch (const Error& ex) {
        e.outcome = Outcome::invalid_output;
        e.metrics.clear();
        e.detail = ex.what();
      }
    }
    out.push_back(std::move(e));
  }
  return out;
}

void JournalSink::set_workloads(std::vector<Workload> workloads, std::map<std::string, std::uint64_t> scales) {
  workloads_ = std::move(workloads);
  scales_ = std::move(scales);
  resized_ = std::any_of(scales_.begin(), scales_.end(), [](const auto& s) { return s.second > 1; });
}

void JournalSink::on_trial_finished(const TrialResult& result) {
  const auto entries = entries_for(result);
  for (const auto& e : entries) append_line_durable(journal_, to_journal_line(e));
  remember(entries);
}

void JournalSink::remember(const std::vector<JournalEntry>& entries) {
  for (const auto& e : entries) {
    if (e.outcome != Outcome::ok || e.metrics.empty()) continue;
    if (first_metric_.empty()) first_metric_ = e.metrics[0].name;
    for (const auto& m : e.metrics) {
      if (m.name == first_metric_) (e.sizing_block ? sizing_values_ : values_)[to_string(e.side)].push_back(m.value);
    }
  }
}

std::string JournalSink::effect_estimate() const {
  // The sizing block's runs count until a workload grew: then they measured another size.
  std::map<std::string, std::vector<double>> values = values_;
  if (!resized_) {
    for (const auto& [side, v] : sizing_values_) values[side].insert(values[side].end(), v.begin(), v.end());
  }
  const auto a = values.find("A");
  const auto b = values.find("B");
  if (a == values.end() || b == values.end() || a->second.empty() || b->second.empty()) return "";
  return fmt::format("{} B/A {:.3f} ({} vs {} runs)", first_metric_, median(b->second) / median(a->second),
                     a->second.size(), b->second.size());
}

std::vector<JournalEntry> prune_journal(const fs::path& journal, const std::set<std::string>& done,
                                        std::vector<std::string>& notes) {
  if (!fs::exists(journal)) return {};
  bool truncated = false;
  std::vector<JournalEntry> all = read_journal(journal, [&](const std::string& w) {
    truncated = true;
    notes.push_back(w);
  });
  std::vector<JournalEntry> kept;
  std::set<std::string> dropped;
  for (auto& e : all) {
    if (done.contains(e.trial)) {
      kept.push_back(std::move(e));
    } else {
      dropped.insert(e.trial);
    }
  }
  if (truncated || !dropped.empty()) {
    std::string text;
    for (const auto& e : kept) text += to_journal_line(e) + "\n";
    write_file_atomic(journal, text);
    for (const auto& t : dropped) {
      notes.push_back(fmt::format("{}: lines of unfinished trial {} removed; it runs again", journal.string(), t));
    }
  }
  return kept;
}

}  // namespace abvm
