#include "daemon/checkpoint_service.h"

#include <future>

#include "checkpoint/proof_wire.h"
#include "core/metrics.h"
#include "net/capnp_bytes.h"

namespace aiac::daemon {
namespace {

// The checkpoint copies this daemon stored as a backup (docs/operations.md, "Metrics").
struct StoredCheckpoints {
  metrics::Counter& written;
  metrics::Histogram& write_seconds;
};
StoredCheckpoints& CheckpointMetrics() {
  static StoredCheckpoints* m = new StoredCheckpoints{
      metrics::Registry::Process().GetCounter("aiac_checkpoints_written_total",
                                              "Checkpoint copies this daemon stored for its peers"),
      metrics::Registry::Process().GetHistogram(
          "aiac_checkpoint_write_seconds",
          "Time to write one checkpoint copy to the RocksDB store (seconds)",
          {0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5})};
  return *m;
}

}  // namespace

namespace asio = net::asio;
using net::AsBytes;
using net::AsString;

CheckpointService::CheckpointService(asio::io_context& io,
                                     std::unique_ptr<checkpoint::CheckpointStore> store, Logger log)
    : io_(io), store_(std::move(store)), log_(std::move(log)) {
  // Listed at 0 from the start: a scrape before this daemon's first copy reads none stored, not
  // a metric that is missing.
  CheckpointMetrics();
}

CheckpointService::~CheckpointService() {
  *alive_ = false;
  disk_.join();
}

void CheckpointService::Drain() {
  std::promise<void> done;
  asio::post(disk_, [&] { done.set_value(); });
  done.get_future().wait();
}

void CheckpointService::Host(const std::string& job, std::string spawner_key,
                             std::map<uint32_t, std::string> writers) {
  job_ = job;
  spawner_key_ = std::move(spawner_key);
  writers_.clear();
  for (auto& [task, daemon] : writers) writers_[task] = Writer{std::move(daemon), 0};
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

void CheckpointService::Moved(uint32_t task, const std::string& daemon, uint64_t incarnation) {
  auto writer = writers_.find(task);
  if (writer != writers_.end() && incarnation > writer->second.incarnation) {
    writer->second = Writer{daemon, incarnation};
  }
}

void CheckpointService::EndJob(const std::string& job) {
  if (job_ == job) {
    job_.clear();
    spawner_key_.clear();
    writers_.clear();
  }
  asio::post(disk_, [store = store_, job, log = log_] {
    if (Status s = store->DropJob(job); !s.ok())
      log->warn("job {}: dropping its checkpoints: {}", job, s.message());
  });
}

Status CheckpointService::Authorize(const net::ConnectionPtr& conn, const std::string& job,
                                    uint32_t task, const checkpoint::TaskCapability& capability) {
  const std::string which = "task " + std::to_string(task) + " of job " + job;
  auto writer = writers_.find(task);
  if (writer == writers_.end()) return Unauthenticated(which + " is not kept here");
  AIAC_RETURN_IF_ERROR(checkpoint::VerifyCapability(capability, spawner_key_));
  if (capability.job != job || capability.task != task) {
    return Unauthenticated("its capability is for task " + std::to_string(capability.task) +
                           " of job " + capability.job);
  }
  const net::PeerIdentity& peer = conn->peer();
  if (capability.daemon_id != peer.id || capability.daemon_key != peer.public_key) {
    return Unauthenticated("its capability is daemon " + capability.daemon_id + "'s");
  }
  Writer& w = writer->second;
  if (capability.incarnation < w.incarnation ||
      (capability.incarnation == w.incarnation && capability.daemon_id != w.daemon)) {
    return Unauthenticated("incarnation " + std::to_string(capability.incarnation) + " of " +
                           which + " is over (incarnation " + std::to_string(w.incarnation) +
                           " runs on daemon " + w.daemon + ")");
  }
  w = Writer{capability.daemon_id, capability.incarnation};
  return Status::Ok();
}

bool CheckpointService::OnPut(const net::ConnectionPtr& conn, proto::CheckpointPut::Reader put) {
  std::string job = put.getJob().cStr();
  if (job.empty() || job != job_) return true;  // not (or no longer) hosted here: stale, drop it
  const uint32_t task = put.getTask();
  checkpoint::Checkpoint c{job,
                           task,
                           put.getIncarnation(),
                           put.getIteration(),
                           AsString(put.getState()),
                           put.getChecksum(),
                           ""};
  Status allowed = put.hasProof() ? Status::Ok() : Unauthenticated("it carries no proof");
  checkpoint::CheckpointProof proof;
  if (allowed.ok()) {
    proof = checkpoint::ReadProof(put.getProof());
    allowed = Authorize(conn, job, task, proof.capability);
  }
  if (!allowed.ok()) {
    log_->warn("closed {}: refused its {}: {}", conn->Describe(), checkpoint::Describe(c),
               allowed.message());
    return false;
  }
  c.proof = checkpoint::EncodeProof(proof);
  std::weak_ptr<bool> alive = alive_;
  // The signature covers the state's SHA-256: checked on the storage thread, with the write.
  asio::post(disk_, [this, alive, conn, c = std::move(c), proof = std::move(proof),
                     spawner_key = spawner_key_] {
    Status believed = checkpoint::VerifyCheckpoint(c, proof, spawner_key);
    const auto write_start = std::chrono::steady_clock::now();
    Result<bool> stored = believed.ok() ? store_->Put(c) : Result<bool>(believed);
    if (stored.ok() && *stored) {
      ++stored_;
      CheckpointMetrics().written.Add();
      CheckpointMetrics().write_seconds.Observe(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - write_start).count());
    }
    asio::post(io_, [this, alive, conn, stored, believed, job = c.job, task = c.task,
                     incarnation = c.incarnation, iteration = c.iteration,
                     description = checkpoint::Describe(c)] {
      if (alive.expired() || !*alive.lock()) return;
      if (!believed.ok()) {
        log_->warn("closed {}: refused its {}: {}", conn->Describe(), description,
                   believed.message());
        conn->Refuse("checkpoint refused: " + believed.message());
        return;
      }
      if (!stored.ok()) log_->warn("{} not stored: {}", description, stored.status().message());
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
  Status allowed = get.hasCapability()
                       ? Authorize(conn, job, task, checkpoint::ReadCapability(get.getCapability()))
                       : Unauthenticated("it shows no capability");
  if (!allowed.ok()) {
    log_->warn("{} may not read task {}'s checkpoints of job {}: {}", conn->Describe(), task, job,
               allowed.message());
    conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto d = e.initCheckpointData();
      d.setJob(job);
      d.setTask(task);
      d.setFound(false);
      d.setError("daemon " + conn->peer().id + " may not read task " + std::to_string(task) +
                 "'s checkpoints: " + allowed.message());
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
      // The newest one that still has its proof: one without (of before proofs, or damaged)
      // would be refused by the asker anyway.
      const checkpoint::Checkpoint* newest = nullptr;
      std::optional<checkpoint::CheckpointProof> proof;
      const std::vector<checkpoint::Checkpoint> none;
      for (const auto& c : loaded.ok() ? loaded->valid : none) {  // (both lvalues: no copy)
        auto decoded = checkpoint::DecodeProof(c.proof);
        if (!decoded.ok()) {
          log_->warn("job {}: skipped {}: it has no proof", job, checkpoint::Describe(c));
          continue;
        }
        newest = &c;
        proof = std::move(*decoded);
        break;
      }
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
          checkpoint::FillProof(*proof, d.initProof());
        }
      });
    });
  });
  return true;
}

}  // namespace aiac::daemon
