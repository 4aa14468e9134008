#!/usr/bin/env python3
"""Fit the GPU model's empirical constants to measured generated kernels.

    python3 bench/model/fit_constants.py REPLAY.tsv[@DEVICE.yaml] [MORE.tsv[@DEVICE.yaml] ...]
                                         [--fit parallel_global,parallel_l2,beta]
                                         [--device configs/devices/h100.yaml]
                                         [--at parallel_global=3,parallel_l2=3,beta=0.8]

REPLAY.tsv comes from `bench_mapper --replay RUN.json --replay-tsv REPLAY.tsv` (one row per
kernel: the model's terms with ptxas's resources beside the measured median; several runs and
benchmarks may be appended to one file). The model's time is rebuilt from the terms
(docs/model.md: T_lat = sum N L / plane / resident with N = ceil(D / lambda), lambda_g and
lambda_L2 scaled by (registers / 64)^parallel_register_exponent, eq. 1 with beta, at least s_i)
and checked against the replayed prediction; then the named constants are fitted
by coordinate descent to the mean over benchmarks of the mean |log(predicted / measured)|
(each benchmark weighs the same, however many kernels it has). Prints, before and after, per
benchmark: the kernels' median |error|, and over its candidates (a candidate's kernels summed)
the median |error|, Spearman's rank correlation and the measured time of the model's pick
against the fastest measured; --at also reports the model at other values of the constants (the
paper's, say) on the same kernels. Several TSVs, each with its GPU's description
(FILE.tsv@DEVICE.yaml; --device for those without), are fitted together: one set of constants
for GPUs of one SM design, each with its own latencies, its benchmarks named "h200 bssn".
Standard library only (and bench/common/numbers_common.py).
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
EXPONENT = "parallel_register_exponent"
LOCKSTEP = "lockstep_exponent"


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
        self.constants[EXPONENT] = dev.get(EXPONENT, 0.0)  # absent: the paper's constant lambdas
        self.constants[LOCKSTEP] = dev.get(LOCKSTEP, 0.0)  # absent: no lockstep term

    def latency_sum(self, r, c):
        # lambda_g and lambda_L2 scale as (registers / 64)^gamma_R (src/model/model.cpp; with
        # ptxas's count only, which every replayed kernel carries).
        g = c[EXPONENT]
        s = 1.0 if g == 0 else (max(r["registers"], 16) / 64.0) ** g
        # A thread's points summed by input in lockstep: (points)^gamma_P (recordings before the
        # column: none).
        points = r.get("lockstep_points", 1.0)
        s *= (points if points == points else 1.0) ** c[LOCKSTEP]
        n = {"g": r["D_GM"] / (c["parallel_global"] * s), "l2": r["D_L2"] / (c["parallel_l2"] * s),
             "c": r["D_L2_c"] / c["parallel_readonly"], "f": r["flops"] / c["parallel_fp"]}
        # Shared loads and barriers enter as the replay counted them (lambda_s, lambda_b fixed).
        lat = r["lat"]  # the row's own GPU's latencies
        return (sum(math.ceil(n[k] - 1e-9) * lat[k] for k in n) + r["N_s"] * lat["s"] +
                r["N_b"] * lat["b"] + lat["m"])

    def calibrate_row(self, r):
        # Seconds per latency cycle of this kernel (plane, resident blocks, rounds, clock).
        r["lat"], r["own"] = self.lat, self.constants
        r["K"] = r["T_lat_s"] / self.latency_sum(r, self.constants)
        r["T_data"] = max(r["T_L2_s"], r["T_GM_s"])

    def predict(self, r, c):
        c = c or r["own"]  # None: the row's own description's constants
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


# The coordinate descent's moves, largest first: the constants multiplied, the register exponent
# stepped by the same ranks added (so that it can leave 0).
FACTORS = (2, 1.5, 1.25, 1.1, 1 / 1.1, 1 / 1.25, 1 / 1.5, 1 / 2)
EXPONENT_STEPS = (0.25, 0.125, 0.0625, 0.03125, -0.03125, -0.0625, -0.125, -0.25)


def moved(name, value, k):
    """The constant `name` at `value` after move k, within its range."""
    if name in (EXPONENT, LOCKSTEP):
        return min(2.0, max(0.0, value + EXPONENT_STEPS[k]))
    value *= FACTORS[k]
    return min(1.0, max(0.0, value)) if name == "beta" else min(256.0, max(0.5, value))


def fit(model, benches, names):
    c = dict(model.constants)  # the first description's, shared by every row
    best = objective(model, benches, c)
    for _ in range(10):
        progress = False
        for name in names:
            for k in range(len(FACTORS)):
                while True:
                    trial = dict(c)
                    trial[name] = moved(name, c[name], k)
                    value = objective(model, benches, trial)
                    if value < best - 1e-7:
                        best, c, progress = value, trial, True
                    else:
                        break
        if not progress:
            break
    return c, best


def report(model, benches, c, label):
    shown = c or model.constants
    print(f"{label}: " + ", ".join(f"{k} {v:.3g}" for k, v in shown.items()) +
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
    paths, names, device = [], ["parallel_global", "parallel_l2", "beta"], \
        "configs/devices/h100.yaml"
    at = {}
    i = 0
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
        elif not args[i].startswith("-"):
            paths.append(args[i])
            i += 1
        else:
            print(__doc__, file=sys.stderr)
            sys.exit(2)
    # Each TSV with its GPU's description (FILE.tsv@DEVICE.yaml, else --device); with several,
    # a benchmark is named with its description's file name ("h200 bssn") and the constants
    # fitted are shared by all.
    rows, models = [], []
    for spec in paths:
        path, _, dev = spec.partition("@")
        dev = dev or device
        model = Model(device_values(dev))
        models.append(model)
        part = load(path)
        for r in part:
            model.calibrate_row(r)
            if len(paths) > 1:
                r["benchmark"] = os.path.splitext(os.path.basename(dev))[0] + " " + r["benchmark"]
        worst = max(abs(model.predict(r, None) - r["predicted_s"]) / r["predicted_s"] for r in part)
        if worst > 1e-6:
            print(f"fit_constants.py: {path}: the rebuilt model differs from the replayed "
                  f"prediction by up to {worst:.2g} (another model or description?)",
                  file=sys.stderr)
            sys.exit(1)
        rows += part
    model = models[0]
    benches = by_benchmark(rows)
    report(model, benches, None, "the description's constants" if len(paths) == 1 else
           "each description's own constants")
    if at:
        report(model, benches, dict(model.constants, **at), "at " + ",".join(at))
    fitted, _ = fit(model, benches, names)
    report(model, benches, fitted, "fitted " + ",".join(names))


if __name__ == "__main__":
    main()
