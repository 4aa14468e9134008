#!/usr/bin/env bash
# `saguaro calibrate --quick`: where a GPU can be used, status 0 and a device description;
# elsewhere (no GPU, no driver, or a build without CUDA) status 1, nothing written, and on
# stderr the reason. Whether there is a GPU is asked of nvidia-smi, not of saguaro.
# Usage: cli_calibrate.sh SAGUARO
set -uo pipefail
saguaro=$1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$saguaro" calibrate --quick --out "$work/gpu.yaml" > "$work/out" 2> "$work/err"
status=$?

gpu=no
if command -v nvidia-smi > /dev/null 2>&1 && nvidia-smi -L 2> /dev/null | grep -q '^GPU '; then
  gpu=yes
fi
if grep -q 'this build has no CUDA' "$work/err"; then gpu=no; fi

fail() { echo "FAILED: $*"; echo "--- stderr:"; cat "$work/err"; exit 1; }
if [[ $gpu == yes ]]; then
  [[ $status == 0 ]] || fail "status $status with a GPU, expected 0"
  grep -q '^  dram_bandwidth: {value: ' "$work/gpu.yaml" || fail "no dram_bandwidth in the description"
  cat "$work/err" "$work/gpu.yaml"
else
  [[ $status == 1 ]] || fail "status $status without a GPU, expected 1"
  grep -q '^saguaro calibrate: no GPU can be used: .' "$work/err" || fail "no reason given"
  [[ ! -e "$work/gpu.yaml" ]] || fail "a description was written without a GPU"
  [[ ! -s "$work/out" ]] || fail "stdout is not empty"
  cat "$work/err"
fi
echo "cli_calibrate: OK (GPU: $gpu)"
