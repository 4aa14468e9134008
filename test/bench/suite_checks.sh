#!/usr/bin/env bash
# The benchmark suite's correctness checks, without a GPU: bench_suite --reference-only writes the
# CPU references of B1-B4 and of one RK4 step at a small size; peers.py (with NumPy standing in
# for JAX, CuPy and torch, the same formulas) must agree with every one of them, and must fail
# loudly (WRONG on stderr, exit status 1) once a reference is perturbed by 1e-8 relative.
#   suite_checks.sh PYTHON3 BENCH_SUITE SOURCE_DIR
set -euo pipefail
py=$1 suite=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$suite" --reference-only --n 20 --data "$dir/data" --cache "$dir/cache" >/dev/null
"$py" "$src/bench/suite/peers.py" "$dir/data" --systems numpy --repeats 2 --batch 1 --warmup 0 \
  --json "$dir/ok.json" >"$dir/ok.txt"
"$py" - "$dir/ok.json" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
kinds = sorted((r["benchmark"], r["kind"]) for r in rows)
want = sorted([("wave2", "rhs"), ("wave8", "rhs"), ("microbench", "rhs"), ("maxwell", "rhs"), ("wave2", "step")])
assert kinds == want, f"results for {kinds}, expected {want}"
bad = [r for r in rows if r["status"] != "ok" or not r["max_rel_error"] <= 1e-12]
assert not bad, f"disagree with the CPU reference: {bad}"
print("peers (numpy) agree with the CPU references:",
      ", ".join(f"{r['benchmark']} {r['kind']} {r['max_rel_error']:.1e}" for r in rows))
PY

# One value of one reference off by 1e-8 relative to its array's scale: loud failure.
"$py" - "$dir/data/maxwell-B2rhs.npy" <<'PY'
import numpy as np, sys
a = np.load(sys.argv[1])
a[3, 4, 5] += 1e-8 * np.abs(a).max()
np.save(sys.argv[1], a)
PY
set +e
"$py" "$src/bench/suite/peers.py" "$dir/data" --systems numpy --repeats 2 --batch 1 --warmup 0 \
  --benchmarks maxwell --json "$dir/bad.json" >"$dir/bad.txt" 2>"$dir/bad.err"
status=$?
set -e
if [[ $status -ne 1 ]] || ! grep -q "WRONG: numpy maxwell" "$dir/bad.err"; then
  echo "a perturbed reference was not reported (exit $status):" >&2
  cat "$dir/bad.txt" "$dir/bad.err" >&2
  exit 1
fi
echo "a perturbed reference fails loudly: $(head -1 "$dir/bad.err")"
