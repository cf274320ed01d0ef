#!/usr/bin/env bash
# A job that outlives its spawner (docs/fault-tolerance.md, "When the spawner is lost"): on a
# super-node and six daemons started by hand, the CG job of examples/cg-faults.toml (solved to
# 1e-12, checkpointed twice a second, live balancing off: with it the job may end before the
# kill) is started with `run --detach --state state`; once its tasks iterate, the spawner is
# SIGKILLed, and while it is away one task daemon is killed too. `aiac-spawner resume state`
# takes the job over: it adopts the three tasks still running where they run, replaces the dead
# daemon's task from its newest checkpoint, and ends the run with the answer of a run without
# faults. A second `resume` says the job ended. Prints what happened and the summary.
# Run from the source tree (or with AIAC_BIN naming the folder of the binaries); everything it
# makes goes to a temporary folder, and every process it starts is stopped when it ends.
set -euo pipefail
bin=$(cd "${AIAC_BIN:-build/bin}" && pwd)
spawner="$bin/aiac-spawner"
job=$(cd "$(dirname "$0")/.." && pwd)/cg-faults.toml
work=$(mktemp -d -t aiac-resume-XXXXXX)
pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"

# Waits up to $1 seconds until the command after it succeeds.
wait_for() {
  local limit=$1 start=$SECONDS
  shift
  until "$@" >/dev/null 2>&1; do
    if ((SECONDS - start > limit)); then
      echo "spawner-resume: timed out waiting for: $*" >&2
      tail -n 3 state.log d?.log >&2 2>/dev/null || true
      return 1
    fi
    sleep 0.2
  done
}

# Keys and certificates (docs/security.md), a super-node and six daemons.
"$spawner" keygen --out cluster.key >/dev/null
authority=$("$spawner" keygen --authority authority)
"$spawner" keygen --signing publisher >/dev/null
chmod 600 publisher.key
"$spawner" certify --authority-key authority.key --role super-node --id sn1 --new-key sn1 >/dev/null
for d in d1 d2 d3 d4 d5 d6; do
  "$spawner" certify --authority-key authority.key --role daemon --id "$d" --new-key "$d" >/dev/null
done
"$spawner" certify --authority-key authority.key --role spawner --id operator --new-key operator >/dev/null
common=(--cluster-key-file cluster.key --authority-key "$authority")
"$bin/aiac-supernode" "${common[@]}" --id sn1 --listen 127.0.0.1:0 --ready-file sn1.addr \
  --data sn1.db --identity-key-file sn1.key --certificate-file sn1.cert 2>sn1.log &
pids+=($!)
wait_for 30 test -s sn1.addr
sn1=$(cat sn1.addr)
declare -A daemon_pid
for d in d1 d2 d3 d4 d5 d6; do
  "$bin/aiac-daemon" "${common[@]}" --id "$d" --data "$d.data" --supernode "$sn1" \
    --identity-key-file "$d.key" --certificate-file "$d.cert" \
    --trusted-key "$(cat publisher.pub)" 2>"$d.log" &
  pids+=($!)
  daemon_pid[$d]=$!
done
cat >spawner.toml <<TOML
cluster_key_file = "cluster.key"
authority_keys = ["$authority"]
identity_key_file = "operator.key"
certificate_file = "operator.cert"
supernodes = ["$sn1"]
sign_with = "publisher.key"
wait_daemons_ms = 30000
TOML
sed -e 's/^checkpoint_seconds = .*/checkpoint_seconds = 0.5/' \
  -e 's/^tolerance = .*/tolerance = 1e-12/' "$job" >faults.toml

# The job, supervised in the background; its state in ./state, its log in state.log.
"$spawner" run --config spawner.toml faults.toml --balance off --state state --json first.json \
  --detach | tee detach.out
run=$(grep -o 'pid [0-9]*' detach.out | cut -d' ' -f2)
pids+=("$run")
# Once every task has a checkpoint on each of its backups, the spawner dies.
wait_for 120 sh -c "grep -o 'checkpoints [0-9]*' state.log | awk '\$2 >= 8 {f=1} END {exit !f}'"
kill -KILL "$run"
echo "spawner-resume: SIGKILL to the spawner (pid $run)"
# The tasks run on without it; one of their daemons is killed meanwhile.
wait_for 60 sh -c "grep -l 'waiting for its spawner to resume' d?.log | wc -l | grep -qx 4"
victim=$(grep -l 'waiting for its spawner to resume' d?.log | head -1 | cut -d. -f1)
kill -KILL "${daemon_pid[$victim]}"
wait "${daemon_pid[$victim]}" 2>/dev/null || true
echo "spawner-resume: SIGKILL to task daemon $victim"

"$spawner" resume state --json run.json --quiet 2>resumed.log
grep -o 'task [0-9]* adopted on daemon d[0-9]*\|task [0-9]* resumes on daemon d[0-9]* from iteration [0-9]*' resumed.log
python3 - <<'PY'
import json
s = json.load(open("run.json"))
print(f"status {s['status']}, spawner restarts {s['spawner_restarts']}, daemons lost "
      f"{s['failures']}, replacements {len(s['replacements'])}, error_inf {s['result']['error_inf']:.3g}")
PY
"$spawner" resume state | sed 's/ converged in .*/ converged .../'
