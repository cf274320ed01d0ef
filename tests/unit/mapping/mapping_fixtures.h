// Platforms and TIGs for the mapping tests: the hand-worked example and random instances.
#pragma once

#include <random>
#include <string>
#include <vector>

#include "model/platform.h"
#include "model/tig.h"

namespace aiac::mapping::testing {

// examples/planning/platform.json: c1 = {n1:1, n2:1, n3:1}, c2 = {n4:2, n5:4, n6:8 busy},
// latency 0.001 inside each cluster, 0.05 between them.
inline model::Platform HandPlatform() {
  auto p =
      model::Platform::Build({{"c1", 0.001, {{"n1", 1, true}, {"n2", 1, true}, {"n3", 1, true}}},
                              {"c2", 0.001, {{"n4", 2, true}, {"n5", 4, true}, {"n6", 8, false}}}},
                             {{"c1", "c2", 0.05}});
  return std::move(*p);
}

// examples/planning/tig.json: costs 10, 40, 20, 30; edges 0-1:5, 1-2:5, 1-3:1, 2-3:2.
inline model::Tig HandTig() {
  auto t = model::Tig::Build({{0, 10}, {1, 40}, {2, 20}, {3, 30}},
                             {{0, 1, 5}, {1, 2, 5}, {1, 3, 1}, {2, 3, 2}});
  return std::move(*t);
}

struct Instance {
  model::Platform platform;
  model::Tig tig;
};

// `clusters` clusters of 1..max_nodes nodes (some busy), powers spread by `spread` (0 gives a
// homogeneous platform), a connected-ish random TIG of `tasks` tasks fitting the free nodes.
inline Instance RandomInstance(std::mt19937& rng, int clusters, int max_nodes, int tasks,
                               double spread) {
  std::uniform_real_distribution<double> unit(0, 1);
  std::vector<model::ClusterSpec> cs;
  int free_total = 0, id = 0;
  for (int c = 0; c < clusters; ++c) {
    model::ClusterSpec spec{"c" + std::to_string(c), 0.0001 + 0.001 * unit(rng), {}};
    const int n = 1 + static_cast<int>(rng() % max_nodes);
    for (int k = 0; k < n; ++k) {
      const bool free = unit(rng) > 0.15;
      free_total += free;
      spec.nodes.push_back(
          {"n" + std::to_string(id++), 1 + spread * std::floor(4 * unit(rng)), free});
    }
    cs.push_back(std::move(spec));
  }
  if (free_total == 0) cs[0].nodes[0].free = true, free_total = 1;
  std::vector<model::InterLatency> inter;
  for (int a = 0; a < clusters; ++a)
    for (int b = a + 1; b < clusters; ++b)
      inter.push_back({"c" + std::to_string(a), "c" + std::to_string(b), 0.01 + 0.05 * unit(rng)});
  auto platform = model::Platform::Build(std::move(cs), std::move(inter));
  const int v = std::min(tasks, free_total);
  std::vector<model::TaskSpec> ts;
  for (int t = 0; t < v; ++t)
    ts.push_back({t * 3 + 1, 1 + std::floor(10 * unit(rng))});  // sparse ids
  std::vector<model::EdgeSpec> es;
  for (int a = 0; a < v; ++a)
    for (int b = a + 1; b < v; ++b)
      if (unit(rng) < 0.35) es.push_back({a * 3 + 1, b * 3 + 1, std::floor(20 * unit(rng))});
  auto tig = model::Tig::Build(std::move(ts), std::move(es));
  return {std::move(*platform), std::move(*tig)};
}

}  // namespace aiac::mapping::testing
