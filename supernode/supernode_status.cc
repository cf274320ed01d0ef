// SupernodeService: the jobs spawners register, `aiac-spawner status` and `aiac-spawner cancel`
// (docs/operations.md, "Seeing and stopping what runs").
#include <set>

#include "core/names.h"
#include "core/printable.h"
#include "supernode/supernode_service.h"

namespace aiac::supernode {

using net::asio::awaitable;

bool SupernodeService::OnJobStatus(const net::ConnectionPtr& conn, proto::JobStatus::Reader in) {
  auto job = net::FromProto(in);
  if (!job.ok()) {
    log_->warn("closed {}: job status: {}", conn->Describe(), job.status().message());
    conn->Refuse("job status: " + job.status().message());
    return false;
  }
  job->spawner_id = conn->peer().id;
  job->spawner_address = conn->remote_address();
  job->supernode = options_.id;
  const std::string id = job->id, app = job->app;
  const uint32_t tasks = job->tasks, daemons = job->daemons;
  const net::JobStatus figures = *job;
  const auto update = jobs_.Put(std::move(*job), conn);
  if (update != JobBoard::Update::kRefused) {
    history_.Record(
        figures,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count());
  }
  switch (update) {
    case JobBoard::Update::kRegistered:
      log_->info("job {} registered by spawner {}: app {}, {} tasks on {} daemons", id,
                 conn->Describe(), app, tasks, daemons);
      break;
    case JobBoard::Update::kUpdated:
      break;
    case JobBoard::Update::kRefused:
      log_->warn("closed {}: job {} is registered by another spawner", conn->Describe(), id);
      conn->Refuse("job status: job " + id + " is registered by another spawner");
      return false;
  }
  return true;
}

void SupernodeService::OnJobEnded(const net::Connection& conn, const std::string& job) {
  if (jobs_.End(job, &conn)) {
    history_.Forget(job);
    log_->info("job {} ended", Printable(job, 128, false));
  }
}

void SupernodeService::ForgetJobsOf(const net::Connection& conn) {
  for (const auto& id : jobs_.DropSpawner(&conn)) {
    log_->info(
        "job {}: its spawner's connection closed; shown as spawner-lost while daemons run its "
        "tasks",
        id);
  }
}

void SupernodeService::ForgetLostJobs() {
  if (!jobs_.any_lost()) return;
  const auto now = Registry::Clock::now();
  std::set<std::string> running;
  auto note = [&](const std::vector<DaemonView>& daemons) {
    for (const auto& v : daemons) {
      if (v.running && v.record.busy) running.insert(v.record.job);
    }
  };
  note(registry_.View(now));
  // A job's daemons may be registered with a peer (a forwarded grant).
  for (const auto& [key, link] : peers_) note(link.view.Daemons(now));
  for (const auto& id :
       jobs_.ForgetLost([&](const std::string& job) { return running.count(job) > 0; })) {
    history_.Forget(id);
    log_->info("job {} forgotten: its spawner is lost and no daemon runs its tasks", id);
  }
}

void SupernodeService::AnswerStatus(net::Connection& conn, uint64_t request_id) {
  conn.SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initStatusReport();
    r.setRequestId(request_id);
    FillStatusReport(r);
  });
}

