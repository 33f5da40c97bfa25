#!/usr/bin/python3
"""Plots of an abvm analysis, for the HTML report.

usage: /usr/bin/python3 report/plot.py ANALYSIS_JSON OUT_DIR

Reads only the JSON report (report/schema.json) and writes PNG files into OUT_DIR. Prints one JSON
document on standard output, the manifest the C++ side (harness/report/plots.cpp) embeds from:

  {"plots":   [{"metric": 0, "kind": "runs", "title": "...", "file": "m0-runs.png"}, ...],
   "missing": [{"metric": 0 or null, "kind": "runs" or "all", "reason": "plain words"}]}

Per metric, four kinds:
  runs          every run as a point per side over a box plot; runs of one boot share a column
  order         the value against the overall run order, coloured by side (drift, host interference)
  distribution  both sides' histograms on a log axis with the detected modes shaded
  effect        the ratio B/A with its interval(s) against the margin band
and a fifth for a metric whose runs carry their timing (runs[].timing, in "runs" or "voided_runs";
harness/report/plots.cpp expected_plot_kinds asks the same):
  timeline      the runs of a few blocks on the host's clock, A above B: each measured run a bar from
                its start to its end, the filler load after it (until its partner's run ended) a
                lighter bar, the host's go a tick, runs left out for too little overlap hatched; all
                blocks when there are at most three, else the first and the one with the worst overlap
and a sixth for a cost metric (<workload>.guest_cpu_per_gib, .host_cpu_per_gib, .host_cpu_per_req;
harness/samples/cost.hpp; plots.cpp asks the same):
  cost          per side, each run's cost against its throughput (the workload's first bandwidth metric,
                the same run found by its "order"): a change that costs CPU per byte at the same speed
                moves up, one whose speed is capped by the disk moves up without moving right

A plot that fails is listed under "missing" with the reason; the others are still made. When
matplotlib cannot be imported at all, every plot is missing with that reason and the exit code is
still 0: the report renders without plots and says why. Exit 2 only when the JSON cannot be read.
"""
import json
import math
import os
import sys
import traceback

KINDS = ("runs", "order", "distribution", "effect")
SIDE_COLOURS = {"a": "#1f6fb4", "b": "#e8710a"}


def side_label(report, side):
    source = report.get("source") or {}
    return str(source.get(side + "_label") or side.upper())


def finite(values):
    return [v for v in values if v is not None and math.isfinite(v)]


