#include "supernode/registry.h"

#include <algorithm>

namespace aiac::supernode {

void Registry::Note(Status s) {
  if (!s.ok() && store_error_.ok()) store_error_ = std::move(s);
}

void Registry::Persist(const DaemonRecord& rec) {
  // While the store is out of date, single writes would only fail again; Resync catches up.
  if (store_ && store_error_.ok()) Note(store_->Put(rec));
}

void Registry::PersistAll(const std::vector<DaemonRecord>& records) {
  if (store_ && store_error_.ok()) Note(store_->PutAll(records));
}

void Registry::Erase(const std::string& id) {
  if (store_ && store_error_.ok()) Note(store_->Delete(id));
}

void Registry::CommitStaged() {
  if (staged_.empty()) return;
  std::vector<DaemonRecord> records;
  records.reserve(staged_.size());
  std::sort(staged_.begin(), staged_.end());
  staged_.erase(std::unique(staged_.begin(), staged_.end()), staged_.end());
  for (const std::string& id : staged_) {
    if (auto it = entries_.find(id); it != entries_.end()) records.push_back(it->second.record);
  }
  staged_.clear();
  PersistAll(records);
}

void Registry::Track(Entry& e) {
  if (e.record.busy) {
    free_.erase(e.record.seq);
  } else {
    free_[e.record.seq] = &e;
  }
}

bool Registry::Remove(const std::string& id) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  free_.erase(it->second.record.seq);
  entries_.erase(it);
  Erase(id);
  return true;
}

Status Registry::Resync() {
  if (!store_ || store_error_.ok()) return Status::Ok();
  Status s = store_->ReplaceAll(Snapshot());
  if (s.ok()) store_error_ = Status::Ok();
  return s;
}

Status Registry::Load(Clock::time_point now) {
  if (!store_) return Status::Ok();
  AIAC_ASSIGN_OR_RETURN(auto records, store_->LoadAll());
  for (auto& rec : records) {
    next_seq_ = std::max(next_seq_, rec.seq + 1);
    const std::string id = rec.id;  // the right side of = is evaluated first: copy the key
    auto [at, added] = entries_.try_emplace(id);
    Entry& e = at->second;
    if (!added) free_.erase(e.record.seq);  // one id stored twice: the last one counts
    e = Entry{std::move(rec), now, now, false};
    Track(e);
  }
  return Status::Ok();
}

Status Registry::Register(DaemonRecord rec, Clock::time_point now) {
  if (rec.id.empty()) return InvalidArgument("daemon registered with an empty id");
  rec.owner = self_;
  auto it = entries_.find(rec.id);
  Clock::time_point busy_seen = now;
  if (it != entries_.end()) {
    const DaemonRecord& old = it->second.record;
    rec.seq = old.seq;
    busy_seen = it->second.busy_seen;
    if (!rec.busy) {
      rec.busy = old.busy;
      rec.job = old.job;
    } else if (rec.job.empty() && old.busy) {
      // A daemon running a task does not say for which job: the grant does. Without it the
      // job's release missed the daemon, ungrantable until its lease ran out (a daemon that
      // left a stopped super-node and came back while running its task).
      rec.job = old.job;
    }
  } else {
    rec.seq = next_seq_++;
    if (!rec.busy) {
      rec.job.clear();
    } else if (rec.job.empty()) {
      // Expired while it ran its task (this super-node was stopped longer than the failure
      // timeout, and read its heartbeats only after): the grant it had, for the same reason.
      for (const LostEntry& l : lost_) {
        if (l.record.id == rec.id && l.record.busy) rec.job = l.record.job;
      }
    }
  }
  const bool running = rec.busy;  // as the daemon says, before the grant is carried over
  if (running) busy_seen = now;
  if (group_commit_) {
    staged_.push_back(rec.id);
  } else {
    Persist(rec);
  }
  std::erase_if(lost_, [&](const LostEntry& l) { return l.record.id == rec.id; });
  const std::string id = rec.id;  // the right side of = is evaluated first: copy the key
  auto [at, added] = entries_.try_emplace(id);
  Entry& e = at->second;
  if (!added) free_.erase(e.record.seq);
  e = Entry{std::move(rec), now, busy_seen, running};
  Track(e);
  return Status::Ok();
}

