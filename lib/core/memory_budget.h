// How much memory this process may still allocate, to refuse inputs whose declared sizes could
// never fit before anything is allocated for them: the smallest of MemAvailable
// (/proc/meminfo), the cgroup's memory.max less its memory.current, and RLIMIT_AS.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace aiac {

uint64_t AvailableMemoryBytes();

// ResourceExhausted "WHAT needs about X GiB of memory, this machine has Y GiB available" when
// `bytes` exceeds AvailableMemoryBytes().
Status CheckFitsInMemory(const std::string& what, double bytes);

}  // namespace aiac
