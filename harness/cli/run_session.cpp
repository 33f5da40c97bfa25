#include "cli/run_session.hpp"

#include <fmt/format.h>

#include "cli/report.hpp"
#include "core/error.hpp"
#include "core/files.hpp"

namespace abvm::cli {

std::unique_ptr<LibvirtDriver> connect_libvirt(const std::string& uri, RunObserver& observer) {
  observer.note(fmt::format("connecting to {} ...", uri));
  auto driver = std::make_unique<LibvirtDriver>(uri);
  try {
    for (const auto& name : driver->destroy_leftovers()) observer.note("destroyed leftover domain " + name);
  } catch (const InfraError& ex) {
    observer.note(fmt::format("warning: {}; continuing (list running domains with 'virsh -c {} list')", ex.what(), uri));
  }
  return driver;
}

Decision write_run_outputs(const Experiment& e, const ResultsDir& dir, double confidence) {
  Decision d = decide(e, dir, confidence);
  write_file_atomic(dir.analysis(), d.json_text);
  write_file_atomic(dir.summary(), d.summary);
  write_results_dir_report(dir.root());
  return d;
}

}  // namespace abvm::cli
