#!/usr/bin/env bash
# CI: the workflow on a real single-node SLURM cluster (Debian's slurm-wlm and munge, no
# accounting database, everything on 127.0.0.1), compared byte for byte with a local run, as the
# README's "On a cluster" section runs it; then a dask-jobqueue index build that loses a worker job
# to scancel. Needs root and apt-get; without them it says so loudly and skips.
#
#   bash .ci/slurm.sh        (from the checkout, after `make setup`; IRGRID_MIRROR as for make test)
set -euo pipefail
cd "$(dirname "$0")/.."
REPO="$(pwd)"
SNAKEMAKE="$REPO/.venv/bin/snakemake"
PYTHON="$REPO/.venv/bin/python"
# baselines on ADI: every job kind (shards, topics, qrels, index, forward index, chunks with feedback,
# tables, figures, report) on the smallest collection; Cranfield's RM3 grid would cost CI minutes
SUBSET=(experiments_only=[baselines] collections_only=[adi])
started=$(date +%s)

skip() {
  echo "########################################################################" >&2
  echo "# SKIPPED: the SLURM tests (.ci/slurm.sh) did not run: $*" >&2
  echo "########################################################################" >&2
  exit 0
}
[ "$(id -u)" = 0 ] || skip "not root"
command -v apt-get >/dev/null || skip "apt-get is not available"
if ! command -v slurmctld >/dev/null || ! command -v slurmd >/dev/null || ! command -v munged >/dev/null; then
  echo "slurm.sh: installing slurm-wlm and munge" >&2
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq slurm-wlm munge) >/dev/null \
    || skip "apt-get install slurm-wlm munge failed"
fi
echo "slurm.sh: $(slurmctld -V), munge $(munged -V 2>&1 | awk '{print $2}' | head -1)"

WORK="$(mktemp -d /tmp/irgrid-slurm.XXXXXX)"
# The configuration at SLURM's default path: the SLURM executor's job steps drop every SLURM_*
# variable (SLURM_CONF too) before their srun, which then looks only there. One found there is
# kept aside and put back at the end, unless it is this script's own, left by a run killed before
# its teardown: put back, it would name a controller that is gone, and every later Snakemake start
# would wait on it (the SLURM executor plugin runs `scontrol show config` when it is imported).
export SLURM_CONF=/etc/slurm/slurm.conf
SLURM_CONF_ASIDE="$WORK/slurm.conf.machine"
MUNGE_SOCKET="$WORK/munge/munge.socket"

