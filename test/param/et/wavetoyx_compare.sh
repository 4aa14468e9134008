#!/usr/bin/env bash
# The Einstein Toolkit's WaveToyX test (CarpetX, WaveToyX/test/standing.par) run by Saguaro:
# par/wavetoy/standing.par (the test's .par file plus two lines naming the EDL port) must give
# the norms of the test's reference output (test/param/et/wavetoyx-standing/, from CarpetX):
# min, max, L1, L2 and max-abs of u, rho, u_err and rho_err at iterations 0 and 10, to 1e-12.
# Usage: wavetoyx_compare.sh SAGUARO SOURCE_DIR
set -euo pipefail
saguaro=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$saguaro" "$src/par/wavetoy/standing.par" > log 2>&1 || { cat log; exit 1; }
python3 - "$src/test/param/et/wavetoyx-standing" "$work/standing" <<'PY'
import sys
ref_dir, out_dir = sys.argv[1], sys.argv[2]
def rows(path):
    return [l.split() for l in open(path) if l.strip() and not l.startswith('#')]
# CarpetX's columns per variable: min max sum avg stddev volume L1norm L2norm maxabs
# Saguaro's: iteration time min max norm1 norm2 norm_inf
checks = 0
failures = []
for ref_file, variables in (("wavetoyx-state.tsv", ("u", "rho")),
                            ("wavetoyx-error.tsv", ("uerr", "rhoerr"))):
    ref = rows(f"{ref_dir}/{ref_file}")
    for k, var in enumerate(variables):
        ours = {int(r[0]): r for r in rows(f"{out_dir}/{var}.norms.tsv")}
        for r in ref:
            it = int(r[0])
            base = 2 + 9 * k
            want = {"time": float(r[1]), "min": float(r[base]), "max": float(r[base + 1]),
                    "L1": float(r[base + 6]), "L2": float(r[base + 7]),
                    "maxabs": float(r[base + 8])}
            o = ours[it]
            got = {"time": float(o[1]), "min": float(o[2]), "max": float(o[3]),
                   "L1": float(o[4]), "L2": float(o[5]), "maxabs": float(o[6])}
            for name in want:
                checks += 1
                if abs(got[name] - want[name]) > 1e-12 * max(1.0, abs(want[name])):
                    failures.append(f"{var} it {it} {name}: {got[name]!r} != {want[name]!r}")
print(f"{checks} norms compared with WaveToyX's reference output")
if failures:
    print("\n".join(failures))
    sys.exit(1)
PY