bool Registry::Heartbeat(const std::string& id, bool daemon_busy, Clock::time_point now) {
  auto it = entries_.find(id);
  if (it == entries_.end()) return false;
  it->second.last_heartbeat = now;
  it->second.running = daemon_busy;
  if (daemon_busy) it->second.busy_seen = now;
  return true;
}

std::vector<DaemonRecord> Registry::ReclaimIdleGrants(Clock::time_point now,
                                                      std::chrono::milliseconds lease) {
  std::vector<DaemonRecord> reclaimed;
  for (auto& [id, entry] : entries_) {
    DaemonRecord& rec = entry.record;
    if (!rec.busy || now - entry.busy_seen <= lease) continue;
    reclaimed.push_back(rec);
    rec.busy = false;
    rec.job.clear();
    Track(entry);
    Persist(rec);
  }
  return reclaimed;
}

std::vector<DaemonRecord> Registry::Expire(Clock::time_point now,
                                           std::chrono::milliseconds timeout) {
  std::vector<DaemonRecord> gone;
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (now - it->second.last_heartbeat > timeout) {
      // A failed delete leaves the record on disk until Resync; a restart before then gives it
      // one more timeout and it expires again, so nothing is lost or duplicated.
      Erase(it->first);
      lost_.push_back({it->second.record, it->second.last_heartbeat, now});
      if (lost_.size() > kMaxLost) lost_.pop_front();
      free_.erase(it->second.record.seq);
      gone.push_back(std::move(it->second.record));
      it = entries_.erase(it);
    } else {
      ++it;
    }
  }
  return gone;
}

Result<std::vector<DaemonRecord>> Registry::Grant(const std::string& job, size_t count,
                                                  Clock::time_point now) {
  if (free_.size() < count) {
    return ResourceExhausted("only " + std::to_string(free_.size()) + " free daemons, " +
                             std::to_string(count) + " needed");
  }
  // The `count` registered first, from the index of free daemons by registration order: a grant
  // costs what it takes, not a scan of every daemon held (a scan each, and one for free_count,
  // were a sixth of a super-node's CPU while it granted among 20,000).
  std::vector<DaemonRecord> granted;
  granted.reserve(count);
  while (granted.size() < count) {
    Entry& e = *free_.begin()->second;
    free_.erase(free_.begin());
    e.record.busy = true;
    e.record.job = job;
    e.busy_seen = now;
    granted.push_back(e.record);
  }
  PersistAll(granted);
  return granted;
}

size_t Registry::Release(const std::string& job, const std::vector<std::string>& ids) {
  std::vector<DaemonRecord> freed;
  for (const auto& id : ids) {
    auto it = entries_.find(id);
    if (it == entries_.end()) continue;
    DaemonRecord& rec = it->second.record;
    if (!rec.busy || rec.job != job) continue;
    rec.busy = false;
    rec.job.clear();
    Track(it->second);
    freed.push_back(rec);
  }
  PersistAll(freed);
  return freed.size();
}

const DaemonRecord* Registry::Find(const std::string& id) const {
  auto it = entries_.find(id);
  return it == entries_.end() ? nullptr : &it->second.record;
}

std::vector<DaemonRecord> Registry::Snapshot() const {
  std::vector<DaemonRecord> out;
  for (const auto& [id, e] : entries_) out.push_back(e.record);
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.seq < b.seq; });
  return out;
}

std::vector<DaemonView> Registry::View(Clock::time_point now) const {
  std::vector<DaemonView> out;
  out.reserve(entries_.size());
  for (const auto& [id, e] : entries_) {
    out.push_back({e.record, e.running,
                   std::chrono::duration_cast<std::chrono::milliseconds>(now - e.last_heartbeat)});
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.record.seq < b.record.seq; });
  return out;
}

std::vector<DaemonView> Registry::Lost(Clock::time_point now) const {
  std::vector<DaemonView> out;
  for (const LostEntry& l : lost_) {
    if (now - l.lost_at > kLostMemory) continue;
    out.push_back({l.record, false,
                   std::chrono::duration_cast<std::chrono::milliseconds>(now - l.last_heartbeat)});
  }
  return out;
}

}  // namespace aiac::supernode
