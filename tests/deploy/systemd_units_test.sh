#!/usr/bin/env bash
# conf/deploy's systemd units pass `systemd-analyze verify` (syntax, directives, and that the
# binaries they start exist: the /opt/aiac/bin of an install is pointed at this build's bin/).
# Skipped (77) where systemd-analyze is not installed.
set -euo pipefail
bin=${1:?usage: systemd_units_test.sh BUILD_BIN SOURCE_DIR}
src=${2:?usage: systemd_units_test.sh BUILD_BIN SOURCE_DIR}
command -v systemd-analyze >/dev/null || { echo "SKIP: systemd-analyze is not installed"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for unit in aiac-daemon aiac-supernode; do
  sed "s#/opt/aiac/bin#$bin#g" "$src/conf/deploy/$unit.service" > "$work/$unit.service"
done
# verify prints problems and fails on errors; warnings are failures here too.
out=$(systemd-analyze verify "$work/aiac-daemon.service" "$work/aiac-supernode.service" 2>&1) || {
  echo "$out"
  exit 1
}
if [[ -n $out ]]; then echo "$out"; exit 1; fi
echo "both units verified"
