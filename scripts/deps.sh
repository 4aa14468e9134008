#!/usr/bin/env bash
# The Debian 12 packages Saguaro builds with, and a check that they are installed.
#
# Sourced by scripts/build.sh, run.sh and test.sh, which call `saguaro_deps`;
# `bash scripts/deps.sh` runs the check alone. Quiet when everything is present.
# As root, missing packages are installed with apt-get (running `apt-get update`
# once if the first try fails); otherwise the exact `sudo apt-get` line is
# printed and the build goes on with what is there.

SAGUARO_DEBS=(
  build-essential cmake ninja-build pkg-config
  libfmt-dev nlohmann-json3-dev libcli11-dev libgtest-dev libgmock-dev libbenchmark-dev python3-sympy python3-numpy
  libopenmpi-dev openmpi-bin libhdf5-dev hdf5-tools libyaml-cpp-dev libglpk-dev libre2-dev
  clang-format clang
  slurm-wlm
  libtrilinos-kokkos-dev
)
# slurm-wlm: slurmctld, slurmd and the client commands for the test that submits a chain of jobs
# to a throw-away Slurm on this host (test/batch/slurm_chain.sh); `saguaro submit` itself needs
# only sbatch, squeue and scancel on the cluster it submits to.
# libtrilinos-kokkos-dev: Kokkos 3.4 (Serial only) for the kokkos backend of a plain build;
# scripts/test.sh builds the same Kokkos with OpenMP from Debian's source (scripts/kokkos.sh).

# Print the packages of SAGUARO_DEBS that are not installed, one a line.
saguaro_missing_debs() {
  local p
  for p in "${SAGUARO_DEBS[@]}"; do
    if [[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" != "install ok installed" ]]; then
      printf '%s\n' "$p"
    fi
  done
}

saguaro_deps() {
  if ! command -v dpkg-query >/dev/null 2>&1; then
    echo "deps.sh: no dpkg-query (not Debian?); make sure these are installed: ${SAGUARO_DEBS[*]}" >&2
    return 0
  fi
  local missing=()
  mapfile -t missing < <(saguaro_missing_debs)
  if (( ${#missing[@]} == 0 )); then
    return 0
  fi
  if (( EUID == 0 )); then
    echo "deps.sh: installing ${missing[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y --no-install-recommends "${missing[@]}"; then
      apt-get update || return
      apt-get install -y --no-install-recommends "${missing[@]}" || return
    fi
  else
    echo "deps.sh: missing Debian packages; install them with:" >&2
    echo "  sudo apt-get install -y --no-install-recommends ${missing[*]}" >&2
    echo "deps.sh: continuing with what is installed" >&2
  fi
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  saguaro_deps
fi
