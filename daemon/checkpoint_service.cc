#include "daemon/checkpoint_service.h"

#include <future>

#include "net/capnp_bytes.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::AsBytes;
using net::AsString;

CheckpointService::CheckpointService(asio::io_context& io,
                                     std::unique_ptr<checkpoint::CheckpointStore> store, Logger log)
    : io_(io), store_(std::move(store)), log_(std::move(log)) {}

CheckpointService::~CheckpointService() {
  *alive_ = false;
  disk_.join();
}

void CheckpointService::Drain() {
  std::promise<void> done;
  asio::post(disk_, [&] { done.set_value(); });
  done.get_future().wait();
}

void CheckpointService::Host(const std::string& job, std::map<uint32_t, std::string> writers) {
  job_ = job;
  writers_ = std::move(writers);
  asio::post(disk_, [store = store_, job, log = log_] {
    auto jobs = store->Jobs();
    if (!jobs.ok()) return;
    for (const auto& old : *jobs) {
      if (old == job) continue;
      if (Status s = store->DropJob(old); !s.ok())
        log->warn("checkpoints of old job {}: {}", old, s.message());
    }
  });
}

void CheckpointService::Moved(uint32_t task, const std::string& daemon) {
  if (auto writer = writers_.find(task); writer != writers_.end()) writer->second = daemon;
}

void CheckpointService::EndJob(const std::string& job) {
  if (job_ == job) {
    job_.clear();
    writers_.clear();
  }
  asio::post(disk_, [store = store_, job, log = log_] {
    if (Status s = store->DropJob(job); !s.ok())
      log->warn("job {}: dropping its checkpoints: {}", job, s.message());
  });
}

bool CheckpointService::Allowed(const net::ConnectionPtr& conn, const std::string& job,
                                uint32_t task, const char* what) {
  auto writer = writers_.find(task);
  if (writer != writers_.end() && writer->second == conn->peer().id) return true;
  log_->warn("closed {}: {} for task {} of job {}, whose checkpoints it may not touch",
             conn->Describe(), what, task, job);
  return false;
}

bool CheckpointService::OnPut(const net::ConnectionPtr& conn, proto::CheckpointPut::Reader put) {
  std::string job = put.getJob().cStr();
  if (job.empty() || job != job_) return true;  // not (or no longer) hosted here: stale, drop it
  const uint32_t task = put.getTask();
  if (!Allowed(conn, job, task, "checkpoint")) return false;
  checkpoint::Checkpoint c{job,
                           task,
                           put.getIncarnation(),
                           put.getIteration(),
                           AsString(put.getState()),
                           put.getChecksum()};
  std::weak_ptr<bool> alive = alive_;
  asio::post(disk_, [this, alive, conn, c = std::move(c)] {
    auto stored = store_->Put(c);
    if (stored.ok() && *stored) ++stored_;
    asio::post(io_,
               [this, alive, conn, stored, job = c.job, task = c.task, incarnation = c.incarnation,
                iteration = c.iteration, description = checkpoint::Describe(c)] {
                 if (alive.expired() || !*alive.lock()) return;
                 if (!stored.ok())
                   log_->warn("{} not stored: {}", description, stored.status().message());
                 conn->SendEnvelope([&](proto::Envelope::Builder e) {
                   auto a = e.initCheckpointAck();
                   a.setJob(job);
                   a.setTask(task);
                   a.setIncarnation(incarnation);
                   a.setIteration(iteration);
                   a.setStored(stored.ok() && *stored);
                   if (!stored.ok()) a.setError(stored.status().message());
                 });
               });
  });
  return true;
}

bool CheckpointService::OnGet(const net::ConnectionPtr& conn, proto::CheckpointGet::Reader get) {
  std::string job = get.getJob().cStr();
  const uint32_t task = get.getTask();
  if (job.empty() || job != job_) {
    // Not hosted here: say so, so that the asker tries another backup at once.
    conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto d = e.initCheckpointData();
      d.setJob(job);
      d.setTask(task);
      d.setFound(false);
    });
    return true;
  }
  if (auto writer = writers_.find(task);
      writer == writers_.end() || writer->second != conn->peer().id) {
    log_->debug("{} asked for task {}'s checkpoint of job {}, which it does not run (yet)",
                conn->Describe(), task, job);
    conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto d = e.initCheckpointData();
      d.setJob(job);
      d.setTask(task);
      d.setFound(false);
      d.setError("daemon " + conn->peer().id + " does not run task " + std::to_string(task) +
                 " of job " + job);
    });
    return true;
  }
  std::weak_ptr<bool> alive = alive_;
  asio::post(disk_, [this, alive, conn, job, task] {
    auto loaded = store_->Load(job, task);
    asio::post(io_, [this, alive, conn, job, task, loaded = std::move(loaded)] {
      if (alive.expired() || !*alive.lock()) return;
      if (!loaded.ok())
        log_->warn("job {}: reading the checkpoints of task {}: {}", job, task,
                   loaded.status().message());
      if (loaded.ok()) {
        for (const auto& why : loaded->skipped) log_->warn("job {}: skipped {}", job, why);
      }
      const checkpoint::Checkpoint* newest =
          loaded.ok() && !loaded->valid.empty() ? &loaded->valid.front() : nullptr;
      conn->SendEnvelope([&](proto::Envelope::Builder e) {
        auto d = e.initCheckpointData();
        d.setJob(job);
        d.setTask(task);
        d.setFound(newest != nullptr);
        if (newest) {
          d.setIncarnation(newest->incarnation);
          d.setIteration(newest->iteration);
          d.setChecksum(newest->checksum);
          d.setState(AsBytes(newest->state));
        }
      });
    });
  });
  return true;
}

}  // namespace aiac::daemon
