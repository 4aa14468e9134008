#!/usr/bin/env bash
# The generated C++ backend against the reference interpreter: points per second of every
# calculation of par/wave.edl on a 128^3 patch (bench_backends: median of 15 runs for C++,
# 3 for the interpreter, after a warm-up), and a whole run of par/wave.par at 128^3 with
# the C++ backend (RK4 steps per second from saguaro's timer report).
# Writes bench/results/<date>-cpu-backend-<host>.{json,md}.
#   bash bench/cpu/run.sh [THREADS]    (default: all cores)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/build.sh
saguaro_build >/dev/null
threads=${1:-$(nproc)}
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
tag="$date-cpu-backend-$(hostname -s 2>/dev/null || echo host)"
json="bench/results/$tag.json"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

OMP_NUM_THREADS=$threads build/bin/bench_backends par/wave.edl 128 --json "$json" | tee "$work/table"

# A whole run: 20 RK4 steps of the standing wave at 128^3 (no output), C++ backend.
sed -e 's/^CoordBase::ncells_\([xyz]\) = 48/CoordBase::ncells_\1 = 128/' \
    -e 's/^Cactus::terminate .*/Cactus::terminate = "iteration"/' \
    -e 's/^Cactus::cctk_final_time .*/Cactus::cctk_itlast = 20/' \
    -e 's/^IO::out_every .*/IO::out_every = 0/' -e 's/^IOHDF5::out_every .*/IOHDF5::out_every = 0/' \
    -e "s|^Saguaro::equations .*|Saguaro::equations = \"$PWD/par/wave.edl\"|" \
    -e 's/^Cactus::cctk_show_schedule.*//' par/wave.par > "$work/wave128.par"
echo 'Cactus::cctk_show_schedule = no' >> "$work/wave128.par"
(cd "$work" && OMP_NUM_THREADS=$threads "$OLDPWD/build/bin/saguaro" wave128.par) > "$work/run.log"
cat "$work/run.log"

python3 - "$json" "$work/run.log" "$cpu" "$date" "$threads" > "bench/results/$tag.md" <<'PY'
import json, re, sys
data = json.load(open(sys.argv[1]))
log = open(sys.argv[2]).read()
cpu, date, threads = sys.argv[3], sys.argv[4], sys.argv[5]
print(f"# C++ backend vs reference interpreter, {date}\n")
print(f"CPU: {cpu}, {threads} OpenMP thread(s); command: `bash bench/cpu/run.sh {threads}`; "
      f"Release build; {data['n']}^3 interior points; median of the repetitions shown.\n")
print("| calculation | backend | median s | points/s | speed-up over interpreter | reps |")
print("|---|---|---|---|---|---|")
rs = data["results"]
for r in rs:
    interp = next(o for o in rs if o["calculation"] == r["calculation"] and o["backend"] == "interpreter")
    print(f"| {r['calculation']} | {r['backend']} | {r['median_s']:.4g} | {r['points_per_s']:.3g} | "
          f"{interp['median_s'] / r['median_s']:.0f}x | {r['reps']} |")
calls = {name: (int(c), float(t)) for name, c, t in re.findall(r"^(\S+::\S+)\s+(\d+)\s+([\d.]+)", log, re.M)}
steps = calls.get("MoL::MoL_Evolution", (0, 0))[0]
total = sum(t for _, t in calls.values())
if steps:
    print(f"\nWhole run, `saguaro` on par/wave.par at 128^3 (C++ backend, RK4, no output): "
          f"{steps} steps in {total:.3f} s of scheduled work = {steps / total:.2f} steps/s, "
          f"{128**3 * steps / total:.3g} points x steps per second.\n")
    print("| scheduled function | calls | total s |")
    print("|---|---|---|")
    for name, (c, t) in sorted(calls.items(), key=lambda kv: -kv[1][1]):
        if t > 0.001:
            print(f"| {name} | {c} | {t:.3f} |")
PY
echo "wrote $json and bench/results/$tag.md"
