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
  std::vector<std::string> dropped;
  for (auto it = jobs_.begin(); it != jobs_.end();) {
    if (it->second.spawner.get() == spawner) {
      dropped.push_back(it->first);
      it = jobs_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
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
