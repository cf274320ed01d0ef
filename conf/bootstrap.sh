#!/usr/bin/env bash
# Installs the Debian packages aiac needs (only the missing ones), then configures and builds
# Release into build/ with -j2. Idempotent: a second run installs and rebuilds nothing.
#
#   conf/bootstrap.sh [--with-petsc]
#
# --with-petsc also installs PETSc (petsc-dev, with Open MPI), which builds the cg_vs_petsc
# benchmark: the CG app against PETSc on the same files.
set -euo pipefail
cd "$(dirname "$0")/.."

with_petsc=0
for arg in "$@"; do
  case "$arg" in
    --with-petsc) with_petsc=1 ;;
    *) echo "bootstrap: unknown option $arg (only --with-petsc)" >&2; exit 2 ;;
  esac
done

packages=(
  g++ cmake make pkg-config
  libboost1.81-dev          # Asio with C++20 coroutines (1.74's awaitable.hpp breaks on g++ 12)
  capnproto libcapnp-dev    # messages and checkpoints on the wire
  librocksdb-dev            # checkpoint store, super-node registry
  libspdlog-dev libtomlplusplus-dev libcli11-dev nlohmann-json3-dev
  libssl-dev                # TLS 1.3 transport, Ed25519 plugin signatures
  libglpk-dev libeigen3-dev # linear programs, linear algebra
  libmetis-dev              # the CG app's partition of a matrix into task blocks
  libsuitesparse-dev        # CHOLMOD, UMFPACK, SPQR: the CG app's block factors
  liblapack-dev             # LAPACK's band Cholesky: the CG app's factor of banded blocks
  libopenblas0-serial       # fast BLAS for CHOLMOD, single-threaded (the tasks are the threads)
  clang libclang-rt-14-dev  # the sanitizer and fuzzing build (conf/sanitize.sh)
  clang-format              # the formatting check (conf/check-format.sh)
  python3                   # the documents' examples test (tests/examples), tools/docs_toc.py
  libgtest-dev libgmock-dev libbenchmark-dev
  iproute2                  # ip netns: the multi-host test, aiac-emulate (docs/emulation.md)
  iputils-ping              # aiac-emulate's test measures its links' round trips with ping
  gnuplot-nox               # the plots of the experiments (tests/eval)
  chromium                  # headless browser: the super-node web page's test (metrics_test.cc)
)
if ((with_petsc)); then packages+=(petsc-dev); fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
if ((${#missing[@]})); then
  echo "bootstrap: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -q
  apt-get install -y -q --no-install-recommends "${missing[@]}"
fi

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j2
