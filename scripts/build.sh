#!/usr/bin/env bash
# Configure and build Saguaro in build/ (Release, Ninja when available).
#
# Sourced (by run.sh and test.sh): defines `saguaro_build`.
# Run (`bash scripts/build.sh`): checks the Debian packages, then builds.
# Executables land in build/bin/. Safe to run again: it rebuilds what changed.
# SAGUARO_KOKKOS_DIR (a Kokkos installation's CMake package directory, as scripts/kokkos.sh
# prints it) builds the kokkos backend against that Kokkos instead of the one CMake finds.

SAGUARO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

saguaro_build() (
  cd "$SAGUARO_ROOT" || exit
  local gen=()
  # An existing build/ keeps the generator it was configured with.
  if [[ ! -f build/CMakeCache.txt ]] && command -v ninja >/dev/null 2>&1; then
    gen=(-G Ninja)
  fi
  # ccache, where installed, makes rebuilds in other checkouts (worktrees, fresh clones) cheap.
  if [[ ! -f build/CMakeCache.txt ]] && command -v ccache >/dev/null 2>&1; then
    gen+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
  fi
  # Quiet unless something goes wrong: the log is printed on failure.
  local log
  log=$(mktemp)
  if [[ -n "${SAGUARO_KOKKOS_DIR:-}" ]]; then
    gen+=(-DSAGUARO_KOKKOS=ON "-DKokkos_DIR=$SAGUARO_KOKKOS_DIR")
  fi
  if ! cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >"$log" 2>&1; then
    cat "$log" >&2
    rm -f "$log"
    exit 1
  fi
  rm -f "$log"
  cmake --build build -j"$(nproc)"
)

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  source "$SAGUARO_ROOT/scripts/deps.sh"
  saguaro_deps
  saguaro_build
fi
