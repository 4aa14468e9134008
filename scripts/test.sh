#!/usr/bin/env bash
# Install what is missing, check the sources' formatting (scripts/format.sh), build, and run
# all tests (unit tests and CLI smoke tests).
# Extra arguments go to ctest, e.g. `bash scripts/test.sh -R Lexer`.
# Exits with ctest's status.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

source scripts/deps.sh
source scripts/build.sh
source scripts/format.sh
saguaro_deps
saguaro_format_check
saguaro_build

exec ctest --test-dir build --output-on-failure -j"$(nproc)" "$@"
