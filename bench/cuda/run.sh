#!/usr/bin/env bash
# Generated CUDA kernels against the GPU's memory bandwidth (bench_cuda): the right-hand sides
# of the 2nd-, 4th- and 8th-order wave equation and of the Hu et al. micro-benchmark on a
# 256^3 interior, for every buffering strategy and several block configurations; median of
# 30 launches (CUDA events) after 3 warm-up launches; compulsory traffic (each input read
# once, each output written once) against the device-to-device copy bandwidth of the same run.
# With the performance model's prediction for every kernel (the configs/devices description of
# the GPU, or $SAGUARO_DEVICE) and its accuracy.
# Writes bench/results/<date>-cuda-<gpu>.{json,md,svg} and <...>-model.svg.
#   bash bench/cuda/run.sh [N]      (on a machine with a GPU; default N = 256)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
n=${1:-256}
build=${SAGUARO_BUILD_DIR:-build}
if [[ ! -x "$build/bin/bench_cuda" ]]; then
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  ninja -C "$build" bench_cuda >/dev/null
fi
date=$(date -u +%Y-%m-%d)
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
tag="$date-cuda-${gpu:-gpu}"
"$build/bin/bench_cuda" --n "$n" --device "${SAGUARO_DEVICE:-auto}" --json "bench/results/$tag.json" | tee "bench/results/$tag.txt"
python3 bench/cuda/report.py "bench/results/$tag.json" "bash bench/cuda/run.sh $n" \
  "bench/results/$tag.md" "bench/results/$tag.svg"
echo "wrote bench/results/$tag.{json,txt,md,svg} and $tag-model.svg"
