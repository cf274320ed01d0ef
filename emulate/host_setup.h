// What aiac-emulate changes on the host for one node of an OS-level platform
// (emulation/os_platform.h): a network namespace holding a persistent TUN device `aiac0` with the
// node's address, and a CPU cgroup with the node's quota. Every call names the command or file
// that failed. Needs root. Not thread-safe (commands run one at a time).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include "core/status.h"
#include "emulation/os_platform.h"

namespace aiac::emulate {

// The kernel's CPU controller: cgroup v2's `cpu.max` where the unified hierarchy has the cpu
// controller, else v1's `cpu.cfs_quota_us`.
enum class CpuController { kV1, kV2 };
Result<CpuController> FindCpuController();
const char* Describe(CpuController controller);  // "cgroup v1 cpu" / "cgroup v2 cpu.max"

// The cgroup folder of a node: <root>/aiac-emulate/<platform>/<node>.
std::string CgroupDir(CpuController controller, const std::string& platform,
                      const std::string& node);
// The folder holding every node's cgroup of a platform.
std::string PlatformCgroupDir(CpuController controller, const std::string& platform);

// Runs argv (argv[0] looked up in PATH) with its output discarded; its failure names the command
// and the first line it printed on stderr.
Status RunCommand(const std::vector<std::string>& argv);

// Makes the node's namespace (loopback up, aiac0 with its address in 10.200.0.0/16) and its
// cgroup with its quota. A namespace that exists already is refused.
Status MakeNode(const emulation::OsNode& node, CpuController controller,
                const std::string& platform);

// Sets the quota of the cgroup in `dir` to `cores` (at least 1 % of a core).
Status SetCpuQuota(CpuController controller, const std::string& dir, double cores);
// The quota of the cgroup in `dir` in cores; -1 when it has none.
Result<double> ReadCpuQuota(CpuController controller, const std::string& dir);

// Makes the host's port into the platform: the TUN device plan.host_device in this namespace,
// with plan.host_address in plan.subnet. Refused when the device exists.
Status MakeHostPort(const emulation::OsPlatform& plan);
// Deletes the host's TUN device `device`; whether it was there.
bool RemoveHostPort(const std::string& device);
// The host's TUN devices named "aiacemu<slot>".
std::vector<std::string> ListHostPorts();

// Kills every process in the node's namespace and cgroup, then removes both. Idempotent: what is
// not there is skipped. Returns what could not be removed ("" when all went).
std::string RemoveNode(const std::string& netns, const std::string& cgroup_dir);

// Moves the calling process into the node: its network namespace and its cgroup. For `exec`.
Status EnterNode(const emulation::OsNode& node, CpuController controller,
                 const std::string& platform);

// Adds process `pid` to the cgroup in `dir`.
Status JoinCgroup(const std::string& dir, pid_t pid);

// Network namespaces whose names start with `prefix`.
std::vector<std::string> ListNamespaces(const std::string& prefix);

// Whether the named network namespace exists.
bool NamespaceExists(const std::string& netns);

}  // namespace aiac::emulate
