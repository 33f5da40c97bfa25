#!/usr/bin/python3
"""Writes a copy of an experiment file cut to some of its workloads, with keys overridden: the
inputs of README's short-run measurements (Truth at the margin), so that they are made the same way
every time instead of by hand.

  /usr/bin/python3 harness/bench/cut_ruler.py configs/ruler-3.toml dd-write-short \\
      --set workload.repetitions=6 --set schedule.boots_per_side=20 \\
      --set schedule.design=sequential-blocks --set 'schedule.vcpu_swap="0s"' --name short-iso > short-iso.toml

WORKLOADS is a comma-separated list of [[workload]] names to keep, in the file's order. Each --set
KEY=VALUE takes a TOML value (strings quoted); a key under `workload.` is set on every kept
workload. [analysis] metrics keeps only the kept workloads' metrics. The copy says what it was cut
from in its description. Comments are not kept: the original file holds the reasons.
"""
import argparse
import sys
import tomllib


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{k} = {toml_value(x)}" for k, x in v.items()) + " }"
    raise SystemExit(f"cut_ruler.py: cannot write {v!r} as TOML")


def flat(prefix, table, out):
    """A table's scalar keys as dotted keys under `prefix` (sides.A.device.iotune.x = ...)."""
    for k, v in table.items():
        if isinstance(v, dict):
            flat(f"{prefix}{k}.", v, out)
        else:
            out.append(f"{prefix}{k} = {toml_value(v)}")


def write(doc):
    lines = []
    for k, v in doc.items():
        if not isinstance(v, (dict, list)) or (isinstance(v, list) and not all(isinstance(x, dict) for x in v)):
            lines.append(f"{k} = {toml_value(v)}")
    for k, v in doc.items():
        if isinstance(v, dict):
            lines.append(f"\n[{k}]")
            flat("", v, lines)
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for item in v:
                lines.append(f"\n[[{k}]]")
                flat("", item, lines)
    return "\n".join(lines) + "\n"


def set_key(doc, dotted, value):
    parts = dotted.split(".")
    if parts[0] == "workload":
        for w in doc["workload"]:
            w[".".join(parts[1:])] = value
        return
    t = doc
    for p in parts[:-1]:
        t = t.setdefault(p, {})
    t[parts[-1]] = value


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("config")
    p.add_argument("workloads")
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--name", help="the copy's name (default: the original's, with the workloads)")
    a = p.parse_args()
    with open(a.config, "rb") as f:
        doc = tomllib.load(f)
    keep = a.workloads.split(",")
    names = [w["name"] for w in doc.get("workload", [])]
    missing = [w for w in keep if w not in names]
    if missing:
        sys.exit(f"cut_ruler.py: {a.config} has no workload {', '.join(missing)} (it has {', '.join(names)})")
    doc["workload"] = [w for w in doc["workload"] if w["name"] in keep]
    metrics = doc.get("analysis", {}).get("metrics")
    if metrics:
        doc["analysis"]["metrics"] = [m for m in metrics if m["name"].split(".")[0] in keep]
    doc["description"] = f"{doc.get('name', '')} cut to {a.workloads} ({' '.join(a.set)}): {doc.get('description', '')}"
    doc["name"] = a.name or f"{doc.get('name', 'cut')}-{'-'.join(keep)}"
    for kv in a.set:
        key, _, text = kv.partition("=")
        try:
            value = tomllib.loads(f"v = {text}")["v"]
        except tomllib.TOMLDecodeError as e:
            sys.exit(f"cut_ruler.py: --set {kv}: {text!r} is not a TOML value ({e}); quote strings: 'k=\"v\"'")
        set_key(doc, key, value)
    sys.stdout.write(write(doc))


if __name__ == "__main__":
    main()
