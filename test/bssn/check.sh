#!/usr/bin/env bash
# Pointwise check of par/bssn/bssn.edl against the ADM equations: gen.py derives, with sympy,
# the exact BSSN right-hand sides and constraints of smooth ADM data at a point; cmp.py runs
# the reference interpreter (the driver) on the same data tabulated at two spacings and
# checks 4th-order convergence at fd_order 4 and agreement to round-off at fd_order 8.
# Run by ctest (test bssn.adm_consistency):  check.sh PYTHON DRIVER EDL
set -euo pipefail
py=$1 driver=$2 edl=$3
here=$(cd "$(dirname "$0")" && pwd)
if ! "$py" -c "import sympy" 2>/dev/null; then
  echo "bssn check: $py cannot import sympy; install the Debian package python3-sympy" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$py" "$here/gen.py" "$work"
"$py" "$here/cmp.py" "$edl" "$work" "$driver"
