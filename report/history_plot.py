#!/usr/bin/python3
"""Plots of an abvm nightly history, for `abvm history DIR` (harness/nightly/history_page.cpp).

usage: /usr/bin/python3 report/history_plot.py INPUT_JSON OUT_DIR

INPUT_JSON (written by the C++ side from history.jsonl):
  {"margin": 0.05,
   "metrics": [{"name": "dd-write.bandwidth", "better": "higher",
                "nights": [{"x": 0, "label": "12-04 b11d05fff046", "estimate": 0.98, "low": 0.96, "high": 1.0,
                            "verdict": "no_change", "judged": true, "culprit": "", "drift": false}, ...]}]}

Per metric one PNG, history-<i>.png: each night's effect B/A with its interval (an error bar) against
the margin band around 1, the verdict as the marker's colour, regressions as red squares with the
bisection's culprit written next to them, drift comparisons as hollow diamonds. A night's metric that was
reported, not judged ("judged": false; absent: judged) is a grey circle whatever its own verdict: it was no
part of the night's. Prints the manifest
on standard output, as report/plot.py does:

  {"plots": [{"metric": 0, "file": "history-0.png", "title": "..."}], "missing": [{"metric": 0 or null, "reason": "..."}]}

A plot that fails is listed under "missing" with the reason; when matplotlib cannot be imported,
every plot is missing and the exit code is still 0 (the page says why). Exit 2 only when the input
cannot be read.
"""
import json
import os
import sys
import traceback

COLOURS = {"regression": "#c62828", "improvement": "#2e7d32", "no_change": "#1f6fb4", "inconclusive": "#e8710a"}


def plot_metric(plt, metric, margin, path):
    nights = metric["nights"]
    fig, ax = plt.subplots(figsize=(max(6.0, 0.6 * len(nights) + 3), 3.6))
    lo, hi = 1 - margin, 1 + margin
    bad = (0, lo) if metric.get("better", "higher") == "higher" else (hi, 10)
    ax.axhspan(lo, hi, color="#e0e0e0", alpha=0.6, label=f"within the margin (±{margin * 100:.0f} %)")
    ax.axhspan(bad[0], bad[1], color="#fdecea", alpha=0.8, label="regression side")
    ax.axhline(1.0, color="#555555", lw=0.8)
    ys = [1.0]
    for n in nights:
        judged = n.get("judged", True)
        colour = COLOURS.get(n["verdict"], "#777777") if judged else "#777777"
        est, low, high = n["estimate"], n["low"], n["high"]
        ys += [low, high]
        x = n["x"] + (0.25 if n.get("drift") else 0)
        marker = "D" if n.get("drift") else ("s" if judged and n["verdict"] == "regression" else "o")
        ax.errorbar([x], [est], yerr=[[max(est - low, 0)], [max(high - est, 0)]], fmt=marker, color=colour,
                    mfc="none" if n.get("drift") else colour, capsize=3, ms=6)
        if n.get("culprit"):
            ax.annotate(n["culprit"], (x, low), textcoords="offset points", xytext=(4, -12), fontsize=7,
                        color=colour)
    labels = {}
    for n in nights:
        labels.setdefault(n["x"], n["label"])
    ax.set_xticks(sorted(labels), [labels[x] for x in sorted(labels)], rotation=30, ha="right", fontsize=7)
    # Room on the right for the last night's culprit.
    ax.set_xlim(-0.5, max(labels, default=0) + 1.5)
    pad = 0.05 * (max(ys) - min(ys) + 0.02)
    ax.set_ylim(min(min(ys), lo) - pad, max(max(ys), hi) + pad)
    ax.set_ylabel("B/A (A: the last good commit)")
    ax.set_title(f"{metric['name']}: each night's head against its last good commit", fontsize=9)
    ax.legend(fontsize=7, loc="best")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        data = json.load(open(sys.argv[1]))
    except (OSError, ValueError) as e:
        print(f"history_plot.py: cannot read {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    out_dir = sys.argv[2]
    os.makedirs(out_dir, exist_ok=True)
    manifest = {"plots": [], "missing": []}
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except Exception as e:  # noqa: BLE001 - any import failure means no plots, said plainly
        manifest["missing"].append({"metric": None, "reason": f"matplotlib cannot be imported ({e}); install "
                                                              "python3-matplotlib (harness/setup.sh)"})
        print(json.dumps(manifest))
        return 0
    for i, metric in enumerate(data.get("metrics", [])):
        name = f"history-{i}.png"
        try:
            plot_metric(plt, metric, float(data.get("margin", 0.05)), os.path.join(out_dir, name))
            manifest["plots"].append({"metric": i, "file": name, "title": metric["name"]})
        except Exception:  # noqa: BLE001 - one failed plot must not cost the others
            manifest["missing"].append({"metric": i, "reason": traceback.format_exc(limit=1).strip()[-300:]})
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main())