def axis_unit(values, unit):
    """Chooses an SI prefix for the axis from the largest value."""
    top = max((abs(v) for v in finite(values)), default=1.0)
    if unit in ("B/s", "B"):
        for div, prefix in ((1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
            if top >= div:
                return div, prefix + unit
        return 1.0, unit
    if unit in ("ns", "us", "ms", "s"):
        to_ns = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}[unit]
        top_ns = top * to_ns
        for div_ns, name in ((1e9, "s"), (1e6, "ms"), (1e3, "us")):
            if top_ns >= div_ns:
                return div_ns / to_ns, name
        return 1.0 / to_ns, "ns"
    return 1.0, unit


def matplotlib_ticker():
    import matplotlib.ticker
    return matplotlib.ticker


def runs_of(metric, side):
    return metric[side].get("runs") or []


def runs_omitted(metric):
    """Runs the report left out of its listing (it lists up to a limit per side, evenly spaced)."""
    return sum(int(metric[s].get("runs_omitted") or 0) for s in ("a", "b"))


def plot_runs(plt, report, metric, path):
    """Box plot per side with every run on top. Runs sharing a boot are drawn in one column and
    joined by a line, so a boot's runs read as one unit (the analysis treats them as one)."""
    values = [r["value"] for s in ("a", "b") for r in runs_of(metric, s)]
    div, unit = axis_unit(values, metric.get("unit", ""))
    fig, ax = plt.subplots(figsize=(6.4, 3.8), dpi=100)
    data, labels = [], []
    for i, side in enumerate(("a", "b")):
        runs = runs_of(metric, side)
        vals = [r["value"] / div for r in runs if r["value"] is not None]
        data.append(vals)
        labels.append(f"{side_label(report, side)} (n={metric[side].get('n', len(vals))})")
    ax.boxplot(data, widths=0.5, showfliers=False, medianprops={"color": "black"})
    for i, side in enumerate(("a", "b")):
        runs = runs_of(metric, side)
        outliers = set(metric[side].get("outliers") or [])
        boots = []
        for r in runs:
            if r.get("boot") is not None and r["boot"] not in boots:
                boots.append(r["boot"])
        shared = len(boots) < len([r for r in runs if r.get("boot") is not None])
        xs = []
        for k, r in enumerate(runs):
            if shared and r.get("boot") is not None:
                pos = boots.index(r["boot"])
                x = i + 1 + 0.36 * ((pos + 0.5) / max(len(boots), 1) - 0.5)
            else:
                x = i + 1 + 0.3 * (((k * 0.618034) % 1.0) - 0.5)
            xs.append(x)
        if shared:
            for b in boots:
                pts = [(x, r["value"] / div) for x, r in zip(xs, runs) if r.get("boot") == b]
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=SIDE_COLOURS[side], alpha=0.35, lw=1)
        ys = [r["value"] / div for r in runs]
        ax.scatter(xs, ys, s=18, color=SIDE_COLOURS[side], alpha=0.8, zorder=3)
        # Outliers are indices among all runs; a listed run carries its index ("index").
        listed = [k for k, r in enumerate(runs) if r.get("index", k) in outliers]
        ox = [xs[k] for k in listed]
        oy = [ys[k] for k in listed]
        if ox:
            ax.scatter(ox, oy, s=60, facecolors="none", edgecolors="black", zorder=4, label="outlier")
    ax.set_xticks([1, 2])
    ax.set_xticklabels(labels)
    ax.set_ylabel(f"{metric['name']} ({unit})" if unit else metric["name"])
    title = "Every run per side" if not runs_omitted(metric) else "Runs per side (an evenly spaced selection)"
    if metric["a"].get("unit_kind") == "boot":
        title += " (lines join the runs of one boot)"
    ax.set_title(title, fontsize=10)
    handles, names = ax.get_legend_handles_labels()
    if handles:
        ax.legend(handles[:1], names[:1], fontsize=8, loc="best")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return title


def plot_order(plt, report, metric, path):
    """Value against the position in the overall order: a drift or a noisy neighbour shows as a
    pattern shared by both sides; a side effect shows as a gap between the colours."""
    values = [r["value"] for s in ("a", "b") for r in runs_of(metric, s)]
    div, unit = axis_unit(values, metric.get("unit", ""))
    fig, ax = plt.subplots(figsize=(6.4, 3.4), dpi=100)
    blocks = sorted({r["block"] for s in ("a", "b") for r in runs_of(metric, s) if r.get("block") is not None})
    if blocks and len(blocks) <= 200:
        for blk in blocks[::2]:
            orders = [r["order"] for s in ("a", "b") for r in runs_of(metric, s) if r.get("block") == blk]
            ax.axvspan(min(orders) - 0.5, max(orders) + 0.5, color="0.92", zorder=0)
    for side in ("a", "b"):
        runs = sorted(runs_of(metric, side), key=lambda r: r["order"])
        ax.plot([r["order"] for r in runs], [r["value"] / div for r in runs], "o", ms=3.5,
                color=SIDE_COLOURS[side], alpha=0.85, label=side_label(report, side))
    ax.set_xlabel("position in the run order" + (" (grey: alternate A/B blocks)" if blocks else ""))
    ax.set_ylabel(f"{metric['name']} ({unit})" if unit else metric["name"])
    title = "Runs in the order they were measured" + (" (an evenly spaced selection)" if runs_omitted(metric) else "")
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="best")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return title


