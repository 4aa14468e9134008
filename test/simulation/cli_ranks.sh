#!/usr/bin/env bash
# The `saguaro` executable on 1 rank and under `mpirun -n 4`: the norms files agree
# (min, max, infinity norm exactly; norm1, norm2 to 1e-14 relative).
# Usage: cli_ranks.sh SAGUARO MPIEXEC SOURCE_DIR
set -euo pipefail
saguaro=$1 mpiexec=$2 src=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
export OMPI_MCA_rmaps_base_oversubscribe=1
for n in 1 4; do
  cat > "$work/r$n.par" <<PAR
ActiveThorns = "Saguaro WaveDemo"
Saguaro::equations = "$src/par/wave.edl"
Saguaro::cache_dir = "$work/cache"
CoordBase::spacing = "numcells"
CoordBase::ncells_x = 15
CoordBase::ncells_y = 14
CoordBase::ncells_z = 13
Periodic::periodic_x = yes
Saguaro::boundary_condition = "radiative"
MoL::ODE_Method = "RK3"
Cactus::cctk_itlast = 12
IO::out_dir = "$work/out$n"
IO::out_every = 4
PAR
done
"$saguaro" "$work/r1.par" > "$work/log1"
"$mpiexec" -n 4 "$saguaro" "$work/r4.par" > "$work/log4"
grep -q "4 ranks" "$work/log4" || { echo "the mpirun run did not use 4 ranks:"; cat "$work/log4"; exit 1; }
for v in phi pi eps; do
  paste "$work/out1/$v.norms.tsv" "$work/out4/$v.norms.tsv" | awk -v var="$v" -F'\t' '
    /^#/ { next }
    { n = NF / 2
      for (c = 1; c <= n; ++c) {
        a = $c; b = $(c + n)
        if (c == 5 || c == 6) {             # norm1, norm2: sums in another order
          d = a - b; if (d < 0) d = -d; s = (a < 0 ? -a : a)
          if (d > 1e-14 * s + 1e-300) { printf "%s line %d col %d: %s vs %s\n", var, NR, c, a, b; bad = 1 }
        } else if (a != b) { printf "%s line %d col %d: %s vs %s\n", var, NR, c, a, b; bad = 1 }
      }
      ++lines }
    END { if (lines < 4) { print var ": too few lines"; bad = 1 } exit bad }'
done
echo "norms agree on 1 and 4 ranks"
