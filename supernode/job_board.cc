#include "supernode/job_board.h"

namespace aiac::supernode {

JobBoard::Update JobBoard::Put(net::JobStatus job, net::ConnectionPtr spawner) {
  auto it = jobs_.find(job.id);
  if (it == jobs_.end()) {
    const std::string id = job.id;
    jobs_.emplace(id, Entry{std::move(job), std::move(spawner)});
    return Update::kRegistered;
  }
  // The same spawner on a new connection (it failed over and came back) takes its job back; a
  // live connection of another spawner keeps it.
  const net::ConnectionPtr& holder = it->second.spawner;
  if (holder != spawner && holder->is_open() && holder->peer().id != spawner->peer().id) {
    return Update::kRefused;
  }
  it->second.spawner = std::move(spawner);
  it->second.job = std::move(job);
  return Update::kUpdated;
}

bool JobBoard::End(const std::string& id, const net::Connection* spawner) {
  auto it = jobs_.find(id);
  if (it == jobs_.end() || it->second.spawner.get() != spawner) return false;
  jobs_.erase(it);
  return true;
}

std::vector<std::string> JobBoard::DropSpawner(const net::Connection* spawner) {
  std::vector<std::string> lost;
  for (auto& [id, e] : jobs_) {
    if (e.spawner.get() != spawner || e.job.phase == net::kSpawnerLostPhase) continue;
    lost.push_back(id);
    e.job.phase = net::kSpawnerLostPhase;
    // Its figures stay the last reported; how old the tasks' reports are, nobody knows now.
    e.job.eta_seconds = -1;
    for (auto& t : e.job.task_list) t.report_age_ms = -1;
  }
  return lost;
}

std::vector<std::string> JobBoard::ForgetLost(
    const std::function<bool(const std::string&)>& running) {
  std::vector<std::string> forgotten;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->second.job.phase == net::kSpawnerLostPhase && !running(it->first)) {
      forgotten.push_back(it->first);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  return forgotten;
}

bool JobBoard::IsLost(const std::string& id) const {
  auto it = jobs_.find(id);
  return it != jobs_.end() && it->second.job.phase == net::kSpawnerLostPhase;
}

bool JobBoard::any_lost() const {
  for (const auto& [id, e] : jobs_) {
    if (e.job.phase == net::kSpawnerLostPhase) return true;
  }
  return false;
}

net::ConnectionPtr JobBoard::SpawnerOf(const std::string& id) const {
  auto it = jobs_.find(id);
  return it == jobs_.end() ? nullptr : it->second.spawner;
}

std::vector<net::JobStatus> JobBoard::Jobs() const {
  std::vector<net::JobStatus> out;
  out.reserve(jobs_.size());
  for (const auto& [id, e] : jobs_) out.push_back(e.job);
  return out;
}

}  // namespace aiac::supernode
