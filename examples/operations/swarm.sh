#!/usr/bin/env bash
# A super-node under the load of many daemons, played from one process by `swarm`
# (docs/scale.md): an authority and a cluster key; a super-node that admits many handshakes
# from one address and serves its metrics; 500 daemons, each with its own key certified by the
# authority and its own TLS connection, registering over one second and heartbeating twice a
# second for six seconds, then deregistering. Prints what the super-node counted while they ran
# and the swarm's summary.
# Run from the source tree (or with AIAC_BIN naming the folder of the binaries); everything it
# makes goes to a temporary folder, and every process it starts is stopped when it ends.
set -euo pipefail
bin=$(cd "${AIAC_BIN:-build/bin}" && pwd)
spawner="$bin/aiac-spawner"
work=$(mktemp -d -t aiac-swarm-XXXXXX)
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
      echo "swarm: timed out waiting for: $*" >&2
      return 1
    fi
    sleep 0.2
  done
}

"$spawner" keygen --out cluster.key >/dev/null
authority=$("$spawner" keygen --authority authority)
"$spawner" certify --authority-key authority.key --role super-node --id sn1 --new-key sn1 >/dev/null
common=(--cluster-key-file cluster.key --authority-key "$authority")

# One address plays every daemon: the super-node admits that many handshakes from it.
"$bin/aiac-supernode" "${common[@]}" --id sn1 --listen 127.0.0.1:0 --ready-file sn1.addr \
  --data sn1.db --identity-key-file sn1.key --certificate-file sn1.cert \
  --max-handshakes-per-address 1024 --metrics 127.0.0.1:0 2>sn1.log &
pids+=($!)
wait_for 30 test -s sn1.addr
wait_for 30 grep -q "metrics at" sn1.log
metrics=$(sed -n 's|.*metrics at http://\([0-9.:]*\)/metrics.*|\1|p' sn1.log | head -1)

"$bin/swarm" "${common[@]}" --authority-private-key authority.key --supernode "$(cat sn1.addr)" \
  --daemons 500 --ramp-s 1 --heartbeat-ms 500 --duration-s 6 --json swarm.json 2>swarm.log &
swarm=$!
pids+=($swarm)

# What the super-node counts while they run (its Prometheus page, read with bash alone).
free() {
  exec 3<>"/dev/tcp/${metrics%:*}/${metrics#*:}"
  printf 'GET /metrics HTTP/1.0\r\nHost: %s\r\n\r\n' "$metrics" >&3
  sed -n 's/^aiac_daemons{state="free"} \([0-9]*\).*/\1/p' <&3
  exec 3<&-
}
free_is() { test "$(free)" = "$1"; }
wait_for 60 free_is 500
echo "super-node sn1: $(free) daemons free"
wait "$swarm"
grep "all 500 daemons registered" swarm.log | sed 's/^.*swarm: /swarm: /'
cat swarm.json
wait_for 30 free_is 0
echo "super-node sn1, the swarm gone: $(free) daemons free"
