#!/usr/bin/env bash
# An app's process crashing under a running job, as a fault-injection campaign does it
# (docs/fault-tolerance.md, "When the app crashes"): the CG job of examples/cg-faults.toml on a
# local cluster (solved to 1e-12, live balancing off: with it the job may end before the crash);
# once its tasks iterate, one task's app process (aiac-app-child, a child of its daemon) gets
# SIGSEGV. The daemon stays up; the spawner restarts the task from its newest checkpoint on a spare,
# and the run converges to the same answer. Prints the summary line and the crash the summary
# records.
# Run from the source tree (or with AIAC_BIN naming the folder of the binaries); everything it
# makes goes to a temporary folder, and every process it starts is stopped when it ends.
set -euo pipefail
bin=$(cd "${AIAC_BIN:-build/bin}" && pwd)
job=$(cd "$(dirname "$0")/.." && pwd)/cg-faults.toml
work=$(mktemp -d -t aiac-crash-XXXXXX)
spawner=
cleanup() {
  [[ -n "$spawner" ]] && kill "$spawner" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$work"
sed 's/^tolerance = .*/tolerance = 1e-12/' "$job" >faults.toml

"$bin/aiac-spawner" run --local 6 faults.toml --balance off --json run.json --log-level warn \
  >run.log 2>&1 &
spawner=$!

# The app processes of this run only: children of its daemons, which are the spawner's children.
app_processes() {
  local daemon
  for daemon in $(pgrep -P "$spawner" -f aiac-daemon || true); do
    pgrep -P "$daemon" -f aiac-app-child || true
  done
}
# Once four tasks run (four app processes), give them a second to iterate, then crash one.
start=$SECONDS
until [[ $(app_processes | wc -l) -ge 4 ]]; do
  if ((SECONDS - start > 120)); then
    echo "app-crash: the job's tasks did not start" >&2
    exit 1
  fi
  sleep 0.2
done
sleep 1
victim=$(app_processes | head -n 1)
echo "app-crash: SIGSEGV to app process $victim"
kill -SEGV "$victim"

wait "$spawner"
code=$?
spawner=
grep -E "app crashed|resumes" run.log || true
python3 - <<'PY'
import json
s = json.load(open("run.json"))
print(f"status {s['status']}, residual {s['residual']:.3g}, app crashes {len(s['app_crashes'])}, "
      f"daemons lost {s['failures']}, replacements {len(s['replacements'])}")
for c in s["app_crashes"]:
    print(f"task {c['task']} on {c['daemon']}: {c['cause']} after iteration {c['iteration']}")
PY
exit $code
