#!/usr/bin/env bash
# A platform file laid out on this host for any program (docs/emulation.md, "OS-level
# emulation"): the front of build/bin/aiac-emulate, which does the work.
#
#   conf/emulate.sh up P.toml [--cores N] [--seed S]   one namespace and CPU cgroup per node
#   conf/emulate.sh exec NODE [--platform NAME] -- CMD  run CMD as that node
#   conf/emulate.sh status [NAME]                       nodes, addresses, CPU shares, switch
#   conf/emulate.sh down NAME|P.toml|--all              remove it all (idempotent)
set -euo pipefail
bin="$(cd "$(dirname "$0")/.." && pwd)/build/bin/aiac-emulate"
if [[ ! -x "$bin" ]]; then
  echo "emulate: $bin is not built (conf/bootstrap.sh builds it)" >&2
  exit 2
fi
exec "$bin" "$@"
