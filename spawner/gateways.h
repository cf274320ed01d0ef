// DistPM's special processes of each group (distpm-workload-migration.md section 4.1): the
// migration gateways and the group coordinators.
//
// Gateways: items that leave a
// cluster go from their task's daemon to the cluster's gateway for the receiving cluster, across
// the inter-cluster channel to that cluster's gateway for the sending one, and from there to
// the taking task's daemon. One gateway per end of each channel (the multi-gateway model of
// section 4.3): a cluster's channels are spread over its tasks' daemons, so channels of
// different cluster pairs run in parallel while all items of one channel share one connection.
//
// Pure: tasks are indices, clusters names (each task's daemon's cluster).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace aiac::spawner {

// The task whose daemon is cluster `from`'s gateway on its channel to cluster `to` (from != to;
// `from` is the cluster of at least one task): the k-th task of `from`, in task order, k being
// the rank of `to` among the other clusters (by name), modulo the tasks of `from`.
size_t Gateway(const std::vector<std::string>& cluster_of_task, const std::string& from,
               const std::string& to);

// The daemons items from task `a` to task `b` pass through: none within a cluster; else a's
// cluster's gateway to b's (unless a is it), then b's cluster's gateway from a's (unless b is it).
std::vector<size_t> GatewaysBetween(const std::vector<std::string>& cluster_of_task, size_t a,
                                    size_t b);

// The group coordinators: the tasks grouped by their daemons' cluster, each group in task order
// (its first task's daemon coordinates it: it gathers the group's progress reports and sends
// them to the spawner, the global coordinator, as one message), the groups in the order of their
// first task. Groups of one task are left out (it reports straight), and none are formed when
// the tasks share one cluster (the spawner coordinates it).
std::vector<std::vector<uint32_t>> ReportGroups(const std::vector<std::string>& cluster_of_task);

}  // namespace aiac::spawner
