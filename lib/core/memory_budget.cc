#include "core/memory_budget.h"

#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>

namespace aiac {
namespace {

// A number from a cgroup v2 file; max when absent or "max".
uint64_t CgroupValue(const std::string& file) {
  std::ifstream in("/sys/fs/cgroup/" + file);
  std::string text;
  if (!(in >> text) || text == "max") return std::numeric_limits<uint64_t>::max();
  try {
    return std::stoull(text);
  } catch (...) {
    return std::numeric_limits<uint64_t>::max();
  }
}

std::string GiB(double bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
  return buf;
}

}  // namespace

uint64_t AvailableMemoryBytes() {
  uint64_t available = std::numeric_limits<uint64_t>::max();
  std::ifstream meminfo("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  std::string unit;
  while (meminfo >> key >> kib >> unit) {
    if (key == "MemAvailable:") {
      available = kib * 1024;
      break;
    }
  }
  const uint64_t limit = CgroupValue("memory.max");
  const uint64_t used = CgroupValue("memory.current");
  if (limit != std::numeric_limits<uint64_t>::max() && used <= limit) {
    available = std::min(available, limit - used);
  }
  rlimit as{};
  if (getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    available = std::min<uint64_t>(available, as.rlim_cur);
  }
  return available;
}

Status CheckFitsInMemory(const std::string& what, double bytes) {
  const uint64_t available = AvailableMemoryBytes();
  if (bytes <= static_cast<double>(available)) return Status::Ok();
  return ResourceExhausted(what + " needs about " + GiB(bytes) + " of memory, this machine has " +
                           GiB(static_cast<double>(available)) + " available");
}

}  // namespace aiac
