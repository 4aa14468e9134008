#!/usr/bin/env python3
"""Fit the GPU model's empirical constants to measured generated kernels.

    python3 bench/model/fit_constants.py REPLAY.tsv [--fit parallel_global,parallel_l2,beta]
                                         [--device configs/devices/h100.yaml]
                                         [--at parallel_global=3,parallel_l2=3,beta=0.8]

REPLAY.tsv comes from `bench_mapper --replay RUN.json --replay-tsv REPLAY.tsv` (one row per
kernel: the model's terms with ptxas's resources beside the measured median; several runs and
benchmarks may be appended to one file). The model's time is rebuilt from the terms
(docs/model.md: T_lat = sum N L / plane / resident with N = ceil(D / lambda), eq. 1 with beta,
at least s_i) and checked against the replayed prediction; then the named constants are fitted
by coordinate descent to the mean over benchmarks of the mean |log(predicted / measured)|
(each benchmark weighs the same, however many kernels it has). Prints, before and after, per
benchmark: the kernels' median |error|, and over its candidates (a candidate's kernels summed)
the median |error|, Spearman's rank correlation and the measured time of the model's pick
against the fastest measured; --at also reports the model at other values of the constants (the
paper's, say) on the same kernels. Standard library only (and bench/common/numbers_common.py).
"""
import csv
import math
import os
import statistics
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from numbers_common import spearman  # noqa: E402

# The latencies of Table IVc as the device description gives them (read from --device).
LATENCY_KEYS = {"g": "dram_latency", "l2": "l2_latency", "c": "readonly_latency",
                "f": "fp_latency", "s": "shared_latency", "b": "barrier_latency",
                "m": "iteration_overhead"}
PARALLEL_KEYS = {"parallel_global": "g", "parallel_l2": "l2", "parallel_readonly": "c",
                 "parallel_fp": "f"}


def device_values(path):
    """name -> value of a device description's `name: {value: X ...}` lines."""
    values = {}
    for line in open(path):
        line = line.strip()
        if ":" in line and "{value:" in line:
            name, rest = line.split(":", 1)
            v = rest.split("value:", 1)[1].split(",", 1)[0].strip()
            try:
                values[name.strip()] = float(v)
            except ValueError:
                pass
    return values


def load(path):
    rows = []
    for r in csv.DictReader(open(path), delimiter="\t"):
        for k, v in r.items():
            if k not in ("benchmark", "kind", "mapping", "limiter"):
                r[k] = float(v) if v not in ("", "nan") else float("nan")
        rows.append(r)
    return rows


class Model:
    def __init__(self, dev):
        self.lat = {k: dev[v] for k, v in LATENCY_KEYS.items()}
        self.constants = {name: dev[name] for name in PARALLEL_KEYS}
        self.constants["beta"] = dev["beta"]

    def latency_sum(self, r, c):
        n = {"g": r["D_GM"] / c["parallel_global"], "l2": r["D_L2"] / c["parallel_l2"],
             "c": r["D_L2_c"] / c["parallel_readonly"], "f": r["flops"] / c["parallel_fp"]}
        # Shared loads and barriers enter as the replay counted them (lambda_s, lambda_b fixed).
        return (sum(math.ceil(n[k] - 1e-9) * self.lat[k] for k in n) + r["N_s"] * self.lat["s"] +
                r["N_b"] * self.lat["b"] + self.lat["m"])

    def calibrate_row(self, r):
        # Seconds per latency cycle of this kernel (plane, resident blocks, rounds, clock).
        r["K"] = r["T_lat_s"] / self.latency_sum(r, self.constants)
        r["T_data"] = max(r["T_L2_s"], r["T_GM_s"])

    def predict(self, r, c):
        t_lat = r["K"] * self.latency_sum(r, c)
        beta = c["beta"]
        t = beta * max(r["T_data"], t_lat) + (1 - beta) * (r["T_data"] + t_lat) / 2
        return max(r["s_i_s"], t) + r["T_launch_s"]


def by_benchmark(rows):
    out = {}
    for r in rows:
        out.setdefault(r["benchmark"], []).append(r)
    return out


