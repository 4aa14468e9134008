#!/usr/bin/env bash
# Measures parse + lower time of every par/**/*.edl at finite-difference orders 4 and 8
# (median of 9 repetitions each) and records it in bench/results/<date>-lowering-<host>.{json,md}.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
source scripts/build.sh
saguaro_build >/dev/null
date=$(date -u +%Y-%m-%d)
cpu=$(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1)
tag="$date-lowering-$(hostname -s 2>/dev/null || echo host)"
out="bench/results/$tag.json"
build/bin/bench_lowering --benchmark_out="$out" --benchmark_out_format=json \
  --benchmark_min_time=0.05 >/dev/null
python3 - "$out" "$cpu" "$date" > "bench/results/$tag.md" <<'PY'
import json, sys
data = json.load(open(sys.argv[1]))
print(f"# Lowering time (parse + lower), {sys.argv[3]}\n")
ctx = data["context"]
print(f"CPU: {sys.argv[2]}, {ctx['num_cpus']} cores; command: `bash bench/lowering/run.sh`; "
      "Release build; median of 9 repetitions.\n")
print("Each row parses and lowers the whole file; DAG nodes and flops per point are summed over "
      "all its calculations.\n")
print("| file | fd order | median ms | DAG nodes | flops/point |")
print("|---|---|---|---|---|")
for b in data["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    path, order = b["run_name"].split("/repeats:")[0].removeprefix("lower/").rsplit("/", 1)
    print(f"| {path} | {order[2:]} | {b['real_time']:.2f} | {int(b['dag_nodes'])} | {int(b['flops_per_point'])} |")
PY
cat "bench/results/$tag.md"
