#!/usr/bin/env python3
"""Medians of bench_suite runs at two revisions, side by side (bench/suite/compare_revisions.sh).

Every row of bench_suite's JSON with a median (right-hand sides and whole steps, per benchmark
and system) is keyed by (benchmark, kind, system); a side's value is the median over its runs'
medians. Prints a table with NEW / BASE and writes it as JSON."""
import argparse
import json
import statistics


def rows(path):
    with open(path) as f:
        doc = json.load(f)
    for b in doc.get("benchmarks", []) + doc.get("whole_steps", []):
        for row in b.get("systems", []):
            if "median_s" in row:
                bench = row.get("benchmark", b.get("name", b.get("benchmark")))
                yield (bench, row.get("kind", "rhs"), row["system"]), row["median_s"], doc


def medians(paths):
    samples, meta = {}, {}
    for p in paths:
        for key, value, doc in rows(p):
            samples.setdefault(key, []).append(value)
            meta = {k: doc.get(k) for k in ("date", "gpu", "nvrtc", "cuda_driver_api")}
    return {k: statistics.median(v) for k, v in samples.items()}, meta


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--base", nargs="+", required=True)
    ap.add_argument("--new", nargs="+", required=True)
    ap.add_argument("--label", default="")
    ap.add_argument("--command", default="")
    ap.add_argument("--driver", default="unknown")
    ap.add_argument("--json", required=True)
    a = ap.parse_args()
    base, meta = medians(a.base)
    new, _ = medians(a.new)
    print(f"# {a.label}: {meta.get('gpu')}, driver {a.driver}, {meta.get('date')}")
    print(f"# command: {a.command}")
    print(f"{'benchmark':<11} {'kind':<5} {'system':<16} {'base ms':>10} {'new ms':>10} {'new/base':>9}")
    table = []
    for key in sorted(set(base) & set(new)):
        ratio = new[key] / base[key]
        print(f"{key[0]:<11} {key[1]:<5} {key[2]:<16} {base[key]*1e3:>10.4f} {new[key]*1e3:>10.4f} {ratio:>9.3f}")
        table.append({"benchmark": key[0], "kind": key[1], "system": key[2],
                      "base_s": base[key], "new_s": new[key], "ratio": ratio})
    with open(a.json, "w") as f:
        json.dump({"label": a.label, "command": a.command, "driver": a.driver, **meta,
                   "rows": table}, f, indent=1)


if __name__ == "__main__":
    main()
