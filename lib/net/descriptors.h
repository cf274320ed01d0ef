// The process's descriptor limit (RLIMIT_NOFILE): each connection a server holds is a
// descriptor, so the limit caps how many daemons a super-node can hold (20,000 daemons need
// 20,000 descriptors; a shell's soft limit is often 1,024).
#pragma once

#include <cstddef>
#include <cstdint>

namespace aiac::net {

// Descriptors kept out of a server's connections: files (RocksDB, plugins, logs) and outgoing
// links.
inline constexpr size_t kReservedDescriptors = 64;

// Raises the soft descriptor limit towards `wanted`: up to the hard limit, which any process may
// do, and past it when the process may raise the hard limit too (root, CAP_SYS_RESOURCE; never
// past /proc/sys/fs/nr_open). Never lowers it. Returns the soft limit in force after (SIZE_MAX
// when unlimited).
uint64_t RaiseDescriptorLimit(uint64_t wanted);

// The most connections a server may hold under the soft limit now in force: `wanted`, or the
// limit minus kReservedDescriptors when that is fewer.
size_t DescriptorBudget(size_t wanted);

}  // namespace aiac::net
