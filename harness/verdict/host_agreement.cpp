// A pool's hosts (issue 12): each host's own paired effect over its blocks, whether the hosts agree
// beyond chance, and what they say as findings.
#include "verdict/analysis_steps.hpp"

#include <map>

#include "stats/descriptive.hpp"
#include "stats/kruskal.hpp"

namespace abvm::analysis_steps {

// A pool's hosts: each host's paired effect over its own blocks, and the Kruskal-Wallis test of
// whether the hosts' per-block log ratios come from one distribution. nullopt on one host.
std::optional<HostAgreement> host_agreement(const std::vector<Sample>& a, const std::vector<Sample>& b, double alpha) {
  std::vector<std::string> order;
  std::map<std::string, std::pair<std::vector<Sample>, std::vector<Sample>>> by_host;
  for (const auto* side : {&a, &b}) {
    for (const Sample& s : *side) {
      const std::string& host = s.run().host;
      if (host.empty()) return std::nullopt;
      if (!by_host.contains(host)) order.push_back(host);
      (side == &a ? by_host[host].first : by_host[host].second).push_back(s);
    }
  }
  if (order.size() < 2) return std::nullopt;
  HostAgreement out;
  std::vector<std::vector<double>> groups;
  for (const auto& host : order) {
    const auto& [ha, hb] = by_host[host];
    HostEffect h{.host = host};
    const auto d = block_log_ratios(ha, hb);
    h.blocks = d.size();
    const auto values = [](const std::vector<Sample>& v) {
      std::vector<double> x;
      for (const Sample& s : v) x.push_back(s.value);
      return x;
    };
    if (!ha.empty()) h.median_a = stats::median(values(ha));
    if (!hb.empty()) h.median_b = stats::median(values(hb));
    if (d.size() >= 2) {
      h.effect = effect_from_shift(stats::hodges_lehmann_paired(d, 1 - alpha));
      groups.push_back(d);
    }
    out.hosts.push_back(std::move(h));
  }
  if (groups.size() >= 2) {
    const auto k = stats::kruskal_wallis(groups);
    out.h = k.h;
    out.p = k.p;
    out.disagree = k.p < alpha;
  }
  return out;
}

// What the pool's hosts say: a disagreement beyond chance is a warning, a host far slower or
// faster than the others a note.
void record_hosts(MetricAnalysis& r) {
  if (!r.hosts) return;
  const HostAgreement& h = *r.hosts;
  std::vector<HostFigure> figures;
  for (const auto& x : h.hosts) {
    HostFigure f{.host = x.host, .blocks = x.blocks};
    if (x.effect) {
      f.estimate = x.effect->estimate;
      f.low = x.effect->low;
      f.high = x.effect->high;
    }
    figures.push_back(std::move(f));
  }
  if (h.disagree) {
    r.findings.push_back(HostsDisagree{.p = h.p, .hosts = std::move(figures)});
  } else {
    r.findings.push_back(HostsAgree{.p = h.p, .hosts = std::move(figures)});
  }
  for (const auto& x : h.hosts) {
    std::vector<double> others;
    for (const auto& y : h.hosts) {
      if (&y != &x && y.median_a > 0) others.push_back(y.median_a);
    }
    if (others.empty() || x.median_a <= 0) continue;
    const double ratio = x.median_a / stats::median(others);
    if (ratio < 0.5 || ratio > 2) r.findings.push_back(HostFarOff{.host = x.host, .ratio = ratio});
  }
}

}  // namespace abvm::analysis_steps
