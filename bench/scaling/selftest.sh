#!/usr/bin/env bash
# Self-test of bench/scaling/report.py and compare_norms.py without a GPU: synthetic run
# directories (step_breakdown.tsv with warm-up rows, shuffled and extra columns; norms files) in
# a temporary directory, laid out as run.sh lays them out; then checks that the tables (and the
# plot when matplotlib is there) are written and that the numbers are the expected ones
# (weak T1 = 1.0 ms, T2 = 1.1 ms -> efficiency 0.909; strong speedup 1.818; overlap off / on
# 1.130; a failed run; a norms difference of 1e-12 -> FAIL, of 1e-16 -> PASS).
#   bash bench/scaling/selftest.sh          ($PYTHON picks the interpreter, default python3;
#                                           SCALING_SELFTEST_KEEP=1 keeps the outputs)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
py=${PYTHON:-python3}
tmp=$(mktemp -d)
if [[ -z ${SCALING_SELFTEST_KEEP:-} ]]; then trap 'rm -rf "$tmp"' EXIT; else echo "selftest: outputs in $tmp"; fi
runs=$tmp/runs
mkdir -p "$runs"
fail=0
check() { # check DESCRIPTION COMMAND...
  local what=$1
  shift
  if "$@"; then echo "ok:   $what"; else echo "FAIL: $what"; fail=1; fi
}

printf 'command\tbash bench/scaling/run.sh 4\ndate\t2026-01-01T00:00:00Z\nhost\tselftest\ngpu_name\tFake GPU\ngpu_driver\t999.1\nmax_gpus\t4\npoints_per_gpu\t256^3\nbackend\tcuda\nnorms_mapper\tdefault\n' \
  > "$runs/machine.tsv"
printf 'name\tkind\tsystem\tn\tncells_x\tncells_y\tncells_z\tzmax\titlast\trc\twall_s\tdir\n' > "$runs/runs.tsv"

# breakdown NAME STEP_S: 2 warm-up rows of 100 s, then 4 rows whose medians are STEP_S and its
# parts (interior 0.7, boundary 0.1, exchange 0.15, idle 0.05 of the step); columns shuffled, one
# extra column (pack_s).
breakdown() {
  mkdir -p "$runs/$1/out"
  awk -v t="$2" 'BEGIN {
    print "# saguaro step breakdown: synthetic, ranks ?, dims ?, patch ?, transport fake, overlap auto"
    print "# times in seconds per step, maximum over ranks"
    print "iteration\tidle_s\tstep_s\tpack_s\tinterior_s\texchange_s\tboundary_s"
    split("100 100 0.9 1 1 1.1", f, " ")
    for (i = 1; i <= 6; i++) { s = f[i] * t
      printf "%d\t%.9g\t%.9g\t%.9g\t%.9g\t%.9g\t%.9g\n", i, 0.05 * s, s, 0.01 * s, 0.7 * s, 0.15 * s, 0.1 * s }
  }' > "$runs/$1/out/step_breakdown.tsv"
}
# addrun NAME KIND SYSTEM N NX NY NZ RC [DIR]
addrun() {
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t1\t10\t%s\t1.0\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "${9:-$1}" >> "$runs/runs.tsv"
}
for spec in "wave 1 0.0010" "wave 2 0.0011" "wave 4 0.00105" "bssn 1 0.200" "bssn 2 0.210"; do
  read -r sys n t <<< "$spec"
  breakdown "weak-$sys-n$n" "$t"
  addrun "weak-$sys-n$n" weak "$sys" "$n" 256 256 $((256 * n)) 0
done
mkdir -p "$runs/weak-bssn-n4" && echo "MPI_ABORT was invoked" > "$runs/weak-bssn-n4/run.log"
addrun weak-bssn-n4 weak bssn 4 256 256 1024 1
for spec in "wave 2 0.00055" "wave 4 0.0003" "bssn 2 0.105" "bssn 4 0.06"; do
  read -r sys n t <<< "$spec"
  breakdown "strong-$sys-n$n" "$t"
  addrun "strong-$sys-n$n" strong "$sys" "$n" 256 256 256 0
