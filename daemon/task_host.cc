#include "daemon/task_host.h"

#include <charconv>
#include <cstring>

namespace aiac::daemon {

namespace asio = net::asio;
using net::awaitable;

namespace {

std::string EncodeU64(uint64_t v) {
  std::string out(8, '\0');
  std::memcpy(out.data(), &v, 8);
  return out;
}

std::optional<uint64_t> DecodeU64(capnp::Data::Reader data) {
  if (data.size() != 8) return std::nullopt;
  uint64_t v;
  std::memcpy(&v, data.begin(), 8);
  return v;
}

std::optional<uint64_t> ParamU64(proto::AssignTask::Reader assign, std::string_view key) {
  for (auto p : assign.getParams()) {
    if (std::string_view(p.getKey().cStr()) != key) continue;
    std::string_view text = p.getValue().cStr();
    uint64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
    return v;
  }
  return std::nullopt;
}

}  // namespace

TaskHost::TaskHost(asio::io_context& io, TaskHostOptions options, Logger log)
    : io_(io), options_(std::move(options)), log_(std::move(log)), acceptor_(io) {}

TaskHost::~TaskHost() { Stop(); }

Result<Endpoint> TaskHost::Listen(const Endpoint& listen) {
  net::error_code ec;
  auto address = asio::ip::make_address(listen.host, ec);
  if (ec) return InvalidArgument("listen address '" + listen.host + "' is not an IP address");
  net::tcp::endpoint ep(address, listen.port);
  acceptor_.open(ep.protocol(), ec);
  if (!ec) acceptor_.set_option(net::tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(ep, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Unavailable("cannot listen on " + listen.ToString() + ": " + ec.message());
  return Endpoint{listen.host, acceptor_.local_endpoint().port()};
}

void TaskHost::Serve() { asio::co_spawn(io_, AcceptLoop(), asio::detached); }

void TaskHost::Stop() {
  if (stopping_) return;
  stopping_ = true;
  net::error_code ec;
  acceptor_.close(ec);
  job_.reset();
  auto conns = connections_;
  for (auto& c : conns) c->Close();
}

awaitable<void> TaskHost::AcceptLoop() {
  while (!stopping_) {
    auto [ec, socket] = co_await acceptor_.async_accept(net::use_nothrow);
    if (ec) {
      if (stopping_) break;
      log_->warn("accept failed: {}", ec.message());
      continue;
    }
    asio::co_spawn(io_, Serve(net::Connection::Create(std::move(socket), options_.net)),
                   asio::detached);
  }
}

awaitable<void> TaskHost::Serve(net::ConnectionPtr conn) {
  connections_.insert(conn);
  Status hs = co_await conn->Handshake(proto::Role::DAEMON, options_.id);
  if (!hs.ok()) {
    log_->warn("refused connection from {}: {}", conn->remote_address(), hs.message());
  } else if (conn->peer().role == proto::Role::SPAWNER) {
    co_await ServeSpawner(conn);
  } else if (conn->peer().role == proto::Role::DAEMON) {
    co_await ServeNeighbour(conn);
  } else {
    log_->warn("closed {}: super-nodes do not connect to daemons", conn->Describe());
    conn->Refuse("unexpected role");
  }
  conn->Close();
  connections_.erase(conn);
}

Result<std::shared_ptr<TaskHost::Job>> TaskHost::MakeJob(proto::AssignTask::Reader assign,
                                                         net::ConnectionPtr spawner) {
  const std::string app = assign.getApp().cStr();
  if (app != "ring") return InvalidArgument("unknown app '" + app + "' (this daemon runs: ring)");
  const uint32_t task = assign.getTask(), count = assign.getTaskCount();
  if (count < 2 || task >= count) {
    return InvalidArgument("task " + std::to_string(task) + " of " + std::to_string(count) +
                           ": the ring needs at least 2 tasks");
  }
  auto rounds = ParamU64(assign, "rounds");
  if (!rounds || *rounds == 0) return InvalidArgument("ring: parameter 'rounds' must be a positive integer");
  const uint32_t successor = (task + 1) % count;
  std::optional<Endpoint> successor_at;
  for (auto n : assign.getNeighbours()) {
    if (n.getTask() != successor) continue;
    auto ep = ParseEndpoint(n.getAddress().cStr());
    if (!ep.ok()) return ep.status();
    successor_at = *ep;
  }
  if (!successor_at) {
    return InvalidArgument("no address for successor task " + std::to_string(successor));
  }
  auto job = std::make_shared<Job>(Job{assign.getJob().cStr(), task, count,
                                       apps::RingTask(task, count, *rounds), std::move(spawner),
                                       *successor_at, nullptr, std::nullopt, false});
  return job;
}

awaitable<void> TaskHost::ServeSpawner(net::ConnectionPtr conn) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) break;
    auto env = (*msg)->root();
    if (env.isAssignTask()) {
      auto assign = env.getAssignTask();
      const std::string job_id = assign.getJob().cStr();
      const uint32_t task = assign.getTask();
      std::string error;
      if (job_) {
        error = "daemon " + options_.id + " is busy with job " + job_->id;
      } else {
        auto job = MakeJob(assign, conn);
        if (job.ok()) {
          job_ = *job;
          log_->info("job {}: running task {} of {} (app {})", job_id, task, job_->count,
                     assign.getApp().cStr());
          asio::co_spawn(io_, LinkSuccessor(job_), asio::detached);
          asio::co_spawn(io_, ReportProgress(job_), asio::detached);
        } else {
          error = job.status().message();
          log_->warn("job {}: task {} refused: {}", job_id, task, error);
        }
      }
      conn->SendEnvelope([&](proto::Envelope::Builder e) {
        auto r = e.initTaskReady();
        r.setJob(job_id);
        r.setTask(task);
        r.setError(error);
      });
    } else if (env.isStartTask()) {
      if (job_ && job_->spawner == conn) Emit(*job_, job_->ring.Start());
    } else if (env.isHalt()) {
      if (job_ && job_->spawner == conn) EndJob("halted by the spawner");
    } else {
      log_->warn("closed {}: unexpected message from a spawner", conn->Describe());
      conn->Refuse("unexpected message");
      break;
    }
  }
  if (job_ && job_->spawner == conn) EndJob("spawner connection lost");
}

