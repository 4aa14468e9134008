#!/usr/bin/env bash
# Saguaro at two revisions in one run, on a machine with a GPU:
#   bash bench/suite/compare_revisions.sh BASE_REV [N]      (default N = 256)
# builds BASE_REV (a git worktree in build-base-src/, built in build-base/) and the working tree
# (build/), then runs bench_suite on both, alternating BASE, NEW, BASE, NEW so that a drift of the
# GPU's clocks falls on both, and prints per benchmark and system the medians and NEW / BASE:
# the check that a change left the generated kernels and the time step no slower. Results go to
# bench/results/<date>-<gpu>-compare-<rev>.{txt,json}. Extra bench_suite flags: $BENCH_SUITE_FLAGS
# (e.g. "--benchmarks wave2,bssn --repeats 10"); $NEW_LABEL names the working tree in the table.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
base_rev=${1:?usage: compare_revisions.sh BASE_REV [N]}
n=${2:-256}
base_src=build-base-src
# A checkout without the history (a copy of the working tree) takes BASE_REV's tree as
# $base_src, made beforehand (git archive BASE_REV | tar -x -C build-base-src).
rev=$(git rev-parse --short "$base_rev" 2>/dev/null || echo "$base_rev")
new=${NEW_LABEL:-$(git rev-parse --short HEAD 2>/dev/null || echo new)}
[[ -d $base_src ]] || git worktree add -q --detach "$base_src" "$base_rev"

build=build
# shellcheck source=bench/common/gpu_build.sh
source bench/common/gpu_build.sh
gpu_bench_build bench_suite
(cd "$base_src" && build="$PWD/../build-base" && gpu_bench_build bench_suite)
tag="bench/results/$date-$gpu-compare-$rev"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mkdir -p build/compare
: >"$tag.txt"
for round in 1 2; do
  for side in base new; do
    exe=build/bin/bench_suite
    [[ $side == base ]] && exe=build-base/bin/bench_suite
    echo "== round $round: $side" | tee -a "$tag.txt"
    # shellcheck disable=SC2086
    "$exe" --n "$n" --data "build/compare/data-$side" --json "build/compare/$side-$round.json" \
      --cache "build/compare/cache-$side" ${BENCH_SUITE_FLAGS:-} 2>&1 | tee -a "$tag.txt"
  done
done
python3 bench/suite/compare_revisions.py --base build/compare/base-{1,2}.json \
  --new build/compare/new-{1,2}.json --label "$rev -> $new" \
  --command "bash bench/suite/compare_revisions.sh $base_rev $n ${BENCH_SUITE_FLAGS:-}" \
  --driver "${gpu_driver:-unknown}" --json "$tag.json" | tee -a "$tag.txt"
echo "wrote $tag.{txt,json}"
