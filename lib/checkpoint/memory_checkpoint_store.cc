#include "checkpoint/memory_checkpoint_store.h"

#include <algorithm>
#include <set>

namespace aiac::checkpoint {

Result<bool> MemoryCheckpointStore::Put(const Checkpoint& c) {
  AIAC_RETURN_IF_ERROR(CheckStorable(c));
  std::lock_guard lock(mu_);
  auto& kept = kept_[{c.job, c.task}];
  if (kept.size() >= kKeep && !Newer(c, kept.front())) return false;
  auto same = std::find_if(kept.begin(), kept.end(),
                           [&](const Checkpoint& k) { return !Newer(k, c) && !Newer(c, k); });
  if (same != kept.end()) {
    *same = c;  // the same (incarnation, iteration) again: the newer copy wins
    return true;
  }
  kept.push_back(c);
  std::sort(kept.begin(), kept.end(),
            [](const Checkpoint& a, const Checkpoint& b) { return Newer(b, a); });
  if (kept.size() > kKeep) kept.erase(kept.begin(), kept.end() - kKeep);
  return true;
}

Result<Loaded> MemoryCheckpointStore::Load(const std::string& job, uint32_t task) {
  std::lock_guard lock(mu_);
  Loaded out;
  auto it = kept_.find({job, task});
  if (it == kept_.end()) return out;
  for (auto c = it->second.rbegin(); c != it->second.rend(); ++c) {
    if (Verifies(*c)) {
      out.valid.push_back(*c);
    } else {
      out.skipped.push_back(Describe(*c) + " fails its checksum");
    }
  }
  return out;
}

Status MemoryCheckpointStore::DropJob(const std::string& job) {
  std::lock_guard lock(mu_);
  std::erase_if(kept_, [&](const auto& entry) { return entry.first.first == job; });
  return Status::Ok();
}

Result<std::vector<std::string>> MemoryCheckpointStore::Jobs() {
  std::lock_guard lock(mu_);
  std::set<std::string> jobs;
  for (const auto& [key, kept] : kept_) jobs.insert(key.first);
  return std::vector<std::string>(jobs.begin(), jobs.end());
}

std::vector<Checkpoint>& MemoryCheckpointStore::Kept(const std::string& job, uint32_t task) {
  std::lock_guard lock(mu_);
  return kept_[{job, task}];
}

}  // namespace aiac::checkpoint