awaitable<void> TaskHost::ServeNeighbour(net::ConnectionPtr conn) {
  for (;;) {
    auto msg = co_await conn->Receive();
    if (!msg.ok()) {
      if (msg.status().code() == StatusCode::kProtocol ||
          msg.status().code() == StatusCode::kResourceExhausted) {
        log_->warn("closed {}: {}", conn->Describe(), msg.status().message());
      }
      co_return;
    }
    auto env = (*msg)->root();
    if (!env.isDependencyData()) {
      log_->warn("closed {}: unexpected message from a daemon", conn->Describe());
      conn->Refuse("unexpected message");
      co_return;
    }
    auto dep = env.getDependencyData();
    // Data for a job this daemon does not (or no longer) run is stale: drop it.
    if (!job_ || job_->id != dep.getJob().cStr() || dep.getToTask() != job_->task) continue;
    auto value = DecodeU64(dep.getData());
    if (!value) {
      log_->warn("job {}: dropped malformed token from task {}", job_->id, dep.getFromTask());
      continue;
    }
    Emit(*job_, job_->ring.OnToken(*value, dep.getIteration()));
    if (job_) FinishIfDone(*job_);
  }
}

void TaskHost::Emit(Job& job, std::optional<apps::RingTask::Token> token) {
  if (!token) return;
  job.unsent = token;
  if (!job.successor_conn || !job.successor_conn->is_open()) return;  // sent once linked
  const uint32_t successor = job.ring.successor();
  job.successor_conn->SendEnvelope([&](proto::Envelope::Builder e) {
    auto d = e.initDependencyData();
    d.setJob(job.id);
    d.setFromTask(job.task);
    d.setToTask(successor);
    d.setIteration(token->iteration);
    std::string bytes = EncodeU64(token->value);
    d.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
  });
}

void TaskHost::FinishIfDone(Job& job) {
  if (!job.ring.done() || job.result_sent) return;
  job.result_sent = true;
  log_->info("job {}: task {} finished after {} iterations", job.id, job.task, job.ring.iterations());
  job.spawner->SendEnvelope([&](proto::Envelope::Builder e) {
    auto r = e.initResult();
    r.setJob(job.id);
    r.setTask(job.task);
    r.setIterations(job.ring.iterations());
    std::string bytes = EncodeU64(job.ring.value());
    r.setData(kj::arrayPtr(reinterpret_cast<const kj::byte*>(bytes.data()), bytes.size()));
  });
}

void TaskHost::EndJob(const std::string& why) {
  if (!job_) return;
  log_->info("job {}: task {} ends: {}", job_->id, job_->task, why);
  if (job_->successor_conn) job_->successor_conn->Close();
  job_.reset();
}

awaitable<void> TaskHost::LinkSuccessor(std::shared_ptr<Job> job) {
  net::RetryPolicy retry;
  retry.attempts = 1;
  auto backoff = std::chrono::milliseconds(50);
  while (job_ == job) {
    auto conn = co_await net::Dial(job->successor, options_.net, proto::Role::DAEMON,
                                   options_.id, retry);
    if (job_ != job) break;
    if (!conn.ok()) {
      if (conn.status().code() == StatusCode::kUnauthenticated) {
        log_->error("job {}: successor {} refused us: {}", job->id, job->successor.ToString(),
                    conn.status().message());
        break;
      }
      asio::steady_timer wait(io_, backoff);
      co_await wait.async_wait(net::use_nothrow);
      backoff = std::min(backoff * 2, std::chrono::milliseconds(1000));
      continue;
    }
    job->successor_conn = *conn;
    // Resend the newest token: the receiver drops it if it already had it.
    Emit(*job, job->unsent);
    // The successor never writes to us; reading tells when the link breaks.
    auto msg = co_await (*conn)->Receive();
    (*conn)->Close();
  }
}

awaitable<void> TaskHost::ReportProgress(std::shared_ptr<Job> job) {
  asio::steady_timer timer(io_);
  while (job_ == job) {
    timer.expires_after(options_.progress);
    co_await timer.async_wait(net::use_nothrow);
    if (job_ != job) break;
    job->spawner->SendEnvelope([&](proto::Envelope::Builder e) {
      auto p = e.initTaskProgress();
      p.setJob(job->id);
      p.setTask(job->task);
      p.setIteration(job->ring.iterations());
      p.setConverged(job->ring.done());
    });
  }
}

}  // namespace aiac::daemon
