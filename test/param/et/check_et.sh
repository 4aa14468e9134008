#!/usr/bin/env bash
# Real Einstein Toolkit parameter files (README.md here says where each comes from) read by
# `saguaro check`: every line parses (no syntax error), every problem is listed in one run
# (status 2) with its file:line:col, the thorns Saguaro does not provide among them at their
# ActiveThorns entries; `saguaro check --compat` lists what runs, what is ignored, what is
# missing. Usage: check_et.sh SAGUARO SOURCE_DIR
set -uo pipefail
saguaro=$1 src=$2
dir="$src/test/param/et"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "$*"; failures=$((failures + 1)); }

# expect FILE WHERE... : each WHERE is "line:col: error: message-regex"
expect() {
  local file=$1
  shift
  "$saguaro" check "$dir/$file" > "$work/out" 2> "$work/err"
  local status=$?
  [[ $status == 2 ]] || fail "$file: status $status, expected 2"
  if grep -Eq "unexpected|is not a value|unterminated|is not a number" "$work/err"; then
    fail "$file: a syntax error:"; cat "$work/err"
  fi
  for where in "$@"; do
    grep -Eq "$file:$where" "$work/err" || { fail "$file: no '$where' in:"; cat "$work/err"; }
  done
  "$saguaro" check --compat "$dir/$file" > "$work/compat" 2> "$work/err2"
  grep -q "Einstein Toolkit compatibility" "$work/compat" || fail "$file: no --compat report"
  grep -Eq "^  (runs|missing) " "$work/compat" || { fail "$file: empty --compat report"; cat "$work/compat"; }
}

missing="error: thorn '[A-Za-z0-9_]+' in ActiveThorns is not provided by Saguaro"
expect wavetoyx-standing.par "5:5: error: thorn 'WaveToyX' in ActiveThorns is not provided" \
  "1:1: error: Saguaro::equations is not set"
expect dgwavetoyx-standing.par "3:5: error: thorn 'DGCoordinatesX'" "4:5: error: thorn 'DGWaveToyX'"
expect benchx-benchmark-z4c.par "5:5: error: thorn 'ErrorEstimator'" "11:5: error: thorn 'Z4c'" \
  "57:25: error: CarpetX::reflection_x = yes is not supported" \
  "64:27: error: CarpetX::max_num_levels = 8 is not supported"
expect carpetiohdf5-CarpetWaveToyRecover_test_1proc.par "1:196: error: thorn 'IDScalarWaveC'" \
  "1:210: error: thorn 'WaveToyC'" "12:20: error: \"manual\" is not a keyword of IO::recover"
expect carpetioscalar-coords.par "11:4: error: thorn 'InterpToArray'"
expect carpetregrid2-regrid2_2cen.par "42:17: error: thorn 'CarpetRegrid2'"
expect carpetregrid2-qc0.par "29:17: $missing" "119:17: error: thorn 'CarpetRegrid2'" \
  "187:17: error: thorn 'BSSN_MoL'" "153:17: error: thorn 'TwoPunctures'"

# The WaveToyX port runs this file's settings: --compat says every thorn runs.
"$saguaro" check --compat "$src/par/wavetoy/standing.par" > "$work/compat" 2> "$work/err" ||
  { fail "par/wavetoy/standing.par: --compat failed"; cat "$work/compat" "$work/err"; }
grep -q "CarpetX::ncells_x (line 19) -> CoordBase::ncells_x" "$work/compat" ||
  { fail "no CarpetX mapping in:"; cat "$work/compat"; }
grep -q "ODESolvers::method (line 32) -> MoL::ODE_Method" "$work/compat" ||
  { fail "no ODESolvers mapping in:"; cat "$work/compat"; }
grep -q " 0 missing" "$work/compat" || { fail "something missing:"; cat "$work/compat"; }

[[ $failures == 0 ]] || { echo "$failures failures"; exit 1; }
echo "ET parameter files: OK"
