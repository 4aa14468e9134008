#!/usr/bin/env bash
# `saguaro submit`, `jobs` and `cancel` without a Slurm: --dry-run scripts for the example GPU
# cluster (ranks per GPU, walltime, dependencies), errors with status 2 and nothing created,
# and submissions through fake sbatch/squeue/scancel that record their arguments (sbatch
# refusing the first or a later segment: the jobs before cancelled, the directory removed).
# Usage: cli_submit.sh SAGUARO SOURCE_DIR
set -uo pipefail
saguaro=$1 src=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
fail() { echo "FAIL: $*"; failures=$((failures+1)); }
unset SAGUARO_MACHINE SAGUARO_MACHINES

# ---- --dry-run for the example GPU cluster: nothing created, the scripts printed ----
"$saguaro" submit "$src/par/wave.par" --machine example-gpu --nodes 2 --chain 3 \
  --walltime 12:00:00 --basedir "$work/sims" --dry-run > "$work/dry" 2> "$work/err"
status=$?
[[ $status == 0 ]] || { fail "dry run: status $status"; cat "$work/err"; }
[[ -e "$work/sims" ]] && fail "dry run created $work/sims"
for k in 0 1 2; do
  # each script once, with its own #SBATCH lines
  n=$(grep -c "^#SBATCH --job-name=wave-000$k$" "$work/dry")
  [[ $n == 1 ]] || fail "dry run: $n scripts of segment $k"
done
for line in '#SBATCH --nodes=2' '#SBATCH --ntasks-per-node=4' '#SBATCH --gpus-per-node=4' \
            '#SBATCH --cpus-per-task=16' '#SBATCH --time=12:00:00' '#SBATCH --partition=gpu' \
            '#SBATCH --account=my-project' 'export OMP_NUM_THREADS=16'; do
  n=$(grep -cxF -- "$line" "$work/dry")
  [[ $n == 3 ]] || fail "dry run: '$line' $n times, expected once per segment"
done
n=$(grep -c -- "^srun --ntasks=8 --ntasks-per-node=4 --cpus-per-task=16 --cpu-bind=cores --mpi=pmix $work/sims/wave/exe/saguaro run wave.par" "$work/dry")
[[ $n == 3 ]] || fail "dry run: $n srun lines with 8 ranks, 4 per node"
grep -qxF -- "  sbatch --parsable $work/sims/wave/output-0000/job.sh" "$work/dry" || fail "dry run: first sbatch"
grep -qxF -- "  sbatch --parsable --dependency=afterany:<job of wave-0000> $work/sims/wave/output-0001/job.sh" "$work/dry" || fail "dry run: second sbatch"
grep -qxF -- "  sbatch --parsable --dependency=afterany:<job of wave-0001> $work/sims/wave/output-0002/job.sh" "$work/dry" || fail "dry run: third sbatch"
grep -qF -- "--set 'IO::recover = \"autoprobe\"'" "$work/dry" || fail "dry run: segment 0 recovers by autoprobe"
n=$(grep -cF -- "--set 'IO::recover = \"auto\"'" "$work/dry")
[[ $n == 2 ]] || fail "dry run: $n segments recover with auto, expected 2"
n=$(grep -cF -- "--set 'Cactus::max_runtime = 710'" "$work/dry")
[[ $n == 3 ]] || fail "dry run: max_runtime 710 (12 h less 10 min) $n times"
# The scripts are valid bash.
awk '/^# ---- .*job.sh ----$/ { f = sprintf("%s/script%d.sh", dir, ++n); next }
     /^would submit:$/ { f = "" } f { print > f }' dir="$work" "$work/dry"
for s in "$work"/script*.sh; do bash -n "$s" || fail "dry run: $s is not valid bash"; done

