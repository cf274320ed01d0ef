#include "supernode/registry_delta.h"

#include <algorithm>

namespace aiac::supernode {

namespace {

std::chrono::milliseconds Since(PeerRegistry::Clock::time_point now,
                                PeerRegistry::Clock::time_point then) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(now - then);
}

// A peer's daemon, its heartbeat age kept to what a clock can add to (a day at most).
DaemonView ReadDaemon(proto::DaemonInfo::Reader in) {
  DaemonView v = ViewFromProto(in);
  v.heartbeat_age = std::clamp(v.heartbeat_age, std::chrono::milliseconds(0),
                               std::chrono::milliseconds(std::chrono::hours(24)));
  return v;
}

template <typename Reader>
void ReadJobs(Reader list, std::vector<net::JobStatus>& out) {
  for (auto j : list) {
    if (auto job = net::FromProto(j); job.ok()) out.push_back(std::move(*job));
  }
}

}  // namespace

void ChangesToProto(const std::string& sender, const RegistryChanges& c,
                    proto::RegistryDelta::Builder out) {
  out.setSupernodeId(sender);
  out.setFull(c.full);
  out.setLateMs(c.late.count());
  auto daemons = out.initDaemons(static_cast<unsigned>(c.daemons.size()));
  for (unsigned i = 0; i < daemons.size(); ++i) ToProto(c.daemons[i], daemons[i]);
  auto removed = out.initRemoved(static_cast<unsigned>(c.removed.size()));
  for (unsigned i = 0; i < removed.size(); ++i) removed.set(i, c.removed[i]);
  auto jobs = out.initJobs(static_cast<unsigned>(c.jobs.size()));
  for (unsigned i = 0; i < jobs.size(); ++i) net::ToProto(c.jobs[i], jobs[i]);
  auto ended = out.initEndedJobs(static_cast<unsigned>(c.ended_jobs.size()));
  for (unsigned i = 0; i < ended.size(); ++i) ended.set(i, c.ended_jobs[i]);
}

RegistryChanges ChangesFromProto(proto::RegistryDelta::Reader in) {
  RegistryChanges c;
  c.full = in.getFull();
  c.late = std::clamp(std::chrono::milliseconds(in.getLateMs()), std::chrono::milliseconds(0),
                      std::chrono::milliseconds(std::chrono::hours(24)));
  for (auto d : in.getDaemons()) c.daemons.push_back(ReadDaemon(d));
  for (auto id : in.getRemoved()) c.removed.emplace_back(id.cStr());
  ReadJobs(in.getJobs(), c.jobs);
  for (auto id : in.getEndedJobs()) c.ended_jobs.emplace_back(id.cStr());
  return c;
}

RegistryChanges ChangesFromDigest(proto::RegistryDigest::Reader in) {
  RegistryChanges c;
  c.full = true;
  for (auto d : in.getDaemons()) c.daemons.push_back(ReadDaemon(d));
  ReadJobs(in.getJobs(), c.jobs);
  return c;
}

RegistryChanges DeltaSender::Next(const std::vector<DaemonView>& daemons,
                                  const std::vector<net::JobStatus>& jobs,
                                  std::chrono::milliseconds late) {
  RegistryChanges out;
  out.full = first_;
  out.late = late;
  first_ = false;
  // Whatever this pass does not see again was removed.
  std::unordered_map<std::string, Sent> now_daemons;
  now_daemons.reserve(daemons.size());
  for (const DaemonView& v : daemons) {
    Sent s{v.record, v.running, late.count() > 0 && v.heartbeat_age > late};
    auto it = daemons_.find(v.record.id);
    if (it == daemons_.end() || it->second.record != s.record || it->second.running != s.running ||
        it->second.late != s.late) {
      out.daemons.push_back(v);
    }
    if (it != daemons_.end()) daemons_.erase(it);
    now_daemons.emplace(v.record.id, std::move(s));
  }
  for (const auto& [id, s] : daemons_) out.removed.push_back(id);
  daemons_ = std::move(now_daemons);

  std::unordered_map<std::string, net::JobStatus> now_jobs;
  for (const net::JobStatus& j : jobs) {
    auto it = jobs_.find(j.id);
    if (it == jobs_.end() || it->second != j) out.jobs.push_back(j);
    if (it != jobs_.end()) jobs_.erase(it);
    now_jobs.emplace(j.id, j);
  }
  for (const auto& [id, j] : jobs_) out.ended_jobs.push_back(id);
  jobs_ = std::move(now_jobs);

  std::sort(out.removed.begin(), out.removed.end());
  std::sort(out.ended_jobs.begin(), out.ended_jobs.end());
  return out;
}

void PeerRegistry::Forget(const std::string& id) {
  auto it = daemons_.find(id);
  if (it == daemons_.end()) return;
  if (!it->second.view.record.busy) --free_;
  daemons_.erase(it);
}

void PeerRegistry::Apply(RegistryChanges changes, Clock::time_point now) {
  if (changes.full) {
    daemons_.clear();
    jobs_.clear();
    free_ = 0;
  }
  for (const std::string& id : changes.removed) Forget(id);
  for (DaemonView& v : changes.daemons) {
    const std::string id = v.record.id;
    Forget(id);
    const bool exact = changes.late.count() == 0 || v.heartbeat_age > changes.late;
    if (!v.record.busy) ++free_;
    daemons_.emplace(id, Held{std::move(v), now, exact});
  }
  for (net::JobStatus& j : changes.jobs) {
    const std::string id = j.id;
    jobs_.insert_or_assign(id, std::move(j));
  }
  for (const std::string& id : changes.ended_jobs) jobs_.erase(id);
  last_ = now;
}

std::vector<DaemonView> PeerRegistry::Daemons(Clock::time_point now) const {
  std::vector<DaemonView> out;
  out.reserve(daemons_.size());
  for (const auto& [id, held] : daemons_) {
    DaemonView v = held.view;
    v.heartbeat_age = held.exact ? v.heartbeat_age + Since(now, held.at) : Since(now, last_);
    out.push_back(std::move(v));
  }
  return out;
}

}  // namespace aiac::supernode
