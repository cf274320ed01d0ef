#!/usr/bin/env bash
# A task daemon SIGKILLed under a synchronous run (docs/fault-tolerance.md, "Synchronous runs"): the
# CG job of examples/cg-faults.toml with --sync on a local cluster (live balancing off: with it the
# job may end before the kill); once its tasks iterate, the daemon of one of them is killed. Its
# neighbours send their logged values again to the spare that takes the task over from its newest
# checkpoint, and the run converges to the same answer. Prints the summary line and the replacement.
# Run from the source tree (or with AIAC_BIN naming the folder of the binaries); everything it
# makes goes to a temporary folder, and every process it starts is stopped when it ends.
set -euo pipefail
bin=$(cd "${AIAC_BIN:-build/bin}" && pwd)
job=$(cd "$(dirname "$0")/.." && pwd)/cg-faults.toml
work=$(mktemp -d -t aiac-sync-kill-XXXXXX)
spawner=
cleanup() {
  [[ -n "$spawner" ]] && kill "$spawner" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
cp "$job" faults.toml

"$bin/aiac-spawner" run --local 6 faults.toml --sync --balance off --json run.json \
  --log-level warn >run.log 2>&1 &
spawner=$!

# The daemons of this run that run a task: those with an app process (aiac-app-child).
task_daemons() {
  local daemon
  for daemon in $(pgrep -P "$spawner" -f aiac-daemon || true); do
    if pgrep -P "$daemon" -f aiac-app-child >/dev/null; then echo "$daemon"; fi
  done
}
# Once the four tasks run, give them a checkpoint period (1 s) to iterate, then kill one.
start=$SECONDS
until [[ $(task_daemons | wc -l) -ge 4 ]]; do
  if ((SECONDS - start > 120)); then
    echo "sync-kill: the job's tasks did not start" >&2
    exit 1
  fi
  sleep 0.2
done
sleep 1.5
mapfile -t daemons < <(task_daemons)
victim=${daemons[0]}
echo "sync-kill: SIGKILL to task daemon $victim"
kill -KILL "$victim"

wait "$spawner"
code=$?
spawner=
python3 - <<'PY'
import json
s = json.load(open("run.json"))
print(f"status {s['status']} ({s['mode']}), residual {s['residual']:.3g}, "
      f"daemons lost {s['failures']}, replacements {len(s['replacements'])}")
for r in s["replacements"]:
    print(f"task {r['task']}: {r['failed']} -> {r['daemon']}, from iteration "
          f"{r['restored_iteration']}")
PY
exit $code
