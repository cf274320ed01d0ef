// Task graphs and granted daemons for the deployment and supervisor tests.
#pragma once

#include <string>
#include <vector>

#include "app/app.h"
#include "spawner/granted_daemon.h"

namespace aiac::spawner::test {

// A ring of `tasks` tasks: each exchanges with its two neighbours.
inline std::vector<app::TaskNode> Ring(uint32_t tasks) {
  std::vector<app::TaskNode> graph(tasks);
  for (uint32_t t = 0; t < tasks; ++t) {
    graph[t].cost = 10;
    graph[t].edges = {{(t + 1) % tasks, 1.0}, {(t + tasks - 1) % tasks, 1.0}};
  }
  return graph;
}

// Daemons d<first>.. d<first + n - 1> of `cluster`, power 1, at 127.0.0.1:7000 + i.
inline std::vector<GrantedDaemon> Daemons(int n, const std::string& cluster = "c", int first = 1) {
  std::vector<GrantedDaemon> out;
  for (int i = first; i < first + n; ++i) {
    // (appended, not "d" + to_string: g++ 12 warns falsely about the latter)
    out.push_back({std::string("d").append(std::to_string(i)),
                   std::string("127.0.0.1:").append(std::to_string(7000 + i)), cluster, 1.0});
  }
  return out;
}

}  // namespace aiac::spawner::test
