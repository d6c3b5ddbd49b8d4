#!/bin/bash
# Runs the job-array recipe on a real one-node Slurm (Debian's slurm-wlm and munge, on this machine,
# as root): 3 shards of the offline plan of the occupancy sweep, then gpuexp merge, compared with
# the unsharded plan. usage: tests/slurm/run_slurm.sh BUILD_DIR   (prints a transcript)
set -eu
build=$(cd "${1:-build}" && pwd)
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'scancel --user=root 2>/dev/null || true; pkill slurmd || true; pkill slurmctld || true; pkill munged || true; rm -rf "$work"' EXIT
host=$(hostname -s)
mkdir -p /etc/munge /var/log/munge /run/munge /var/lib/munge /var/spool/slurmctld /var/spool/slurmd
[ -s /etc/munge/munge.key ] || dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 2>/dev/null
chown -R munge:munge /etc/munge /var/log/munge /run/munge /var/lib/munge 2>/dev/null || true
chmod 400 /etc/munge/munge.key
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=gpuexp-test
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SchedulerType=sched/backfill
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=10 State=UP
CONF
runuser -u munge -- munged --force 2>/dev/null || munged --force
slurmctld && slurmd
for _ in $(seq 1 30); do sinfo -h -o %T 2>/dev/null | grep -q idle && break; sleep 1; done
sinfo
cd "$work"
export GPUEXP="$build/gpuexp"
jobid=$(sbatch --parsable --array=0-2 "$repo/experiments/slurm/sweep.sbatch" "$repo/experiments/occupancy_sweep.lua" --arch sm_90)
echo "submitted job array $jobid"
merge=$(sbatch --parsable --dependency=afterany:$jobid --wrap "$build/gpuexp merge results/occupancy_sweep.csv results/occupancy_sweep.shard-*-of-3.csv")
for _ in $(seq 1 120); do [ -z "$(squeue -h)" ] && break; sleep 1; done
sacct -j "$jobid,$merge" -o JobID,State,ExitCode 2>/dev/null || squeue
cat gpuexp-*.log slurm-"$merge".out | head -20
ls results
"$build/gpuexp" --arch sm_90 --quiet --out whole.csv "$repo/experiments/occupancy_sweep.lua" > /dev/null
cmp results/occupancy_sweep.csv whole.csv && echo "merged shards equal the unsharded plan"
