// Platform files (docs/emulation.md): a heterogeneous platform as clusters of nodes of given
// relative powers, with the latency and bandwidth inside each cluster and of the link between
// each pair of clusters, optionally a background load per node. `aiac-spawner map --platform`
// reads them (as well as the JSON of model/platform.h), and they are what an emulated run is
// made of. Form (conf/platforms/*.toml):
//
//   name = "hd050"
//   [[clusters]]
//   name = "c1"
//   powers = [1.0, 1.0, 2.5]   # one relative speed per node
//   latency_ms = 0.1           # inside the cluster
//   bandwidth_mbps = 1000
//   background = {mean_jobs = 0.5, std_jobs = 0.3, mean_size = 1.0}   # optional
//   [[links]]                  # one per pair of clusters
//   a = "c1"
//   b = "c2"
//   latency_ms = 20
//   bandwidth_mbps = 100
//
// Node ids are "<cluster>-<k>", k from 1 in the order of `powers`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/status.h"
#include "model/platform.h"

namespace aiac::emulation {

struct BackgroundSpec {
  double mean_jobs =
      0;  // competing jobs on the node, mean and standard deviation (Lee & Cho's model)
  double std_jobs = 0;
  double mean_size = 1;  // seconds of work per competing job
};

struct PlatformFile {
  struct Cluster {
    std::string name;
    std::vector<double> powers;
    double latency_ms = 0;
    double bandwidth_mbps = 0;
    std::optional<BackgroundSpec> background;
  };
  struct Link {
    std::string a, b;
    double latency_ms = 0;
    double bandwidth_mbps = 0;
  };

  std::string name;
  std::vector<Cluster> clusters;
  std::vector<Link> links;

  size_t node_count() const;
  static std::string NodeId(const std::string& cluster, size_t k);  // k from 1
  // Between two clusters: their link; within one (a == b): the cluster's own figures.
  Link Between(const std::string& a, const std::string& b) const;
  // Population standard deviation of every node's power over their mean (MAHEVE's hd).
  double HeterogeneityDegree() const;
  // The mapping's model: the same nodes (all free), latencies in seconds.
  model::Platform ToModel() const;
};

// Reads and checks a platform file: every key known and of its type; unique cluster names; at
// least one node; powers, latencies, bandwidths and loads in range; exactly one link per pair
// of distinct clusters and none to an unknown cluster. Problems are one line naming the file and
// the place.
Result<PlatformFile> LoadPlatformFile(const std::string& path);
Result<PlatformFile> ParsePlatformFile(std::string_view text, const std::string& name);

}  // namespace aiac::emulation
