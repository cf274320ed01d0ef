#include "supernode/job_history.h"

namespace aiac::supernode {
namespace {

template <typename T>
void KeepEveryOther(std::vector<T>& v) {
  size_t kept = 0;
  for (size_t i = 0; i < v.size(); i += 2) v[kept++] = v[i];
  v.resize(kept);
}

}  // namespace

void JobHistory::Record(const net::JobStatus& job, double seconds) {
  auto [it, added] = jobs_.try_emplace(job.id);
  Course& c = it->second;
  if (added) c.first_seen = seconds;
  const double t = seconds - c.first_seen;
  auto mark = [&](const char* kind, uint64_t before, uint64_t now) {
    if (now <= before || c.events.size() >= kMaxEvents) return;
    c.events.push_back({t, kind, now});
  };
  // The counts at registration are the past, not events seen here.
  if (!added) {
    mark("failure", c.failures, job.failures);
    mark("replacement", c.replacements, job.replacements);
    mark("move", c.moves, job.moves);
  }
  c.failures = job.failures;
  c.replacements = job.replacements;
  c.moves = job.moves;
  for (const auto& task : job.task_list) {
    if (task.task >= kMaxTasks) continue;
    auto& points = c.tasks[task.task];
    // A task with no report yet in its incarnation has nothing new to draw.
    if (task.report_age_ms < 0) continue;
    if (!points.empty() && points.back().iteration == task.iteration &&
        points.back().change == task.change) {
      continue;
    }
    points.push_back({t, task.iteration, task.change});
    if (points.size() > kMaxPoints) KeepEveryOther(points);
  }
}

void JobHistory::Forget(const std::string& id) { jobs_.erase(id); }

nlohmann::json JobHistory::ToJson(const std::string& id) const {
  auto it = jobs_.find(id);
  if (it == jobs_.end()) return nullptr;
  const Course& c = it->second;
  nlohmann::json tasks = nlohmann::json::array();
  for (const auto& [task, points] : c.tasks) {
    nlohmann::json rows = nlohmann::json::array();
    for (const auto& p : points) rows.push_back({p.t, p.iteration, p.change});
    tasks.push_back({{"task", task}, {"points", std::move(rows)}});
  }
  nlohmann::json events = nlohmann::json::array();
  for (const auto& e : c.events)
    events.push_back({{"t", e.t}, {"kind", e.kind}, {"count", e.count}});
  return {{"job", id}, {"tasks", std::move(tasks)}, {"events", std::move(events)}};
}

}  // namespace aiac::supernode