void SupernodeService::FillStatusReport(proto::StatusReport::Builder r) {
  const auto now = Registry::Clock::now();
  const auto own = registry_.View(now);
  const auto lost = registry_.Lost(now);
  auto jobs = jobs_.Jobs();
  // The peers' daemons and jobs as their latest digests gave them (one link per peer id), their
  // heartbeat ages brought forward to now.
  std::vector<DaemonView> theirs;
  std::vector<std::string> peer_ids;
  std::set<std::string> seen_jobs;
  for (const auto& j : jobs) seen_jobs.insert(j.id);
  std::set<std::string> seen_peers;
  for (const auto& [key, link] : peers_) {
    if (!seen_peers.insert(link.id).second) continue;
    peer_ids.push_back(link.id);
    for (DaemonView& v : link.view.Daemons(now)) theirs.push_back(std::move(v));
    for (const auto& [id, j] : link.view.jobs()) {
      if (seen_jobs.insert(id).second) jobs.push_back(j);
    }
  }
  r.setSupernodeId(options_.id);
  auto daemons = r.initDaemons(static_cast<unsigned>(own.size() + theirs.size()));
  unsigned i = 0;
  for (const auto& v : own) ToProto(v, daemons[i++]);
  for (const auto& v : theirs) ToProto(v, daemons[i++]);
  auto gone = r.initLost(static_cast<unsigned>(lost.size()));
  for (size_t k = 0; k < lost.size(); ++k) ToProto(lost[k], gone[static_cast<unsigned>(k)]);
  auto job_list = r.initJobs(static_cast<unsigned>(jobs.size()));
  for (size_t k = 0; k < jobs.size(); ++k)
    net::ToProto(jobs[k], job_list[static_cast<unsigned>(k)]);
  auto peer_list = r.initPeers(static_cast<unsigned>(peer_ids.size()));
  for (size_t k = 0; k < peer_ids.size(); ++k) peer_list.set(static_cast<unsigned>(k), peer_ids[k]);
}

awaitable<void> SupernodeService::Cancel(net::ConnectionPtr conn, uint64_t request_id,
                                         std::string job, std::string requester,
                                         bool allow_forward) {
  CancelOutcome outcome;
  if (Status bad = CheckName("job id", job); !bad.ok()) {
    outcome.error = bad.message();
  } else if (net::ConnectionPtr spawner = jobs_.SpawnerOf(job); spawner && spawner->is_open()) {
    log_->warn("job {}: cancel asked by {}; telling its spawner {}", job, requester,
               spawner->Describe());
    spawner->SendEnvelope([&](proto::Envelope::Builder e) {
      auto c = e.initCancelJob();
      c.setJob(job);
      c.setRequester(requester);
    });
    outcome.supernode = options_.id;
  } else {
    // Registered with a peer, as its latest digest says: the cancel goes there.
    net::ConnectionPtr holder;
    std::string holder_id;
    if (allow_forward) {
      for (const auto& [key, link] : peers_) {
        for (const auto& [id, j] : link.view.jobs()) {
          if (id == job && link.conn->is_open()) {
            holder = link.conn;
            holder_id = link.id;
          }
        }
      }
    }
    if (!holder) {
      outcome.error = jobs_.IsLost(job)
                          ? "job " + job +
                                "'s spawner is lost: `aiac-spawner resume` on its state takes it "
                                "over (and can then cancel it); its tasks end by themselves after "
                                "the job's orphan_seconds"
                          : "no running job " + job + " is known to super-node " + options_.id;
      log_->info("cancel of job {} asked by {}: {}", job, requester, outcome.error);
    } else {
      log_->info("job {}: cancel asked by {}; forwarded to super-node {}", job, requester,
                 holder_id);
      const uint64_t id = next_request_++;
      auto slot = std::make_shared<net::ReplySlot<CancelOutcome>>(io_.get_executor());
      cancels_[id] = slot;
      holder->SendEnvelope([&](proto::Envelope::Builder e) {
        auto c = e.initCancelJob();
        c.setRequestId(id);
        c.setJob(job);
        c.setRequester(requester);
        c.setForwarded(true);
      });
      auto reply = co_await slot->Wait(options_.forward_timeout);
      cancels_.erase(id);
      if (reply) {
        outcome = std::move(*reply);
      } else {
        outcome.error = "super-node " + holder_id + ", which holds job " + job + ", did not answer";
      }
    }
  }
  if (!conn->is_open()) co_return;
  conn->SendEnvelope([&](proto::Envelope::Builder e) {
    auto a = e.initCancelAnswer();
    a.setRequestId(request_id);
    a.setError(outcome.error);
    a.setSupernodeId(outcome.supernode);
  });
}

void SupernodeService::OnCancelAnswer(proto::CancelAnswer::Reader answer) {
  auto it = cancels_.find(answer.getRequestId());
  if (it == cancels_.end()) return;
  it->second->Fill(CancelOutcome{Printable(answer.getError().cStr(), 300, false),
                                 Printable(answer.getSupernodeId().cStr(), 128, false)});
}

}  // namespace aiac::supernode
