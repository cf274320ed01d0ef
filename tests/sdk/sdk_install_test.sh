#!/usr/bin/env bash
# The app SDK from nothing but its installed files: `cmake --install` into a fresh prefix, then
# `aiac-spawner new-app` writes an app that is built out of tree with find_package(aiac), signed
# by its publisher with `sign`, and run on a local cluster whose daemons trust only that key; the
# same source also builds with pkg-config alone. Then the PageRank example (examples/pagerank),
# built out of tree the same way, ranks an R-MAT graph of 100,000 nodes and 1,000,000 links,
# async and sync, checked against an independent power iteration (pagerank_check).
# Usage: sdk_install_test.sh BUILD_DIR SOURCE_DIR PAGERANK_CHECK
set -euo pipefail
build=${1:?usage: sdk_install_test.sh BUILD_DIR SOURCE_DIR PAGERANK_CHECK}
source_dir=${2:?usage: sdk_install_test.sh BUILD_DIR SOURCE_DIR PAGERANK_CHECK}
check=${3:?usage: sdk_install_test.sh BUILD_DIR SOURCE_DIR PAGERANK_CHECK}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
spawner=$prefix/bin/aiac-spawner
cd "$work"

cmake --install "$build" --prefix "$prefix" >install.log
# Only the app API: no net, no Cap'n Proto, no RocksDB among the installed headers' includes.
if grep -rhE '#include' "$prefix/include" | grep -vE '#include <[a-z_]+>|"app/app.h"|"core/status.h"'; then
  echo "FAIL: an installed header includes more than the app API"; exit 1
fi

"$spawner" new-app heat --dir heat
[[ $(grep -c '' heat/CMakeLists.txt) -eq 5 ]] || { echo "FAIL: the app's CMakeLists is not five lines"; exit 1; }
if "$spawner" new-app heat --dir heat 2>err.txt; then echo "FAIL: new-app overwrote an app"; exit 1; fi
grep -q "exists already: nothing written" err.txt
if "$spawner" new-app Bad-Name 2>err.txt; then echo "FAIL: new-app took a bad name"; exit 1; fi
grep -q "use lower-case letters" err.txt

# Built against the installed prefix only.
cmake -S heat -B heat/build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >configure.log
cmake --build heat/build >build.log

"$spawner" keygen --signing publisher >/dev/null
"$spawner" sign heat/build/libaiac_app_heat.so --key publisher.key
"$spawner" run --local 4 --local-trusted-key "$(cat publisher.pub)" heat/heat.toml \
  --json async.json >async.log 2>&1 || { cat async.log; exit 1; }
grep -q '"status": "converged"' async.json || { cat async.json; exit 1; }
"$spawner" run --local 4 --sync --local-trusted-key "$(cat publisher.pub)" heat/heat.toml \
  --json sync.json >sync.log 2>&1 || { cat sync.log; exit 1; }
grep -q '"status": "converged"' sync.json || { cat sync.json; exit 1; }

# pkg-config alone; and the app's tasks in one process (app::RunLocally), as its comment says.
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
# shellcheck disable=SC2046
g++ -O1 -shared -fPIC heat/heat.cc -o libaiac_app_heat.so $(pkg-config --cflags --libs aiac)
"$spawner" sign libaiac_app_heat.so --key publisher.key >/dev/null
# The headers also answer to their full name.
sed 's|#include "app/app.h"|#include <aiac/app/app.h>|' heat/heat.cc >heat_full_name.cc
grep -q '<aiac/app/app.h>' heat_full_name.cc
# shellcheck disable=SC2046
g++ -O1 -shared -fPIC heat_full_name.cc -o libaiac_app_heat2.so $(pkg-config --cflags --libs aiac)
# shellcheck disable=SC2046
g++ -O1 heat/heat.cc heat/heat_local.cc -o heat_local $(pkg-config --cflags --libs aiac)
./heat_local | tee local.txt
grep -q "heat async: converged" local.txt && grep -q "heat sync: converged" local.txt
# PageRank, out of tree from the installed files only.
cp -r "$source_dir/examples/pagerank" pagerank
rm -rf pagerank/build
cmake -S pagerank -B pagerank/build -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >>configure.log
cmake --build pagerank/build >>build.log
"$spawner" sign pagerank/build/libaiac_app_pagerank.so --key publisher.key >/dev/null
"$check" rmat 100000 1000000 7 web.edges
cat >web.toml <<JOB
name = "web"
app = "pagerank"
tasks = 4
timeout_s = 300
plugin = "pagerank/build/libaiac_app_pagerank.so"
[params]
graph = "web.edges"
nodes = 100000
output = "ranks.mtx"
JOB
for mode in async sync; do
  flag=; [[ $mode == sync ]] && flag=--sync
  "$spawner" run --local 4 $flag --local-trusted-key "$(cat publisher.pub)" web.toml \
    --json "web-$mode.json" >"web-$mode.log" 2>&1 || { tail -n 20 "web-$mode.log"; exit 1; }
  grep -q '"status": "converged"' "web-$mode.json" || { cat "web-$mode.json"; exit 1; }
  grep -q "pagerank: top 20 nodes:" "web-$mode.log" || { tail -n 5 "web-$mode.log"; exit 1; }
  "$check" compare web.edges ranks.mtx 0.85 100000
done
# A task daemon killed mid-run: replaced from its checkpoint, same ranks.
sed -e 's/^timeout_s = 300/timeout_s = 300\ncheckpoint_every = 5/' \
    -e 's/^output = /tolerance = 1e-13\noutput = /' web.toml >web-faults.toml
"$spawner" run --local 5 --kill-every 1 --kill-count 1 --kill-seed 3 \
  --local-trusted-key "$(cat publisher.pub)" web-faults.toml --json web-faults.json \
  >web-faults.log 2>&1 || { tail -n 20 web-faults.log; exit 1; }
python3 -c 'import json,sys; j=json.load(open("web-faults.json")); sys.exit(0 if j["status"] == "converged" and j["failures"] >= 1 and len(j["replacements"]) >= 1 else 1)' \
  || { cat web-faults.json; exit 1; }
"$check" compare web.edges ranks.mtx 0.85 100000
echo "sdk: installed, built out of tree (CMake and pkg-config), signed and run; pagerank checked"
