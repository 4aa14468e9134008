#!/usr/bin/env bash
# Recovery past damaged checkpoints, through the executable: a damaged newest checkpoint is
# reported on stdout with its file and the previous one used (status 0); when none is usable,
# IO::recover = "auto" and "autoprobe" both stop with status 2, the .par location of
# IO::recover and every checkpoint tried with its file and why (issue 23: status 1 after
# MPI_Abort on `H5Fopen failed`).
# Usage: cli_recover.sh SAGUARO SOURCE_DIR
set -uo pipefail
saguaro=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures+1)); }

par() { # par ITLAST RECOVER
  cat <<PAR
ActiveThorns = "Saguaro WaveDemo"
Saguaro::equations = "$src/par/wave.edl"
Saguaro::backend = "cpu"
Saguaro::cache_dir = "$work/cache"
Saguaro::prediction_log = no
Cactus::cctk_show_schedule = no
CoordBase::spacing = "numcells"
CoordBase::ncells_x = 12
CoordBase::ncells_y = 12
CoordBase::ncells_z = 12
Periodic::periodic = yes
Cactus::terminate = "iteration"
Cactus::cctk_itlast = $1
IO::out_dir = "$work/out"
IO::out_every = 5
IOScalar::out_vars = "WaveDemo::phi"
IO::checkpoint_every = 10
IO::checkpoint_keep = 2
IO::recover = "$2"
PAR
}
cp10="$work/out/checkpoints/checkpoint.chkpt.it_10.file_0.h5"
cp20="$work/out/checkpoints/checkpoint.chkpt.it_20.file_0.h5"

par 24 no > "$work/w.par"
"$saguaro" "$work/w.par" > "$work/log" 2>&1 || fail "the first run: status $?"
[[ -f $cp10 && -f $cp20 ]] || fail "no checkpoints at 10 and 20"

# The newest truncated: reported, the one before used.
cp -r "$work/out" "$work/saved"
truncate -s 1000 "$cp20"
par 30 auto > "$work/w.par"
"$saguaro" "$work/w.par" > "$work/log" 2> "$work/err"
status=$?
[[ $status == 0 ]] || { fail "newest damaged: status $status"; cat "$work/err"; }
grep -q "warning: the checkpoint at iteration 20 .*$cp20" "$work/log" || { fail "no warning naming $cp20"; cat "$work/log"; }
grep -q "recovered from iteration 10 " "$work/log" || fail "not recovered from iteration 10"

# Both damaged (one truncated, one not HDF5 at all): status 2 and the list, for both modes.
for mode in auto autoprobe; do
  rm -rf "$work/out" && cp -r "$work/saved" "$work/out"
  truncate -s 1000 "$cp20"
  echo "not a checkpoint" > "$cp10"
  par 30 $mode > "$work/w.par"
  "$saguaro" "$work/w.par" > "$work/log" 2> "$work/err"
  status=$?
  [[ $status == 2 ]] || fail "$mode, none usable: status $status, expected 2"
  grep -Eq "w.par:[0-9]+:1: error: IO::recover = \"$mode\" but none of the 2 checkpoints in .* is usable" "$work/err" || { fail "$mode: no error at IO::recover"; cat "$work/err"; }
  grep -q "tried iteration 20: .*$cp20" "$work/err" || fail "$mode: iteration 20 and $cp20 not listed"
  grep -q "tried iteration 10: .*$cp10" "$work/err" || fail "$mode: iteration 10 and $cp10 not listed"
  grep -q "warning: the checkpoint at iteration 10" "$work/log" || fail "$mode: no warning for 10"
done

echo "$failures failure(s)"
exit $(( failures > 0 ))
