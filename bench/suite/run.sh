#!/usr/bin/env bash
# The benchmark suite in one command, on a machine with a GPU:
#   bash bench/suite/run.sh [N]        (default N = 256)
# 1. builds bench_suite and runs it: the CPU references of B1-B5 (and of one RK4 step of B1 and
#    of B5) into $build/bench-suite, then Saguaro with the model's and the default mapping and the
#    naive CUDA kernels (none for B5: n/a), each checked against the reference (relative error
#    <= 1e-10) and timed, with the triad bandwidth (the roofline) measured in the same run;
# 2. runs bench/suite/peers.py on the same data: JAX, CuPy and torch.compile, checked the same way
#    and timed the same way (B5 through the formula generated from Saguaro's lowering, which
#    bench_suite writes next to the references; torch.compile takes minutes to compile it);
# 3. bench/suite/report.py merges both into bench/results/<date>-<gpu>.{json,md,svg}; the console
#    output goes to bench/results/<date>-<gpu>.txt.
# Exits non-zero (after writing the results) when any system disagrees with the reference.
# Extra flags: $BENCH_SUITE_FLAGS for bench_suite, $BENCH_PEERS_FLAGS for peers.py.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
n=${1:-256}
build=${SAGUARO_BUILD_DIR:-build}

# shellcheck source=bench/common/gpu_build.sh
source bench/common/gpu_build.sh
gpu_bench_build bench_suite
tag="bench/results/$date-$gpu"
data="$build/bench-suite"
mkdir -p "$data"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

status=0
# shellcheck disable=SC2086
"$build/bin/bench_suite" --n "$n" --data "$data" --json "$data/saguaro.json" \
  --cache "$build/bench-suite-cache" ${BENCH_SUITE_FLAGS:-} 2>&1 | tee "$tag.txt" || status=1
# JAX must not take most of the GPU's memory up front (the others run in the same process).
# shellcheck disable=SC2086
XLA_PYTHON_CLIENT_PREALLOCATE=false python3 bench/suite/peers.py "$data" --json "$data/peers.json" \
  ${BENCH_PEERS_FLAGS:-} 2>&1 | tee -a "$tag.txt" || status=1
python3 bench/suite/report.py --saguaro "$data/saguaro.json" --peers "$data/peers.json" \
  --command "bash bench/suite/run.sh $n" --driver "${gpu_driver:-unknown}" --out "$tag"
echo "wrote $tag.{json,md,svg,txt}"
if [[ $status -ne 0 ]]; then
  echo "run.sh: a system failed or disagreed with the CPU reference (see WRONG/failed above)" >&2
fi
exit $status
