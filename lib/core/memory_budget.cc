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

std::string MiB(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / (1024.0 * 1024));
  return buf;
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

MemoryBudget::Reservation& MemoryBudget::Reservation::operator=(Reservation&& other) noexcept {
  if (this != &other) {
    Release();
    reserved_ = std::move(other.reserved_);
    bytes_ = other.bytes_;
    other.bytes_ = 0;
  }
  return *this;
}

void MemoryBudget::Reservation::Release() {
  if (reserved_ && bytes_ > 0) reserved_->fetch_sub(bytes_);
  bytes_ = 0;
  reserved_.reset();
}

Result<MemoryBudget::Reservation> MemoryBudget::Reserve(const std::string& what, uint64_t bytes) {
  uint64_t now = reserved_->load();
  do {
    if (bytes > limit_ || now > limit_ - bytes) {
      return ResourceExhausted(what + ": " + MiB(bytes) +
                               " do not fit in this process's memory budget (" + MiB(now) + " of " +
                               MiB(limit_) + " in use)");
    }
  } while (!reserved_->compare_exchange_weak(now, now + bytes));
  Reservation r;
  r.reserved_ = reserved_;
  r.bytes_ = bytes;
  return r;
}

Result<MemoryBudget::Reservation> ReserveFrom(MemoryBudget* budget, const std::string& what,
                                              uint64_t bytes) {
  if (!budget) return MemoryBudget::Reservation();
  return budget->Reserve(what, bytes);
}

uint64_t DefaultMemoryBudgetBytes() {
  return std::max<uint64_t>(uint64_t{256} << 20, AvailableMemoryBytes() / 2);
}

}  // namespace aiac