# ---- errors: status 2, a message, nothing created ----
# expect_error NAME REGEX ARGS...   (runs with $work/sims as the simulations directory)
expect_error() {
  local name=$1 regex=$2; shift 2
  "$@" > "$work/out" 2> "$work/err"
  local status=$?
  [[ $status == 2 ]] || { fail "$name: status $status, expected 2"; cat "$work/out" "$work/err"; }
  grep -Eq -- "$regex" "$work/err" || { fail "$name: /$regex/ not in:"; cat "$work/err"; }
  [[ -e "$work/sims/wave" ]] && { fail "$name: $work/sims/wave was created"; rm -rf "$work/sims/wave"; }
  return 0
}
submit=("$saguaro" submit "$src/par/wave.par" --basedir "$work/sims")
expect_error no_machine "which machine" "${submit[@]}"
expect_error unknown_machine "no machine 'nosuch'" "${submit[@]}" --machine nosuch
expect_error machine_typo "did you mean 'local'" "${submit[@]}" --machine locl
printf 'name: bad\ncores_per_node: 4\nmax_walltime: "1:00:00"\nsimulations: /tmp\nqueue: gpu\n' > "$work/bad.yaml"
expect_error invalid_machine "bad.yaml:5:1: error: unknown key 'queue'" "${submit[@]}" --machine "$work/bad.yaml"
expect_error unknown_option "frobnicate" "${submit[@]}" --machine local --frobnicate
expect_error walltime_too_long "longer than example-gpu allows" "${submit[@]}" --machine example-gpu --walltime 49:00:00
expect_error walltime_garbage "--walltime '2h'" "${submit[@]}" --machine local --walltime 2h
expect_error too_many_gpus "--gpus-per-node 5" "${submit[@]}" --machine example-gpu --gpus-per-node 5
expect_error bad_name "cannot name a simulation" "${submit[@]}" --machine local --name ../x
printf 'ActiveThorns = "Saguaro WaveDemo"\nSaguaro::equations = "%s/par/wave.edl"\nCactus::cctk_itlst = 3\n' "$src" > "$work/bad.par"
expect_error bad_par "bad.par:3:9: error" "$saguaro" submit "$work/bad.par" --machine local --basedir "$work/sims" --name wave
mkdir -p "$work/nobin"
expect_error no_sbatch "sbatch is not found" env PATH="$work/nobin" "${submit[@]}" --machine local

# ---- fake Slurm commands: they log their arguments ----
mkdir -p "$work/bin"
cat > "$work/bin/sbatch" <<'SH'
#!/bin/bash
echo "sbatch $*" >> "$FAKE_LOG"
n=$(( $(grep -c '^sbatch' "$FAKE_LOG") ))
if [[ -n "${FAKE_REFUSE_AT:-}" && $n -ge $FAKE_REFUSE_AT ]]; then
  echo "sbatch: error: Batch job submission failed: Invalid account or account/partition combination specified" >&2
  exit 1