def plot_distribution(plt, report, metric, path):
    """Histograms on a log axis (the modes are found on the log scale) with the modes shaded."""
    a = finite([r["value"] for r in runs_of(metric, "a")])
    b = finite([r["value"] for r in runs_of(metric, "b")])
    div, unit = axis_unit(a + b, metric.get("unit", ""))
    a = [v / div for v in a if v > 0]
    b = [v / div for v in b if v > 0]
    lo, hi = min(a + b), max(a + b)
    if hi <= lo:
        hi = lo * 1.01 + 1e-12
    nbins = max(8, min(60, int(2 * math.sqrt(len(a) + len(b)))))
    edges = [lo * (hi / lo) ** (k / nbins) for k in range(nbins + 1)]
    fig, ax = plt.subplots(figsize=(6.4, 3.4), dpi=100)
    modes = metric.get("modes") or []
    if len(modes) > 1:
        for k, m in enumerate(modes):
            if m.get("low") is None or m.get("high") is None:
                continue
            ax.axvspan(m["low"] / div, m["high"] / div, color="0.85" if k % 2 == 0 else "0.93", zorder=0)
            label = f"mode {k + 1}{' (dominant)' if m.get('dominant') else ''}\n" \
                    f"A {100 * m['a_fraction']:.0f}%  B {100 * m['b_fraction']:.0f}%"
            ax.text(math.sqrt(m["low"] * m["high"]) / div, 0.97, label, transform=ax.get_xaxis_transform(),
                    ha="center", va="top", fontsize=7)
    ax.hist([a, b], bins=edges, color=[SIDE_COLOURS["a"], SIDE_COLOURS["b"]], alpha=0.85,
            label=[side_label(report, "a"), side_label(report, "b")])
    ax.set_xscale("log")
    # Plain numbers on the log axis: with text.parse_math off, the default 10^x labels show as TeX.
    plain = matplotlib_ticker().FuncFormatter(lambda v, _: f"{v:g}")
    ax.xaxis.set_major_formatter(plain)
    ax.xaxis.set_minor_formatter(plain if hi / lo < 20 else matplotlib_ticker().NullFormatter())
    ax.set_xlabel(f"{metric['name']} ({unit}, log scale)" if unit else f"{metric['name']} (log scale)")
    ax.set_ylabel("runs")
    title = "Distributions" + (f" with {len(modes)} detected modes" if len(modes) > 1 else " (one mode)")
    if runs_omitted(metric):
        title += ", of an evenly spaced selection of the runs"
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8, loc="center right")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return title


def plot_effect(plt, report, metric, path):
    """The ratio B/A with its interval(s), as a percentage, against the margin band."""
    margin = float((report.get("options") or {}).get("margin", 0.05))
    rows = []

    def add(name, e):
        if e and e.get("estimate") is not None and e.get("ci_low") is not None and e.get("ci_high") is not None:
            conf = e.get("confidence")
            rows.append((f"{name}\n{100 * conf:.3g} % interval" if conf else name, e))

    add("effect (Hodges-Lehmann)", metric.get("effect"))
    add("paired, per block", metric.get("paired_effect"))
    mode_test = metric.get("mode_test") or {}
    add("inside the dominant mode", mode_test.get("dominant_mode_effect"))
    add("bootstrap, ratio of medians", metric.get("bootstrap_median_ratio"))
    fig, ax = plt.subplots(figsize=(6.4, 1.0 + 0.65 * max(len(rows), 1)), dpi=100)
    ax.axvspan(-100 * margin, 100 * margin, color="#d9f0d3", zorder=0)
    ax.axvline(0, color="0.4", lw=0.8)
    for k, (name, e) in enumerate(reversed(rows)):
        est, lo, hi = (100 * (e[key] - 1) for key in ("estimate", "ci_low", "ci_high"))
        colour = "black" if k == len(rows) - 1 else "0.45"
        ax.errorbar([est], [k], xerr=[[est - lo], [hi - est]], fmt="o", color=colour, capsize=4)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([name for name, _ in reversed(rows)], fontsize=8)
    better = metric.get("better", "higher")
    ax.set_xlabel(f"B/A - 1 in % ({better} is better; green: the margin ±{100 * margin:.3g} %)")
    title = f"Effect: {metric.get('verdict', '')}"
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return title


def timed_runs(metric):
    """Every run of the metric that carries its timing, listed or left out: (side, run, voided)."""
    out = []
    for side in ("a", "b"):
        for key, voided in (("runs", False), ("voided_runs", True)):
            for r in (metric.get(side) or {}).get(key) or []:
                if isinstance(r, dict) and r.get("timing"):
                    out.append((side, r, voided))
    return out


