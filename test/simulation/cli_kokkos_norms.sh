#!/usr/bin/env bash
# par/wave.par and par/bssn/gauge_wave.par run by `saguaro` on the kokkos backend and on the cpu
# backend, at a small size: every norms file agrees to 1e-12 relative (the kokkos backend's MoL
# updates, boundaries and reductions are its own kernels). Skipped (exit 77) without Kokkos.
# Usage: cli_kokkos_norms.sh SAGUARO SOURCE_DIR
set -euo pipefail
saguaro=$1 src=$2
work=$(mktemp -d)
trap '[[ -n ${KEEP:-} ]] || rm -rf "$work"' EXIT
# Two threads: Kokkos's OpenMP space (scripts/test.sh builds one) runs the kernels in parallel.
export OMP_NUM_THREADS=2 OMP_PROC_BIND=false
cache=${TMPDIR:-/tmp}/saguaro-test-kernel-cache # shared with the simulation tests
run() { # NAME PAR BACKEND SETTINGS...
  local name=$1 par=$2 backend=$3
  shift 3
  local sets=()
  for s in "$@"; do sets+=(--set "$s"); done
  "$saguaro" "$par" --set "Saguaro::backend=\"$backend\"" --set "Saguaro::cache_dir=\"$cache\"" \
    --set "IO::out_dir=\"$work/$name-$backend\"" --set "IOHDF5::out_every=0" "${sets[@]}" \
    > "$work/$name-$backend.log" 2>&1 || { cat "$work/$name-$backend.log"; exit 1; }
}
if "$saguaro" "$src/par/wave.par" --set 'Saguaro::backend="kokkos"' --set Cactus::cctk_itlast=0 \
    --set 'Cactus::terminate="iteration"' --set "Saguaro::cache_dir=\"$cache\"" \
    --set "IO::out_dir=\"$work/probe\"" > "$work/probe.log" 2>&1; then :
elif grep -q "Kokkos cannot be used: this build has no Kokkos" "$work/probe.log"; then
  echo "skipped: $(grep -o 'Kokkos cannot be used.*' "$work/probe.log" | head -1)"
  exit 77
else
  cat "$work/probe.log"; exit 1
fi
for backend in cpu kokkos; do
  run wave "$src/par/wave.par" $backend CoordBase::ncells_x=16 CoordBase::ncells_y=12 \
    CoordBase::ncells_z=10
  run bssn "$src/par/bssn/gauge_wave.par" $backend CoordBase::ncells_x=24 \
    CoordBase::ncells_y=4 CoordBase::ncells_z=4 Cactus::cctk_final_time=0.125 IO::out_every=2
done
compared=0
for f in "$work"/wave-cpu/*.norms.tsv "$work"/bssn-cpu/*.norms.tsv; do
  g=${f/-cpu\//-kokkos\/}
  [[ -f $g ]] || { echo "missing $g"; exit 1; }
  paste "$f" "$g" | awk -v file="$(basename "$f")" -F'\t' '
    /^#/ { next }
    { n = NF / 2
      for (c = 1; c <= n; ++c) {
        a = $c; b = $(c + n); d = a - b; if (d < 0) d = -d
        s = (a < 0 ? -a : a); if (s < 1) s = 1
        if (d > 1e-12 * s) { printf "%s line %d col %d: cpu %s, kokkos %s\n", file, NR, c, a, b; bad = 1 }
      }
      ++lines }
    END { if (lines < 3) { print file ": too few lines"; bad = 1 } exit bad }'
  compared=$((compared + 1))
done
(( compared >= 6 )) || { echo "only $compared norms files"; exit 1; }
echo "kokkos and cpu norms agree in $compared files"
