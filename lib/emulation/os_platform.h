// A platform file laid out on one Linux host (docs/emulation.md, "OS-level emulation"): every
// node becomes a network namespace with an address in its cluster's subnet and a CPU cgroup
// whose quota is its share of the host's cores, so that any program run "as" a node (aiac's
// daemons, MPI ranks) sees the node's links and speed. `aiac-emulate up` builds what this plan
// says; the plan itself is pure, a function of the platform and the host's core count.
//
// Addresses: a platform has a /16 of its own, 10.(200 + slot).0.0/16, so that several can be up
// at once (slot 0 to 49, the first free one). Node k (from 1) of the c-th cluster (from 1, in
// file order) is 10.(200 + slot).c.k, in the cluster's subnet 10.(200 + slot).c.0/24; every node
// routes the whole /16 through its emulated link. The host itself is 10.(200 + slot).0.254 on
// the device "aiacemu<slot>", reached without delay: that is where a super-node, a spawner or
// mpirun run to drive the nodes.
//
// CPU: a node of power p gets p x min(cores / sum of powers, 1 / largest power) cores. The sum
// of all quotas fits the host, so every node can have its share at once; and the most powerful
// node gets at most one core, so one busy thread shows the node's power: a node of half the
// power gets half the CPU of a busy loop.
#pragma once

#include <string>
#include <vector>

#include "core/status.h"
#include "emulation/platform_file.h"

namespace aiac::emulation {

struct OsNode {
  std::string id;       // "<cluster>-<k>", as in the platform file
  std::string cluster;  // the cluster's name
  std::string address;  // dotted IPv4, 10.200.c.k
  double power = 1;
  double cores = 1;   // CPU quota in cores (cpu.cfs_quota_us / cpu.cfs_period_us)
  std::string netns;  // the network namespace's name
};

struct OsPlatform {
  std::string name;
  int slot = 0;
  std::vector<OsNode> nodes;  // clusters in file order, nodes in `powers` order
  std::string subnet;         // "10.(200 + slot).0.0/16"
  std::string host_address;   // "10.(200 + slot).0.254"
  std::string host_device;    // "aiacemu<slot>"

  // The node with this id or address; nullptr when there is none.
  const OsNode* Find(const std::string& id_or_address) const;
};

// The prefix of every namespace aiac-emulate makes: "aiacemu-<platform>.<node>" (platform names
// have no '.', so the first one ends the platform's name).
inline constexpr const char* kNetnsPrefix = "aiacemu-";
// How many platforms can be up at once (slots 0 to kSlots - 1).
inline constexpr int kSlots = 50;

// Checks what an OS-level platform needs beyond a valid file: a name of 1 to 32 characters
// from [A-Za-z0-9_-] (it names namespaces, cgroups and a folder), at most 254 clusters and
// 254 nodes per cluster (one byte of the address each); `host_cores` at least 1; `slot` from 0
// to kSlots - 1.
Result<OsPlatform> PlanOsPlatform(const PlatformFile& platform, int host_cores, int slot = 0);

}  // namespace aiac::emulation
