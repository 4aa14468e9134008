#!/usr/bin/env bash
# Install what is missing, build, and run Saguaro.
#
#   bash scripts/run.sh                      # same as: bash scripts/run.sh par/wave.par
#   bash scripts/run.sh FILE.edl [OPTIONS]   # saguaro inspect FILE.edl [OPTIONS]
#   bash scripts/run.sh FILE.par [OPTIONS]   # saguaro FILE.par [OPTIONS]
#   bash scripts/run.sh ARGS...              # saguaro ARGS...
#
# File names are taken relative to the directory you run it from.
set -euo pipefail

caller="$PWD"
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$PWD"

source scripts/deps.sh
source scripts/build.sh
saguaro_deps
saguaro_build >&2   # keep stdout for saguaro's own output

if (( $# == 0 )); then
  set -- par/wave.par
else
  cd "$caller"
fi

saguaro="$root/build/bin/saguaro"
case "$1" in
  *.edl) exec "$saguaro" inspect "$@" ;;
  *.par) exec "$saguaro" "$@" ;;   # a simulation run
  *)     exec "$saguaro" "$@" ;;
esac
