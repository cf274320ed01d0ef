#!/usr/bin/env bash
# PageRank on an R-MAT graph of 10,000,000 links (1,048,576 nodes): the example app
# (examples/pagerank) on `--local 4`, asynchronous against synchronous, and against one process
# running the power iteration (pagerank_check power). Prints each time and the ratios:
# iterate phase (the iterations alone, what the power iteration's time measures) and wall time.
# Usage: pagerank_bench.sh BUILD_DIR PAGERANK_CHECK [EDGES]
set -euo pipefail
build=${1:?usage: pagerank_bench.sh BUILD_DIR PAGERANK_CHECK [EDGES]}
check=${2:?usage: pagerank_bench.sh BUILD_DIR PAGERANK_CHECK [EDGES]}
edges=${3:-10000000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
"$check" rmat 1048576 "$edges" 11 web.edges
cat >web.toml <<JOB
name = "web"
app = "pagerank"
tasks = 4
timeout_s = 900
[params]
graph = "web.edges"
nodes = 1048576
tolerance = 1e-9
residual_tolerance = 1e-7
output = "ranks.mtx"
JOB
field() { python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print(eval(sys.argv[2]))" "$@"; }
for mode in async sync; do
  flag=; [[ $mode == sync ]] && flag=--sync
  "$build/bin/aiac-spawner" run --local 4 $flag web.toml --json "$mode.json" >"$mode.log" 2>&1 \
    || { tail -n 20 "$mode.log"; exit 1; }
  "$check" compare web.edges ranks.mtx 0.85 1048576 >/dev/null
done
power=$("$check" power web.edges 0.85 | sed -E 's/.* ([0-9.]+) s$/\1/')
a_iter=$(field async.json 'j["phases"]["iterate"]'); s_iter=$(field sync.json 'j["phases"]["iterate"]')
a_wall=$(field async.json 'j["wall_seconds"]'); s_wall=$(field sync.json 'j["wall_seconds"]')
a_its=$(field async.json 'j["iterations"]["max"]'); s_its=$(field sync.json 'j["iterations"]["max"]')
python3 - "$a_iter" "$s_iter" "$a_wall" "$s_wall" "$power" "$a_its" "$s_its" <<'PY'
import sys
a_iter, s_iter, a_wall, s_wall, power, a_its, s_its = map(float, sys.argv[1:])
print(f"pagerank_bench: 10M links, --local 4: async iterate {a_iter:.2f} s ({a_its:.0f} iterations), "
      f"sync iterate {s_iter:.2f} s ({s_its:.0f}), one-process power iteration {power:.2f} s")
print(f"pagerank_bench: sync/async iterate {s_iter / a_iter:.2f}x, power/async iterate "
      f"{power / a_iter:.2f}x; wall: async {a_wall:.1f} s, sync {s_wall:.1f} s, sync/async {s_wall / a_wall:.2f}x")
PY
