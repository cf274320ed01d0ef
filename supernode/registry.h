// The registry of daemons a super-node owns: who is registered, free or busy for which job, and
// when each last heartbeated. Logic only: time comes in as arguments and every change is written
// through to a RegistryStore, so the registry survives a restart and is testable with any clock.
//
// Heartbeat times are not persisted: after a restart every loaded daemon gets one full failure
// timeout to heartbeat again before it expires.
//
// Memory is the truth; the store is its mirror. A failed store write (disk full, read-only)
// changes nothing in memory and fails no operation: the registry notes store_error() and keeps
// serving, and Resync() rewrites the whole store once it takes writes again. Not thread-safe.
#pragma once

#include <chrono>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "core/status.h"
#include "supernode/daemon_record.h"
#include "supernode/registry_store.h"

namespace aiac::supernode {

class Registry {
 public:
  using Clock = std::chrono::steady_clock;
  // How long, and how many, expired daemons are still shown as lost.
  static constexpr std::chrono::minutes kLostMemory{10};
  static constexpr size_t kMaxLost = 256;

  // `store` may be null (memory only); it must outlive the registry.
  Registry(std::string self_id, RegistryStore* store) : self_(std::move(self_id)), store_(store) {}
  Registry(const Registry&) = delete;  // free_ points into entries_
  Registry& operator=(const Registry&) = delete;

  // Loads the stored records; each counts as heartbeating at `now`.
  Status Load(Clock::time_point now);

  // Adds or refreshes a daemon. A daemon that says it is busy is recorded busy for the job it
  // names; one that says it is idle keeps whatever grant the registry holds (a grant is made
  // before the daemon hears of it; stale grants are ended by ReclaimIdleGrants, not here).
  // With group commit on, the store is written at the next CommitStaged, not here.
  Status Register(DaemonRecord rec, Clock::time_point now);

  // Group commit of registrations: while on, Register only notes which daemon changed, and
  // CommitStaged writes every noted one in one synced write (RegistryStore::PutAll), each as the
  // registry holds it then (a daemon removed meanwhile is skipped: its removal wrote the store).
  // One synced write per registration bounded a super-node at a few hundred a second on a fast
  // disk, at the disk's fsync rate on a slow one. The caller acknowledges a registration only
  // once a CommitStaged after it has run (net/group_commit.h).
  void set_group_commit(bool on) { group_commit_ = on; }
  void CommitStaged();
  size_t staged() const { return staged_.size(); }
  // Records a heartbeat and whether the daemon runs a task. False when `id` is unknown (the
  // daemon must register again).
  bool Heartbeat(const std::string& id, bool daemon_busy, Clock::time_point now);
  // Removes and returns the daemons silent for longer than `timeout`.
  std::vector<DaemonRecord> Expire(Clock::time_point now, std::chrono::milliseconds timeout);
  // Frees and returns the granted daemons that have run no task for `lease` since their grant
  // (their spawner died or never used them): the grant is a lease, not a leak.
  std::vector<DaemonRecord> ReclaimIdleGrants(Clock::time_point now,
                                              std::chrono::milliseconds lease);

  // All or nothing: `count` free daemons in registration order, marked busy for `job` as of
  // `now` (the start of their lease).
  Result<std::vector<DaemonRecord>> Grant(const std::string& job, size_t count,
                                          Clock::time_point now);
  // Frees the listed daemons that are busy for `job`; returns how many were freed.
  size_t Release(const std::string& job, const std::vector<std::string>& ids);
  // Forgets a daemon (its key was revoked): false when it was not registered.
  bool Remove(const std::string& id);

  size_t size() const { return entries_.size(); }
  size_t free_count() const { return free_.size(); }
  const DaemonRecord* Find(const std::string& id) const;
  // Every record, in registration order.
  std::vector<DaemonRecord> Snapshot() const;
  // Every record with its heartbeat, in registration order.
  std::vector<DaemonView> View(Clock::time_point now) const;
  // The daemons that expired within kLostMemory of `now` (kMaxLost at most, newest last) and did
  // not register again; heartbeat_age is since their last heartbeat.
  std::vector<DaemonView> Lost(Clock::time_point now) const;
  const std::string& self_id() const { return self_; }

  // Ok while the store mirrors memory; else the first store failure since it last did.
  const Status& store_error() const { return store_error_; }
  // After a store failure: writes every record to the store at once. Ok (and store_error()
  // cleared) when the store took them; the store's error otherwise.
  Status Resync();

 private:
  struct Entry {
    DaemonRecord record;
    Clock::time_point last_heartbeat;
    Clock::time_point busy_seen;  // grant time, then each heartbeat that reported a task
    bool running = false;         // the last heartbeat (or the registration) reported a task
  };
  struct LostEntry {
    DaemonRecord record;
    Clock::time_point last_heartbeat, lost_at;
  };
  // Puts `e` in free_ or takes it out, as its record says.
  void Track(Entry& e);
  void Persist(const DaemonRecord& rec);
  // Several at once: one write (RegistryStore::PutAll).
  void PersistAll(const std::vector<DaemonRecord>& records);
  void Erase(const std::string& id);
  void Note(Status s);

  std::string self_;
  RegistryStore* store_;
  std::map<std::string, Entry> entries_;
  std::map<uint64_t, Entry*> free_;  // the free daemons by registration order (seq)
  std::deque<LostEntry> lost_;       // oldest first
  uint64_t next_seq_ = 1;
  Status store_error_;
  bool group_commit_ = false;
  std::vector<std::string> staged_;  // registered since the last CommitStaged (group commit)
};

}  // namespace aiac::supernode
