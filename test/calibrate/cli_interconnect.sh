#!/usr/bin/env bash
# `saguaro calibrate --interconnect` without a GPU (--cpu: an exchange of host arrays):
#  * on 1 rank: status 1, nothing written, and how to run it;
#  * --cpu without --base: status 2;
#  * under mpirun -n 2, --quick: status 0 and the base description written back with only the
#    interconnect added (checked by check_interconnect, which reads it with model::load_device).
# Usage: cli_interconnect.sh SAGUARO MPIEXEC CHECK_INTERCONNECT SOURCE_DIR
set -uo pipefail
saguaro=$1 mpiexec=$2 check=$3 src=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export OMPI_MCA_rmaps_base_oversubscribe=1
base=$src/configs/devices/h200.yaml

fail() { echo "FAILED: $*"; echo "--- stderr:"; cat "$work/err"; exit 1; }

"$saguaro" calibrate --interconnect --cpu --quick --base "$base" --out "$work/one.yaml" \
  > "$work/out" 2> "$work/err"
status=$?
[[ $status == 1 ]] || fail "status $status on 1 rank, expected 1"
grep -q 'run it as mpirun -n 2 saguaro calibrate --interconnect' "$work/err" \
  || fail "1 rank: no word of how to run it"
[[ ! -e "$work/one.yaml" ]] || fail "1 rank: a description was written"

"$mpiexec" -n 2 "$saguaro" calibrate --interconnect --cpu --quick > "$work/out" 2> "$work/err"
status=$?
[[ $status == 2 ]] || fail "status $status for --cpu without --base, expected 2"
grep -q -- '--base' "$work/err" || fail "--cpu without --base: no word of --base"

"$mpiexec" -n 2 "$saguaro" calibrate --interconnect --cpu --quick --base "$base" \
  --out "$work/x.yaml" > "$work/out" 2> "$work/err"
status=$?
[[ $status == 0 ]] || fail "status $status under mpirun -n 2, expected 0"
[[ ! -s "$work/out" ]] || fail "stdout is not empty with --out"
cat "$work/err"
"$check" "$base" "$work/x.yaml" || fail "the description written is not the base plus the interconnect"
echo "cli_interconnect: OK"
