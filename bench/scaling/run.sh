#!/usr/bin/env bash
# Multi-GPU scaling of Saguaro, in one command, on the machine at hand (one MPI rank per GPU):
#  a. norms check: the wave equation (par/wave.edl) at 64^3 for 20 iterations and BSSN
#     (par/bssn/bssn.edl) at 48^3 for 8, norms every iteration, on 1, 2 and 4 ranks; every
#     number of every norms file on N ranks against 1 rank (compare_norms.py): PASS when the
#     largest relative difference is <= 1e-14. These runs use Saguaro::mapper = "default"
#     ($SCALING_NORMS_MAPPER), so that every rank count runs the same kernels;
#  b. weak scaling: the wave equation (B1, 100 iterations) and BSSN (20 iterations) with 256^3
#     points per GPU (256 x 256 x 256N cells, zmax = N: the spacing stays 1/256) on 1, 2, 4 GPUs;
#  c. strong scaling: 256^3 in all on 1, 2, 4 GPUs (1 GPU: the weak run);
#  d. exchange overlap off: the weak runs on the most GPUs again with
#     Saguaro::exchange_overlap = "no" (the runs of b and c leave it at "auto").
# Each run writes step_breakdown.tsv (per iteration the step time and its interior, boundary,
# exchange and idle parts); report.py takes the medians (after 2 warm-up iterations) and writes
# bench/results/<date>-scaling-<gpu>-x<N>.{md,tsv,svg,png,log} and -predictions-*.tsv.
#
#   bash bench/scaling/run.sh [MAX_GPUS]      (default: the GPUs nvidia-smi lists; N in 1 2 4
#                                              up to MAX_GPUS)
# Environment: SAGUARO_BUILD_DIR (build), SAGUARO_BIN (use this saguaro, skip the build),
# SCALING_NS ("1 2 4"), SCALING_SIZE (256: points per GPU along each axis), SCALING_BACKEND
# (cuda), SCALING_NORMS_MAPPER (default), SCALING_RUN_TIMEOUT (300 s per run),
# SCALING_OUT (bench/results), SCALING_NORMS_TOL (1e-14).
# Scratch: $build/scaling-run/ (runs.tsv, machine.tsv, norms_check.tsv, progress.log and one
# directory per run: its .par, run.log and output directory); wiped at the start.
# Exits 1 when a run failed or the norms check did not pass (after writing the results).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
root=$PWD
build=${SAGUARO_BUILD_DIR:-build}
command_line="bash bench/scaling/run.sh${1:+ $1}"

max_gpus=${1:-}
if [[ -z $max_gpus ]]; then
  max_gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
fi
[[ $max_gpus =~ ^[0-9]+$ ]] && ((max_gpus >= 1)) || max_gpus=1
size=${SCALING_SIZE:-256}
backend=${SCALING_BACKEND:-cuda}
norms_mapper=${SCALING_NORMS_MAPPER:-default}
run_timeout=${SCALING_RUN_TIMEOUT:-300}
out=${SCALING_OUT:-bench/results}
ns=()
for n in ${SCALING_NS:-1 2 4}; do
  if ((n <= max_gpus)); then ns+=("$n"); fi