def objective(model, benches, c):
    per = []
    for rs in benches.values():
        timed = [r for r in rs if r["measured_s"] == r["measured_s"]]
        if timed:
            per.append(statistics.mean(abs(math.log(model.predict(r, c) / r["measured_s"]))
                                       for r in timed))
    return statistics.mean(per)


def fit(model, benches, names):
    c = dict(model.constants)
    best = objective(model, benches, c)
    for _ in range(10):
        moved = False
        for name in names:
            for factor in (2, 1.5, 1.25, 1.1, 1 / 1.1, 1 / 1.25, 1 / 1.5, 1 / 2):
                while True:
                    trial = dict(c)
                    trial[name] = c[name] * factor
                    if name == "beta":
                        trial[name] = min(1.0, max(0.0, trial[name]))
                    else:
                        trial[name] = min(256.0, max(0.5, trial[name]))
                    value = objective(model, benches, trial)
                    if value < best - 1e-7:
                        best, c, moved = value, trial, True
                    else:
                        break
        if not moved:
            break
    return c, best


def report(model, benches, c, label):
    print(f"{label}: " + ", ".join(f"{k} {v:.3g}" for k, v in c.items()) +
          f"; mean |log error| {objective(model, benches, c):.4f}")
    every = []
    for name, rs in benches.items():
        timed = [r for r in rs if r["measured_s"] == r["measured_s"]]
        errors = sorted(abs(model.predict(r, c) - r["measured_s"]) / r["measured_s"] for r in timed)
        every += errors
        line = f"  {name:<11} {len(timed):4d} kernels: median |error| {100 * statistics.median(errors):5.1f}%"
        candidates = {}
        for r in rs:
            entry = candidates.setdefault(r["kind"], [0.0, r["candidate_measured_s"], True])
            entry[0] += model.predict(r, c)
        whole = [(p, m) for p, m, _ in candidates.values() if m == m]
        if len(whole) >= 3:
            fastest = min(m for _, m in whole)
            pick = min(whole, key=lambda pm: pm[0])
            cerr = statistics.median(abs(p - m) / m for p, m in whole)
            rho = spearman([p for p, _ in whole], [m for _, m in whole])
            line += (f"; {len(whole)} candidates: median |error| {100 * cerr:5.1f}%, Spearman "
                     f"{'–' if rho is None else f'{rho:.2f}'}, pick "
                     f"{fastest / pick[1]:.3f} of the fastest")
        print(line)
    every.sort()
    print(f"  all {len(every)} kernels: median |error| {100 * statistics.median(every):.1f}%, "
          f"90th percentile {100 * every[int(0.9 * (len(every) - 1))]:.1f}%")


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    path, names, device = args[0], ["parallel_global", "parallel_l2", "beta"], \
        "configs/devices/h100.yaml"
    at = {}
    i = 1
    while i < len(args):
        if args[i] == "--fit" and i + 1 < len(args):
            names = args[i + 1].split(",")
            i += 2
        elif args[i] == "--at" and i + 1 < len(args):
            at = {k: float(v) for k, v in (kv.split("=") for kv in args[i + 1].split(","))}
            i += 2
        elif args[i] == "--device" and i + 1 < len(args):
            device = args[i + 1]
            i += 2
        else:
            print(__doc__, file=sys.stderr)
            sys.exit(2)
    model = Model(device_values(device))
    rows = load(path)
    for r in rows:
        model.calibrate_row(r)
    worst = max(abs(model.predict(r, model.constants) - r["predicted_s"]) / r["predicted_s"]
                for r in rows)
    if worst > 1e-6:
        print(f"fit_constants.py: the rebuilt model differs from the replayed prediction by up to "
              f"{worst:.2g} (another model or description?)", file=sys.stderr)
        sys.exit(1)
    benches = by_benchmark(rows)
    report(model, benches, model.constants, "the description's constants")
    if at:
        report(model, benches, dict(model.constants, **at), "at " + ",".join(at))
    fitted, _ = fit(model, benches, names)
    report(model, benches, fitted, "fitted " + ",".join(names))


if __name__ == "__main__":
    main()