fi
echo "sbatch: warning: a warning on standard error" >&2
echo "$((100 + n))"
SH
cat > "$work/bin/scancel" <<'SH'
#!/bin/bash
echo "scancel $*" >> "$FAKE_LOG"
SH
cat > "$work/bin/squeue" <<'SH'
#!/bin/bash
echo "squeue $*" >> "$FAKE_LOG"
echo "101|COMPLETED|0:07|None"
echo "102|RUNNING|0:03|None"
echo "103|PENDING|0:00|Dependency"
SH
cat > "$work/bin/sacct" <<'SH'
#!/bin/bash
echo "sacct $*" >> "$FAKE_LOG"
echo "Slurm accounting storage is disabled" >&2
exit 1
SH
chmod +x "$work/bin"/*
export FAKE_LOG="$work/fake.log"
fake=(env PATH="$work/bin:$PATH" FAKE_LOG="$FAKE_LOG")

# sbatch refusing the first segment, then the third: nothing left, the first two cancelled.
: > "$FAKE_LOG"
expect_error sbatch_refuses "sbatch refused wave-0000 \(status 1\): .*Invalid account.*nothing was submitted" \
  "${fake[@]}" FAKE_REFUSE_AT=1 "${submit[@]}" --machine local --chain 3
: > "$FAKE_LOG"
expect_error sbatch_refuses_later "sbatch refused wave-0002.*the 2 jobs submitted before were cancelled" \
  "${fake[@]}" FAKE_REFUSE_AT=3 "${submit[@]}" --machine local --chain 3
grep -qx "scancel 101 102" "$FAKE_LOG" || { fail "the first two jobs were not cancelled:"; cat "$FAKE_LOG"; }
ls -A "$work/sims" 2>/dev/null | grep -q . && fail "debris left in $work/sims: $(ls -A "$work/sims")"

# A chain of 3 submitted: the directory, the record, the dependencies.
: > "$FAKE_LOG"
"${fake[@]}" "${submit[@]}" --machine local --chain 3 --walltime 00:10:00 > "$work/out" 2> "$work/err" \
  || { fail "fake submission: status $?"; cat "$work/err"; }
sim="$work/sims/wave"
for f in simulation.json exe/saguaro checkpoints output-0000/wave.par output-0000/wave.edl \
         output-0000/job.sh output-0002/job.sh output-0002/wave.par; do
  [[ -e "$sim/$f" ]] || fail "no $sim/$f"
done
[[ -x "$sim/exe/saguaro" && -x "$sim/output-0001/job.sh" ]] || fail "exe/saguaro or job.sh not executable"
cmp -s "$src/par/wave.par" "$sim/output-0001/wave.par" || fail "the .par file is not recorded as it was"
"$sim/exe/saguaro" --version | grep -q saguaro || fail "the copied executable does not run"
grep -qx "sbatch --parsable $sim/output-0000/job.sh" "$FAKE_LOG" || fail "first sbatch: $(cat "$FAKE_LOG")"
grep -qx "sbatch --parsable --dependency=afterany:101 $sim/output-0001/job.sh" "$FAKE_LOG" || fail "second sbatch"
grep -qx "sbatch --parsable --dependency=afterany:102 $sim/output-0002/job.sh" "$FAKE_LOG" || fail "third sbatch"
for id in 101 102 103; do grep -q "\"job_id\": \"$id\"" "$sim/simulation.json" || fail "job $id not recorded"; done
grep -q "submitted wave-0002 as job 103 (afterany:102)" "$work/out" || fail "submit's report: $(cat "$work/out")"
expect_exists() { [[ -e "$sim" ]] || fail "the simulation vanished"; }
"${fake[@]}" "${submit[@]}" --machine local > "$work/out" 2> "$work/err"
[[ $? == 2 ]] && grep -q "exists already" "$work/err" || fail "a second submission of wave: $(cat "$work/err")"
expect_exists

# jobs and cancel through the fake squeue and scancel.
: > "$FAKE_LOG"
"${fake[@]}" "$saguaro" jobs wave --basedir "$work/sims" > "$work/out" 2> "$work/err" || fail "jobs: status $?"
grep -q "running: output-0001" "$work/out" || { fail "jobs: no running segment:"; cat "$work/out" "$work/err"; }
grep -Eq "output-0002 +103 +PENDING .*Dependency" "$work/out" || { fail "jobs: segment 2:"; cat "$work/out"; }
grep -q "squeue --noheader --states=all --jobs=101,102,103" "$FAKE_LOG" || fail "jobs: squeue: $(cat "$FAKE_LOG")"
"${fake[@]}" "$saguaro" jobs --basedir "$work/sims" | grep -q "simulation wave" || fail "jobs of every simulation"
"${fake[@]}" "$saguaro" jobs "$sim" | grep -q "simulation wave" || fail "jobs of a directory"
: > "$FAKE_LOG"
"${fake[@]}" "$saguaro" cancel wave --basedir "$work/sims" > "$work/out" 2> "$work/err" || fail "cancel: status $?"
grep -qx "scancel 102 103" "$FAKE_LOG" || { fail "cancel: scancel:"; cat "$FAKE_LOG"; }
grep -q "cancelled jobs 102 103" "$work/out" || fail "cancel: $(cat "$work/out")"
"$saguaro" jobs nosuch --basedir "$work/sims" > /dev/null 2> "$work/err"
[[ $? == 2 ]] && grep -q "no simulation 'nosuch'" "$work/err" || fail "jobs of an unknown simulation: $(cat "$work/err")"
"$saguaro" cancel > /dev/null 2>&1; [[ $? == 2 ]] || fail "cancel without SIM: not status 2"

if (( failures > 0 )); then echo "$failures failures"; exit 1; fi
echo "dry runs, errors and fake submissions as expected"
