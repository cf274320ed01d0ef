#!/usr/bin/env bash
# A spawner that stops running for a while (docs/fault-tolerance.md, "When the spawner is
# lost"): the CG job of examples/cg-faults.toml on a local cluster of four daemons, with
# spawner_timeout_s = 3. Once its tasks iterate, the spawner is stopped (SIGSTOP: its links stay
# open, as when its host sleeps); its daemons hear nothing from it for 3 s and count it as lost,
# their tasks running on for orphan_seconds. When it runs again they go on under it, and the run
# ends as if nothing had happened. Prints what the daemons and the spawner said, and the summary.
# Run from the source tree (or with AIAC_BIN naming the folder of the binaries); everything it
# makes goes to a temporary folder, and the run is stopped if the script ends early.
set -euo pipefail
bin=$(cd "${AIAC_BIN:-build/bin}" && pwd)
job=$(cd "$(dirname "$0")/.." && pwd)/cg-faults.toml
work=$(mktemp -d -t aiac-asleep-XXXXXX)
run=
cleanup() {
  if [[ -n $run ]]; then kill -CONT "$run" 2>/dev/null || true; kill "$run" 2>/dev/null || true; fi
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
      echo "spawner-asleep: timed out waiting for: $*" >&2
      return 1
    fi
    sleep 0.2
  done
}

# The job, with a spawner timeout of 3 s (default 30). The local daemons log to the same file as
# the spawner, at info level to show when they hear it again.
{ sed 's/^\[params\]$/spawner_timeout_s = 3\n[params]/' "$job"; } >asleep.toml
"$bin/aiac-spawner" run asleep.toml --local 4 --local-log-level info --balance off \
  --json run.json >run.out 2>run.log &
run=$!
wait_for 120 grep -q 'checkpoints [1-9]' run.log
kill -STOP "$run"
echo "spawner-asleep: SIGSTOP to the spawner"
wait_for 60 sh -c "test \$(grep -c 'sent nothing for' run.log) -eq 4"
kill -CONT "$run"
echo "spawner-asleep: SIGCONT to the spawner"
wait "$run"
run=
grep -o 'its spawner .* sent nothing for [0-9]* s; task 0 .*\|task 0 goes on under it\|the spawner did not run for .*' run.log |
  sed 's/for at least [0-9.]* s/for at least N s/'
sed 's/ converged in .*/ converged .../' run.out
python3 - <<'PY'
import json
s = json.load(open("run.json"))
print(f"status {s['status']}, daemons lost {s['failures']}, error_inf {s['result']['error_inf']:.3g}")
PY
