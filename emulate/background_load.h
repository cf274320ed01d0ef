// The background load of an emulated node (docs/emulation.md), run by `aiac-emulate up` inside
// the node's cgroup, where it competes with whatever the node runs for the node's quota: Lee &
// Cho's model as the in-process emulation draws it (emulation/emulated_node.h), normal(mean_jobs,
// std_jobs) competing jobs clamped at 0 and redrawn every mean_size seconds; each whole job is
// a busy thread, and a fraction of a job a thread busy for that fraction of every 10 ms.
#pragma once

#include <cstdint>

#include "emulation/platform_file.h"

namespace aiac::emulate {

// Runs until the process is killed. At most min(16, ceil(mean + 3 x std)) competing jobs at a
// time.
[[noreturn]] void RunBackgroundLoad(const emulation::BackgroundSpec& spec, uint64_t seed);

}  // namespace aiac::emulate
