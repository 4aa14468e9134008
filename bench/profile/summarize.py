#!/usr/bin/env python3
"""One table of ncu's raw pages (bench/profile/ncu.sh): per kernel launch shape, the time, the
DRAM bytes per grid point, the cache hit rates, occupancy, instructions per point and the
largest issue stalls.  Standard library only (the GPU machine's Python may lack numpy).

    python3 bench/profile/summarize.py --n 256 saguaro.csv torch.csv > summary.md
"""
import argparse
import csv
import re
import statistics

SCALE = {"": 1, "byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9, "Tbyte": 1e12,
         "nsecond": 1e-9, "usecond": 1e-6, "msecond": 1e-3, "second": 1,
         "ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1,
         "byte/s": 1, "Kbyte/s": 1e3, "Mbyte/s": 1e6, "Gbyte/s": 1e9, "Tbyte/s": 1e12,
         "%": 1, "register/thread": 1, "inst": 1, "warp": 1, "thread": 1}
STALL = re.compile(r"^smsp__average_warps_issue_stalled_(\w+)_per_issue_active\.ratio$")


def read(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    # ncu's raw CSV: the header, a row of units, then one row per profiled launch.
    start = next(i for i, r in enumerate(rows) if r and r[0] == "ID")
    header, units = rows[start], rows[start + 1]
    out = []
    for r in rows[start + 2:]:
        if len(r) != len(header):
            continue
        out.append({h: (v, u) for h, v, u in zip(header, r, units)})
    return out


def number(row, name, default=None):
    if name not in row:
        return default
    v, unit = row[name]
    try:
        x = float(v.replace(",", ""))
    except ValueError:
        return default
    return x * SCALE.get(unit, 1)


def summarize(rows, points):
    groups = {}
    for r in rows:
        key = (r["Kernel Name"][0], r.get("Grid Size", ("", ""))[0], r.get("Block Size", ("", ""))[0])
        groups.setdefault(key, []).append(r)
    lines = ["| kernel | grid | block | time [us] | DRAM B/pt | DRAM % peak "
             "| L1 hit % | L2 hit % | regs | achieved occ % | inst/pt | int inst/pt | ld inst/pt "
             "| top stalls (cycles per issue) |",
             "|" + "---|" * 14]
    for (name, grid, block), rs in groups.items():
        def med(metric, scale=1.0):
            xs = [number(r, metric) for r in rs]
            xs = [x for x in xs if x is not None]
            return statistics.median(xs) * scale if xs else float("nan")
        # DRAM bytes: ncu 2025.3 gives the total's rate (dram__bytes.sum.per_second) only.
        def dram():
            xs = []
            for r in rs:
                total = number(r, "dram__bytes.sum")
                rate = number(r, "dram__bytes.sum.per_second")
                t = number(r, "gpu__time_duration.sum")
                xs.append(total if total is not None else
                          rate * t if rate is not None and t is not None else float("nan"))
            return statistics.median(xs) / points
        stalls = {}
        for metric in rs[0]:
            m = STALL.match(metric)
            if m:
                stalls[m.group(1)] = med(metric)
        top = sorted(stalls.items(), key=lambda kv: -kv[1])[:3]
        lines.append(
            f"| {name} | {grid} | {block} | {med('gpu__time_duration.sum', 1e6):.1f} "
            f"| {dram():.1f} "
            f"| {med('gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed'):.1f} "
            f"| {med('l1tex__t_sector_hit_rate.pct'):.1f} | {med('lts__t_sector_hit_rate.pct'):.1f} "
            f"| {med('launch__registers_per_thread'):.0f} "
            f"| {med('sm__warps_active.avg.pct_of_peak_sustained_active'):.1f} "
            f"| {med('smsp__inst_executed.sum') * 32 / points:.1f} "
            f"| {med('smsp__sass_thread_inst_executed_op_integer_pred_on.sum') / points:.1f} "
            f"| {med('smsp__sass_inst_executed_op_global_ld.sum') * 32 / points:.1f} "
            f"| {', '.join(f'{k} {v:.1f}' for k, v in top)} |")
    return lines


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=256, help="interior points per axis")
    parser.add_argument("csv", nargs="+")
    args = parser.parse_args()
    points = float(args.n) ** 3
    print(f"# ncu profiles, {args.n}^3 points; per-point figures divide by {args.n}^3\n")
    print("inst/pt: thread instructions (warp instructions x 32); ld inst/pt: global load "
          "instructions per point (x 32 per warp); medians over the launches of one shape.\n")
    for path in args.csv:
        try:
            rows = read(path)
        except (OSError, StopIteration) as e:
            print(f"## {path}\n\nnot read: {e}\n")
            continue
        print(f"## {path}\n")
        print("\n".join(summarize(rows, points)))
        print()


if __name__ == "__main__":
    main()
