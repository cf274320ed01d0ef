// The part of a daemon that keeps other tasks' checkpoints (docs/architecture.md, the life of a
// job).
//
// The spawner tells each daemon, with its own task, which tasks' checkpoints it keeps and which
// daemon runs each of them (AssignTask.hosted): a CheckpointPut is stored only when it comes from
// that daemon, and answered with a CheckpointAck once it is on disk (a put from another daemon
// closes the connection). A CheckpointGet is answered with the newest checkpoint whose checksum
// verifies, when it comes from that daemon too; another daemon gets "not found" with the reason
// (a replacement may ask before this daemon has heard of the move, and asks again). Puts for a
// job this daemon does not host (any more) are dropped. A job's checkpoints are deleted when it
// ends here, and those of older jobs when a new one starts.
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
#include "core/logging.h"
#include "net/connection.h"

namespace aiac::daemon {

class CheckpointService {
 public:
  CheckpointService(net::asio::io_context& io, std::unique_ptr<checkpoint::CheckpointStore> store,
                    Logger log);
  ~CheckpointService();

  // From now on this daemon keeps the checkpoints of `writers`' tasks of `job` (task -> the
  // daemon that may write them). Checkpoints of other jobs are deleted.
  void Host(const std::string& job, std::map<uint32_t, std::string> writers);
  // `task` now runs on `daemon` (a replacement): only it may write and fetch its checkpoints.
  void Moved(uint32_t task, const std::string& daemon);
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
  // Whether `conn`'s daemon is the one named for `task` of the hosted `job`; logs refusals.
  bool Allowed(const net::ConnectionPtr& conn, const std::string& job, uint32_t task,
               const char* what);

  net::asio::io_context& io_;
  std::shared_ptr<checkpoint::CheckpointStore> store_;
  Logger log_;
  net::asio::thread_pool disk_{1};
  std::shared_ptr<bool> alive_ =
      std::make_shared<bool>(true);  // replies posted after destruction are dropped
  std::string job_;
  std::map<uint32_t, std::string> writers_;
  std::atomic<uint64_t> stored_{0};
};

}  // namespace aiac::daemon
