#!/usr/bin/env bash
# The time of one HDF5 output against the length of the run (issue 23; acceptance: the output at
# iteration 800 within 20% of the one at 10), on the CPU:
#   bash bench/io/run.sh [BASE_REV]
# 1. bench_hdf5_writes: a run's HDF5 outputs of 2 variables on a 24^3 grid every 10 iterations
#    to 800 (io::write_hdf5 as the driver calls it, host arrays as the CPU backend hands them
#    over), every output timed, 9 repetitions, median per output iteration;
# 2. a whole run of the standing wave (par/wave.edl, CPU backend, 24^3, RK4, 800 iterations,
#    HDF5 of phi and pi every 10): the IOHDF5_Output line of saguaro's timer report.
# With BASE_REV, both also at that revision (a git worktree in build-base-io-src/, built in
# build-base-io/; the benchmark's source is copied in, it calls only io::write_hdf5), alternating
# BASE, NEW, BASE, NEW. Writes bench/results/<date>-hdf5-writes-<host>.{json,md}.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
base_rev=${1:-}
date=$(date -u +%Y-%m-%d)
host=$(hostname -s 2>/dev/null || echo host)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
tag="bench/results/$date-hdf5-writes-$host"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1

build() { # build SOURCE_DIR BUILD_DIR
  [[ -f $2/CMakeCache.txt ]] || cmake -S "$1" -B "$2" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$2" -j"$(nproc)" --target saguaro bench_hdf5_writes >/dev/null
}
build . build
sides=(new)
if [[ -n $base_rev ]]; then
  rev=$(git rev-parse --short "$base_rev")
  [[ -d build-base-io-src ]] || git worktree add -q --detach build-base-io-src "$base_rev"
  mkdir -p build-base-io-src/bench/io
  cp bench/io/bench_hdf5_writes.cpp build-base-io-src/bench/io/
  grep -q bench_hdf5_writes build-base-io-src/bench/CMakeLists.txt || cat >> build-base-io-src/bench/CMakeLists.txt <<'CMAKE'
add_executable(bench_hdf5_writes io/bench_hdf5_writes.cpp)
target_link_libraries(bench_hdf5_writes PRIVATE saguaro_io MPI::MPI_C saguaro_warnings)
CMAKE
  build build-base-io-src build-base-io
  sides=(base new)
fi
exe() { [[ $1 == base ]] && echo "$root/build-base-io/bin/$2" || echo "$root/build/bin/$2"; }

# The whole run's parameter file.
sed -e 's/^CoordBase::ncells_\([xyz]\) = 48/CoordBase::ncells_\1 = 24/' \
    -e 's/^Cactus::terminate .*/Cactus::terminate = "iteration"/' \
    -e 's/^Cactus::cctk_final_time .*/Cactus::cctk_itlast = 800/' \
    -e 's/^Saguaro::backend .*/Saguaro::backend = "cpu"/' \
    -e 's/^IO::out_every .*/IO::out_every = 0/' -e 's/^IOHDF5::out_every .*/IOHDF5::out_every = 10/' \
    -e 's/^IOHDF5::out_vars .*/IOHDF5::out_vars = "WaveDemo::phi WaveDemo::pi"/' \
    -e "s|^Saguaro::equations .*|Saguaro::equations = \"$root/par/wave.edl\"|" \
    -e '/^IO::out_dir/d' par/wave.par > "$work/wave.par"
printf 'Cactus::cctk_show_schedule = no\nSaguaro::prediction_log = no\nSaguaro::progress_every = 0\n' >> "$work/wave.par"

# Each measurement with the output on the disk (every file synced to it, as the output does:
# the sync's latency is most of a small output's time) and in memory (/dev/shm, where a sync
# costs nothing: the HDF5 work alone).
shm=$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)
trap 'rm -rf "$work" "$shm"' EXIT
for round in 1 2; do
  for side in "${sides[@]}"; do
    for where in disk memory; do
      dir=$work/$where
      [[ $where == memory ]] && dir=$shm/$where
      echo "== round $round: $side, output on $where"
      "$(exe "$side" bench_hdf5_writes)" --repeats 9 --dir "$dir/h5" --json "$work/$side-$where-$round.json"
      rm -rf "$dir"
      mkdir -p "$dir"
      (echo "IO::out_dir = \"$dir/wave\"" && cat "$work/wave.par") > "$work/run.par"
      (cd "$work" && "$(exe "$side" saguaro)" run.par > "$side-$where-$round.log")
      grep -E "IOHDF5_Output|^total" "$work/$side-$where-$round.log"
      rm -rf "$dir"
    done
  done
