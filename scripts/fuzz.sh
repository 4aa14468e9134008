#!/usr/bin/env bash
# The libFuzzer targets of test/fuzz/ (every reader of user input: EDL with lowering, .par with
# the parameter checks, the CCL readers, mapping files), built with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer in build-fuzz/:
#
#   bash scripts/fuzz.sh [SECONDS] [TARGET...]    default: 60 s each, all four targets
#
# First every input that ever crashed a target (test/fuzz/regressions/TARGET/, kept in the
# repository) is replayed; then each target fuzzes for SECONDS from the seeds (par/, thorn/,
# param/builtin/, schedule/builtin/, test/fuzz/seeds/) and its growing corpus in
# build-fuzz/corpus/. A finding is a crash, an escaped exception other than a user error, an
# input that runs over 10 s or over 2 GB: it is copied into test/fuzz/regressions/TARGET/ (to
# be fixed and committed) and the script fails. Two targets run at a time.
# FUZZ_JOBS sets how many run at once; FUZZ_RUNS=N stops each after N inputs instead of time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
seconds=${1:-60}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(edl par ccl mapping_file)
build=build-fuzz

if ! command -v clang++ >/dev/null; then
  echo "fuzz.sh: clang++ is missing (Debian: apt-get install clang)" >&2
  exit 1
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DSAGUARO_FUZZ=ON -DSAGUARO_BUILD_TESTS=OFF -DSAGUARO_BUILD_BENCH=OFF -DSAGUARO_WITH_CUDA=OFF \
  -DSAGUARO_KOKKOS=OFF \
  "${launcher[@]}" >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]/#/fuzz_}"

seeds() {
  case $1 in
    edl) echo par test/codegen/edl ;;
    par) echo par ;;
    ccl) echo param/builtin schedule/builtin thorn ;;
    mapping_file) echo test/fuzz/seeds/mapping_file ;;
  esac
}

# One target: replay its regressions, then fuzz. Output in $build/logs/TARGET.log.
fuzz_one() {
  local t=$1 exe="$build/bin/fuzz_$1" log="$build/logs/$1.log"
  local corpus="$build/corpus/$t" artifacts="$build/artifacts/$t/"
  mkdir -p "$corpus" "$artifacts" "$build/logs" "test/fuzz/regressions/$t"
  : >"$log"
  local -a old=(test/fuzz/regressions/"$t"/*)
  [[ -e "${old[0]}" ]] || old=()
  if ((${#old[@]})) && ! "$exe" -rss_limit_mb=2048 -timeout=10 "${old[@]}" >>"$log" 2>&1; then
    echo "fuzz_$t: a regression input fails again (test/fuzz/regressions/$t/); see $log"
    tail -20 "$log"
    return 1
  fi
  local -a limit=(-max_total_time="$seconds")
  [[ -n "${FUZZ_RUNS:-}" ]] && limit=(-runs="$FUZZ_RUNS")
  # shellcheck disable=SC2046
  if "$exe" "${limit[@]}" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
    -artifact_prefix="$artifacts" "$corpus" $(seeds "$t") >>"$log" 2>&1; then
    local runs
    runs=$(grep -m1 'stat::number_of_executed_units' "$log" | awk '{print $2}')
    echo "fuzz_$t: ${runs:-?} inputs, ${#old[@]} regressions replayed, no finding"
    return 0
  fi
  local -a found=("$artifacts"*)
  for f in "${found[@]}"; do
    [[ -e "$f" ]] && cp "$f" "test/fuzz/regressions/$t/"
  done
  echo "fuzz_$t: a finding, copied to test/fuzz/regressions/$t/; see $log"
  grep -m5 -E 'ERROR|SUMMARY|terminate called|uncaught' "$log" || tail -20 "$log"
  return 1
}

jobs_at_once=${FUZZ_JOBS:-2}
status=0
pids=()
for t in "${targets[@]}"; do
  fuzz_one "$t" &
  pids+=($!)
  if ((${#pids[@]} >= jobs_at_once)); then
    wait "${pids[0]}" || status=1
    pids=("${pids[@]:1}")
  fi
done
for p in "${pids[@]}"; do wait "$p" || status=1; done
exit $status
