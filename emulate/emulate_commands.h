// The subcommands of aiac-emulate (docs/emulation.md, "OS-level emulation"). Each returns the
// process's exit code: 0 done, 1 failed (one line on stderr naming the problem), 2 bad input.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace aiac::emulate {

// Builds every node of the platform file (emulate/host_setup.h), starts the link switch and the
// background loads, and prints the nodes. Refused when the platform is up already; what it
// built is removed again when a step fails.
int Up(const std::string& platform_file, int host_cores, uint64_t seed);

// Removes the platform `name_or_file` (its name, or its platform file), or every platform with
// `all`: kills every process run as one of its nodes, the switch and the loads, deletes the
// namespaces and cgroups. Idempotent, and it also cleans what a crashed `up` left.
int Down(const std::string& name_or_file, bool all);

// Replaces this process by `command`, run as `node` (id or address) of `platform` (may be empty
// when one platform is up): in the node's network namespace and cgroup.
int Exec(const std::string& platform, const std::string& node,
         const std::vector<std::string>& command);

// An rsh for launchers that start their workers through one (Open MPI's plm_rsh_agent):
// `rsh [-options] HOST WORDS...` runs `sh -c "WORDS..."` as the node whose address or id is
// HOST, on whichever platform is up has it.
int Rsh(const std::vector<std::string>& args);

// Sets the CPU quota of `node` (id or address) of `platform` (may be empty when one platform is
// up) to `factor` times its share from the platform file, while the platform is up: a node's
// host loses (factor < 1) or regains (1) speed in the middle of a run, as a desktop does when its
// owner comes back. Prints "nice-1: 0.083 cores (0.25 x its 0.333)".
int SetCpu(const std::string& platform, const std::string& node, double factor);

// Prints an MPI hostfile of the platform (one "ADDRESS slots=1" line per node, in file order).
int PrintHostfile(const std::string& platform);

// Prints the platforms that are up (or `platform`): nodes, addresses, CPU shares, processes,
// and how links and CPU are emulated.
int PrintStatus(const std::string& platform);

// Spins for `seconds` and prints the CPU it got: "cores 0.333 (1.000 s of CPU in 3.000 s)".
int Burn(double seconds);

// The switch process of a platform: attaches to every node's TUN device, writes "ready\n" to
// `ready_fd`, and runs until SIGTERM or SIGINT.
int RunSwitch(const std::string& state_dir, int ready_fd);

// The background load of node `node` of the platform in `state_dir`; runs until killed.
int RunLoad(const std::string& state_dir, const std::string& node, uint64_t seed);

}  // namespace aiac::emulate
