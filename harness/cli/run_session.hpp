#pragma once
// What `abvm run` and `abvm bisect` (whose every step is an abvm run) share: the terminal as a
// run's observer, the libvirt connection, and the outputs a finished results directory gets.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/results_analysis.hpp"
#include "config/experiment.hpp"
#include "guest/libvirt_driver.hpp"
#include "results/directory.hpp"
#include "run/progress.hpp"
#include "run/runner.hpp"

namespace abvm::cli {

// A line on stderr, "abvm: <text>": what a run says outside its progress line.
inline void say(const std::string& text) { std::fprintf(stderr, "abvm: %s\n", text.c_str()); }

// The terminal as a run's observer: one progress line rewritten in place on a terminal, plain
// lines in logs.
class TerminalObserver final : public RunObserver {
 public:
  void note(const std::string& text) override { printer_.message(text); }
  void progress(const ProgressState& state) override { printer_.update(state); }
  void finish() override { printer_.finish(); }

 private:
  ProgressPrinter printer_{stderr, ::isatty(STDERR_FILENO) != 0};
};

// Connects and removes what a killed abvm process left running. libvirt may still be
// reconnecting to those guests (it then refuses with "cannot acquire state change lock"): that
// must not stop a --resume, since the new trials use domains of their own names.
// `hosts` says where a host's storage pool must be (HostSettings::pool_path).
std::unique_ptr<LibvirtDriver> connect_libvirt(const std::string& uri, RunObserver& observer,
                                               const HostSettings& hosts = {});

// Every host of a run, connected (`drivers` owns them). One host: its failure to connect ends the
// run. A pool: a host that cannot be reached is left out (said so); none reached ends it, naming
// every URI.
std::vector<HostDriver> connect_hosts(const std::vector<std::string>& uris, const HostSettings& settings,
                                      RunObserver& observer, std::vector<std::unique_ptr<LibvirtDriver>>& drivers);

// A finished run's outputs of `d`: analysis.json and summary.txt (saved first: a report that
// cannot be written loses nothing gathered), then report.html, whose context comes from what the
// session holds (`records`: RunEnd::records), or, for a run that was over before this session,
// from the directory's files (cli/report.hpp read_report_context). InfraError naming the file that
// could not be written (core/files.hpp write_file_atomic).
void write_decision(const Experiment& experiment, const ResultsDir& dir, const Decision& d,
                    const std::optional<RunRecords>& records);

// The end of a run: its decision (decide() with how the run ended, `end`; Error when there is
// nothing to analyse), written by write_decision with the records `end` holds. Returns the
// decision.
Decision write_run_outputs(const Experiment& experiment, const ResultsDir& dir, const RunEnd& end);

}  // namespace abvm::cli