COST_SUFFIXES = (".guest_cpu_per_gib", ".host_cpu_per_gib", ".host_cpu_per_req")


def is_cost(metric):
    name = metric.get("name") or ""
    return any(name.endswith(s) and len(name) > len(s) for s in COST_SUFFIXES)


def kinds_of(metric):
    return KINDS + (("timeline",) if timed_runs(metric) else ()) + (("cost",) if is_cost(metric) else ())


def throughput_of(report, metric):
    """The first bandwidth metric of the cost metric's workload (workload names hold no '.')."""
    workload = metric["name"].split(".")[0]
    for m in report.get("metrics") or []:
        if m["name"].split(".")[0] == workload and m["name"].endswith(".bandwidth"):
            return m
    raise ValueError(f"the report has no bandwidth metric of workload {workload} to plot its cost against")


def plot_cost(plt, report, metric, path):
    """Per side, each run's cost against its throughput: one point per run listed in both metrics."""
    bw = throughput_of(report, metric)
    points = {}
    for side in ("a", "b"):
        speed = {r.get("order"): r["value"] for r in runs_of(bw, side) if r.get("value") is not None}
        points[side] = [(speed[r.get("order")], r["value"]) for r in runs_of(metric, side)
                        if r.get("order") in speed and r.get("value") is not None]
    if not points["a"] and not points["b"]:
        raise ValueError(f"no run listed in both {metric['name']} and {bw['name']}")
    xdiv, xunit = axis_unit([p[0] for s in points.values() for p in s], bw.get("unit", ""))
    fig, axes = plt.subplots(1, 2, figsize=(7.6, 3.6), dpi=100, sharex=True, sharey=True)
    for ax, side in zip(axes, ("a", "b")):
        pts = points[side]
        ax.scatter([p[0] / xdiv for p in pts], [p[1] for p in pts], s=18, color=SIDE_COLOURS[side], alpha=0.8)
        ax.set_title(f"{side_label(report, side)} ({len(pts)} runs)", fontsize=9)
        ax.set_xlabel(f"{bw['name']} ({xunit})", fontsize=8)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(f"{metric['name']} ({metric.get('unit', '')})", fontsize=8)
    title = "Cost against throughput, per side"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return title


def timeline_blocks(metric, limit=3):
    """The blocks the timeline draws, with their runs: all of them up to `limit`, else the first one
    and the one whose pair overlapped least (the next worst when that is the first)."""
    by_block = {}
    for side, r, voided in timed_runs(metric):
        by_block.setdefault(r.get("block"), []).append((side, r, voided))
    blocks = sorted(by_block, key=lambda b: (b is None, b if b is not None else 0))

    def worst(b):
        """The block's smallest pair overlap; None when its runs record none."""
        return min((r["overlap"] for _, r, _ in by_block[b] if r.get("overlap") is not None), default=None)

    if len(blocks) > limit:
        by_overlap = sorted(blocks, key=lambda b: (1.0 if worst(b) is None else worst(b), blocks.index(b)))
        chosen = [blocks[0]] + [b for b in by_overlap if b != blocks[0]][:1]
        blocks = sorted(chosen, key=blocks.index)
    return [(b, by_block[b], worst(b)) for b in blocks]


