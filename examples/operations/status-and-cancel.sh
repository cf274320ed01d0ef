#!/usr/bin/env bash
# A federation started by hand as an operator starts one, watched and stopped with the operator's
# commands (docs/operations.md, "Seeing and stopping what runs"):
#   - an authority, a cluster key and a publisher key; a certificate for each process;
#   - two peer super-nodes, two daemons on the first and one on the second;
#   - a job submitted to the first super-node, that would run for hours;
#   - the first super-node serving its metrics and its live web page (`--metrics`), read while
#     the job runs;
#   - `aiac-spawner status` at the second super-node (the federation as it sees it),
#     `status --job ID` (the job's tasks), then `aiac-spawner cancel ID` there: the job's own
#     spawner ends it as Ctrl-C would, with status "aborted".
# Run from the source tree (or with AIAC_BIN naming the folder of the binaries); everything it
# makes goes to a temporary folder, and every process it starts is stopped when it ends.
set -euo pipefail
bin=$(cd "${AIAC_BIN:-build/bin}" && pwd)
spawner="$bin/aiac-spawner"
work=$(mktemp -d -t aiac-ops-XXXXXX)
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
      echo "status-and-cancel: timed out waiting for: $*" >&2
      return 1
    fi
    sleep 0.2
  done
}

# Keys and certificates (docs/security.md).
"$spawner" keygen --out cluster.key >/dev/null
authority=$("$spawner" keygen --authority authority)
"$spawner" keygen --signing publisher >/dev/null
publisher=$(cat publisher.pub)
for sn in sn1 sn2; do
  "$spawner" certify --authority-key authority.key --role super-node --id "$sn" --new-key "$sn" >/dev/null
done
for d in d1 d2 d3; do
  "$spawner" certify --authority-key authority.key --role daemon --id "$d" --new-key "$d" >/dev/null
done
"$spawner" certify --authority-key authority.key --role spawner --id operator --new-key operator >/dev/null
common=(--cluster-key-file cluster.key --authority-key "$authority")

# The super-nodes, then the daemons.
"$bin/aiac-supernode" "${common[@]}" --id sn1 --listen 127.0.0.1:0 --ready-file sn1.addr \
  --data sn1.db --identity-key-file sn1.key --certificate-file sn1.cert \
  --metrics 127.0.0.1:0 2>sn1.log &
pids+=($!)
wait_for 30 test -s sn1.addr
sn1=$(cat sn1.addr)
"$bin/aiac-supernode" "${common[@]}" --id sn2 --listen 127.0.0.1:0 --ready-file sn2.addr \
  --data sn2.db --identity-key-file sn2.key --certificate-file sn2.cert --peer "$sn1" 2>sn2.log &
pids+=($!)
wait_for 30 test -s sn2.addr
sn2=$(cat sn2.addr)
for d in d1 d2 d3; do
  at=$sn1
  [[ $d == d3 ]] && at=$sn2
  "$bin/aiac-daemon" "${common[@]}" --id "$d" --data "$d.data" --supernode "$at" \
    --identity-key-file "$d.key" --certificate-file "$d.cert" --trusted-key "$publisher" 2>"$d.log" &
  pids+=($!)
done

# The operator's spawner options: where the super-nodes are, and its credentials.
cat >spawner.toml <<TOML
cluster_key_file = "cluster.key"
authority_keys = ["$authority"]
identity_key_file = "operator.key"
certificate_file = "operator.cert"
supernodes = ["$sn1"]
sign_with = "publisher.key"
TOML
chmod 600 publisher.key

# Until sn2 sees the three daemons (sn1's through its digest).
wait_for 60 sh -c "'$spawner' status --config spawner.toml --supernode '$sn2' | grep -c ' free ' | grep -qx 3"

cat >long.toml <<TOML
name = "long"
app = "synthetic"
tasks = 2
timeout_s = 3600
[params]
items = 2000
iterations = 1000000
base_cost = 2000
TOML
"$spawner" run --config spawner.toml long.toml --json long.json 2>spawner.log &
run=$!
pids+=($run)

job_running() {
  "$spawner" status --config spawner.toml --supernode "$sn2" --json >status.json &&
    python3 -c 'import json,sys; j=json.load(open("status.json"))["jobs"]; sys.exit(not (j and j[0]["phase"] == "running"))'
}
wait_for 120 job_running
job=$(python3 -c 'import json; print(json.load(open("status.json"))["jobs"][0]["id"])')

echo "\$ aiac-spawner status --supernode $sn2"
"$spawner" status --config spawner.toml --supernode "$sn2"
echo
echo "\$ aiac-spawner status --supernode $sn2 --job $job"
"$spawner" status --config spawner.toml --supernode "$sn2" --job "$job"
echo
# sn1's metrics (the port it chose is in its log), as Prometheus scrapes them.
web=$(grep -o 'metrics at http://[0-9.:]*' sn1.log | head -1 | sed 's/metrics at //')
echo "\$ curl -s $web/metrics | grep -E '^aiac_(daemons|jobs)'"
python3 - "$web" <<'PY'
import sys, urllib.request
page = urllib.request.urlopen(sys.argv[1] + "/metrics").read().decode()
print("\n".join(l for l in page.splitlines() if l.startswith(("aiac_daemons", "aiac_jobs"))))
PY
echo "(the live page: $web/)"
echo
echo "\$ aiac-spawner cancel $job --supernode $sn2"
"$spawner" cancel "$job" --config spawner.toml --supernode "$sn2"

code=0
wait "$run" || code=$?
if [[ $code -ne 130 ]] || ! grep -q '"status": "aborted"' long.json; then
  echo "status-and-cancel: the spawner ended with $code, not as cancelled (130, aborted)" >&2
  exit 1
fi
