#!/usr/bin/env bash
# The model against recorded H100 runs, without a GPU: bench_mapper --replay reads every
# candidate of maxwell and microbench back from its key in the recording
# (bench/results/raw/2026-11-28-mapper-b1-b4-refit-H100.json.gz: per-kernel times and ptxas's
# resources), and of BSSN's (fissions with temporaries, compiled for the patch layout as a run's
# kernels, bench/results/raw/2026-11-28-mapper-bssn-layout-H100.json.gz); bench/model/
# fit_constants.py must rebuild this build's prediction of every kernel from the replayed terms
# (exit 1 otherwise), the model with configs/devices/h100.yaml must stay within a median |error|
# of 20% of the measured kernels of maxwell and microbench (14.1% with the model of 2026-11-28,
# the register term's constants; 17.5% before it), and its ptxas-priced pick among BSSN's 104
# candidates within 0.95 of the fastest measured (issue 21; 0.973). The same for the H200 with
# its description (configs/devices/h200.yaml): BSSN fd 4 and 8 as a run's kernels
# (raw/2026-11-28-mapper-bssn{,8}-layout-H200.json.gz), the pick within 0.95 of the fastest
# (0.974 and 0.978) and the fd 4 kernels' median |error| at most 25% (12.3%; 39.8% with the
# paper's constants: bench/results/2026-11-28-model-registers-H100-H200.md). And B4 (maxwell) as
# a run's kernels on the H100 (raw/2026-11-28-mapper-b1-b4-layout-H100.json.gz) with the L2
# front term (l2_front_share 1 in h100.yaml; docs/model.md): the model's pick within 0.75 of the
# fastest, 0.795 with the term and 0.589 without it (its pick at 32 registers and t_ee 8 reads
# 2.8x its compulsory bytes; bench/results/2026-11-28-l2-front-H200.md).
#   model_replay.sh PYTHON3 BENCH_MAPPER SOURCE_DIR
set -euo pipefail
py=$1 mapper=$2 src=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# replay BENCHMARK RUN.json OUT.tsv DEVICE.yaml LABEL: bench_mapper's replay, every recorded
# candidate read back from its key.
replay() {
  local line matched total
  line=$("$mapper" --benchmarks "$1" --n 256 --device "$4" --replay "$2" --replay-tsv "$3" |
    grep 'replay:')
  echo "$5:$line"
  read -r matched total < <(echo "$line" | sed -E 's/.*replay: ([0-9]+) of ([0-9]+) candidates.*/\1 \2/')
  [[ "$matched" -gt 0 && "$matched" == "$total" ]] || { echo "not every candidate matched"; exit 1; }
}
# fit_pick BENCHMARK TSV DEVICE.yaml OUT.txt: fit_constants.py's report on TSV (beta fitted) into
# OUT.txt (exit 1 where the rebuilt model differs from the replay); prints the model's pick for
# BENCHMARK with the description's constants, against the fastest measured.
fit_pick() {
  "$py" "$src/bench/model/fit_constants.py" "$2" --device "$3" --fit beta > "$4" || return 1
  sed -nE "s/.*$1 .*pick ([0-9.]+) of the fastest.*/\1/p" "$4" | head -1
}
# median_of REPORT: the first "all N kernels" median |error| of a fit_constants.py report (the
# description's constants, before any fit).
median_of() {
  sed -nE 's/.*all [0-9]+ kernels: median \|error\| *([0-9.]+)%.*/\1/p' "$1" | head -1
}
# holds VALUE OP BOUND: exit status 1 unless VALUE OP BOUND (OP: >= or <=).
holds() {
  "$py" -c "import sys; sys.exit(0 if float('$1') $2 float('$3') else 1)"
}
gunzip -c "$src/bench/results/raw/2026-11-28-mapper-b1-b4-refit-H100.json.gz" > "$dir/run.json"
gunzip -c "$src/bench/results/raw/2026-11-28-mapper-bssn-layout-H100.json.gz" > "$dir/bssn.json"
for b in maxwell microbench bssn; do
  run=$dir/run.json tsv=$dir/replay.tsv
  [[ $b == bssn ]] && run=$dir/bssn.json tsv=$dir/bssn.tsv
  replay "$b" "$run" "$tsv" "$src/configs/devices/h100.yaml" "$b"
done
pick=$(fit_pick bssn "$dir/bssn.tsv" "$src/configs/devices/h100.yaml" "$dir/bssn-fit.txt")
echo "BSSN: the model's pick $pick of the fastest candidate"
holds "$pick" '>=' 0.95
"$py" "$src/bench/model/fit_constants.py" "$dir/replay.tsv" --device "$src/configs/devices/h100.yaml" \
  | tee "$dir/fit.txt"
median=$(median_of "$dir/fit.txt")
echo "median |error| with h100.yaml: $median%"
holds "$median" '<=' 20

# The H200 with its own description.
for b in bssn bssn8; do
  gunzip -c "$src/bench/results/raw/2026-11-28-mapper-$b-layout-H200.json.gz" > "$dir/h200-$b.json"
  replay "$b" "$dir/h200-$b.json" "$dir/h200-$b.tsv" "$src/configs/devices/h200.yaml" "H200 $b"
  pick=$(fit_pick "$b" "$dir/h200-$b.tsv" "$src/configs/devices/h200.yaml" "$dir/h200-$b-fit.txt")
  median=$(median_of "$dir/h200-$b-fit.txt")
  echo "H200 $b: the model's pick $pick of the fastest candidate, kernels' median |error| $median%"
  holds "$pick" '>=' 0.95
  [[ $b != bssn ]] || holds "$median" '<=' 25
done

# B4 as a run's kernels on the H100: the front of the launch in L2 decides its pick.
gunzip -c "$src/bench/results/raw/2026-11-28-mapper-b1-b4-layout-H100.json.gz" > "$dir/layout.json"
grep -q '^  l2_front_share:' "$src/configs/devices/h100.yaml" || { echo "h100.yaml has no front term"; exit 1; }
replay maxwell "$dir/layout.json" "$dir/layout.tsv" "$src/configs/devices/h100.yaml" "layout maxwell"
pick=$(fit_pick maxwell "$dir/layout.tsv" "$src/configs/devices/h100.yaml" "$dir/layout-fit.txt")
echo "B4 as a run's kernels (H100): the model's pick $pick of the fastest candidate"
holds "$pick" '>=' 0.75
