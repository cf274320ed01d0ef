#include "model/tig.h"

#include <cmath>
#include <set>
#include <string>

namespace aiac::model {

Result<Tig> Tig::Build(std::vector<TaskSpec> tasks, std::vector<EdgeSpec> edges) {
  Tig g;
  for (const auto& t : tasks) {
    if (!g.by_id_.emplace(t.id, static_cast<int>(g.tasks_.size())).second) {
      return InvalidArgument("duplicate task id " + std::to_string(t.id));
    }
    if (!std::isfinite(t.cost) || t.cost <= 0) {
      return InvalidArgument("task " + std::to_string(t.id) + ": cost must be positive");
    }
    g.tasks_.push_back(t);
  }
  g.adjacency_.resize(g.tasks_.size());
  std::set<std::pair<int, int>> seen;
  for (const auto& e : edges) {
    const std::string name = std::to_string(e.a) + "-" + std::to_string(e.b);
    auto a = g.by_id_.find(e.a), b = g.by_id_.find(e.b);
    if (a == g.by_id_.end())
      return InvalidArgument("edge " + name + " names unknown task " + std::to_string(e.a));
    if (b == g.by_id_.end())
      return InvalidArgument("edge " + name + " names unknown task " + std::to_string(e.b));
    if (a->second == b->second) return InvalidArgument("edge " + name + " joins a task to itself");
    if (!std::isfinite(e.volume) || e.volume < 0) {
      return InvalidArgument("edge " + name + ": volume must be a non-negative number");
    }
    if (!seen.emplace(std::min(a->second, b->second), std::max(a->second, b->second)).second) {
      return InvalidArgument("edge " + name + " is given twice");
    }
    g.adjacency_[a->second].push_back({b->second, e.volume});
    g.adjacency_[b->second].push_back({a->second, e.volume});
  }
  return g;
}

int Tig::FindTask(int64_t id) const {
  auto it = by_id_.find(id);
  return it == by_id_.end() ? -1 : it->second;
}

}  // namespace aiac::model
