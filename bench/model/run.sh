#!/usr/bin/env bash
# The performance model on the GPU at hand, in one command: `saguaro calibrate` measures the
# GPU (starting from its configs/devices description for what is not measured), then
# bench_cuda predicts and measures every kernel of the CUDA benchmarks (wave 2nd/4th/8th order,
# Maxwell, the Hu et al. micro-benchmark; every buffering strategy x 6 block configurations)
# with the calibrated description, and report.py tabulates the accuracy of both combination
# formulas and plots predicted against measured.
# Writes bench/results/<date>-model-<gpu>.{yaml,json,txt,md,svg} and <...>-model.svg.
#   bash bench/model/run.sh [N]      (on a machine with a GPU; default N = 256)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
n=${1:-256}
build=${SAGUARO_BUILD_DIR:-build}
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C "$build" saguaro bench_cuda >/dev/null
date=$(date -u +%Y-%m-%d)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu=$(echo "$name" | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
tag="$date-model-${gpu:-gpu}"
# The description whose `match:` names this GPU supplies what calibration does not measure.
base=""
for f in configs/devices/*.yaml; do
  for m in $(sed -n 's/^match: \[\(.*\)\]/\1/p' "$f" | tr -d '",'); do
    if [[ -z "$base" && "$name" == *"$m"* ]]; then base=$f; fi
  done
done
"$build/bin/saguaro" calibrate ${base:+--base "$base"} --out "bench/results/$tag.yaml"
"$build/bin/bench_cuda" --n "$n" --device "bench/results/$tag.yaml" \
  --json "bench/results/$tag.json" | tee "bench/results/$tag.txt"
python3 bench/cuda/report.py "bench/results/$tag.json" "bash bench/model/run.sh $n" \
  "bench/results/$tag.md" "bench/results/$tag.svg"
echo "wrote bench/results/$tag.{yaml,json,txt,md,svg} and $tag-model.svg"
