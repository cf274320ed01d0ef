#!/usr/bin/env bash
# The sanitizer pass: everything built with clang, AddressSanitizer and UndefinedBehaviorSanitizer
# into build-asan/ (with the libFuzzer targets of tests/fuzz), then the unit, integration and fuzz
# tests run there; the benchmarks are not built (timings mean nothing under a sanitizer). CI runs
# it after the test suite. Extra arguments go to both ctest runs (e.g. -R Hostile).
set -euo pipefail
cd "$(dirname "$0")/.."
CC=clang CXX=clang++ cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Release -DAIAC_SANITIZE=ON \
  -DAIAC_FUZZ=ON -DAIAC_BUILD_BENCHMARKS=OFF >/dev/null
cmake --build build-asan -j2
# Any report fails the test that met it, in this process or in a child it started.
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
ctest --test-dir build-asan --output-on-failure -j2 -E '^BalanceTest[.]' "$@"
# Live balancing with real processes is the most timing-sensitive suite under the sanitizers
# (a move of rows takes seconds there, and one run once timed out while two other sanitized runs
# shared the cores): its runs go one at a time, with nothing else competing.
ctest --test-dir build-asan --output-on-failure -j1 -R '^BalanceTest[.]' "$@"
