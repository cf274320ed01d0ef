#!/usr/bin/env bash
# The sanitizer pass: everything built with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# into build-asan/ (with the libFuzzer targets of tests/fuzz), then the tests run there; the
# benchmarks are not built (timings mean nothing under a sanitizer). CI runs it after the suite.
#
#   conf/sanitize.sh [--all] [ctest arguments...]
#
# By default: the unit, fuzz and integration tests, but of the three long suites of killed
# daemons, moved items and resumed spawners (FaultTest, BalanceTest, ResumeRun; half the suite's
# time, several times more under the sanitizers) and of the five-host run (netns.*) only one test
# each, which goes through the same code (replacement, moves, resumption) as the rest of its suite.
# --all runs every test. Other arguments replace the choice: one ctest run with them (e.g. -R
# Hostile).
set -euo pipefail
cd "$(dirname "$0")/.."
all=0
if [[ "${1:-}" == --all ]]; then
  all=1
  shift
fi
# -O1, as the sanitizers' authors advise (and a tenth shorter to build than -O3); the network and
# process code at -O0 (AIAC_SANITIZE_UNOPTIMISED, top-level CMakeLists.txt).
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CXX_FLAGS_RELEASE=-O1 -DNDEBUG" "-DCMAKE_C_FLAGS_RELEASE=-O1 -DNDEBUG" \
  -DAIAC_SANITIZE=ON -DAIAC_FUZZ=ON -DAIAC_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j2
# Any report fails the test that met it, in this process or in a child it started.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
run() { ctest --test-dir build-asan --output-on-failure "$@"; }
if (($#)); then
  run -j2 "$@"
elif ((all)); then
  run -j2 -E '^BalanceTest[.]'
  # Live balancing with real processes is the most timing-sensitive suite under the sanitizers
  # (a move of rows takes seconds there, and one run once timed out while two other sanitized
  # runs shared the cores): its runs go one at a time, with nothing else competing.
  run -j1 -R '^BalanceTest[.]'
else
  run -j2 -E '^(FaultTest|BalanceTest|ResumeRun|netns)[.]'
  run -j2 -R '^(FaultTest[.]ThreeKilledDaemonsSameAnswer|ResumeRun[.]ASpawnerKilledWhileTheTasksRunIsResumedWithTheSameAnswer|netns[.]MultiHostTest[.]ACgRunAcrossFiveHostsSurvivesADaemonKill)$'
  run -j1 -R '^BalanceTest[.]ACgDaemonKilledWhileItsRowsMoveLeavesTheSolutionRight$'
fi
