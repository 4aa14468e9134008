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

# GLPK (the mapper's covers) is not installed on the GPU machine: use the Debian packages in
# .debs/ (scripts/device-debs.sh --unpack prints the environment: GLPK_ROOT and library path).
glpk_installed() {
  [[ -f /usr/include/glpk.h ]] && ldconfig -p 2>/dev/null | grep -q 'libglpk\.so'
}
if ! glpk_installed && [[ -z "${GLPK_ROOT:-}" ]]; then
  if [[ -f scripts/device-debs.sh ]]; then
    echo "run.sh: GLPK not installed: unpacking .debs/ (scripts/device-debs.sh --unpack)" >&2
    # shellcheck disable=SC1090
    source <(bash scripts/device-debs.sh --unpack)
  elif compgen -G ".debs/*.deb" >/dev/null; then
    echo "run.sh: GLPK not installed: extracting .debs/*.deb into .debs/root" >&2
    mkdir -p .debs/root
    for deb in .debs/*.deb; do dpkg-deb -x "$deb" .debs/root; done
    export GLPK_ROOT="$PWD/.debs/root/usr"
    libdir=$(dirname "$(find "$GLPK_ROOT" -name 'libglpk.so*' | head -1)")
    export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  else
    echo "run.sh: GLPK is not installed and .debs/ holds no packages; cmake will fail" >&2
  fi
fi

cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${GLPK_ROOT:+-DGLPK_ROOT="$GLPK_ROOT"} >/dev/null
ninja -C "$build" bench_mapper >/dev/null
date=$(date -u +%Y-%m-%d)
name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
gpu=$(echo "$name" | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
tag="$date-mapper-${gpu:-gpu}"
# The description the mapper uses in production (configs/devices, matched by the GPU's name)
# unless $SAGUARO_DEVICE names another (e.g. a fresh bench/results/<date>-model-<gpu>.yaml).
device=${SAGUARO_DEVICE:-auto}
# shellcheck disable=SC2086
"$build/bin/bench_mapper" --n "$n" --device "$device" --json "bench/results/$tag.json" \
  --cache "$build/bench-mapper-cache" ${BENCH_MAPPER_FLAGS:-} | tee "bench/results/$tag.txt"
python3 bench/mapper/report.py "bench/results/$tag.json" "bash bench/mapper/run.sh $n" \
  "bench/results/$tag.md" "bench/results/$tag.svg"
echo "wrote bench/results/$tag.{json,txt,md,svg}"
