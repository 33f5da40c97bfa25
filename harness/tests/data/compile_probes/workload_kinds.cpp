// Compiled (never built) by harness/tests/config_workload_kinds_test.cpp, one PROBE_* at a time:
// what visit_kind (config/workload.hpp) accepts and what it refuses at compile time. A third
// kind stands for a tool added to WorkloadSpec; the dispatches that miss it are what every
// dispatch in harness/ becomes then.
#include "config/workload.hpp"

namespace probe {

using abvm::DdWorkload;
using abvm::FioWorkload;
using abvm::overloaded;
using abvm::visit_kind;

struct ThirdWorkload {
  static constexpr std::string_view kind = "third";
};
using ThreeKinds = std::variant<DdWorkload, FioWorkload, ThirdWorkload>;

#if defined(PROBE_EVERY_KIND)
int dispatch(const ThreeKinds& spec) {
  return visit_kind(overloaded{[](const DdWorkload&) { return 1; }, [](const FioWorkload&) { return 2; },
                               [](const ThirdWorkload&) { return 3; }},
                    spec);
}
int dispatch_mutable(ThreeKinds& spec) {
  return visit_kind(overloaded{[](DdWorkload&) { return 1; }, [](FioWorkload&) { return 2; },
                               [](ThirdWorkload&) { return 3; }},
                    spec);
}
#elif defined(PROBE_THIRD_KIND_UNHANDLED)
int dispatch(const ThreeKinds& spec) {
  return visit_kind(overloaded{[](const DdWorkload&) { return 1; }, [](const FioWorkload&) { return 2; }}, spec);
}
#elif defined(PROBE_THIRD_KIND_UNHANDLED_MUTABLE)
int dispatch_mutable(ThreeKinds& spec) {
  return visit_kind(overloaded{[](DdWorkload&) { return 1; }, [](FioWorkload&) { return 2; }}, spec);
}
#elif defined(PROBE_CATCH_ALL)
int dispatch(const ThreeKinds& spec) {
  return visit_kind(overloaded{[](const DdWorkload&) { return 1; }, [](const auto&) { return 2; }}, spec);
}
#endif

}  // namespace probe
