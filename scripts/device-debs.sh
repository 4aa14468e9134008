#!/usr/bin/env bash
# GLPK and RE2 for the GPU machine (Ubuntu 24.04), which has neither the packages nor a package
# registry.
#
#   bash scripts/device-debs.sh            on the Debian 12 dev machine: `apt-get download`s
#                                          GLPK, RE2 and the libraries they need into .debs/
#   eval "$(bash scripts/device-debs.sh --unpack)"
#                                          on the GPU machine (.debs carried along, it is
#                                          git-ignored): `dpkg -x`s them into .debs/root and
#                                          prints the exports CMake and the tests need
#
# Unpacked into a private prefix, never into /, so nothing of the system is replaced. A runtime
# library the machine already has (libgmp10, say) is left packed: on LD_LIBRARY_PATH the older
# Debian copy would shadow the system's for every program (compilers use libgmp too).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dir=.debs

# Debian package -> the shared library it provides. `apt-cache depends libglpk40` lists
# libamd2, libcolamd2, libgmp10, libltdl7, zlib1g and libc6 (zlib and libc are on every
# machine); libamd2 and libcolamd2 need libsuitesparseconfig5. Ubuntu 24.04 ships the
# SuiteSparse 7 sonames (libamd.so.3, ...), so those three always come from here.
declare -A soname=(
  [libglpk40]=libglpk.so.40
  [libamd2]=libamd.so.2
  [libcolamd2]=libcolamd.so.2
  [libsuitesparseconfig5]=libsuitesparseconfig.so.5
  [libltdl7]=libltdl.so.7
  [libgmp10]=libgmp.so.10
  [libre2-9]=libre2.so.9
)
# libre2-9 needs only libc and libstdc++; Ubuntu 24.04 ships libre2.so.10, so it comes from here.
runtime=(libglpk40 libamd2 libcolamd2 libsuitesparseconfig5 libltdl7 libgmp10 libre2-9)

if [[ "${1:-}" != "--unpack" ]]; then
  mkdir -p "$dir"
  (cd "$dir" && apt-get download libglpk-dev libre2-dev "${runtime[@]}")
  ls -l "$dir"/*.deb >&2
  exit 0
fi

shopt -s nullglob
debs=("$dir"/*.deb)
if ((${#debs[@]} == 0)); then
  echo "device-debs.sh: no $dir/*.deb here; run it without --unpack on the dev machine and carry $dir" >&2
  exit 1
fi
root="$PWD/$dir/root"
system_libs=$(ldconfig -p) # once: `ldconfig -p | grep -q` fails under pipefail (SIGPIPE)
for deb in "${debs[@]}"; do
  package=$(dpkg-deb -f "$deb" Package)
  lib=${soname[$package]:-}
  if [[ -n "$lib" && "$package" != libglpk40 ]] &&
    grep -qE "^[[:space:]]+${lib//./\\.} " <<<"$system_libs"; then
    echo "device-debs.sh: $package: the system has $lib; left packed" >&2
    continue
  fi
  dpkg -x "$deb" "$root"
  echo "device-debs.sh: $package unpacked" >&2
done
multiarch=$(basename "$(dirname "$(ls "$root"/usr/lib/*/libglpk.so.40)")")
libdir="$root/usr/lib/$multiarch"
echo "export GLPK_ROOT='$root/usr'"
echo "export RE2_ROOT='$root/usr'"
echo "export LD_LIBRARY_PATH='$libdir'\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
