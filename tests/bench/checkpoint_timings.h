// Checkpoint write timings (checkpoint_bench, transport_eval): `count` checkpoints of one task
// into the RocksDB store (which keeps the newest two, as a backup daemon does) against `count`
// appends + fdatasync of the same bytes to one file, in the same directory. Seconds for all.
#pragma once

#include <cstdint>
#include <string>

namespace aiac::bench {

// `bytes` pseudo-random bytes (xorshift from `seed`): a state that does not compress.
std::string State(size_t bytes, uint64_t seed);
// Writes `state` `count` times to the file `path`, each synced; removes it after.
double RawSeconds(const std::string& path, const std::string& state, int count);
// Puts `state` as `count` checkpoints into a store at `dir`; removes it after.
double StoreSeconds(const std::string& dir, const std::string& state, int count);

}  // namespace aiac::bench
