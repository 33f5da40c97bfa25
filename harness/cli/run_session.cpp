#include "cli/run_session.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/report.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm::cli {

std::unique_ptr<LibvirtDriver> connect_libvirt(const std::string& uri, RunObserver& observer,
                                               const HostSettings& hosts) {
  observer.note(fmt::format("connecting to {} ...", uri));
  LibvirtDriverOptions options;
  if (hosts.pool_path) options.staging.pool_path = *hosts.pool_path;
  auto driver = std::make_unique<LibvirtDriver>(uri, options);
  try {
    for (const auto& name : driver->destroy_leftovers()) observer.note("destroyed leftover domain " + name);
  } catch (const InfraError& ex) {
    observer.note(fmt::format("warning: {}; continuing (list running domains with 'virsh -c {} list')", ex.what(), uri));
  }
  return driver;
}

std::vector<HostDriver> connect_hosts(const std::vector<std::string>& uris, const HostSettings& settings,
                                      RunObserver& observer, std::vector<std::unique_ptr<LibvirtDriver>>& drivers) {
  if (uris.size() == 1) {
    drivers.push_back(connect_libvirt(uris[0], observer, settings));
    return {{.name = "", .driver = drivers.back().get()}};
  }
  std::vector<HostDriver> hosts;
  std::vector<std::string> failed;
  for (const auto& uri : uris) {
    try {
      drivers.push_back(connect_libvirt(uri, observer, settings));
      hosts.push_back({.name = uri, .driver = drivers.back().get()});
    } catch (const InfraError& ex) {
      observer.note(fmt::format("host {} is left out of the pool: {}", uri, ex.what()));
      failed.push_back(fmt::format("{} ({})", uri, ex.what()));
    }
  }
  if (hosts.empty()) throw InfraError(fmt::format("no host of the pool can be reached: {}", fmt::join(failed, "; ")));
  return hosts;
}

void write_decision(const Experiment& e, const ResultsDir& dir, const Decision& d,
                    const std::optional<RunRecords>& records) {
  write_file_atomic(dir.analysis(), d.json_text);
  write_file_atomic(dir.summary(), d.summary);
  // Made after the two files are saved: a damaged file of a directory read back loses nothing.
  ReportContext context = records ? run_report_context(e, *records, dir) : read_report_context(dir, &e);
  write_results_dir_report(dir, d.report, std::move(context));
}

Decision write_run_outputs(const Experiment& e, const ResultsDir& dir, const RunEnd& end) {
  Decision d = decide(e, dir, end);
  write_decision(e, dir, d, end.records);
  return d;
}

}  // namespace abvm::cli
