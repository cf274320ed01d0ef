#include "net/descriptors.h"

#include <sys/resource.h>

#include <algorithm>
#include <fstream>
#include <limits>

namespace aiac::net {

namespace {

uint64_t Soft(const rlimit& lim) {
  return lim.rlim_cur == RLIM_INFINITY ? std::numeric_limits<uint64_t>::max() : lim.rlim_cur;
}

// The kernel's ceiling for any process's limit.
uint64_t NrOpen() {
  std::ifstream in("/proc/sys/fs/nr_open");
  uint64_t n = 0;
  return in >> n ? n : 0;
}

}  // namespace

uint64_t RaiseDescriptorLimit(uint64_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0) return 0;
  if (Soft(lim) >= wanted) return Soft(lim);
  if (lim.rlim_max != RLIM_INFINITY && lim.rlim_max < wanted) {
    // Past the hard limit: only a privileged process may, and setrlimit says whether this is one.
    const uint64_t ceiling = NrOpen();
    rlimit higher{};
    higher.rlim_cur = higher.rlim_max = ceiling > 0 ? std::min(wanted, ceiling) : wanted;
    if (higher.rlim_max > lim.rlim_max && setrlimit(RLIMIT_NOFILE, &higher) == 0) {
      return Soft(higher);
    }
  }
  rlimit raised = lim;
  raised.rlim_cur = lim.rlim_max == RLIM_INFINITY
                        ? wanted
                        : std::min<rlim_t>(lim.rlim_max, static_cast<rlim_t>(wanted));
  if (setrlimit(RLIMIT_NOFILE, &raised) == 0) return Soft(raised);
  return Soft(lim);
}

size_t DescriptorBudget(size_t wanted) {
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) != 0 || lim.rlim_cur == RLIM_INFINITY) return wanted;
  const size_t reserve = kReservedDescriptors;
  const size_t budget = lim.rlim_cur > reserve * 2 ? lim.rlim_cur - reserve : lim.rlim_cur / 2;
  return std::min(wanted, budget);
}

}  // namespace aiac::net
