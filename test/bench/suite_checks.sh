#!/usr/bin/env bash
# The benchmark suite's correctness checks, without a GPU: bench_suite --reference-only writes the
# CPU references of B1-B5 and of one RK4 step of B1 and of B5 at a small size; peers.py (with
# NumPy standing in for JAX, CuPy and torch, the same formulas: hand-written for B1-B4, generated
# from Saguaro's lowering for B5) must agree with every one of them, so must the generated
# formula for every benchmark (--generated), and peers.py must fail loudly (WRONG on stderr,
# exit status 1) once a reference is perturbed by 1e-8 relative.
#   suite_checks.sh PYTHON3 BENCH_SUITE SOURCE_DIR
set -euo pipefail
py=$1 suite=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

"$suite" --reference-only --n 20 --data "$dir/data" --cache "$dir/cache" >/dev/null
"$py" - "$dir/data/manifest.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
b5 = next(b for b in m["benchmarks"] if b["name"] == "bssn")
assert b5["fill"]["amplitude"] == 0.05 and b5["fill"]["base"] == {"gt11": 1, "gt22": 1, "gt33": 1, "alpha": 1}, b5["fill"]
assert b5["parameters"]["epsdiss"] == 0.1, b5["parameters"]
assert len(b5["outputs"]) == 25 and b5["flops_per_point"] > 0 and b5["bytes_per_point"] == 400, b5
PY
check() { # JSON EXPECTED-KINDS...: every result ok and within 1e-12 of the CPU reference
  "$py" - "$@" <<'PY'
import json, sys
rows = json.load(open(sys.argv[1]))["results"]
kinds = sorted((r["benchmark"], r["kind"]) for r in rows)
want = sorted(tuple(k.split(":")) for k in sys.argv[2:])
assert kinds == want, f"results for {kinds}, expected {want}"
bad = [r for r in rows if r["status"] != "ok" or not r["max_rel_error"] <= 1e-12]
assert not bad, f"disagree with the CPU reference: {bad}"
print("peers (numpy) agree with the CPU references:",
      ", ".join(f"{r['benchmark']} {r['kind']} ({r['formula']}) {r['max_rel_error']:.1e}" for r in rows))
PY
}
all=(wave2:rhs wave8:rhs microbench:rhs maxwell:rhs bssn:rhs wave2:step bssn:step)
"$py" "$src/bench/suite/peers.py" "$dir/data" --systems numpy --repeats 2 --batch 1 --warmup 0 \
  --json "$dir/ok.json" >"$dir/ok.txt"
check "$dir/ok.json" "${all[@]}"
# The generated formula (B5's) for every benchmark: the translation checked on B1-B4 too.
"$py" "$src/bench/suite/peers.py" "$dir/data" --systems numpy --repeats 1 --batch 1 --warmup 0 \
  --generated --json "$dir/generated.json" >"$dir/generated.txt"
check "$dir/generated.json" "${all[@]}"

# One value of one reference off by 1e-8 relative to its array's scale: loud failure.
perturb() {
  "$py" - "$1" <<'PY'
import numpy as np, sys
a = np.load(sys.argv[1])
a[3, 4, 5] += 1e-8 * np.abs(a).max()
np.save(sys.argv[1], a)
PY
}
for case in maxwell:maxwell-B2rhs bssn:bssn-trKrhs; do
  bench=${case%%:*} file=${case#*:}
  perturb "$dir/data/$file.npy"
  set +e
  "$py" "$src/bench/suite/peers.py" "$dir/data" --systems numpy --repeats 2 --batch 1 --warmup 0 \
    --benchmarks "$bench" --no-step --json "$dir/bad.json" >"$dir/bad.txt" 2>"$dir/bad.err"
  status=$?
  set -e
  if [[ $status -ne 1 ]] || ! grep -q "WRONG: numpy $bench" "$dir/bad.err"; then
    echo "a perturbed $bench reference was not reported (exit $status):" >&2
    cat "$dir/bad.txt" "$dir/bad.err" >&2
    exit 1
  fi
  echo "a perturbed reference fails loudly: $(head -1 "$dir/bad.err")"
done
