#include "checkpoint_timings.h"

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "bench_support.h"
#include "checkpoint/rocksdb_checkpoint_store.h"

namespace aiac::bench {

using Clock = std::chrono::steady_clock;

std::string State(size_t bytes, uint64_t seed) {
  std::string s(bytes, '\0');
  uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < bytes; ++i) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s[i] = static_cast<char>(x);
  }
  return s;
}

double RawSeconds(const std::string& path, const std::string& state, int count) {
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  if (fd < 0) {
    std::perror("open");
    std::exit(1);
  }
  auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    if (::write(fd, state.data(), state.size()) != static_cast<ssize_t>(state.size()) ||
        ::fdatasync(fd) != 0) {
      std::perror("write");
      std::exit(1);
    }
  }
  double s = SecondsSince(start);
  ::close(fd);
  std::filesystem::remove(path);
  return s;
}

double StoreSeconds(const std::string& dir, const std::string& state, int count) {
  auto store = checkpoint::RocksDbCheckpointStore::Open(dir);
  if (!store.ok()) {
    std::fprintf(stderr, "%s\n", store.status().ToString().c_str());
    std::exit(1);
  }
  // The checksum is computed where the task runs, not by the store: outside the timing. The
  // store verifies it on every Put, inside.
  checkpoint::Checkpoint c = checkpoint::MakeCheckpoint("bench", 0, 1, 0, state);
  auto start = Clock::now();
  for (int i = 1; i <= count; ++i) {
    c.iteration = static_cast<uint64_t>(i);
    auto put = (*store)->Put(c);
    if (!put.ok()) {
      std::fprintf(stderr, "%s\n", put.status().ToString().c_str());
      std::exit(1);
    }
  }
  double s = SecondsSince(start);
  store->reset();
  std::filesystem::remove_all(dir);
  return s;
}

}  // namespace aiac::bench
