// The part of a daemon that keeps other tasks' checkpoints (docs/architecture.md, the life of a
// job).
//
// The spawner tells each daemon, with its own task, which tasks' checkpoints it keeps
// (AssignTask.hosted). Who may write and read them is what the capabilities say
// (checkpoint/proof.h): a CheckpointPut is stored only when its proof verifies under the job's
// spawner's key and its capability names the daemon on the other end of the connection, for a
// hosted task, in the newest incarnation of that task seen here (a capability of a newer one
// retires the older: its daemon may neither write nor read any more); it is answered with a
// CheckpointAck once it is on disk, with its proof. Anything else (no proof, a forged or altered
// checkpoint, another daemon's capability, a retired incarnation) closes the connection with one
// log line. A CheckpointGet carries the asker's capability, checked alike, and is answered with
// the newest checkpoint whose checksum verifies, with its proof; an asker without the right gets
// "not found" and the reason. Puts for a job this daemon does not host (any more) are dropped.
// A job's checkpoints are deleted when it ends here, and those of older jobs when a new one
// starts.
//
// Storage runs on a thread of its own, so that writing a large checkpoint never stalls the io
// thread (heartbeats, dependency values); replies are posted back to the io thread.
#pragma once

#include <atomic>
#include <boost/asio/thread_pool.hpp>
#include <cstdint>
#include <map>
#include <memory>
#include <string>

#include "checkpoint/checkpoint_store.h"
#include "checkpoint/proof.h"
#include "core/logging.h"
#include "net/connection.h"

namespace aiac::daemon {

class CheckpointService {
 public:
  CheckpointService(net::asio::io_context& io, std::unique_ptr<checkpoint::CheckpointStore> store,
                    Logger log);
  ~CheckpointService();

  // From now on this daemon keeps the checkpoints of `writers`' tasks of `job` (task -> the
  // daemon that runs it now), whose capabilities `spawner_key` (the job's spawner's, 32 raw
  // bytes) signs. Checkpoints of other jobs are deleted.
  void Host(const std::string& job, std::string spawner_key,
            std::map<uint32_t, std::string> writers);
  // `task` now runs on `daemon` in `incarnation` (a replacement): the older incarnations may
  // neither write nor fetch its checkpoints.
  void Moved(uint32_t task, const std::string& daemon, uint64_t incarnation);
  // The job ended here: forget it and delete its checkpoints.
  void EndJob(const std::string& job);

  // A CheckpointPut or CheckpointGet that arrived on `conn` (io thread). False when the peer had
  // no right to send it: the caller closes the connection.
  bool OnPut(const net::ConnectionPtr& conn, proto::CheckpointPut::Reader put);
  bool OnGet(const net::ConnectionPtr& conn, proto::CheckpointGet::Reader get);

  // Checkpoints stored so far (tests, logs).
  uint64_t stored() const { return stored_.load(); }
  // Waits until every storage operation queued so far is done (tests).
  void Drain();

 private:
  struct Writer {
    std::string daemon;
    uint64_t incarnation = 0;  // the newest seen; 0 before any
  };
  // Whether `capability` lets `conn`'s daemon touch `task` of the hosted `job` now: signed by
  // the spawner, naming that daemon and its key, for a hosted task and an incarnation not
  // retired. A newer incarnation retires the older ones.
  Status Authorize(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
                   const checkpoint::TaskCapability& capability);

  net::asio::io_context& io_;
  std::shared_ptr<checkpoint::CheckpointStore> store_;
  Logger log_;
  net::asio::thread_pool disk_{1};
  std::shared_ptr<bool> alive_ =
      std::make_shared<bool>(true);  // replies posted after destruction are dropped
  std::string job_;
  std::string spawner_key_;
  std::map<uint32_t, Writer> writers_;
  std::atomic<uint64_t> stored_{0};
};

}  // namespace aiac::daemon
