// The task interaction graph (TIG) of MAHEVE section 3.1: tasks with a computation cost e_i,
// undirected edges with a communication volume c_ij, and d_i = the number of distinct
// neighbours of task i. Tasks are referred to by index (input order); ids are for I/O.
// Immutable once built; pure.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "core/status.h"

namespace aiac::model {

struct TaskSpec {
  int64_t id = 0;
  double cost = 1;  // e_i > 0
};

struct EdgeSpec {
  int64_t a = 0, b = 0;  // task ids
  double volume = 0;     // c_ij >= 0
};

struct Adjacent {
  int task;       // index of the neighbour
  double volume;  // c_ij
};

class Tig {
 public:
  // Checks and builds: unique task ids, positive costs, edges between two distinct known tasks,
  // non-negative volumes, each pair at most once.
  static Result<Tig> Build(std::vector<TaskSpec> tasks, std::vector<EdgeSpec> edges);

  size_t size() const { return tasks_.size(); }
  int64_t id(int task) const { return tasks_[task].id; }
  double cost(int task) const { return tasks_[task].cost; }
  // d_i: distinct neighbours.
  int degree(int task) const { return static_cast<int>(adjacency_[task].size()); }
  const std::vector<Adjacent>& neighbours(int task) const { return adjacency_[task]; }
  int FindTask(int64_t id) const;

 private:
  std::vector<TaskSpec> tasks_;
  std::vector<std::vector<Adjacent>> adjacency_;
  std::map<int64_t, int> by_id_;
};

}  // namespace aiac::model
