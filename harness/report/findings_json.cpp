#include "report/findings_json.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <optional>
#include <string_view>
#include <type_traits>
#include <utility>

#include "core/error.hpp"
#include "core/json_read.hpp"

namespace abvm {
namespace {

using nlohmann::json;

// Each kind's name in the file and its numbers, listed once for the writer and the reader:
// describe(v, x) calls v.kind(name) and v(key, member) for every member.
template <class V> void describe(V& v, RunList& x) { v("count", x.count), v("first", x.first); }
template <class V> void describe(V& v, ModeRange& x) {
  v("low", x.low), v("high", x.high), v("a_fraction", x.a_fraction), v("b_fraction", x.b_fraction);
}
template <class V> void describe(V& v, HostFigure& x) {
  v("host", x.host), v("blocks", x.blocks), v("estimate", x.estimate), v("low", x.low), v("high", x.high);
}
template <class V> void describe(V& v, FewUnits& x) {
  v.kind("few_units"), v("per_boot", x.per_boot), v("a", x.a), v("b", x.b), v("runs_needed", x.runs_needed);
}
template <class V> void describe(V& v, ConfidenceUnreachable& x) {
  v.kind("confidence_unreachable"), v("per_boot", x.per_boot), v("a", x.a), v("b", x.b),
      v("confidence", x.confidence), v("achieved", x.achieved);
}
template <class V> void describe(V& v, UnbalancedSides& x) {
  v.kind("unbalanced_sides"), v("per_boot", x.per_boot), v("a", x.a), v("b", x.b);
}
template <class V> void describe(V& v, Outliers& x) { v.kind("outliers"), v("side", x.side), v("runs", x.runs); }
template <class V> void describe(V& v, Drift& x) { v.kind("drift"), v("side", x.side), v("rho", x.rho), v("p", x.p); }
template <class V> void describe(V& v, Multimodal& x) {
  v.kind("multimodal"), v("metric", x.metric), v("unit", x.unit), v("modes", x.modes);
}
template <class V> void describe(V& v, MoreInWorseModes& x) {
  v.kind("more_in_worse_modes"), v("side", x.side), v("per_boot", x.per_boot), v("p", x.p), v("alpha", x.alpha);
}
template <class V> void describe(V& v, SamePositionSlowdowns& x) {
  v.kind("same_position_slowdowns"), v("runs", x.runs), v("p", x.p);
}
template <class V> void describe(V& v, SignificantInsideMargin& x) {
  v.kind("significant_inside_margin"), v("margin", x.margin);
}
template <class V> void describe(V& v, SignificantEstimatedInsideMargin& x) {
  v.kind("significant_estimated_inside_margin"), v("worse", x.worse), v("margin", x.margin), v("shift", x.shift);
}
template <class V> void describe(V& v, RegressionByModes&) { v.kind("regression_by_modes"); }
template <class V> void describe(V& v, PairingUnavailable&) { v.kind("pairing_unavailable"); }
template <class V> void describe(V& v, NoValidRuns& x) { v.kind("no_valid_runs"), v("metric", x.metric), v("side", x.side); }
template <class V> void describe(V& v, PairsSkewed& x) {
  v.kind("pairs_skewed"), v("metric", x.metric), v("voided", x.voided), v("pairs", x.pairs),
      v("max_start_skew_ms", x.max_start_skew_ms), v("worst_skew_ms", x.worst_skew_ms);
}
template <class V> void describe(V& v, AllPairsSkewed& x) {
  v.kind("all_pairs_skewed"), v("metric", x.metric), v("voided", x.voided), v("pairs", x.pairs),
      v("max_start_skew_ms", x.max_start_skew_ms), v("worst_skew_ms", x.worst_skew_ms), v("side", x.side);
}
template <class V> void describe(V& v, PairsVoided& x) {
  v.kind("pairs_voided"), v("metric", x.metric), v("voided", x.voided), v("pairs", x.pairs),
      v("threshold", x.threshold), v("min", x.min);
}
template <class V> void describe(V& v, AllPairsVoided& x) {
  v.kind("all_pairs_voided"), v("metric", x.metric), v("voided", x.voided), v("pairs", x.pairs),
      v("threshold", x.threshold), v("min", x.min), v("side", x.side);
}
template <class V> void describe(V& v, WeakPairing& x) {
  v.kind("weak_pairing"), v("metric", x.metric), v("blocks", x.blocks), v("correlation", x.correlation),
      v("between_boot_sd", x.between_boot_sd);
}
template <class V> void describe(V& v, HostsDisagree& x) { v.kind("hosts_disagree"), v("p", x.p), v("hosts", x.hosts); }
template <class V> void describe(V& v, HostsAgree& x) { v.kind("hosts_agree"), v("p", x.p), v("hosts", x.hosts); }
template <class V> void describe(V& v, HostFarOff& x) { v.kind("host_far_off"), v("host", x.host), v("ratio", x.ratio); }
template <class V> void describe(V& v, SidesMismatch& x) { v.kind("sides_mismatch"), v("runs", x.runs); }
template <class V> void describe(V& v, DifferentHosts&) { v.kind("different_hosts"); }
template <class V> void describe(V& v, DifferentAccelerators&) { v.kind("different_accelerators"); }
template <class V> void describe(V& v, RanUnderTcg&) { v.kind("ran_under_tcg"); }
template <class V> void describe(V& v, HostCostUnderTcg&) { v.kind("host_cost_under_tcg"); }
template <class V> void describe(V& v, RunsFailed& x) { v.kind("runs_failed"), v("a", x.a), v("b", x.b); }
template <class V> void describe(V& v, OneSideFailsMore& x) { v.kind("one_side_fails_more"), v("side", x.side); }
template <class V> void describe(V& v, NothingToCompare&) { v.kind("nothing_to_compare"); }
template <class V> void describe(V& v, WorkloadMissing& x) {
  v.kind("workload_missing"), v("workload", x.workload), v("metrics", x.metrics), v("runs_a", x.runs_a),
      v("runs_b", x.runs_b), v("first_failure", x.first_failure), v("reported", x.reported);
}
template <class V> void describe(V& v, InputNote& x) { v.kind("input_note"), v("text", x.text); }

template <class T> struct is_optional : std::false_type {};
template <class T> struct is_optional<std::optional<T>> : std::true_type {};
template <class T> struct is_vector : std::false_type {};
template <class T> struct is_vector<std::vector<T>> : std::true_type {};

const char* severity_name(Severity s) { return s == Severity::warning ? "warning" : "note"; }

// A kind's name, for the reader's dispatch.
struct KindOf {
  std::string_view name;
  void kind(std::string_view n) { name = n; }
  template <class T> void operator()(const char*, T&) {}
};
template <class T> std::string_view kind_of() {
  T x{};
  KindOf k;
  describe(k, x);
  return k.name;
}

struct Writer {
  json& out;
  void kind(std::string_view name) { out["kind"] = name; }
  template <class T> void operator()(const char* key, const T& value) { out[key] = of(value); }

