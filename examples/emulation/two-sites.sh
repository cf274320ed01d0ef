#!/usr/bin/env bash
# Two sites on this host (docs/emulation.md, "OS-level emulation"): brings the platform file
# given (examples/emulation/two-sites.toml, or one with the same node names) up with aiac-emulate, shows a round trip inside a site and
# one across the 20 ms link, the CPU a busy loop gets on a full-speed and on a half-speed node,
# and on the half-speed one again with its quota halved mid-way (aiac-emulate cpu), runs the CG job with its daemons as the platform's nodes, and takes the platform down again
# (also when a step fails). Needs root (namespaces, cgroups, TUN devices).
# Run from the source tree (or with AIAC_BIN naming the folder of the binaries).
set -euo pipefail
bin=$(cd "${AIAC_BIN:-build/bin}" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
platform=$(realpath "${1:-$here/two-sites.toml}")
work=$(mktemp -d -t aiac-emulate-XXXXXX)
cleanup() {
  "$bin/aiac-emulate" down "$platform" >/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
emulate() { "$bin/aiac-emulate" "$@"; }

emulate up "$platform"
# The nodes' addresses, in the file's order: paris-1, paris-2, nice-1, nice-2.
# (The platform's name is the file's first `name`; the clusters have theirs.)
name=$(sed -n 's/^name = "\(.*\)"/\1/p' "$platform" | head -1)
hosts=$(emulate hostfile "$name")
mapfile -t address < <(cut -d' ' -f1 <<<"$hosts")
inside=$(emulate exec paris-1 -- ping -q -c 3 -i 0.2 "${address[1]}" | tail -1)
across=$(emulate exec paris-1 -- ping -q -c 3 -i 0.2 "${address[2]}" | tail -1)
echo "paris-1 -> paris-2: $inside"
echo "paris-1 -> nice-1:  $across"
# Both at once: their quotas fit the host together.
emulate exec paris-1 -- "$bin/aiac-emulate" burn 2 >"$work/fast" &
emulate exec nice-1 -- "$bin/aiac-emulate" burn 2 >"$work/slow"
wait
echo "busy loop on paris-1: $(cat "$work/fast")"
echo "busy loop on nice-1:  $(cat "$work/slow")"
# Its owner comes back: nice-1 keeps half of its share, then gets it back.
emulate cpu nice-1 0.5
echo "busy loop on nice-1:  $(emulate exec nice-1 -- "$bin/aiac-emulate" burn 2)"
emulate cpu nice-1 1

sed 's/^n = .*/n = 60000/' "$here/../../apps/cg/cg.toml" >"$work/cg.toml"
"$bin/aiac-spawner" run "$work/cg.toml" --platform "$platform" --emulation os --local --quiet \
  2>"$work/run.log" | tail -1
