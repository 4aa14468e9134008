#!/usr/bin/env bash
# `saguaro check` and `saguaro run` on bad parameter files: status 2, nothing on stdout, and
# on stderr the file:line:col of the culprit, the line with a caret, and the message.
# Usage: cli_errors.sh SAGUARO SOURCE_DIR
set -uo pipefail
saguaro=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect NAME LINE:COL MESSAGE-REGEX  (the .par text on stdin; line 1 is ActiveThorns)
expect() {
  local name=$1 where=$2 message=$3 par="$work/$1.par"
  cat > "$par"
  for cmd in check run; do
    "$saguaro" $cmd "$par" > "$work/out" 2> "$work/err"
    local status=$?
    if [[ $status != 2 ]]; then echo "$name ($cmd): status $status, expected 2"; failures=$((failures+1)); fi
    if [[ -s "$work/out" ]]; then echo "$name ($cmd): stdout not empty:"; cat "$work/out"; failures=$((failures+1)); fi
    if ! grep -q "$name.par:$where: error: " "$work/err"; then
      echo "$name ($cmd): no '$name.par:$where: error:' in:"; cat "$work/err"; failures=$((failures+1))
    fi
    if ! grep -Eq "$message" "$work/err"; then
      echo "$name ($cmd): message /$message/ not in:"; cat "$work/err"; failures=$((failures+1))
    fi
    if ! grep -q '\^' "$work/err"; then echo "$name ($cmd): no caret"; failures=$((failures+1)); fi
  done
}

head="ActiveThorns = \"Saguaro WaveDemo\"
Saguaro::equations = \"$src/par/wave.edl\""

expect unknown_param 3:12 "did you mean 'xmin'" <<PAR
$head
CoordBase::xmni = 0.5
PAR
expect unknown_thorn 3:1 "did you mean 'CoordBase'" <<PAR
$head
CoordBse::xmin = 0.5
PAR
expect not_active 3:1 "ActiveThorns" <<PAR
ActiveThorns = "Saguaro"
Saguaro::equations = "$src/par/wave.edl"
WaveDemo::amp = 2.0
PAR
expect wrong_type 3:23 "integer" <<PAR
$head
Cactus::cctk_itlast = 2.5
PAR
expect out_of_range 3:21 "2:8:2" <<PAR
$head
Saguaro::fd_order = 5
PAR
expect bad_keyword 3:19 "RK4" <<PAR
$head
MoL::ODE_Method = "RK5"
PAR
expect set_twice 4:1 "set twice|already set" <<PAR
$head
Time::dtfac = 0.5
Time::dtfac = 0.25
PAR
expect edl_range 3:18 "range|allowed" <<PAR
$head
WaveDemo::kwav = 1000
PAR
expect no_edl 2:22 "no EDL file" <<PAR
ActiveThorns = "Saguaro"
Saguaro::equations = "no-such-file.edl"
PAR
expect no_device_description 3:1 "no device description" <<PAR
$head
Saguaro::device_description = "no-such-device.yaml"
PAR

# Issue 23, kinds 4 and 7: what the run refused at start-up (some of it with status 1 and no
# place: a file name too long, a grid too large for memory) is refused by check as well.
expect bad_out_vars 3:1 "not a variable or group" <<PAR
$head
IOHDF5::out_vars = "bogus"
PAR
expect dx_not_dividing 3:1 "does not divide" <<PAR
$head
CoordBase::dx = 0.3
PAR
expect name_too_long 3:1 "path component of 300 characters" <<PAR
$head
IO::out_dir = "$work/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"
PAR
expect grid_too_large 4:1 "GiB of memory are available" <<PAR
$head
CoordBase::spacing = "numcells"
CoordBase::ncells_x = 100000
CoordBase::ncells_y = 100000
CoordBase::ncells_z = 100000
PAR

# Several problems of one file: check reports every one of them.
printf '%s\n' "$head" 'IOHDF5::out_vars = "bogus"' 'IOScalar::out_vars = "nope"' \
  'CoordBase::dx = 0.3' > "$work/several.par"
"$saguaro" check "$work/several.par" > "$work/out" 2> "$work/err"
status=$?
errors=$(grep -c ': error: ' "$work/err")
if [[ $status != 2 || $errors != 3 ]]; then
  echo "several: status $status and $errors errors, expected 2 and 3:"; cat "$work/err"
  failures=$((failures+1))
fi

# --set: its errors name the pseudo-file "--set"; a good one replaces the file's value.
printf '%s\n' "$head" > "$work/good.par"
for cmd in check run; do
  "$saguaro" $cmd "$work/good.par" --set 'Cactus::cctk_itlst = 3' > "$work/out" 2> "$work/err"
  status=$?
  if [[ $status != 2 ]] || ! grep -q -- '--set:1:9: error: ' "$work/err" || ! grep -q "cctk_itlast" "$work/err"; then
    echo "--set with a typo ($cmd): status $status:"; cat "$work/err"; failures=$((failures+1))
  fi
done
printf '%s\nSaguaro::fd_order = 5\n' "$head" > "$work/fixed.par"
if ! "$saguaro" check "$work/fixed.par" --set 'Saguaro::fd_order = 2' > "$work/out" 2>&1; then
  echo "--set did not replace the file's bad value:"; cat "$work/out"; failures=$((failures+1))
fi

if (( failures > 0 )); then echo "$failures failures"; exit 1; fi
echo "all error cases report file:line:col with status 2"
