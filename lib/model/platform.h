// The platform model of MAHEVE section 3.1: clusters of computing nodes, each node with a
// computing power wn and a free/busy state, links with a latency wl (one value inside each
// cluster, one per pair of clusters).
//
// Nodes are kept in one flat array (cluster after cluster, in input order) and referred to by
// index; algorithms work on indices, ids are for input and output. Immutable once built; pure.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/status.h"

namespace aiac::model {

struct NodeSpec {
  std::string id;
  double power = 1;  // wn_i > 0
  bool free = true;  // not involved in another computation
};

struct ClusterSpec {
  std::string name;
  double latency = 0;  // wl between two nodes of this cluster, >= 0
  std::vector<NodeSpec> nodes;
};

struct InterLatency {
  std::string a, b;
  double latency = 0;
};

struct Node {
  std::string id;
  double power;
  bool free;
  int cluster;  // index into clusters()
};

struct Cluster {
  std::string name;
  double latency;
  std::vector<int> nodes;  // indices into nodes(), input order
};

class Platform {
 public:
  // Checks and builds: unique cluster names and node ids, positive powers, non-negative
  // latencies, a latency for every pair of distinct clusters (given once, either order).
  // `given`: the node ids in the order the nodes were handed out (a super-node's grant, across
  // clusters), every id once; empty: the input order.
  static Result<Platform> Build(std::vector<ClusterSpec> clusters, std::vector<InterLatency> inter,
                                const std::vector<std::string>& given = {});

  const std::vector<Node>& nodes() const { return nodes_; }
  // Node indices in the order the nodes were handed out (the default mapping's order).
  const std::vector<int>& given_order() const { return given_order_; }
  const std::vector<Cluster>& clusters() const { return clusters_; }
  // wl between the clusters of two nodes (intra-cluster latency when they share a cluster).
  double Latency(int node_a, int node_b) const {
    return ClusterLatency(nodes_[node_a].cluster, nodes_[node_b].cluster);
  }
  double ClusterLatency(int cluster_a, int cluster_b) const {
    return latency_[static_cast<size_t>(cluster_a) * clusters_.size() + cluster_b];
  }
  // Index of the node with this id, or -1.
  int FindNode(const std::string& id) const;
  size_t free_count() const;

 private:
  std::vector<Node> nodes_;
  std::vector<Cluster> clusters_;
  std::vector<double> latency_;  // |C| x |C|
  std::vector<int> given_order_;
  std::map<std::string, int> by_id_;
};

}  // namespace aiac::model
