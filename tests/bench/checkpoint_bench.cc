// Checkpoint write throughput of the RocksDB store against a raw sequential file write of the
// same bytes, both synced to disk after each write, in the same run and the same directory
// (checkpoint_timings.h). For each state size, `count` checkpoints of one task against `count`
// appends + fdatasync of the same bytes to one file. Prints MB/s for both and store/raw (1.00x =
// as fast; the goal is at least 0.70x).
// Run: build/bin/checkpoint_bench [count] [dir]
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "checkpoint_timings.h"
#include "core/temp_dir.h"

using namespace aiac;
using bench::RawSeconds;
using bench::State;
using bench::StoreSeconds;

int main(int argc, char** argv) {
  const int count = argc > 1 ? std::atoi(argv[1]) : 200;
  const std::string root =
      argc > 2 ? argv[2] : TempRoot() + "/aiac-checkpoint-bench-" + std::to_string(::getpid());
  std::filesystem::create_directories(root);
  std::printf("checkpoint_bench: %d synced writes per size, in %s\n", count, root.c_str());
  for (size_t bytes : {size_t{100} << 10, size_t{1} << 20}) {
    const std::string state = State(bytes, bytes);
    // Alternate and keep the best of three, so that a burst of other load hits both alike.
    double raw = 1e30, store = 1e30;
    for (int rep = 0; rep < 3; ++rep) {
      raw = std::min(raw, RawSeconds(root + "/raw", state, count));
      store = std::min(store, StoreSeconds(root + "/store", state, count));
    }
    const double mb = static_cast<double>(bytes) * count / 1e6;
    std::printf(
        "  %5zu KB states: raw file %8.1f MB/s, checkpoint store %8.1f MB/s, store/raw %.2fx\n",
        bytes >> 10, mb / raw, mb / store, raw / store);
  }
  std::filesystem::remove_all(root);
  return 0;
}