teardown() {
  status=$?
  set +e
  if [ "$status" != 0 ]; then
    echo "slurm.sh: failed; the daemons' and jobs' logs:" >&2
    for log in "$WORK"/log/*.log "$WORK"/slurm/.snakemake/slurm_logs/*/*/*.log "$WORK"/jobqueue/worker-logs/*; do
      [ -f "$log" ] && { echo "== $log" >&2; tail -n 30 "$log" >&2; }
    done
  fi
  command -v scancel >/dev/null && [ -f "$WORK/slurmctld.pid" ] && scancel --user root 2>/dev/null
  for daemon in slurmd slurmctld munged; do
    pidfile="$WORK/$daemon.pid"
    if [ -f "$pidfile" ]; then
      pid="$(cat "$pidfile")"
      kill "$pid" 2>/dev/null
      for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -9 "$pid" 2>/dev/null
      rm -f "$pidfile"
    fi
  done
  rm -f "$SLURM_CONF"
  [ -f "$SLURM_CONF_ASIDE" ] && mv "$SLURM_CONF_ASIDE" "$SLURM_CONF"
  # the failed step last, where a CI log cut to its tail still shows it
  if [ "$status" != 0 ] && [ -n "$STEP" ]; then
    echo "slurm.sh: FAILED during: $STEP" >&2
    [ -n "$STEP_LOG" ] && [ -f "$STEP_LOG" ] && tail -n 40 "$STEP_LOG" >&2
  fi
  if [ -n "${KEEP_SLURM_WORK:-}" ]; then echo "slurm.sh: kept $WORK"; else rm -rf "$WORK"; fi
  echo "slurm.sh: daemons stopped ($(( $(date +%s) - started )) s in all)"
  exit "$status"
}
STEP="starting SLURM"
STEP_LOG=""
trap teardown EXIT

mkdir -p "$WORK"/{munge,ctld,spool,log}
chmod 700 "$WORK/munge"

# munge: a key of our own and a socket in $WORK, so a munged of the machine is left alone
mungekey --create --keyfile="$WORK/munge/munge.key" --force
munged --force --socket="$MUNGE_SOCKET" --key-file="$WORK/munge/munge.key" --pid-file="$WORK/munged.pid" \
  --log-file="$WORK/log/munged.log" --seed-file="$WORK/munge/munged.seed"

# The node claims more CPUs than the machine's 2 (SlurmdParameters=config_overrides): a build_index
# job drives its Dask worker jobs while other jobs run; with 2 slots two build_index jobs could
# hold both and wait for ever on workers that cannot start.
memory_mb=$(( $(free -m | awk '/^Mem:/ {print $2}') - 1024 ))
mkdir -p "$(dirname "$SLURM_CONF")"
if [ -e "$SLURM_CONF" ] && grep -qx 'ClusterName=irgridci' "$SLURM_CONF"; then
  echo "slurm.sh: removing $SLURM_CONF, left by an earlier run of this script" >&2
  rm -f "$SLURM_CONF"
fi
[ -e "$SLURM_CONF" ] && mv "$SLURM_CONF" "$SLURM_CONF_ASIDE"
cat > "$SLURM_CONF" <<CONF
ClusterName=irgridci
SlurmctldHost=localhost(127.0.0.1)
SlurmctldPort=16817
SlurmdPort=16818
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
CommunicationParameters=NoCtldInAddrAny,NoInAddrAny
StateSaveLocation=$WORK/ctld
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/slurmctld.pid
SlurmdPidFile=$WORK/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
SchedulerType=sched/backfill
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MpiDefault=none
ReturnToService=2
MinJobAge=600
SlurmdParameters=config_overrides
NodeName=localhost NodeAddr=127.0.0.1 CPUs=8 RealMemory=$memory_mb State=UNKNOWN
PartitionName=debug Nodes=localhost Default=YES MaxTime=INFINITE State=UP
CONF

slurmctld -i
slurmd -N localhost
for _ in $(seq 120); do
  state="$(sinfo -h -n localhost -o %T 2>/dev/null || true)"
  [ "$state" = idle ] && break
  case "$state" in down*|drain*) scontrol update nodename=localhost state=resume 2>/dev/null || true ;; esac
  sleep 0.5
done
[ "$state" = idle ] || { echo "slurm.sh: the node did not become idle (state: '$state')" >&2; exit 1; }
echo "slurm.sh: SLURM up after $(( $(date +%s) - started )) s: $(sinfo -h -o '%P %D %T %C')"

# The same subset twice, each in a directory of its own holding a copy of config/ (results/ and
# logs/ are relative to it): locally, and through the SLURM profile with every index built on a
# dask-jobqueue cluster of two worker jobs that the build_index job starts.
for run in local slurm; do
  mkdir -p "$WORK/$run"
  cp -r "$REPO/config" "$WORK/$run/config"
done
cat > "$WORK/dask-cluster.yaml" <<YAML
dask:
  cluster: {jobqueue: slurm, cores: 1, memory: 2GB, walltime: "00:20:00", workers: 2, host: 127.0.0.1,
            log_directory: $WORK/log/dask-workers}
YAML

# The local run goes on beside the SLURM run, which mostly waits for SLURM.
STEP="the workflow locally and through SLURM"
STEP_LOG="$WORK/log/slurm-run.log"
run_started=$(date +%s)
( "$SNAKEMAKE" --snakefile "$REPO/Snakefile" --directory "$WORK/local" --profile "$REPO/config/profiles/local" \
    --cores 1 --config "${SUBSET[@]}" > "$WORK/log/local-run.log" 2>&1
  echo "slurm.sh: local run: $(( $(date +%s) - run_started )) s (exit $?)" ) &
local_run=$!
# Beside them, a run that must fail (an ADI file changed behind the registry's back) and end
# with the one-line summary naming the job, the cause and the log.
mkdir -p "$WORK/failing" "$WORK/bad-mirror"
cp -r "$REPO/config" "$WORK/failing/config"
cp -r "${IRGRID_MIRROR:-$REPO/../shared/collections}/adi" "$WORK/bad-mirror/adi"
echo >> "$WORK/bad-mirror/adi/ADI.ALL"
( "$SNAKEMAKE" --snakefile "$REPO/Snakefile" --directory "$WORK/failing" --profile "$REPO/config/profiles/slurm" \
    --slurm-no-account results/adi/docs --config mirror="$WORK/bad-mirror" > "$WORK/log/failing-run.log" 2>&1 ) &
failing_run=$!

# no account database here: --slurm-no-account (on a real cluster: --default-resources slurm_account=...)
"$SNAKEMAKE" --snakefile "$REPO/Snakefile" --directory "$WORK/slurm" --profile "$REPO/config/profiles/slurm" \
  --slurm-no-account --configfile "$WORK/dask-cluster.yaml" \
  --config "${SUBSET[@]}" > "$WORK/log/slurm-run.log" 2>&1 \
  || { tail -n 60 "$WORK/log/slurm-run.log" >&2; exit 1; }
echo "slurm.sh: SLURM run: $(( $(date +%s) - run_started )) s"
wait "$local_run"
if wait "$failing_run"; then echo "slurm.sh: the run on a changed ADI.ALL did not fail" >&2; exit 1; fi
summary="$(grep '^First failed job ' "$WORK/log/failing-run.log" || true)"
case "$summary" in
  "First failed job shard_documents (collection=adi): "*ADI.ALL*sha256*"[log: logs/adi/docs.log"*) ;;
  *) echo "slurm.sh: no one-line failure summary: '$summary'" >&2; tail -n 30 "$WORK/log/failing-run.log" >&2; exit 1 ;;
esac
echo "slurm.sh: a failed SLURM job is summed up in one line: $summary"
grep -q "steps (100%) done" "$WORK/log/local-run.log" || { tail -n 40 "$WORK/log/local-run.log" >&2; exit 1; }
submitted=$(grep -c "Job .* has been submitted with SLURM jobid" "$WORK/log/slurm-run.log" || true)
jobqueue_builds=$(grep -l "dask-jobqueue: scheduler tcp://127.0.0.1:" "$WORK"/slurm/logs/*/index/*.log | wc -l)
echo "slurm.sh: $submitted jobs went through sbatch; $jobqueue_builds index builds ran on a dask-jobqueue cluster"
[ "$submitted" -gt 0 ] || { echo "slurm.sh: no job was submitted to SLURM" >&2; exit 1; }
# the subset's one index (ADI's, porter) is built on the dask-jobqueue cluster
[ "$jobqueue_builds" = 1 ] || { echo "slurm.sh: expected 1 index build on dask-jobqueue" >&2; exit 1; }

# Every result file byte for byte, but what measures the jobs themselves: Snakemake's benchmark
# files (results/benchmarks/: time and memory of each job) and the report, which shows them. Both
# must exist on both sides.
STEP="comparing the local and SLURM results"
STEP_LOG=""
"$PYTHON" - "$WORK/local/results" "$WORK/slurm/results" <<'PY'
import hashlib, sys
from pathlib import Path
local, slurm = map(Path, sys.argv[1:])
def is_report(name):  # report.html, or a subset run's report-{experiments}[-on-{collections}].html
    return "/" not in name and name.startswith("report") and name.endswith(".html")
def measured(name):
    return name.startswith("benchmarks/") or is_report(name)
def digests(root):
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(root.rglob("*")) if p.is_file()}
a, b = digests(local), digests(slurm)
if set(a) != set(b):
    sys.exit(f"slurm.sh: different files: only local {sorted(set(a) - set(b))[:10]}, only SLURM {sorted(set(b) - set(a))[:10]}")
compared = [name for name in a if not measured(name)]
tables = [name for name in compared if name.startswith("tables/")]
# the grid's results are the chunks' evaluation files (results/{collection}/eval/.../chunk-{label}.parquet,
# each with its provenance sidecar); no run is kept by either side
chunks = [name for name in compared if "/eval/" in name and "/chunk-" in name and name.endswith(".parquet")]
runs = [name for name in a if "/runs/" in name]
different = sorted(name for name in compared if a[name] != b[name])
if different:
    sys.exit(f"slurm.sh: {len(different)} of {len(compared)} files differ: {different[:20]}")
if not tables or not chunks or not any(is_report(name) for name in a):
    sys.exit("slurm.sh: no table, no chunk evaluation or no report was made")
if runs:
    sys.exit(f"slurm.sh: runs were kept: {runs[:5]}")
print(f"slurm.sh: {len(compared)} result files identical, {len(tables)} of them tables and {len(chunks)} chunk evaluations "
      f"({len(a) - len(compared)} job measurements and the report not compared)")
PY

# dask-jobqueue: an index build on a SLURMCluster of two worker jobs, one cancelled (scancel) while
# it runs an analysis task: the same bytes as a local build.
scancel_started=$(date +%s)
STEP="the dask-jobqueue build that loses a worker job (.ci/jobqueue_scancel.py)"
STEP_LOG="$WORK/log/jobqueue-scancel.log"
"$PYTHON" "$REPO/.ci/jobqueue_scancel.py" "$WORK/jobqueue" 2>&1 | tee "$STEP_LOG"
echo "slurm.sh: dask-jobqueue scancel check: $(( $(date +%s) - scancel_started )) s"
echo "slurm.sh: passed in $(( $(date +%s) - started )) s"
