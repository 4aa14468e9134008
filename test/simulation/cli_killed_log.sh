#!/usr/bin/env bash
# A run killed with SIGKILL, its stdout redirected to a file, leaves what it printed so far:
# the banner and every line before the kill (issue 23: the log was empty, nothing flushed).
# The kill comes once a checkpoint at iteration 40 or later is marked complete, long before the
# first progress line (every 10 s by default); "checkpoint at iteration 20" was printed before.
# Usage: cli_killed_log.sh SAGUARO SOURCE_DIR
set -uo pipefail
saguaro=$1 src=$2
work=$(mktemp -d)
pid=
trap '[[ -n $pid ]] && kill -9 $pid 2>/dev/null; rm -rf "$work"' EXIT
cat > "$work/w.par" <<PAR
ActiveThorns = "Saguaro WaveDemo"
Saguaro::equations = "$src/par/wave.edl"
Saguaro::backend = "cpu"
Saguaro::cache_dir = "$work/cache"
Saguaro::prediction_log = no
CoordBase::spacing = "numcells"
CoordBase::ncells_x = 12
CoordBase::ncells_y = 12
CoordBase::ncells_z = 12
Periodic::periodic = yes
Cactus::terminate = "iteration"
Cactus::cctk_itlast = 100000000
IO::out_dir = "$work/out"
IO::checkpoint_every = 20
PAR
"$saguaro" "$work/w.par" > "$work/log" 2>&1 &
pid=$!
# The newest complete checkpoint's iteration (0 for none).
newest() {
  local n=0 f i
  for f in "$work"/out/checkpoints/checkpoint.chkpt.it_*.done; do
    [[ -f $f ]] || continue
    i=${f##*.it_}; i=${i%.done}
    (( i > n )) && n=$i
  done
  echo $n
}
for _ in $(seq 600); do (( $(newest) >= 40 )) && break; sleep 0.1; done
kill -9 $pid
wait $pid 2>/dev/null
pid=
(( $(newest) >= 40 )) || { echo "FAIL: no checkpoint at iteration 40 within 60 s"; head -c 3000 "$work/log"; exit 1; }
failures=0
for line in "saguaro: WaveDemo from" "running to iteration 100000000" "checkpoint at iteration 20 in"; do
  grep -q "$line" "$work/log" || { echo "FAIL: '$line' not in the log of the killed run"; failures=$((failures+1)); }
done
[[ $failures == 0 ]] || { echo "the log ($(wc -c < "$work/log") bytes) begins:"; head -c 3000 "$work/log"; }
exit $(( failures > 0 ))