  template <class T> static json of(const T& value) {
    if constexpr (std::is_same_v<T, double>) {
      return std::isfinite(value) ? json(value) : json(nullptr);
    } else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T> || std::is_same_v<T, std::string>) {
      return json(value);
    } else if constexpr (std::is_same_v<T, Side>) {
      return json(to_string(value));
    } else if constexpr (is_optional<T>::value) {
      return value ? of(*value) : json(nullptr);
    } else if constexpr (is_vector<T>::value) {
      json array = json::array();
      for (const auto& x : value) array.push_back(of(x));
      return array;
    } else {
      json object = json::object();
      Writer w{object};
      T copy = value;  // describe() lists members for the reader too, so it takes them mutable
      describe(w, copy);
      return object;
    }
  }
};

// What a member of type T must be, for a missing one's error.
template <class T> std::string expected_of() {
  if constexpr (std::is_same_v<T, double>) return "a number or null";
  else if constexpr (is_vector<T>::value) return "a list";
  else if constexpr (is_optional<T>::value) return expected_of<typename T::value_type>() + " or null";
  else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T> || std::is_same_v<T, std::string> ||
                     std::is_same_v<T, Side>) return json_detail::expected_of<T>();
  else return "an object";
}

struct Reader {
  const JsonField& in;
  void kind(std::string_view) {}
  template <class T> void operator()(const char* key, T& value) { value = of<T>(in.member(key, expected_of<T>())); }

  template <class T> static T of(const JsonField& f) {
    if constexpr (std::is_same_v<T, double>) {
      return f.as<std::optional<double>>().value_or(std::numeric_limits<double>::quiet_NaN());  // null: written for NaN
    } else if constexpr (std::is_same_v<T, bool> || std::is_unsigned_v<T> || std::is_same_v<T, std::string> ||
                         std::is_same_v<T, Side>) {
      return f.as<T>();
    } else if constexpr (is_optional<T>::value) {
      if (f.json().is_null()) return std::nullopt;
      return of<typename T::value_type>(f);
    } else if constexpr (is_vector<T>::value) {
      T out;
      for (const JsonField& e : f.elements()) out.push_back(of<typename T::value_type>(e));
      return out;
    } else {
      f.require_object();
      T out{};
      Reader r{f};
      describe(r, out);
      return out;
    }
  }
};

template <class Finding>
json findings_array(const std::vector<Finding>& findings) {
  json array = json::array();
  for (const Finding& finding : findings) {
    json object = std::visit([](const auto& f) { return Writer::of(f); }, finding);
    object["severity"] = severity_name(severity_of(finding));
    array.push_back(std::move(object));
  }
  return array;
}

// The alternative of Finding whose kind is `kind`, read from `object`; nullopt when none is.
template <class Finding, std::size_t... I>
std::optional<Finding> read_kind(std::string_view kind, const JsonField& object, std::index_sequence<I...>) {
  std::optional<Finding> out;
  const auto try_one = [&]<std::size_t N>() {
    using T = std::variant_alternative_t<N, Finding>;
    if (!out && kind_of<T>() == kind) out = Reader::of<T>(object);
  };
  (try_one.template operator()<I>(), ...);
  return out;
}

template <class Finding>
Finding read_finding(const JsonField& object) {
  const JsonField kind = object.member("kind", "the kind of finding");
  const std::string name = kind.as<std::string>();
  auto finding = read_kind<Finding>(name, object, std::make_index_sequence<std::variant_size_v<Finding>>{});
  if (!finding) kind.invalid(fmt::format("is \"{}\", an unknown kind of finding", name));
  const std::string severity = fmt::format("\"{}\" for a {}", severity_name(severity_of(*finding)), name);
  const JsonField weight = object.member("severity", severity);
  if (weight.json() != severity_name(severity_of(*finding))) weight.expected(severity);
  return *finding;
}

}  // namespace

json findings_json(const std::vector<MetricFinding>& findings) { return findings_array(findings); }
json findings_json(const std::vector<ExperimentFinding>& findings) { return findings_array(findings); }

template <class Finding>
std::vector<Finding> read_findings(const JsonField& findings) {
  std::vector<Finding> out;
  for (const JsonField& f : findings.elements()) out.push_back(read_finding<Finding>(f));
  return out;
}

template std::vector<MetricFinding> read_findings<MetricFinding>(const JsonField&);
template std::vector<ExperimentFinding> read_findings<ExperimentFinding>(const JsonField&);

}  // namespace abvm
