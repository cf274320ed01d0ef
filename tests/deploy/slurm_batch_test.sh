#!/usr/bin/env bash
# conf/deploy/aiac.sbatch on a stand-in Slurm: `scontrol show hostnames` and `srun` replaced by
# scripts that run each step's tasks on this host, with SLURM_PROCID and SLURMD_NODENAME set as
# Slurm sets them. The batch script must start a super-node and one daemon per node of
# "node[1-3]", run a CG job to convergence with the spawner, and stop everything it started.
# Skipped (77) on a host with no network address besides loopback.
set -euo pipefail
bin=${1:?usage: slurm_batch_test.sh BUILD_BIN SOURCE_DIR}
src=${2:?usage: slurm_batch_test.sh BUILD_BIN SOURCE_DIR}
[[ -n $(hostname -I 2>/dev/null | tr -d ' ') ]] || { echo "SKIP: this host has no address but loopback"; exit 77; }
work=$(mktemp -d)
cleanup() {
  pkill -KILL -f -- "$work/" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -p "$work/fake"

cat > "$work/fake/scontrol" <<'X'
#!/usr/bin/env bash
# scontrol show hostnames "name[A-B]" | "a,b,c"
[[ $1 == show && $2 == hostnames ]] || { echo "fake scontrol: $*?" >&2; exit 2; }
if [[ $3 =~ ^(.*)\[([0-9]+)-([0-9]+)\]$ ]]; then
  for i in $(seq "${BASH_REMATCH[2]}" "${BASH_REMATCH[3]}"); do echo "${BASH_REMATCH[1]}$i"; done
else
  tr ',' '\n' <<< "$3"
fi
X
cat > "$work/fake/srun" <<'X'
#!/usr/bin/env bash
# srun [--nodes=N] [--ntasks=N] [--ntasks-per-node=K] [-w NODE] CMD...: the step's tasks here.
ntasks=1 only=
mapfile -t nodes < <(scontrol show hostnames "$SLURM_JOB_NODELIST")
while [[ $1 == -* ]]; do
  case $1 in
    --ntasks=*) ntasks=${1#*=} ;;
    --nodes=* | --ntasks-per-node=*) ;;
    -w) only=$2; shift ;;
    *) echo "fake srun: $1?" >&2; exit 2 ;;
  esac
  shift
done
pids=()
trap 'kill -TERM "${pids[@]}" 2>/dev/null; wait' TERM
for ((i = 0; i < ntasks; i++)); do
  SLURM_PROCID=$i SLURMD_NODENAME=${only:-${nodes[i]}} "$@" &
  pids+=($!)
done
wait
X
chmod +x "$work/fake/scontrol" "$work/fake/srun"

"$bin/aiac-spawner" keygen --out "$work/cluster.key" >/dev/null
printf 'cluster_key_file = "cluster.key"\nlog_level = "warn"\n' > "$work/aiac.toml"
printf 'name = "slurm"\napp = "cg"\ntasks = 3\ntimeout_s = 120\n[params]\nn = 30000\nbandwidth = 6\n' > "$work/job.toml"
# A port nothing listens on.
port=$((20000 + RANDOM % 30000))
while ss -ltnH "sport = :$port" | grep -q .; do port=$((20000 + RANDOM % 30000)); done

set +e
PATH="$work/fake:$PATH" SLURM_JOB_NODELIST="node[1-3]" SLURM_JOB_ID="t$$" AIAC_HOME="$(dirname "$bin")" \
  AIAC_CONFIG="$work/aiac.toml" AIAC_DATA="$work/data" AIAC_PORT=$port \
  bash "$src/conf/deploy/aiac.sbatch" "$work/job.toml" --json "$work/result.json" > "$work/out.log" 2>&1
status=$?
set -e
cat "$work/out.log"
[[ $status == 0 ]] || { echo "FAIL: the batch script exited $status"; exit 1; }
grep -q '"status": "converged"' "$work/result.json" || { echo "FAIL: not converged"; cat "$work/result.json"; exit 1; }
grep -q '"daemons": 3' "$work/result.json" || { echo "FAIL: not 3 daemons"; cat "$work/result.json"; exit 1; }
# Everything the script started is gone (its EXIT trap stopped the steps).
for _ in $(seq 100); do pgrep -f -- "$work/" >/dev/null || break; sleep 0.1; done
if pgrep -af -- "$work/"; then echo "FAIL: processes left behind"; exit 1; fi
echo "the batch script ran the job on 3 nodes and stopped everything"