done

python3 - "$work" "$tag" "$cpu" "$date" "$base_rev" "${rev:-}" "${sides[@]}" <<'PY'
import json, re, statistics, subprocess, sys
work, tag, cpu, date, base_rev, rev, *sides = sys.argv[1:]
head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
fstype = subprocess.run(["df", "--output=fstype", work], capture_output=True, text=True).stdout.split()[-1]
out = {"date": date, "cpu": cpu, "command": "bash bench/io/run.sh" + (f" {base_rev}" if base_rev else ""),
       "revision": head, "base": rev, "disk": fstype, "results": {}}
for side in sides:
    for where in ("disk", "memory"):
        runs = [json.load(open(f"{work}/{side}-{where}-{r}.json")) for r in (1, 2)]
        per = {}
        for run in runs:
            for o in run["outputs"]:
                per.setdefault(o["iteration"], []).extend(o["seconds"])
        whole = []
        for r in (1, 2):
            log = open(f"{work}/{side}-{where}-{r}.log").read()
            m = re.search(r"IO::IOHDF5_Output\s+(\d+)\s+([\d.]+)\s+[\d.]+\s+([\d.]+)", log)
            whole.append({"hdf5_s": float(m.group(2)), "share_percent": float(m.group(3)), "outputs": 81})
        out["results"][f"{side}/{where}"] = {
            "ms_per_output_median": {it: statistics.median(s) * 1e3 for it, s in per.items()},
            "samples": len(per[10]), "seconds": {it: s for it, s in per.items()}, "whole_runs": whole,
            "setup": {k: runs[0][k] for k in ("cells", "vars", "every", "last", "values_per_dataset")}}
json.dump(out, open(f"{tag}.json", "w"), indent=1)

label = {"base": f"{rev} (before)", "new": f"{head} (after)"}
setup = out["results"][f"{sides[-1]}/disk"]["setup"]
with open(f"{tag}.md", "w") as md:
    md.write(f"# HDF5 output against the length of the run, {date}\n\n")
    md.write(f"CPU: {cpu}, {subprocess.run(['nproc', '--all'], capture_output=True, text=True).stdout.strip()} cores "
             f"(a shared VM: other builds ran at the same time); command: `{out['command']}` at {head}; "
             f"Release build; one rank. `bench_hdf5_writes`: {setup['vars']} variables of "
             f"{setup['cells']}^3 cells ({setup['values_per_dataset']} values per dataset with the ghosts) "
             f"written every {setup['every']} iterations to {setup['last']}, as the driver writes them "
             f"(`io::write_hdf5` per variable); every output timed; median of "
             f"{out['results'][sides[-1] + '/disk']['samples']} (2 rounds of 9 repetitions). Output on the "
             f"disk ({fstype}; every file and its directory synced, as the output does before and after) "
             f"and in memory (/dev/shm: the syncs cost nothing, the HDF5 work alone).\n\n")
    md.write("| revision | output on | ms per output at it 10 | at 100 | at 400 | at 800 | 800 / 10 |\n"
             "|---|---|---|---|---|---|---|\n")
    for where in ("disk", "memory"):
        for side in sides:
            m = out["results"][f"{side}/{where}"]["ms_per_output_median"]
            md.write(f"| {label[side]} | {where} | {m[10]:.2f} | {m[100]:.2f} | {m[400]:.2f} | {m[800]:.2f} | "
                     f"{m[800] / m[10]:.2f} |\n")
    md.write("\nSince issue 23 an output writes two datasets (the file's newest one again, into the previous "
             "version it starts from, and its own; docs/host.md, \"How an HDF5 file grows safely\") where it "
             "used to copy the whole file: dearer while the file is short, the same at every length.\n")
    md.write("\nA whole run (`saguaro`, par/wave.par at 24^3, CPU backend, RK4, 800 iterations, HDF5 of phi "
             "and pi every 10: 81 outputs), IOHDF5_Output in the timer report, both rounds:\n\n"
             "| revision | output on | IOHDF5_Output s | ms per output | share of the run |\n|---|---|---|---|---|\n")
    for where in ("disk", "memory"):
        for side in sides:
            for w in out["results"][f"{side}/{where}"]["whole_runs"]:
                md.write(f"| {label[side]} | {where} | {w['hdf5_s']:.3f} | {1e3 * w['hdf5_s'] / w['outputs']:.2f} | "
                         f"{w['share_percent']:.1f}% |\n")
print(open(f"{tag}.md").read())
PY
echo "wrote $tag.{json,md}"
