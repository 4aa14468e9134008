"""Weak scaling past the GPUs we have, on paper: the predicted efficiency on 8, 64 and 1,024
GPUs of the wave equation and BSSN (256^3 points per GPU, RK4), from a scaling run's measured
step parts and the device description's interconnect terms (docs/host.md, "Past 4 GPUs").

    python3 bench/scaling/plan.py RESULTS.tsv DEVICE.yaml [GPUS_PER_NODE]

RESULTS.tsv is bench/scaling/run.sh's table (report.py); DEVICE.yaml a description with
interconnect_latency [us] and interconnect_bandwidth [GB/s] (saguaro calibrate --interconnect).

Per stage of a rank, with d the axes the ranks are spread over:
  exchange   one phase per axis in d (the axes one after the other, as finish_sync does), each
             priced as the run plan prices it, latency + bytes / bandwidth for a message of
             ghost * (256 + 2 ghost)^2 * variables doubles (the two directions at once, as
             saguaro calibrate --interconnect measures them); the in-run factor k (the exchange a
             run measured on 2 GPUs over the model's price for it) scales the price to what
             runs pay today;
  exposed    max(0, exchange - interior): the exchange is in flight during the interior;
  shell      per axis in d, what splitting off that axis's boundary shell cost on 2 GPUs
             (T2 - T1 of the weak runs, per step).
T_N = T_1 + |d| * shell + 4 * exposed; efficiency T_1 / T_N. Between nodes (ranks past
GPUS_PER_NODE, default 8 as on an HGX H100 node) the messages go through MPI: priced at the staged transport measured
on the H200 host (40 us + 3.46 GB/s, 2026-11-22, docs/model.md), and at an assumed GPUDirect
RDMA link (5 us + 25 GB/s per direction): an assumption, not a measurement."""
import re
import sys

from report import read_tsv  # the same directory: run.sh's tables

SYSTEMS = {"wave": dict(variables=2, ghost=2), "bssn": dict(variables=25, ghost=3)}
POINTS = 256
STAGES = 4
OFF_NODE = {"staged MPI (measured, H200 host)": (40.0, 3.46),
            "GPUDirect RDMA (assumed)": (5.0, 25.0)}


def read_results(path):
    rows = read_tsv(path)
    if not rows:
        sys.exit(f"plan.py: no rows in {path}")
    out = {}
    for r in rows:
        if r["table"] == "weak" and r["status"] == "ok":
            out[(r["system"], int(r["n"]))] = {k: float(r[k]) for k in
                                                ("step_s", "interior_s", "exchange_s")}
    return out


def read_interconnect(path):
    text = open(path).read()
    value = {}
    for key in ("interconnect_latency", "interconnect_bandwidth"):
        m = re.search(key + r":\s*\{value:\s*([0-9.eE+-]+)", text)
        if not m:
            sys.exit(f"plan.py: {path} has no {key} (run saguaro calibrate --interconnect)")
        value[key] = float(m.group(1))
    return value["interconnect_latency"], value["interconnect_bandwidth"]


def dims(n):
    """Balanced 3-D factors of n, largest first (as MPI_Dims_create)."""
    d = [1, 1, 1]
    for p in sorted(prime_factors(n), reverse=True):
        d[d.index(min(d))] *= p
    return sorted(d, reverse=True)


def prime_factors(n):
    out, p = [], 2
    while n > 1:
        while n % p == 0:
            out.append(p)
            n //= p
        p += 1
    return out


def phase_seconds(system, latency_us, bandwidth_gbs):
    s = SYSTEMS[system]
    face = s["ghost"] * (POINTS + 2 * s["ghost"]) ** 2 * s["variables"] * 8
    return latency_us * 1e-6 + face / (bandwidth_gbs * 1e9)


def predict(system, measured, ipc, off_node, gpus, per_node, k):
    t1 = measured[(system, 1)]
    shell = measured[(system, 2)]["step_s"] - t1["step_s"]
    interior = t1["interior_s"] / STAGES
    d = dims(gpus)
    # Axes spread within a node first (the first factors whose product fits in a node).
    within, exchange = 1, 0.0
    for a in (x for x in d if x > 1):
        inside = within * a <= per_node
        within = within * a if inside else within
        exchange += k * phase_seconds(system, *(ipc if inside else off_node))
    axes = sum(1 for x in d if x > 1)
    exposed = max(0.0, exchange - interior)
    step = t1["step_s"] + axes * shell + STAGES * exposed
    return d, exchange, step, t1["step_s"] / step


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    measured = read_results(sys.argv[1])
    ipc = read_interconnect(sys.argv[2])
    per_node = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    print(f"interconnect within a node: {ipc[0]:.1f} us + {ipc[1]:.0f} GB/s; {per_node} GPUs per node")
    print("| system | GPUs | ranks as | off-node transport | in-run factor k | exchange per stage "
          "[ms] | interior per stage [ms] | step [ms] | efficiency |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|")
    for system in SYSTEMS:
        if (system, 1) not in measured or (system, 2) not in measured:
            continue
        model2 = phase_seconds(system, *ipc)
        k_run = measured[(system, 2)]["exchange_s"] / STAGES / model2
        for gpus in (8, 64, 1024):
            for name, off in OFF_NODE.items():
                if gpus <= per_node and name != next(iter(OFF_NODE)):
                    continue
                for k in (1.0, k_run):
                    d, x, step, eff = predict(system, measured, ipc, off, gpus, per_node, k)
                    print(f"| {system} | {gpus} | {'x'.join(map(str, d))} | "
                          f"{name if gpus > per_node else '-'} | {k:.1f} | {x * 1e3:.3f} | "
                          f"{measured[(system, 1)]['interior_s'] / STAGES * 1e3:.3f} | "
                          f"{step * 1e3:.3f} | {eff:.3f} |")


if __name__ == "__main__":
    main()
