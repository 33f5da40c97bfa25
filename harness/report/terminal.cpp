#include "report/terminal.hpp"

#include <fmt/format.h>

#include <cmath>
#include <optional>

#include "report/format.hpp"
#include "report/wording.hpp"

namespace abvm {
namespace {

std::string pct(double ratio) { return std::isfinite(ratio) ? fmt::format("{:+.1f}%", (ratio - 1) * 100) : "-"; }

std::string colored(const std::string& text, Verdict v, bool color) {
  if (!color) return text;
  const char* code = v == Verdict::regression     ? "\033[1;31m"
                     : v == Verdict::inconclusive ? "\033[1;33m"
                     : v == Verdict::improvement  ? "\033[1;32m"
                                                  : "\033[1m";
  return fmt::format("{}{}\033[0m", code, text);
}

void side_row(std::string& out, const std::string& label, const ReportSide& x, const std::string& unit) {
  out += fmt::format("  {:<10} {:>5} {:>12} {:>12} {:>12} {:>12} {:>12} {:>6.1f}%", label, x.n,
                     format_value(x.median, unit), format_value(x.mean, unit), format_value(x.mad, unit),
                     format_value(x.min, unit), format_value(x.max, unit), x.cv * 100);
  if (x.per_boot) out += fmt::format("  ({} boots)", x.units);
  out += "\n";
}

// The metric's noise by source and what a decision would cost with either estimate.
// " (~12 min)" at the run's pace, "" when it is not known.
std::string minutes(std::optional<std::uint64_t> blocks, double seconds_per_block) {
  if (!blocks || !(seconds_per_block > 0)) return "";
  return fmt::format(" (~{:.0f} min)", static_cast<double>(*blocks) * seconds_per_block / 60);
}

std::string noise_line(const ReportNoise& n, double margin, double seconds_per_block, bool per_boot) {
  std::string out = per_boot ? fmt::format("  noise (sd of ln): between boots {:.3f}, within a boot {:.3f}",
                                           n.between_boot_sd, n.within_boot_sd)
                             : fmt::format("  noise (sd of ln): between runs {:.3f}", n.between_boot_sd);
  if (n.pairs >= 2) {
    out += fmt::format(", per-block B/A {:.3f} (pairing correlation {:.2f}, {} blocks)", n.pair_sd,
                       n.pair_correlation, n.pairs);
  }
  const auto shown = [](const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string("?"); };
  out += fmt::format("\n  a ±{:.3g} % interval needs about {} {} per side unpaired{}", margin * 50,
                     shown(n.blocks_unpaired), per_boot ? "boots" : "runs", minutes(n.blocks_unpaired, seconds_per_block));
  if (n.pairs >= 2) {
    out += fmt::format(", {} blocks paired{}", shown(n.blocks_paired), minutes(n.blocks_paired, seconds_per_block));
  }
  if (seconds_per_block > 0) out += fmt::format(", at this run's {:.0f} s per block", seconds_per_block);
  return out + "\n";
}

}  // namespace

std::string terminal_report(const ReportModel& analysis, const TerminalOptions& options) {
  std::string out;
  out += fmt::format("{} metric(s); intervals at {:.4g} % (family-wise {:.4g} %), margin ±{:.4g} %\n",
                     analysis.metrics.size(), analysis.interval_confidence * 100, analysis.confidence * 100,
                     analysis.margin * 100);
  // First: what was asked and has no data at all, which alone makes the verdict inconclusive.
  for (const MissingData& d : analysis.missing) {
    out += "\n" + colored(missing_words(d), Verdict::inconclusive, options.color) + "\n";
    if (!d.first_failure.empty()) out += "  first failure: " + d.first_failure + "\n";
  }
  for (const auto& m : analysis.metrics) {
    out += fmt::format("\n{} ({}, {} is better)\n", m.name, m.unit.empty() ? "no unit" : m.unit, to_string(m.better));
    if (!m.judged) out += fmt::format("  {}\n", kNotJudgedWords);
    out += fmt::format("  {:<10} {:>5} {:>12} {:>12} {:>12} {:>12} {:>12} {:>7}\n", "side", "n", "median", "mean",
                       "MAD", "min", "max", "CV");
    side_row(out, options.a_label, m.a, m.unit);
    side_row(out, options.b_label, m.b, m.unit);
    const bool paired = m.primary_estimate == Estimate::paired;
    out += fmt::format("  {}B/A {:.4f} [{:.4f}, {:.4f}]  ({} .. {}), {}{}\n", paired ? "paired " : "", m.effect.estimate,
                       m.effect.low, m.effect.high, pct(m.effect.low), pct(m.effect.high), m.effect.method,
                       paired ? "; decides (the design pairs A and B)" : "");
    const auto& other_effect = paired ? m.unpaired_effect : m.paired_effect;
    const ReportEffect* other = other_effect ? &*other_effect : nullptr;
    if (other != nullptr) {
      out += fmt::format("  {} B/A {:.4f} [{:.4f}, {:.4f}]  ({})\n", paired ? "unpaired" : "paired", other->estimate,
                         other->low, other->high, other->method);
    }
    if (m.noise) out += noise_line(*m.noise, analysis.margin, options.seconds_per_block, m.a.per_boot || m.b.per_boot);
    if (const auto& o = m.overlap) {
      out += "  " + overlap_words(*o) + "\n";
      // Beside the decided estimate, the one that leaves nothing out (issue 26).
      if (const auto& all = m.all_pairs_effect; all && o->voided > 0) {
        out += fmt::format("  every pair, none left out: {}B/A {:.4f} [{:.4f}, {:.4f}]\n", paired ? "paired " : "",
                           all->estimate, all->low, all->high);
      }
    }
    out += fmt::format("  Mann-Whitney U = {:g}, p = {:.3g} (Holm {:.3g}){}; bootstrap median ratio {:.4f} [{:.4f}, "
                       "{:.4f}]\n",
                       m.mann_whitney.u, m.mann_whitney.p, m.mann_whitney.p_holm, m.mann_whitney.exact ? ", exact" : "",
                       m.bootstrap_median_ratio.estimate, m.bootstrap_median_ratio.low, m.bootstrap_median_ratio.high);
    if (m.modes.size() > 1) {
      out += "  modes:";
      for (const ReportMode& md : m.modes) {
        out += fmt::format(" [{} .. {}: A {:.0f}%, B {:.0f}%{}]", format_value(md.low, m.unit),
                           format_value(md.high, m.unit), md.a_fraction * 100, md.b_fraction * 100,
                           md.dominant ? ", dominant" : "");
      }
      out += "\n";
      if (const auto& test = m.mode_test) {
        out += fmt::format("  mode fractions: Fisher p = {:.3g} (B more in worse modes: p = {:.3g})", test->p_two_sided,
                           test->p_b_more_in_worse);
        if (const auto& shift = test->dominant_mode_effect) {
          out += fmt::format("; inside the dominant mode B/A {:.4f} [{:.4f}, {:.4f}]", shift->estimate, shift->low,
                             shift->high);
        }
        out += "\n";
      }
    }
    out += "  " + colored(headline(m, analysis), m.verdict, options.color) + "\n";
    // What the sentence's blocks would cost at this run's pace, which only the run knows.
    const bool blocks = m.primary_estimate == Estimate::paired || m.a.per_boot;
    if (const std::string time = minutes(m.runs_needed, options.seconds_per_block); blocks && !time.empty()) {
      out += fmt::format("  {} blocks at this run's pace{}\n", *m.runs_needed, time);
    }
    for (const auto& n : sentences(m.findings, Severity::note)) out += "  note: " + n + "\n";
    for (const auto& w : sentences(m.findings, Severity::warning)) out += "  warning: " + w + "\n";
  }
  if (const auto lengths = run_length_lines(analysis.context_a, analysis.context_b); !lengths.empty()) {
    out += "\nrun lengths:\n";
    for (const auto& l : lengths) out += "  " + l + "\n";
  }
  if (!analysis.findings.empty()) out += "\n";
  for (const auto& n : sentences(analysis.findings, Severity::note)) out += "note: " + n + "\n";
  for (const auto& w : sentences(analysis.findings, Severity::warning)) out += "warning: " + w + "\n";
  out += "\nverdict: " + colored(verdict_headline(analysis), analysis.verdict, options.color) + "\n";
  return out;
}

}  // namespace abvm
