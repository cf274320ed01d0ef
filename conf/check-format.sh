#!/usr/bin/env bash
# Checks that every tracked C++ file follows .clang-format (clang-format 14, Debian 12's), naming
# the files that drift; `conf/check-format.sh --fix` reformats them instead. CI runs the check.
set -euo pipefail
cd "$(dirname "$0")/.."
mapfile -t files < <(git ls-files '*.cc' '*.h')
if [[ "${1:-}" == "--fix" ]]; then
  clang-format -i --style=file "${files[@]}"
  exit 0
fi
drift=()
for f in "${files[@]}"; do
  clang-format --style=file --dry-run -Werror "$f" >/dev/null 2>&1 || drift+=("$f")
done
if ((${#drift[@]})); then
  echo "check-format: ${#drift[@]} files drift from .clang-format (conf/check-format.sh --fix):" >&2
  printf '  %s\n' "${drift[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