def plot_timeline(plt, report, metric, path):
    """A's and B's runs of a block on one time axis (seconds from the block's first go or start), A
    above B: where one side's bar has no bar of the other under or above it, that side measured alone."""
    chosen = timeline_blocks(metric)
    threshold = (metric.get("overlap") or {}).get("threshold")
    fig, axes = plt.subplots(len(chosen), 1, figsize=(6.4, 1.4 + 1.25 * len(chosen)), dpi=100, squeeze=False)
    rows = {"a": 1, "b": 0}
    for ax, (block, runs, worst) in zip(axes[:, 0], chosen):
        t0 = min(min(r["timing"]["go"], r["timing"]["start"]) if r["timing"].get("go") is not None
                 else r["timing"]["start"] for _, r, _ in runs)
        for side, r, voided in runs:
            t = r["timing"]
            y = rows[side]
            colour = SIDE_COLOURS[side]
            ax.barh(y, t["end"] - t["start"], left=t["start"] - t0, height=0.55, color=colour,
                    edgecolor="#b3261e" if voided else "white", linewidth=1.2 if voided else 0.5,
                    hatch="//" if voided else None, label="measured run")
            if t["load_end"] > t["end"]:
                ax.barh(y, t["load_end"] - t["end"], left=t["end"] - t0, height=0.55, color=colour, alpha=0.3,
                        edgecolor="white", linewidth=0.5, label="filler load until the partner's run ended")
            if t.get("go") is not None:
                ax.plot([t["go"] - t0] * 2, [y - 0.36, y + 0.36], color="black", lw=1.2, label="the host's go")
        ax.set_yticks([1, 0])
        ax.set_yticklabels([side_label(report, "a"), side_label(report, "b")], fontsize=8)
        ax.set_ylim(-0.6, 1.6)
        name = "runs without a block" if block is None else f"block {block}"
        ax.set_title(f"{name}: " + ("no overlap recorded" if worst is None else
                                     f"the worst pair overlapped {100 * worst:.1f} %"), fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    axes[-1, 0].set_xlabel("seconds from the block's first go or start (host clock)")
    handles, names = [], []
    for ax in axes[:, 0]:
        for h, n in zip(*ax.get_legend_handles_labels()):
            if n not in names:
                handles.append(h)
                names.append(n)
    if any(voided for _, runs, _ in chosen for _, _, voided in runs):
        handles.append(plt.Rectangle((0, 0), 1, 1, facecolor="white", edgecolor="#b3261e", hatch="//"))
        names.append("left out: overlap below " + (f"{100 * threshold:.3g} %" if threshold is not None else "the threshold"))
    fig.legend(handles, names, fontsize=7, loc="lower center", ncol=2, frameon=False)
    shown = ", ".join("no block" if b is None else str(b) for b, _, _ in chosen)
    title = f"A's and B's runs on the host's clock (block{'s' if len(chosen) > 1 else ''} {shown})"
    if runs_omitted(metric):
        title += ", of an evenly spaced selection of the runs"
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0.5 / fig.get_figheight(), 1, 1))
    fig.savefig(path)
    plt.close(fig)
    return title


def main(argv):
    if len(argv) != 3:
        print("usage: plot.py ANALYSIS_JSON OUT_DIR", file=sys.stderr)
        return 2
    try:
        with open(argv[1], encoding="utf-8") as f:
            report = json.load(f)
    except (OSError, ValueError) as e:
        print(f"plot.py: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2
    out_dir = argv[2]
    metrics = report.get("metrics") or []
    manifest = {"plots": [], "missing": []}
    try:
        import matplotlib
        matplotlib.use("Agg")
        # Labels come from config files: a '$' must not start TeX math.
        matplotlib.rcParams["text.parse_math"] = False
        matplotlib.rcParams["svg.fonttype"] = "none"
        import matplotlib.pyplot as plt
    except Exception as e:  # ImportError, or a broken installation
        manifest["missing"].append({"metric": None, "kind": "all",
                                    "reason": f"matplotlib cannot be imported by {sys.executable} ({e}); "
                                              "install python3-matplotlib (harness/setup.sh)"})
        print(json.dumps(manifest))
        return 0
    os.makedirs(out_dir, exist_ok=True)
    makers = {"runs": plot_runs, "order": plot_order, "distribution": plot_distribution, "effect": plot_effect,
              "timeline": plot_timeline, "cost": plot_cost}
    for i, metric in enumerate(metrics):
        for kind in kinds_of(metric):
            name = f"m{i}-{kind}.png"
            try:
                title = makers[kind](plt, report, metric, os.path.join(out_dir, name))
                manifest["plots"].append({"metric": i, "kind": kind, "title": title, "file": name})
            except Exception as e:
                plt.close("all")
                last = traceback.extract_tb(e.__traceback__)[-1]
                manifest["missing"].append({"metric": i, "kind": kind,
                                            "reason": f"plot.py failed: {type(e).__name__}: {e} (line {last.lineno})"})
    print(json.dumps(manifest))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
