#!/usr/bin/env bash
# Kokkos with its OpenMP execution space, built from Debian's own source package, for the tests
# of the kokkos backend (docs/kokkos.md, "Debian").
#
# Debian 12's libtrilinos-kokkos-dev (Kokkos 3.4.1 of Trilinos 13.2) is built with the Serial
# execution space only. The same Kokkos, from the same Debian source package (trilinos
# 13.2.0-4, fetched with `apt-get source`, which checks it against Debian's signed index), is
# built here with OpenMP and Serial into build-kokkos/install (about 25 s on 2 cores, once; the
# download is 166 MB). scripts/test.sh configures Saguaro against it, so CI runs the kokkos
# backend's tests on host threads.
#
# Sourced by scripts/test.sh, which calls `saguaro_kokkos_openmp`; `bash scripts/kokkos.sh`
# builds it alone and prints the directory of its CMake package (what -DKokkos_DIR takes).

SAGUARO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SAGUARO_KOKKOS_SOURCE_VERSION="13.2.0-4" # Debian's trilinos source package (Kokkos 3.4.1)

# Print the CMake package directory of the Kokkos installed under $1; fail when there is none.
saguaro_kokkos_config() {
  local config
  for config in "$1"/lib/cmake/Kokkos "$1"/lib64/cmake/Kokkos; do
    if [[ -f "$config/KokkosConfig.cmake" ]]; then
      echo "$config"
      return 0
    fi
  done
  return 1
}

# Print the Kokkos_DIR of the OpenMP Kokkos, building it first if it is not there. Progress
# goes to standard error; a failure says which step failed and returns non-zero.
saguaro_kokkos_openmp() (
  set -euo pipefail
  local top="$SAGUARO_ROOT/build-kokkos"
  local prefix="$top/install"
  saguaro_kokkos_config "$prefix" && return 0

  command -v apt-get >/dev/null 2>&1 || {
    echo "kokkos.sh: needs apt-get (Debian) to fetch Debian's trilinos source package" >&2
    return 1
  }
  echo "kokkos.sh: building Kokkos (OpenMP, Serial) from Debian's trilinos" \
    "$SAGUARO_KOKKOS_SOURCE_VERSION source package into $prefix" >&2
  rm -rf "$top"
  mkdir -p "$top/apt/lists/partial" "$top/apt/cache/archives/partial" "$top/src"
  # A private source list and index: the machine's apt configuration is left as it is.
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "http://deb.debian.org/debian bookworm main" >"$top/apt/sources.list"
  local apt=(apt-get -q -o "Dir::Etc::SourceList=$top/apt/sources.list"
    -o "Dir::Etc::SourceParts=$top/apt/none" -o "Dir::State::Lists=$top/apt/lists"
    -o "Dir::Cache=$top/apt/cache")
  local log="$top/build.log"
  {
    "${apt[@]}" update &&
      (cd "$top/src" && "${apt[@]}" source --download-only "trilinos=$SAGUARO_KOKKOS_SOURCE_VERSION")
  } >"$log" 2>&1 || {
    cat "$log" >&2
    echo "kokkos.sh: could not fetch Debian's trilinos source package" >&2
    return 1
  }
  (cd "$top/src" && tar -xzf trilinos_*.orig.tar.gz --wildcards '*/packages/kokkos/*')
  local source
  source=$(echo "$top"/src/*/packages/kokkos)
  local gen=()
  command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
  {
    cmake -S "$source" -B "$top/build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_COMPILER=g++ -DCMAKE_CXX_STANDARD=17 \
      -DBUILD_SHARED_LIBS=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_SERIAL=ON &&
      cmake --build "$top/build" -j"$(nproc)" && cmake --install "$top/build"
  } >>"$log" 2>&1 || {
    tail -40 "$log" >&2
    echo "kokkos.sh: building Kokkos failed (log: $log)" >&2
    return 1
  }
  rm -rf "$top/src" "$top/apt" # 200 MB of sources and index; the installation stays
  saguaro_kokkos_config "$prefix" || {
    echo "kokkos.sh: Kokkos installed into $prefix without a KokkosConfig.cmake" >&2
    return 1
  }
)

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  saguaro_kokkos_openmp
fi
