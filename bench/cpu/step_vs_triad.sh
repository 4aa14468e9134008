#!/usr/bin/env bash
# The whole RK4 step of par/wave.par at N^3 (default 128) on the CPU backend against the
# host's STREAM triad, with the stage combinations folded into the right-hand side
# (Saguaro::fold_updates = "yes") and not ("no"): REPEATS runs of each, alternating, 20 steps
# each; per run the median step (step_breakdown) and the triad saguaro measured at its start.
# Effective bandwidth = the integrator's compulsory traffic / step: RK4 folded moves 12
# arrays per evolved variable and step, plain 25 (docs/host.md), of (N+2g)^3 doubles each.
# Writes bench/results/<date>-cpu-step-<host>.{md,json}.
#   bash bench/cpu/step_vs_triad.sh [THREADS] [N] [REPEATS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/build.sh
saguaro_build >/dev/null
threads=${1:-$(nproc)} n=${2:-128} repeats=${3:-5}
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
tag="bench/results/$date-cpu-step-$(hostname -s 2>/dev/null || echo host)"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
rows="$work/rows.tsv"
: >"$rows"
for ((r = 1; r <= repeats; ++r)); do
  for fold in yes no; do
    echo "run $r/$repeats, fold_updates = $fold" >&2
    OMP_NUM_THREADS=$threads build/bin/saguaro run par/wave.par --set 'Saguaro::backend="cpu"' \
      --set "CoordBase::ncells_x=$n" --set "CoordBase::ncells_y=$n" --set "CoordBase::ncells_z=$n" \
      --set 'Cactus::terminate="iteration"' --set 'Cactus::cctk_itlast=20' \
      --set 'IOHDF5::out_every=0' --set 'IO::out_every=0' --set 'Cactus::cctk_show_schedule=no' \
      --set "Saguaro::cache_dir=\"$work/cache\"" \
      --set "Saguaro::fold_updates=\"$fold\"" --set "IO::out_dir=\"$work/out\"" >"$work/log" 2>&1
    triad=$(sed -n 's/.*measured at start: \([0-9.]*\) GB\/s DRAM (triad).*/\1/p' "$work/log")
    step=$(sed -n 's/^step breakdown, median of [0-9]* steps.*: step \([0-9.]*\) ms.*/\1/p' "$work/log")
    ghost=$(sed -n 's/.*ghost width \([0-9]*\),.*/\1/p' "$work/log")
    printf '%s\t%s\t%s\t%s\n' "$fold" "$step" "$triad" "$ghost" >>"$rows"
  done
done
python3 - "$rows" "$tag" "$n" "$threads" "$cpu" "$date" <<'PY'
import json, statistics, sys
rows_path, tag, n, threads, cpu, date = sys.argv[1:]
n, threads = int(n), int(threads)
rows = [l.split("\t") for l in open(rows_path).read().split("\n") if l]
triads = [float(r[2]) for r in rows]
ghost = int(rows[0][3])
points = (n + 2 * ghost) ** 3
arrays = {"yes": 12 * 2, "no": 25 * 2}  # per step, 2 evolved variables (phi, pi)
out = {"command": f"bash bench/cpu/step_vs_triad.sh {threads} {n} {len(rows) // 2}",
       "cpu": cpu, "threads": threads, "date": date, "grid": n, "ghost": ghost,
       "triad_GBps_median": statistics.median(triads), "triad_GBps_all": triads, "systems": {}}
lines = [f"# Whole RK4 step of par/wave.par at {n}^3, CPU backend, {threads} threads ({date})", "",
         f"CPU: {cpu}. Command: `{out['command']}`.",
         f"Host STREAM triad (saguaro's measurement at each run's start): median "
         f"{statistics.median(triads):.1f} GB/s, range {min(triads):.1f}-{max(triads):.1f}.", "",
         "| fold_updates | compulsory bytes/step | step median [ms] | effective GB/s | % of triad (median) "
         "| % of its own run's triad, per run: median (range) |",
         "|---|---|---|---|---|---|"]
for fold in ("yes", "no"):
    steps = [float(r[1]) for r in rows if r[0] == fold]
    med = statistics.median(steps)
    nbytes = arrays[fold] * points * 8
    bw = nbytes / (med * 1e-3) / 1e9
    # Each run against the triad measured at its own start: the VM's bandwidth drifts within
    # the hour, and a run is paired with the machine it ran on.
    own = [100 * nbytes / (float(r[1]) * 1e-3) / 1e9 / float(r[2]) for r in rows if r[0] == fold]
    out["systems"][fold] = {"step_ms_median": med, "step_ms_all": steps, "bytes": nbytes,
                            "GBps": bw, "percent_of_triad": 100 * bw / statistics.median(triads),
                            "percent_of_own_triad_median": statistics.median(own),
                            "percent_of_own_triad_all": own}
    lines.append(f"| {fold} | {nbytes / 1e6:.0f} MB | {med:.2f} | {bw:.1f} | "
                 f"{100 * bw / statistics.median(triads):.0f}% | {statistics.median(own):.0f}% "
                 f"({min(own):.0f}-{max(own):.0f}%) |")
open(tag + ".json", "w").write(json.dumps(out, indent=1) + "\n")
open(tag + ".md", "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
print(f"wrote {tag}.{{md,json}}")
PY
