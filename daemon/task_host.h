// The part of a daemon that runs a task: accepts the spawner's and the neighbour daemons'
// connections, holds the one job this daemon serves at a time, sends its dependency data
// straight to the neighbour daemons, reports progress and the result to the spawner.
//
// One task per daemon (MAHEVE section 3.3). A second AssignTask while a job runs is answered with
// an error, never queued. Runs on the daemon's io_context thread.
#pragma once

#include <chrono>
#include <deque>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "apps/ring/ring_task.h"
#include "core/endpoint.h"
#include "core/logging.h"
#include "net/connection.h"

namespace aiac::daemon {

struct TaskHostOptions {
  std::string id;
  net::NetOptions net;
  std::chrono::milliseconds progress{250};
};

class TaskHost {
 public:
  TaskHost(net::asio::io_context& io, TaskHostOptions options, Logger log);
  ~TaskHost();

  // Binds `listen`; returns the bound endpoint. Call once before Serve().
  Result<Endpoint> Listen(const Endpoint& listen);
  // The daemon id is known only once the port is: set it before Serve().
  void set_id(std::string id) { options_.id = std::move(id); }
  void Serve();
  void Stop();
  bool busy() const { return job_ != nullptr; }

 private:
  struct Job {
    std::string id;
    uint32_t task = 0;
    uint32_t count = 0;
    apps::RingTask ring;
    net::ConnectionPtr spawner;
    Endpoint successor;
    net::ConnectionPtr successor_conn;
    std::optional<apps::RingTask::Token> unsent;  // last token, resent after a reconnect
    bool result_sent = false;
  };

  net::awaitable<void> AcceptLoop();
  net::awaitable<void> Serve(net::ConnectionPtr conn);
  net::awaitable<void> ServeSpawner(net::ConnectionPtr conn);
  net::awaitable<void> ServeNeighbour(net::ConnectionPtr conn);
  net::awaitable<void> LinkSuccessor(std::shared_ptr<Job> job);
  net::awaitable<void> ReportProgress(std::shared_ptr<Job> job);

  // Validates an AssignTask and makes the job; the error text goes back in TaskReady.
  Result<std::shared_ptr<Job>> MakeJob(proto::AssignTask::Reader assign, net::ConnectionPtr spawner);
  void Emit(Job& job, std::optional<apps::RingTask::Token> token);
  void FinishIfDone(Job& job);
  void EndJob(const std::string& why);

  net::asio::io_context& io_;
  TaskHostOptions options_;
  Logger log_;
  net::tcp::acceptor acceptor_;
  std::set<net::ConnectionPtr> connections_;
  std::shared_ptr<Job> job_;
  bool stopping_ = false;
};

}  // namespace aiac::daemon
