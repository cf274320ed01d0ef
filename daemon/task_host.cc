#include "daemon/task_host.h"

#include "daemon/neighbour_channel.h"
#include "daemon/spawner_channel.h"
#include "net/identity.h"

namespace aiac::daemon {

namespace asio = net::asio;
using net::awaitable;

TaskHost::TaskHost(asio::io_context& io, TaskHostOptions options,
                   std::unique_ptr<checkpoint::CheckpointStore> checkpoints, Logger log)
    : io_(io),
      options_(std::move(options)),
      log_(std::move(log)),
      server_(io, options_.net, options_.limits, proto::Role::DAEMON, log_,
              [this](net::ConnectionPtr conn) { return Serve(std::move(conn)); }),
      plugins_(options_.plugin_dir, options_.plugin_cache_bytes),
      checkpoints_(io, std::move(checkpoints), log_),
      tasks_(io.get_executor()),
      links_(
          io, options_, monitors_, tasks_, [this] { return job_; }, log_),
      relay_(
          io, options_, links_, monitors_, tasks_, [this] { return job_; }, log_) {
  server_.set_id(options_.id);
  EvictPlugins();  // a bound lowered since the last start
}

void TaskHost::EvictPlugins() {
  for (const auto& file : plugins_.Evict()) {
    log_->info("plugin {} removed from DATA/plugins: least recently used, past the {} MB bound",
               file, options_.plugin_cache_bytes >> 20);
  }
}

TaskHost::~TaskHost() { Close(); }

Result<Endpoint> TaskHost::Listen(const Endpoint& listen) { return server_.Listen(listen); }

void TaskHost::Serve() { server_.Start(); }

void TaskHost::Close() {
  if (stopping_) return;
  stopping_ = true;
  EndJob("daemon stopping");
  server_.Close();
}

awaitable<void> TaskHost::Stop() {
  Close();
  co_await server_.Stop();  // the spawner's and the neighbours' connections' handlers
  co_await tasks_.Wait();   // the job's links, probes and relays
  // The app's set-up and the ended task's join, queued on the worker before this no-op.
  auto drained = std::make_shared<asio::steady_timer>(io_, asio::steady_timer::time_point::max());
  asio::post(work_, [this, drained] { asio::post(io_, [drained] { drained->cancel(); }); });
  co_await drained->async_wait(net::use_nothrow);
}

void TaskHost::CloseRevoked() {
  if (!options_.net.identity) return;
  const net::RevokedKeys& revoked = *options_.net.identity->trust.revoked;
  if (job_spawner_ && revoked.Contains(job_spawner_->peer().public_key)) {
    EndJob("its spawner's key is revoked");
  }
  server_.CloseRevoked(revoked);
}

awaitable<void> TaskHost::Serve(net::ConnectionPtr conn) {
  if (conn->peer().role == proto::Role::SPAWNER) {
    co_await SpawnerChannel(*this, conn).Serve();
  } else if (conn->peer().role == proto::Role::DAEMON) {
    co_await NeighbourChannel(*this, conn).Serve();
  } else {
    log_->warn("closed {}: super-nodes do not connect to daemons", conn->Describe());
    conn->Refuse("unexpected role");
  }
}

NeighbourMove TaskHost::MoveOf(proto::NeighbourMoved::Reader m) {
  return {m.getJob().cStr(),
          m.getTask(),
          m.getAddress().cStr(),
          m.getDaemonId().cStr(),
          m.getPreviousDaemonId().cStr(),
          m.getIncarnation()};
}

void TaskHost::OnNeighbourMoved(const NeighbourMove& m) {
  const auto coordinator = job_->group().coordinator_of_member();
  if (!job_->Move(m)) return;
  checkpoints_.Moved(m.task, m.daemon, m.incarnation);
  if (coordinator && coordinator->task == m.task) links_.CoordinatorMoved();
}

void TaskHost::EndJob(const std::string& why) {
  relay_.End();
  if (!job_) return;
  Session job = std::move(job_);
  job_.reset();
  job_spawner_.reset();
  links_.End();
  log_->info("job {}: task {} ends: {}", job->job(), job->task(), why);
  checkpoints_.EndJob(job->job());
  // The runner's thread ends after its current iteration: join it on the worker.
  auto retired = std::make_shared<TaskSession::Retired>(job->End());
  asio::post(work_, [retired] { retired->runner.reset(); });
}

}  // namespace aiac::daemon