done
addrun strong-wave-n1 strong wave 1 256 256 256 0 weak-wave-n1
addrun strong-bssn-n1 strong bssn 1 256 256 256 0 weak-bssn-n1
breakdown overlapoff-wave-n4 0.0011865
addrun overlapoff-wave-n4 overlap-off wave 4 256 256 1024 0

# norms: 1 rank; N ranks the same but for one L2 norm (relative 1e-16 or 1e-12) and a value that
# is exactly zero on both sides
norms() { # norms DIR SCALE
  mkdir -p "$runs/$1/out"
  for var in phi pi; do
    awk -v s="$2" 'BEGIN {
      print "# norms of " "v" " over all owned points (N = 262144)"
      print "# iteration\ttime\tmin\tmax\tnorm1\tnorm2\tnorm_inf"
      for (i = 0; i <= 3; i++)
        printf "%d\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n", i, i * 0.01, -0.5 - i / 7, 0, 0.25 + i / 3, (0.35 + i / 11) * s, 0.5 + i / 7
    }' > "$runs/$1/out/$var.norms.tsv"
  done
}
for sys in wave bssn; do norms "norms-$sys-n1" 1; done
norms norms-wave-n2 1
norms norms-wave-n4 1.0000000000000001 # rounds to 1: identical
norms norms-bssn-n2 1.0000000000000002 # 2.2e-16
norms norms-bssn-n4 1.000000000001     # 1e-12: FAIL
: > "$runs/norms_check.tsv"
for sys in wave bssn; do
  "$py" bench/scaling/compare_norms.py "$runs/norms_check.tsv" "$sys" "$runs/norms-$sys-n1" \
    2 "$runs/norms-$sys-n2" 4 "$runs/norms-$sys-n4"
done
status() { awk -F'\t' -v s="$1" -v n="$2" '$1 == s && $2 == n { print $9 }' "$runs/norms_check.tsv"; }
check "norms wave N=2 PASS" test "$(status wave 2)" = PASS
check "norms wave N=4 PASS" test "$(status wave 4)" = PASS
check "norms bssn N=2 PASS (2.2e-16)" test "$(status bssn 2)" = PASS
check "norms bssn N=4 FAIL (1e-12)" test "$(status bssn 4)" = FAIL
# shellcheck disable=SC2016
check "norms bssn N=4 difference 1e-12" awk -F'\t' '$1 == "bssn" && $2 == 4 { d = $6 } END { exit !(d > 0.9e-12 && d < 1.1e-12) }' "$runs/norms_check.tsv"
mkdir -p "$runs/empty"
"$py" bench/scaling/compare_norms.py "$tmp/missing.tsv" wave "$runs/norms-wave-n1" 2 "$runs/empty" > /dev/null
check "norms of a run without norms files: MISSING" grep -q $'\tMISSING\t' "$tmp/missing.tsv"

median=$("$py" bench/scaling/report.py --median-step "$runs/weak-wave-n1")
check "--median-step skips 2 warm-up rows: '$median'" test "$median" = "1.000 ms (4 iterations, after 2 warm-up)"

prefix=$tmp/out/2026-01-01-scaling-Fake-GPU-x4
mkdir -p "$tmp/out"
"$py" bench/scaling/report.py "$runs" "$prefix" "bash bench/scaling/run.sh 4" "Fake GPU"
check "Markdown written" test -s "$prefix.md"
check "TSV written" test -s "$prefix.tsv"
if "$py" -c 'import matplotlib' 2>/dev/null; then
  check "SVG written" test -s "$prefix.svg"
  check "PNG written" test -s "$prefix.png"
