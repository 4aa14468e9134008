#!/usr/bin/env bash
# `saguaro submit --chain 3` on a real Slurm: a throw-away cluster of one node on this host
# (slurmctld and slurmd of Debian's slurm-wlm, AuthType=auth/none, everything in a temporary
# directory, free ports), the wave equation submitted as 3 segments that each recover from the
# previous one's checkpoint, and their norms against one uninterrupted run, bit for bit; then a
# chain cancelled. The daemons are stopped on exit.
#
# Exit status 77 (ctest: skipped) with the reason where the daemons cannot run here: not root,
# Slurm not installed, a daemon that does not start. Never passes without having run the chain.
# Usage: slurm_chain.sh SAGUARO SOURCE_DIR [PYTHON3]
set -uo pipefail
saguaro=$1 src=$2 python=${3:-python3}
skip() { echo "SKIPPED: $*"; exit 77; }
die() { echo "FAIL: $*"; exit 1; }

(( EUID == 0 )) || skip "not root: slurmd must run as root to start jobs (run the tests as root)"
for p in slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$p" > /dev/null ||
    skip "no $p: Debian's slurm-wlm is not installed (scripts/deps.sh installs it as root)"
done
command -v "$python" > /dev/null || skip "no $python to find free ports"

work=$(mktemp -d /tmp/saguaro-slurm.XXXXXX)
pids=()
cleanup() {
  if [[ -n "${SLURM_CONF:-}" ]] && (( ${#pids[@]} )); then
    mapfile -t jobs < <(squeue --noheader --format=%i 2> /dev/null)
    (( ${#jobs[@]} )) && scancel "${jobs[@]}" 2> /dev/null
  fi
  for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null; done
  for pid in "${pids[@]}"; do wait "$pid" 2> /dev/null; done
  rm -rf "$work"
}
trap cleanup EXIT

# ---- the cluster ----
read -r ctld_port slurmd_port < <("$python" -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*[s.getsockname()[1] for s in socks])')
node="saguaro$$"
host=$(hostname -s)
cpus=$(nproc)
mkdir -p "$work/state" "$work/spool"
cat > "$work/slurm.conf" <<CONF
ClusterName=saguaro$$
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/none
CredType=cred/none
StateSaveLocation=$work/state
SlurmdSpoolDir=$work/spool
SlurmctldPidFile=$work/slurmctld.pid
SlurmdPidFile=$work/slurmd.pid
SlurmctldLogFile=$work/slurmctld.log
SlurmdLogFile=$work/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MinJobAge=600
NodeName=$node NodeHostname=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
PartitionName=debug Nodes=$node Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$work/slurm.conf"
slurmctld -D -f "$SLURM_CONF" > "$work/slurmctld.out" 2>&1 &
pids+=($!)
slurmd -D -N "$node" -f "$SLURM_CONF" > "$work/slurmd.out" 2>&1 &
pids+=($!)
why_not() {
  echo "the Slurm daemons did not start; their logs:"
  tail -n 5 "$work"/slurmctld.out "$work"/slurmctld.log "$work"/slurmd.out "$work"/slurmd.log 2> /dev/null
}
for ((i = 0; i < 60; ++i)); do
  state=$(sinfo --noheader --nodes="$node" --format=%T 2> /dev/null)
  [[ "$state" == idle* ]] && break
  for pid in "${pids[@]}"; do kill -0 "$pid" 2> /dev/null || { why_not; skip "a daemon exited"; }; done
  sleep 0.5
done
[[ "$state" == idle* ]] || { why_not; skip "node $node is '$state', not idle, after 30 s"; }
echo "slurmctld and slurmd up: node $node, ports $ctld_port and $slurmd_port"

# ---- the run: uninterrupted, then as a chain of 3 ----
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
par() { # par OUT_DIR [TERMINATE]
  cat <<PAR
ActiveThorns = "Saguaro WaveDemo"
Saguaro::equations = "$src/par/wave.edl"
Saguaro::backend = "cpu"
Saguaro::cache_dir = "$work/cache"
WaveDemo::kwav = 6.283185307179586
CoordBase::spacing = "numcells"
CoordBase::ncells_x = 12
CoordBase::ncells_y = 12
CoordBase::ncells_z = 12
Periodic::periodic = yes
MoL::ODE_Method = "RK4"
Time::dtfac = 0.25
Cactus::terminate = "${2:-iteration}"
Cactus::cctk_itlast = 24
Cactus::cctk_show_schedule = no
IO::out_dir = "$1"
IO::out_every = 4
IOScalar::out_vars = "WaveDemo::phi WaveDemo::pi WaveDemo::eps"
PAR
}
par "$work/whole" > "$work/whole.par"
"$saguaro" run "$work/whole.par" > "$work/whole.log" 2>&1 || { cat "$work/whole.log"; die "the uninterrupted run"; }
mkdir -p "$work/in"
par '$parfile' > "$work/in/wave.par"
sims="$work/sims"
"$saguaro" submit "$work/in/wave.par" --machine local --basedir "$sims" --chain 3 \
  --segment-iterations 8 --walltime 00:05:00 > "$work/submit.out" 2>&1 ||
  { cat "$work/submit.out"; die "saguaro submit: status $?"; }
cat "$work/submit.out"

ended=0
for ((i = 0; i < 300; ++i)); do # at most 150 s
  "$saguaro" jobs wave --basedir "$sims" > "$work/jobs.out" 2>&1
  grep -q "3 of 3 jobs ended" "$work/jobs.out" && { ended=1; break; }
  sleep 0.5
done
cat "$work/jobs.out"
sim="$sims/wave"
if (( ! ended )); then
  for k in 0 1 2; do echo "--- output-000$k/job.out"; cat "$sim/output-000$k/job.out" 2> /dev/null; done
  tail -n 20 "$work/slurmctld.log"
  die "the chain did not end in 150 s"
fi
n=$(grep -Ec "^  output-000[0-2] +[0-9]+  COMPLETED " "$work/jobs.out")
(( n == 3 )) || { for k in 0 1 2; do cat "$sim/output-000$k/job.out"; done; die "$n of 3 jobs COMPLETED"; }
grep -q "last iteration reached: 24" "$work/jobs.out" || die "saguaro jobs does not report iteration 24"

# Each segment recovered where the one before stopped, and checkpointed at its end.
for k in 0 1 2; do
  log="$sim/output-000$k/job.out"
  grep -q "finished at iteration $((8 * (k + 1)))," "$log" || { cat "$log"; die "segment $k did not stop at iteration $((8 * (k + 1)))"; }
  grep -q "checkpoint at iteration $((8 * (k + 1))) in $sim/checkpoints" "$log" || { cat "$log"; die "segment $k wrote no final checkpoint"; }
  if (( k > 0 )); then
    grep -q "recovered from iteration $((8 * k)) " "$log" || { cat "$log"; die "segment $k did not recover from iteration $((8 * k))"; }
  fi
done

# The segments' norms, one after the other, are the uninterrupted run's, bit for bit.
for v in phi pi eps; do
  whole="$work/whole/$v.norms.tsv"
  [[ -s "$whole" ]] || die "no $whole"
  grep -hv '^#' "$sim"/output-000{0,1,2}/wave/"$v".norms.tsv > "$work/chain.$v"
  grep -v '^#' "$whole" > "$work/whole.$v"
  [[ $(wc -l < "$work/whole.$v") == 7 ]] || die "$v: $(wc -l < "$work/whole.$v") lines in the uninterrupted run, expected 7 (iterations 0, 4, ..., 24)"
  cmp -s "$work/chain.$v" "$work/whole.$v" || { diff "$work/chain.$v" "$work/whole.$v"; die "$v: the chain's norms differ from the uninterrupted run's"; }
  echo "$v: $(wc -l < "$work/whole.$v") lines bit-identical; final: $(tail -n 1 "$work/whole.$v")"
done

# ---- a chain that would run until its walltime, cancelled while its first segment runs ----
mkdir -p "$work/in2"
par '$parfile' never > "$work/in2/wave.par"
"$saguaro" submit "$work/in2/wave.par" --machine local --basedir "$sims" --name cancelled \
  --chain 2 --walltime 00:05:00 > "$work/submit2.out" 2>&1 || { cat "$work/submit2.out"; die "second submit"; }
for ((i = 0; i < 60; ++i)); do
  "$saguaro" jobs cancelled --basedir "$sims" > "$work/jobs2.out" 2>&1
  grep -q "running: output-0000;" "$work/jobs2.out" && break
  sleep 0.5
done
cat "$work/jobs2.out"
grep -q "running: output-0000;" "$work/jobs2.out" || die "saguaro jobs does not show segment 0 running"
grep -Eq "output-0001 +[0-9]+  PENDING .*Dependency" "$work/jobs2.out" || die "segment 1 is not pending on its dependency"
"$saguaro" cancel cancelled --basedir "$sims" > "$work/cancel.out" 2>&1 || { cat "$work/cancel.out"; die "saguaro cancel"; }
cat "$work/cancel.out"
grep -q "cancelled job" "$work/cancel.out" || die "saguaro cancel cancelled nothing"
for ((i = 0; i < 40; ++i)); do
  "$saguaro" jobs "$sims/cancelled" > "$work/jobs2.out" 2>&1
  [[ $(grep -c " CANCELLED " "$work/jobs2.out") == 2 ]] && break
  sleep 0.5
done
cat "$work/jobs2.out"
[[ $(grep -c " CANCELLED " "$work/jobs2.out") == 2 ]] || die "the cancelled chain's jobs are not CANCELLED"
echo "a chain of 3 on Slurm equals the uninterrupted run bit for bit; cancel works"