done
if ((${#ns[@]} == 0)) || [[ ${ns[0]} != 1 ]]; then
  echo "run.sh: the rank counts (\$SCALING_NS up to MAX_GPUS $max_gpus) must begin with 1" >&2
  exit 2
fi
nmax=${ns[-1]}

if [[ -n ${SAGUARO_BIN:-} ]]; then
  saguaro_bin=$(realpath "$SAGUARO_BIN")
else
  # shellcheck source=bench/common/gpu_build.sh
  source bench/common/gpu_build.sh
  echo "scaling: building saguaro in $build"
  gpu_bench_build saguaro
  saguaro_bin="$(cd "$build" && pwd)/bin/saguaro"
fi
date=$(date -u +%Y-%m-%d)
gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 || true)
gpu_driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1 || true)
gpu_name=${gpu_name:-no GPU}
gpu=$(echo "$gpu_name" | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
tag="$date-scaling-${gpu:-gpu}-x$nmax"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

runs="$build/scaling-run"
rm -rf "$runs" && mkdir -p "$runs" "$out"
runs=$(cd "$runs" && pwd)
say() { echo "$*" | tee -a "$runs/progress.log"; }

{
  printf 'command\t%s\n' "$command_line"
  printf 'date\t%s\n' "$(date -u +%FT%TZ)"
  printf 'host\t%s\n' "$(hostname)"
  printf 'gpu_name\t%s\n' "$gpu_name"
  printf 'gpu_driver\t%s\n' "${gpu_driver:-?}"
  printf 'gpus_listed\t%s\n' "$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)"
  printf 'max_gpus\t%s\n' "$max_gpus"
  printf 'ranks\t%s\n' "${ns[*]}"
  printf 'points_per_gpu\t%s^3\n' "$size"
  printf 'backend\t%s\n' "$backend"
  printf 'norms_mapper\t%s\n' "$norms_mapper"
  printf 'commit\t%s%s\n' "$(git rev-parse --short HEAD 2>/dev/null || echo ?)" \
    "$(git diff --quiet HEAD -- src schedule param thorn 2>/dev/null || echo ' (with local changes)')"
  printf 'mpi\t%s\n' "$(mpirun --version 2>/dev/null | head -1 || echo ?)"
  printf 'cpus\t%s\n' "$(nproc)"
} > "$runs/machine.tsv"
nvidia-smi topo -m > "$runs/topology.txt" 2>&1 || true
printf 'name\tkind\tsystem\tn\tncells_x\tncells_y\tncells_z\tzmax\titlast\trc\twall_s\tdir\n' > "$runs/runs.tsv"

# setpar FILE KEY VALUE: the line that sets KEY becomes KEY = VALUE (appended when there is none;
# a parameter file may set a parameter only once).
setpar() {
  awk -v k="$2" -v v="$3" '
    { s = $0; sub(/^[ \t]+/, "", s)
      if (!done && index(s, k) == 1 && substr(s, length(k) + 1) ~ /^[ \t]*=/) { print k " = " v; done = 1; next }
      print }
    END { if (!done) print k " = " v }' "$1" > "$1.tmp" && mv "$1.tmp" "$1"
}

count=0
total=$((4 * ${#ns[@]} + 2 * (${#ns[@]} - 1) + (nmax > 1 ? 2 : 0)))
failures=0
# run_case NAME KIND SYSTEM N NCELLS_X NCELLS_Y NCELLS_Z ZMAX ITLAST [KEY=VALUE ...]
run_case() {
  local name=$1 kind=$2 system=$3 n=$4 nx=$5 ny=$6 nz=$7 zmax=$8 itlast=$9
  shift 9
  local dir="$runs/$name" edl par kv rc=0 t0 wall median
  case $system in
    wave) edl="$root/par/wave.edl" ;;
    bssn) edl="$root/par/bssn/bssn.edl" ;;
  esac
  mkdir -p "$dir"
  par="$dir/$system.par"
  cp "bench/scaling/$system.par" "$par"
  setpar "$par" Saguaro::equations "\"$edl\""
  setpar "$par" Saguaro::backend "\"$backend\""
  setpar "$par" CoordBase::ncells_x "$nx"
  setpar "$par" CoordBase::ncells_y "$ny"
  setpar "$par" CoordBase::ncells_z "$nz"
  setpar "$par" CoordBase::zmax "$zmax"
  setpar "$par" Cactus::cctk_itlast "$itlast"
  setpar "$par" IO::out_every "$itlast"
  for kv in "$@"; do
    setpar "$par" "${kv%%=*}" "${kv#*=}"
  done
  count=$((count + 1))
  printf '[%2d/%d] %-18s %s on %d rank(s), %dx%dx%d, %d iterations ... ' \
    "$count" "$total" "$name" "$system" "$n" "$nx" "$ny" "$nz" "$itlast" | tee -a "$runs/progress.log"
  t0=$EPOCHREALTIME
  (cd "$dir" && timeout -k 15 "$run_timeout" mpirun --allow-run-as-root --oversubscribe --bind-to none \
    -n "$n" "$saguaro_bin" "$system.par") > "$dir/run.log" 2>&1 || rc=$?
  wall=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f", b - a }')
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$kind" "$system" "$n" \
    "$nx" "$ny" "$nz" "$zmax" "$itlast" "$rc" "$wall" "$name" >> "$runs/runs.tsv"
  if ((rc == 0)); then
    median=$(python3 bench/scaling/report.py --median-step "$dir" 2>&1 | tail -1 || true)
    echo "ok, ${wall} s; median step $median" | tee -a "$runs/progress.log"
  else
    failures=$((failures + 1))
    echo "FAILED (exit $rc$( ((rc == 124 || rc == 137)) && echo ", timed out after $run_timeout s"), ${wall} s): $(grep -v '^\s*$' "$dir/run.log" | grep -iE 'error|abort|fail' | head -1 | cut -c1-160)" |
      tee -a "$runs/progress.log"
  fi
}

say "scaling: $gpu_name x$max_gpus (driver ${gpu_driver:-?}), ranks ${ns[*]}, $size^3 per GPU, saguaro $saguaro_bin, scratch $runs"
t_start=$SECONDS

# a. norms check (same kernels on every rank count: mapper $norms_mapper)
for n in "${ns[@]}"; do
  run_case "norms-wave-n$n" norms wave "$n" 64 64 64 1 20 Saguaro::mapper="\"$norms_mapper\"" \
    IOScalar::out_vars='"WaveDemo::phi WaveDemo::pi WaveDemo::eps"' IO::out_every=1
done
for n in "${ns[@]}"; do
  run_case "norms-bssn-n$n" norms bssn "$n" 48 48 48 1 8 Saguaro::mapper="\"$norms_mapper\"" \
    IOScalar::out_vars='"SaguaroBSSN::alpha SaguaroBSSN::phi SaguaroBSSN::trK SaguaroBSSN::gt11 SaguaroBSSN::At12 SaguaroBSSN::Xt1"' \
    IO::out_every=1
done
# b. weak scaling, c. strong scaling (1 GPU: the weak run), d. overlap off on the most GPUs
for system in wave bssn; do
  if [[ $system == wave ]]; then it=100; else it=20; fi
  for n in "${ns[@]}"; do
    run_case "weak-$system-n$n" weak "$system" "$n" "$size" "$size" $((size * n)) "$n" "$it"
  done
  printf 'strong-%s-n1\tstrong\t%s\t1\t%s\t%s\t%s\t1\t%s\t%s\t0\tweak-%s-n1\n' "$system" "$system" \
    "$size" "$size" "$size" "$it" "$(awk -F'\t' -v r="weak-$system-n1" '$1 == r { print $10 }' "$runs/runs.tsv")" \
    "$system" >> "$runs/runs.tsv"
  for n in "${ns[@]:1}"; do
    run_case "strong-$system-n$n" strong "$system" "$n" "$size" "$size" "$size" 1 "$it"
  done
done
if ((nmax > 1)); then
  for system in wave bssn; do
    if [[ $system == wave ]]; then it=100; else it=20; fi
    run_case "overlapoff-$system-n$nmax" overlap-off "$system" "$nmax" "$size" "$size" \
      $((size * nmax)) "$nmax" "$it" Saguaro::exchange_overlap='"no"'
  done
fi
say "scaling: runs done in $((SECONDS - t_start)) s, $failures failed"

# the norms check's comparison
for system in wave bssn; do
  pairs=()
  for n in "${ns[@]:1}"; do pairs+=("$n" "$runs/norms-$system-n$n"); done
  if ((${#pairs[@]})); then
    python3 bench/scaling/compare_norms.py "$runs/norms_check.tsv" "$system" "$runs/norms-$system-n1" \
      "${pairs[@]}" | tee -a "$runs/progress.log"
  fi
done

# results: tables, plot, the largest runs' prediction logs, the log
status=0
python3 bench/scaling/report.py "$runs" "$out/$tag" "$command_line" "$gpu_name" || status=1
for system in wave bssn; do
  p=$(find "$runs/weak-$system-n$nmax" -name predictions.tsv 2>/dev/null | head -1)
  if [[ -n $p ]]; then cp "$p" "$out/$tag-predictions-$system-n$nmax.tsv"; fi
done
{
  cat "$runs/progress.log"
  echo
  echo "==== machine.tsv"
  cat "$runs/machine.tsv"
  echo "==== nvidia-smi topo -m"
  cat "$runs/topology.txt"
  tail -n +2 "$runs/runs.tsv" | while IFS=$'\t' read -r name kind _ _ _ _ _ _ _ _ _ dir; do
    [[ $name == "$dir" ]] || continue # the strong 1-GPU row is the weak run
    echo "==== $name ($kind): $dir/run.log (first 30 and last 60 lines)"
    if (($(wc -l < "$runs/$dir/run.log") > 90)); then
      head -30 "$runs/$dir/run.log"
      echo "[...]"
      tail -60 "$runs/$dir/run.log"
    else
      cat "$runs/$dir/run.log"
    fi
  done
} > "$out/$tag.log"
if ((failures)) || [[ -n $(awk -F'\t' 'NR > 1 && $9 != "PASS"' "$runs/norms_check.tsv" 2>/dev/null) ]]; then
  status=1
fi
say "scaling: wrote $(find "$out" -maxdepth 1 -name "$tag*" -printf '%f ')in $out," \
  "$((SECONDS - t_start)) s (status $status)"
exit "$status"
