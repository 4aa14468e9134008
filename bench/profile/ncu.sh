#!/usr/bin/env bash
# Nsight Compute profiles of the right-hand-side kernels of B1-B4 (issue 20: where the bytes and
# cycles go), on a machine with a GPU and ncu:
#   bash bench/profile/ncu.sh [N] [OUT]        (default N = 256, OUT = bench/results/profile-<date>)
# 1. bench_suite once per kernel (--repeats 1 --batch 1 --warmup 0, no whole step) under ncu,
#    every launch of Saguaro's right-hand-side kernels (model's and default mapping) and of the
#    naive CUDA kernels: the sections SpeedOfLight, MemoryWorkloadAnalysis, Occupancy,
#    LaunchStats, WarpStateStats, InstructionStats -> OUT/saguaro.csv (ncu's raw page);
# 2. peers.py with torch.compile on the same data, only the launches inside its "timed" NVTX
#    range (not the compiler's or autotuner's) -> OUT/torch.csv; Inductor's generated Triton
#    code (TORCH_LOGS=output_code) -> OUT/torch-output-code.log;
# 3. --set full for B1's kernels (details page, with ncu's own hints) -> OUT/wave2-full.txt;
# 4. bench/profile/summarize.py: one table of both -> OUT/summary.md.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
n=${1:-256}
build=${SAGUARO_BUILD_DIR:-build}
# shellcheck source=bench/common/gpu_build.sh
source bench/common/gpu_build.sh
gpu_bench_build bench_suite
out=${2:-bench/results/profile-$date}
mkdir -p "$out"
ncu=${NCU:-$(command -v ncu || echo /usr/local/cuda/bin/ncu)}
[[ -x "$ncu" ]] || { echo "ncu.sh: no Nsight Compute (ncu) on this machine" >&2; exit 1; }
data="$build/bench-suite"
mkdir -p "$data"
benchmarks=wave2,wave8,microbench,maxwell
sections=(--section SpeedOfLight --section MemoryWorkloadAnalysis --section Occupancy
  --section LaunchStats --section WarpStateStats --section InstructionStats)
# Integer instructions and global loads per kernel (index arithmetic per load); left out when
# this ncu does not know the metric names.
extra=(--metrics smsp__sass_thread_inst_executed_op_integer_pred_on.sum,smsp__sass_inst_executed_op_global_ld.sum)
suite=("$build/bin/bench_suite" --n "$n" --data "$data" --cache "$build/bench-suite-cache"
  --repeats 1 --batch 1 --warmup 0 --no-step --benchmarks "$benchmarks")
kernels='regex:^(saguaro_[0-9]+_(wave_rhs|microbench|maxwell_rhs)_k[0-9]+|wave2|wave8|microbench|maxwell|triad)$'

profile() { # profile NAME ncu-args... -- command...
  local name=$1
  shift
  "$ncu" --force-overwrite --export "$out/$name" "$@" >"$out/$name.log" 2>&1 ||
    { tail -20 "$out/$name.log" >&2; return 1; }
  "$ncu" --import "$out/$name.ncu-rep" --csv --page raw >"$out/$name.csv"
}

echo "ncu.sh: Saguaro and naive kernels (${benchmarks}, ${n}^3)"
profile saguaro -k "$kernels" "${sections[@]}" "${extra[@]}" "${suite[@]}" ||
  profile saguaro -k "$kernels" "${sections[@]}" "${suite[@]}"
echo "ncu.sh: torch.compile's kernels"
export XLA_PYTHON_CLIENT_PREALLOCATE=false TORCH_LOGS=output_code
peers=(python3 bench/suite/peers.py "$data" --json "$out/peers.json" --systems torch
  --benchmarks "$benchmarks" --repeats 1 --batch 1 --warmup 0 --no-step)
profile torch --nvtx --nvtx-include "timed/" "${sections[@]}" "${extra[@]}" "${peers[@]}" ||
  profile torch --nvtx --nvtx-include "timed/" "${sections[@]}" "${peers[@]}"
grep -v '^==PROF==' "$out/torch.log" >"$out/torch-output-code.log" || true
unset TORCH_LOGS
echo "ncu.sh: B1 with the full set"
"$ncu" --set full -k 'regex:^(saguaro_[0-9]+_wave_rhs_k[0-9]+|wave2)$' --launch-count 6 \
  "$build/bin/bench_suite" --n "$n" --data "$data" --cache "$build/bench-suite-cache" \
  --repeats 1 --batch 1 --warmup 0 --no-step --benchmarks wave2 >"$out/wave2-full.txt" 2>&1 || true
python3 bench/profile/summarize.py --n "$n" "$out/saguaro.csv" "$out/torch.csv" >"$out/summary.md"
cat "$out/summary.md"
rm -f "$out"/*.ncu-rep
echo "wrote $out"
