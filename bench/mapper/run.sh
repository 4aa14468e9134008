#!/usr/bin/env bash
# The mapper's acceptance benchmark on the GPU at hand, in one command: bench_mapper runs the
# mapper on the right-hand sides of wave (2nd and 8th order), Maxwell and the micro-benchmark at
# N^3, then compiles and times the model's mapping, the default, the runners-up and at least 50
# other mappings (sampled across strategies and block configurations); report.py tabulates the
# ratio best measured / model's measured (target >= 0.95) and the search time (target < 100 ms)
# and plots every candidate's time.
# Writes bench/results/<date>-mapper-<gpu>.{json,txt,md,svg}.
#   bash bench/mapper/run.sh [N]      (on a machine with a GPU; default N = 256)
# The model's description: $SAGUARO_DEVICE, else the one configs/devices has for this GPU.
# Extra bench_mapper flags: $BENCH_MAPPER_FLAGS (e.g. "--samples 80 --seed 2").
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
n=${1:-256}
build=${SAGUARO_BUILD_DIR:-build}

# shellcheck source=bench/common/gpu_build.sh
source bench/common/gpu_build.sh
gpu_bench_build bench_mapper
tag="$date-mapper-$gpu"
# The description the mapper uses in production (configs/devices, matched by the GPU's name)
# unless $SAGUARO_DEVICE names another (e.g. a fresh bench/results/<date>-model-<gpu>.yaml).
device=${SAGUARO_DEVICE:-auto}
# shellcheck disable=SC2086
"$build/bin/bench_mapper" --n "$n" --device "$device" --json "bench/results/$tag.json" \
  --cache "$build/bench-mapper-cache" ${BENCH_MAPPER_FLAGS:-} | tee "bench/results/$tag.txt"
python3 bench/mapper/report.py "bench/results/$tag.json" "bash bench/mapper/run.sh $n" \
  "bench/results/$tag.md" "bench/results/$tag.svg"
echo "wrote bench/results/$tag.{json,txt,md,svg}"
