#!/usr/bin/env bash
# BSSN on the GPU at hand, in one command (the BSSN issue's measurements):
#  1. the GPU tests that involve BSSN and the CUDA compile (GpuMatchesCpuBssn: 10 RK4 steps of
#     the gauge wave, GPU against CPU to 1e-11; NvrtcCompile.*);
#  2. fission: bench_mapper --benchmarks bssn at 100^3 and 256^3 and bssn8 (fd order 8) at 256^3
#     times the model's mapping, the mapper's best single kernel, one kernel per output (each
#     kernel at its model-best block), the default, the runners-up and the register-fit
#     fissions at 25 budget pairs x 4 blocks; ptxas's registers and spills per kernel, predicted
#     and measured (CUDA events, median), and report.py's lines for the model over them
#     (Spearman, median and p90 error, its pick against the fastest);
#  3. bench/bssn/bssn.par at 256^3 for 40 RK4 steps: the prediction log (predicted vs measured
#     per kernel with ptxas's resources) and the time per step.
# Writes bench/results/<date>-bssn-<gpu>-*.
#   bash bench/bssn/run.sh            (on a machine with a GPU)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
build=${SAGUARO_BUILD_DIR:-build}
# shellcheck source=bench/common/gpu_build.sh
source bench/common/gpu_build.sh
gpu_bench_build bench_mapper
ninja -C "$build" saguaro saguaro_runtime_tests saguaro_simulation_tests >/dev/null
tag="$date-bssn-$gpu"
out=bench/results
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
{
  echo "# $gpu_name, driver $gpu_driver, $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo ?)"
  "$build/bin/saguaro_runtime_tests" --gtest_filter='NvrtcCompile.*:CudaBackendTest.*' 2>&1 | tail -4
  "$build/bin/saguaro_simulation_tests" --gtest_filter='GpuMatchesCpuBssn.*' 2>&1 | grep -E 'OK|FAIL|PASS|max|relative|error' || true
} | tee "$out/$tag-gpu-tests.log"
for run in bssn:100 bssn:256 bssn8:256; do
  b=${run%%:*} n=${run##*:} name=fission-$n
  [[ $b == bssn8 ]] && name=fission-fd8-$n
  "$build/bin/bench_mapper" --benchmarks "$b" --n "$n" --samples 0 --repeats 7 --final-repeats 7 \
    --warmup 2 --device auto --json "$out/$tag-$name.json" --cache "$build/bench-mapper-cache" \
    | tee "$out/$tag-$name.txt"
  python3 bench/mapper/report.py "$out/$tag-$name.json" "bash bench/bssn/run.sh" \
    "$out/$tag-$name.md" "$out/$tag-$name.svg"
done
rm -rf "$build/bssn-run" && mkdir -p "$build/bssn-run"
cp bench/bssn/bssn.par "$build/bssn-run/bssn.par"
sed -i 's|\.\./\.\./par/bssn/bssn.edl|'"$PWD"'/par/bssn/bssn.edl|' "$build/bssn-run/bssn.par"
saguaro_bin="$(cd "$build" && pwd)/bin/saguaro"
(cd "$build/bssn-run" && "$saguaro_bin" bssn.par) > "$out/$tag-run-256.log" 2>&1
cp "$build/bssn-run/bssn/predictions.tsv" "$out/$tag-predictions-256.tsv"
tail -40 "$out/$tag-run-256.log"
echo "wrote $out/$tag-*"
