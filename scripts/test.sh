#!/usr/bin/env bash
# Install what is missing, check the sources' formatting (scripts/format.sh), build, and run
# all tests (unit tests and CLI smoke tests), then the fuzz targets (scripts/fuzz.sh: every
# input that ever crashed one replayed, then each fuzzed for $SAGUARO_FUZZ_SECONDS, 60 s).
# Extra arguments go to ctest, e.g. `bash scripts/test.sh -R Lexer`, and skip the fuzzing.
# The kokkos backend is tested on Kokkos's OpenMP space, built once from Debian's own source
# package (scripts/kokkos.sh; Debian 12's binary package has Serial only);
# SAGUARO_KOKKOS_OPENMP=0 skips that and tests whatever Kokkos CMake finds.
# Exits non-zero when ctest or the fuzzing fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/deps.sh
source scripts/build.sh
source scripts/format.sh
source scripts/kokkos.sh
saguaro_deps
saguaro_format_check
if [[ "${SAGUARO_KOKKOS_OPENMP:-1}" != 0 ]]; then
  SAGUARO_KOKKOS_DIR=$(saguaro_kokkos_openmp)
  export SAGUARO_KOKKOS_DIR SAGUARO_KOKKOS_EXPECT_SPACE=OpenMP
fi
saguaro_build

status=0
ctest --test-dir build --output-on-failure -j"$(nproc)" "$@" || status=$?
if (($# == 0)); then
  bash scripts/fuzz.sh "${SAGUARO_FUZZ_SECONDS:-60}" || status=1
fi
exit $status