else
  check "no matplotlib: the Markdown says so" grep -q 'matplotlib is not installed' "$prefix.md"
fi
# tsv_value TABLE SYSTEM N COLUMN
tsv_value() {
  awk -F'\t' -v t="$1" -v s="$2" -v n="$3" -v c="$4" '
    /^#/ { next } !h { for (i = 1; i <= NF; i++) col[$i] = i; h = 1; next }
    $1 == t && $2 == s && $3 == n { print $col[c] }' "$prefix.tsv"
}
near() { awk -v a="$1" -v b="$2" 'BEGIN { exit !(a != "" && (a - b) ^ 2 < 1e-10) }'; }
check "weak wave N=2 efficiency 1.0/1.1 = 0.909 (tsv: $(tsv_value weak wave 2 weak_efficiency))" \
  near "$(tsv_value weak wave 2 weak_efficiency)" 0.909091
check "weak wave N=2 median step 1.1 ms" near "$(tsv_value weak wave 2 step_s)" 0.0011
check "weak wave N=2 exchange median 0.15 of the step" near "$(tsv_value weak wave 2 exchange_s)" 0.000165
check "weak wave N=2 row in the Markdown" grep -qF '| 2 | 256x256x512 | ? | 256^3 | 1.100 | 0.909 |' "$prefix.md"
check "strong wave N=2 speedup 1.818" near "$(tsv_value strong wave 2 strong_speedup)" 1.81818
check "strong wave N=4 efficiency 0.833" near "$(tsv_value strong wave 4 strong_efficiency)" 0.833333
check "strong N=1 is the weak run" near "$(tsv_value strong bssn 1 step_s)" 0.2
check "overlap off / on 1.130" near "$(tsv_value overlap-off wave 4 off_over_on)" 1.13
check "failed run reported" grep -qF 'failed (exit 1)' "$prefix.md"
check "wave weak target not met (lowest 0.909)" grep -qF 'B1 wave: lowest efficiency 0.909 (N = 2) against the target 0.95: **not met**' "$prefix.md"
check "wave strong target not met (3.33)" grep -qF 'B1 wave on 4 GPUs: speedup 3.33 against the target 3.5: **not met**' "$prefix.md"
check "BSSN target not met (N=4 failed)" grep -qF 'BSSN: **not met** (efficiency not measured' "$prefix.md"
check "norms check FAIL in the Markdown" grep -qF 'Norms check: **FAIL**' "$prefix.md"
check "norms rows in the TSV" test "$(tsv_value norms bssn 4 result)" = FAIL
# plan.py on the committed 4-H100 table: 8 GPUs as 2x2x2 in one node, the exchange (96 us per
# stage) hidden under the interior, three boundary shells of (2.09848 - 2.01235) ms each:
# 2.01235 / 2.27074 = 0.886; a description without interconnect terms is refused.
plan_out=$("$py" bench/scaling/plan.py bench/results/2026-11-27-scaling-NVIDIA-H100-80GB-HBM3-x4.tsv \
  configs/devices/h100.yaml 8 2>&1 || true)
check "plan: wave on 8 GPUs 0.886" grep -qF '| wave | 8 | 2x2x2 | - | 1.0 | 0.096 | 0.444 | 2.271 | 0.886 |' <<<"$plan_out"
check "plan: rows for 64 and 1024 GPUs" grep -qF '| bssn | 1024 | 16x8x8 | GPUDirect RDMA (assumed) | 1.0 |' <<<"$plan_out"
check "plan: no interconnect, no plan" bash -c "! '$py' bench/scaling/plan.py \
  bench/results/2026-11-27-scaling-NVIDIA-H100-80GB-HBM3-x4.tsv configs/devices/a100.yaml 2>/dev/null"
if ((fail)); then
  echo "selftest: FAILED (outputs in $tmp kept)"
  trap - EXIT
  exit 1
fi
echo "selftest: all checks passed ($py)"
