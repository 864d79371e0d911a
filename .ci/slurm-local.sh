#!/usr/bin/env bash
# A real single-node Slurm (Debian's slurm-wlm) for the executor tests (tests/run/executors): munge, slurmctld,
# slurmd and one partition `debug` holding this machine's cores. Idempotent: does nothing when `sinfo` already
# answers. Run as root (CI is). Measured on a 2-core machine: apt install about 2 minutes, start a few seconds.
# No accounting database: proctor asks `squeue` whether a job is alive and `scontrol show job` keeps finished ones.
set -u
if sinfo -h >/dev/null 2>&1; then exit 0; fi
command -v slurmctld >/dev/null || {
  apt-get update -qq >/dev/null 2>&1
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm >/dev/null 2>&1
}
command -v slurmctld >/dev/null || { echo "slurm-wlm did not install" >&2; exit 1; }
mkdir -p /etc/munge /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge /etc/slurm
[ -f /etc/munge/munge.key ] || dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
chown -R munge:munge /etc/munge /run/munge 2>/dev/null; chmod 400 /etc/munge/munge.key
pgrep -x munged >/dev/null || munged --force 2>/dev/null
H=$(hostname)
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=local
SlurmctldHost=$H
SlurmUser=root
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AuthType=auth/munge
MpiDefault=none
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=$H CPUs=$(nproc) RealMemory=4000 State=UNKNOWN
PartitionName=debug Nodes=$H Default=YES MaxTime=INFINITE State=UP
CONF
pgrep -x slurmctld >/dev/null || slurmctld
pgrep -x slurmd >/dev/null || slurmd
for _ in $(seq 30); do sinfo -h 2>/dev/null | grep -q idle && exit 0; sleep 1; done
echo "slurm did not come up (see /var/log/slurm/)" >&2; exit 1
