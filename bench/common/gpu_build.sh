# Sourced by the GPU benchmarks' run.sh, from the repository root, with $build set:
#   gpu_bench_build TARGET
# configures $build (Release, Ninja) and builds TARGET, then sets date (UTC, YYYY-MM-DD),
# gpu_name, gpu (the name as a file name) and gpu_driver from nvidia-smi. GLPK (the mapper's
# covers) and RE2 (parameter ranges) are not installed on the GPU machine: the Debian packages
# carried in .debs/ are used (scripts/device-debs.sh --unpack prints GLPK_ROOT, RE2_ROOT and the
# library path).
glpk_installed() {
  [[ -f /usr/include/glpk.h ]] && ldconfig -p 2>/dev/null | grep -q 'libglpk\.so' &&
    [[ -f /usr/include/re2/re2.h ]]
}
if ! glpk_installed && [[ -z "${GLPK_ROOT:-}" ]]; then
  if [[ -f scripts/device-debs.sh ]] && compgen -G ".debs/*.deb" >/dev/null; then
    echo "run.sh: GLPK or RE2 not installed: unpacking .debs/ (scripts/device-debs.sh --unpack)" >&2
    # shellcheck disable=SC1090
    source <(bash scripts/device-debs.sh --unpack)
  else
    echo "run.sh: GLPK or RE2 is not installed and .debs/ holds no packages (bash scripts/device-debs.sh" \
      "on a Debian machine fetches them); cmake will fail" >&2
  fi
fi

gpu_bench_build() {
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release ${GLPK_ROOT:+-DGLPK_ROOT="$GLPK_ROOT"} >/dev/null
  ninja -C "$build" "$1" >/dev/null
  date=$(date -u +%Y-%m-%d)
  gpu_name=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
  gpu_driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)
  gpu=$(echo "$gpu_name" | tr ' ' '-' | tr -cd 'A-Za-z0-9-')
  gpu=${gpu:-gpu}
}
