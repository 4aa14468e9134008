#!/usr/bin/env bash
# The repository's C++ sources (tracked *.cpp *.hpp *.cu *.cuh *.h) against its .clang-format.
#
# `bash scripts/format.sh`          rewrites every file that differs
# `bash scripts/format.sh --check`  changes nothing; lists the files that differ and exits 1
# Sourced by scripts/test.sh, which runs the check before building (Debian's clang-format).

SAGUARO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

saguaro_format_files() {
  git -C "$SAGUARO_ROOT" ls-files -- '*.cpp' '*.hpp' '*.cu' '*.cuh' '*.h'
}

saguaro_format_check() (
  cd "$SAGUARO_ROOT" || exit
  if ! command -v clang-format >/dev/null 2>&1; then
    echo "format.sh: clang-format is not installed (Debian: clang-format)" >&2
    exit 1
  fi
  local bad=() f
  while IFS= read -r f; do
    clang-format --dry-run -Werror "$f" >/dev/null 2>&1 || bad+=("$f")
  done < <(saguaro_format_files)
  if ((${#bad[@]})); then
    echo "format.sh: ${#bad[@]} file(s) differ from .clang-format; run 'bash scripts/format.sh':" >&2
    printf '  %s\n' "${bad[@]}" >&2
    exit 1
  fi
)

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  set -euo pipefail
  if [[ "${1:-}" == "--check" ]]; then
    saguaro_format_check
  else
    cd "$SAGUARO_ROOT"
    saguaro_format_files | xargs clang-format -i
  fi
fi
