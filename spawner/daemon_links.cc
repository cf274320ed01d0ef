#include "spawner/daemon_links.h"

#include <algorithm>

#include "checkpoint/proof_wire.h"
#include "core/sha256.h"
#include "net/capnp_bytes.h"
#include "net/describe_exception.h"
#include "net/identity.h"
#include "runtime/plugin.h"

namespace aiac::spawner {

namespace asio = net::asio;
using net::AsBytes;
using net::awaitable;
using Clock = std::chrono::steady_clock;

namespace {

// Task data above this goes in TaskData chunks before the AssignTask instead of inside it, so no
// job is limited by the frame limit (a block of a large system can be hundreds of MB).
constexpr size_t kInlineDataBytes = 1u << 20;
constexpr size_t kChunkBytes = 4u << 20;

}  // namespace

DaemonLinks::DaemonLinks(asio::any_io_executor executor, DaemonLinksContext context, size_t tasks)
    : executor_(std::move(executor)), c_(std::move(context)), conns_(tasks) {}

SupervisorPort DaemonLinks::Port() {
  SupervisorPort port;
  port.connect = [this](size_t task, uint64_t incarnation) {
    // A message that throws when read (malformed text) fails the run with the reason, rather
    // than leaving it to time out.
    asio::co_spawn(executor_, WatchDaemon(task, incarnation), [this, task](std::exception_ptr e) {
      if (e) c_.fail("daemon of task " + std::to_string(task) + ": " + net::DescribeException(e));
    });
  };
  port.send = [this](size_t task, const EnvelopeFill& fill) {
    if (conns_[task]) conns_[task]->SendEnvelope(fill);
  };
  port.close = [this](size_t task) {
    // After what was queued (a Halt that drops the task): a paused daemon reads it when it wakes.
    if (conns_[task]) conns_[task]->CloseWhenFlushed();
    conns_[task].reset();
  };
  port.send_plugin = [this](size_t task) { SendPlugin(task); };
  port.request_daemon = [this](size_t task, uint64_t incarnation, const std::string& what) {
    auto done = [this, task](std::exception_ptr e) {
      if (e)
        c_.fail("replacing the daemon of task " + std::to_string(task) + ": " +
                net::DescribeException(e));
    };
    asio::co_spawn(executor_, ReplaceFromSupernode(task, incarnation, what), done);
  };
  port.changed = [this] { c_.wake(); };
  port.version = [this](size_t task) {
    return conns_[task] ? conns_[task]->peer().version : net::kProtocolVersion;
  };
  return port;
}

awaitable<void> DaemonLinks::WatchDaemon(size_t index, uint64_t incarnation) {
  // Everything below concerns this incarnation only: once the task moved on, this coroutine
  // neither acts nor reports.
  const std::string address = supervisor_->deployment().task(index).address;
  auto at = ParseEndpoint(address);
  if (!at.ok()) {
    c_.fail("daemon " + supervisor_->deployment().task(index).daemon + ": " +
            at.status().message());
    co_return;
  }
  net::RetryPolicy retry;
  retry.attempts = 5;
  // A daemon that does not answer within failure_timeout_ms is lost, as a silent one is: one
  // that is stopped (its host accepts the connection, it never answers) would otherwise hold
  // its task, and its neighbours, for five handshake timeouts.
  retry.give_up_after = std::max(c_.options.failure_timeout, c_.options.net.handshake_timeout);
  auto conn = co_await net::Dial(*at, c_.options.net, proto::Role::SPAWNER, c_.spawner_id,
                                 proto::Role::DAEMON, retry);
  if (!supervisor_->Current(index, incarnation)) co_return;
  const std::string& granted = supervisor_->deployment().task(index).daemon;
  if (conn.ok() && (*conn)->peer().id != granted) {
    // Another daemon answers at the address the granted one registered: it gets nothing.
    (*conn)->Close();
    conn = Unavailable("daemon " + (*conn)->peer().id + " answered at " + address + ", not " +
                       granted);
  }
  if (!conn.ok()) {
    supervisor_->OnUnreachable(index, incarnation, conn.status().message(), Clock::now());
    co_return;
  }
  const net::ConnectionPtr mine = *conn;
  conns_[index] = mine;
  supervisor_->OnConnected(index, incarnation, Clock::now());
  if (supervisor_->adopting(index)) {
    if (mine->peer().version < net::kSpawnerResumeVersion) {
      // Its daemon ended the task with the previous spawner's link: replaced as lost.
      mine->Close();
      if (conns_[index] == mine) conns_[index].reset();
      supervisor_->OnLost(index, incarnation,
                          "speaks protocol " + std::to_string(mine->peer().version) +
                              ", which keeps no task for a resumed spawner",
                          Clock::now());
      co_return;
    }
    mine->SendEnvelope([&](proto::Envelope::Builder e) {
      auto a = e.initAdoptTask();
      a.setJob(c_.job_id);
      a.setTask(static_cast<uint32_t>(index));
      a.setIncarnation(incarnation);
      a.setSpawnerEpoch(c_.spawner_epoch);
    });
  } else {
    // The assignment goes out on its own coroutine while this one reads: a daemon that refuses
    // a frame says why at once, and that must be read before the connection goes.
    asio::co_spawn(
        executor_, SendAssignment(index, incarnation, mine), [this, index](std::exception_ptr e) {
          if (e)
            c_.fail("assigning task " + std::to_string(index) + ": " + net::DescribeException(e));
        });
  }
  for (;;) {
    auto msg = co_await mine->Receive();
    if (!supervisor_->Current(index, incarnation)) co_return;
    if (!msg.ok()) {
      if (conns_[index] == mine) conns_[index].reset();
      supervisor_->OnLost(index, incarnation, msg.status().message(), Clock::now());
      co_return;
    }
    supervisor_->OnReport(index, incarnation, (*msg)->root(), Clock::now());
  }
}

void DaemonLinks::SendAlive() {
  for (const net::ConnectionPtr& conn : conns_) {
    if (!conn || !conn->is_open() || conn->peer().version < net::kSpawnerAliveVersion) continue;
    conn->SendEnvelope([&](proto::Envelope::Builder e) { e.initSpawnerAlive().setJob(c_.job_id); });
  }
}

void DaemonLinks::CloseRevoked() {
  if (!c_.options.net.identity) return;
  const net::RevokedKeys& revoked = *c_.options.net.identity->trust.revoked;
  for (size_t i = 0; i < conns_.size(); ++i) {
    if (!conns_[i] || !revoked.Contains(conns_[i]->peer().public_key)) continue;
    c_.log->warn("job {}: task {}'s daemon {} is revoked: replacing it", c_.job_id, i,
                 conns_[i]->peer().id);
    conns_[i]->Close();
  }
}

void DaemonLinks::SendPlugin(size_t index) {
  const net::ConnectionPtr& conn = conns_[index];
  if (!conn) return;
  // In chunks well under the daemon's frame limit when it is large, like task data (the whole
  // plugin is in memory already: no flow control needed).
  const std::string& bytes = c_.app.bytes;
  const size_t chunk = ChunkBytes();
  const bool chunked = bytes.size() > chunk;
  c_.log->log(
      PerTaskLogLevel(supervisor_->deployment().tasks()),
      "job {}: sending plugin {} ({} bytes{}) to daemon {}", c_.job_id, c_.app.path, bytes.size(),
      chunked ? " in " + std::to_string((bytes.size() + chunk - 1) / chunk) + " chunks" : "",
      supervisor_->deployment().task(index).daemon);
  size_t at = 0;
  do {
    const size_t n = std::min(chunk, bytes.size() - at);
    conn->SendEnvelope([&](proto::Envelope::Builder e) {
      auto pd = e.initPluginData();
      pd.setSha256(AsBytes(c_.app.sha256));
      pd.setName(c_.app.path);
      pd.setBytes(capnp::Data::Reader(reinterpret_cast<const capnp::byte*>(bytes.data() + at), n));
      if (chunked) {
        pd.setOffset(at);
        pd.setTotal(bytes.size());
      }
    });
    at += n;
  } while (at < bytes.size());
}

size_t DaemonLinks::ChunkBytes() const {
  return std::max<size_t>(256, std::min(kChunkBytes, c_.options.net.limits.max_frame_bytes / 4));
}

awaitable<void> DaemonLinks::SendAssignment(size_t index, uint64_t incarnation,
                                            net::ConnectionPtr mine) {
  auto current = [&] { return supervisor_->Current(index, incarnation) && mine->is_open(); };
  // Large data first, in chunks well under the frame limit, one queued at a time.
  const std::string& data = c_.app.plan.slices[index];
  const size_t chunk = ChunkBytes();
  const bool chunked = data.size() > std::min(kInlineDataBytes, chunk);
  if (chunked) {
    c_.log->info("job {}: sending task {}'s data ({} bytes) to daemon {} in {} chunks", c_.job_id,
                 index, data.size(), supervisor_->deployment().task(index).daemon,
                 (data.size() + chunk - 1) / chunk);
    for (size_t offset = 0; offset < data.size() && mine->is_open(); offset += chunk) {
      const std::string_view part = std::string_view(data).substr(offset, chunk);
      mine->SendEnvelope([&](proto::Envelope::Builder e) {
        auto d = e.initTaskData();
        d.setJob(c_.job_id);
        d.setTask(static_cast<uint32_t>(index));
        d.setOffset(offset);
        d.setTotal(data.size());
        d.setBytes(AsBytes(part));
      });
      co_await mine->Drained();
      if (!current()) co_return;
    }
  }
  mine->SendEnvelope([&](proto::Envelope::Builder e) {
    FillAssignment(e.initAssignTask(), index, incarnation, chunked, mine->peer().public_key);
  });
}

void DaemonLinks::FillAssignment(proto::AssignTask::Builder a, size_t index, uint64_t incarnation,
                                 bool chunked, const std::string& daemon_key) const {
  const Deployment& deployment = supervisor_->deployment();
  const std::string& data = c_.app.plan.slices[index];
  a.setJob(c_.job_id);
  a.setTask(static_cast<uint32_t>(index));
  a.setTaskCount(c_.job.tasks);
  a.setApp(c_.job.app);
  a.setPluginHash(AsBytes(c_.app.sha256));
  a.setPluginSignature(AsBytes(c_.app.signature));
  a.setPluginSigner(AsBytes(c_.app.signer));
  a.setPluginName(c_.app.path.substr(c_.app.path.find_last_of('/') + 1));
  a.setSync(c_.settings.sync);
  if (chunked) {
    a.setDataSize(data.size());
    a.setDataSha256(AsBytes(Sha256(data)));
  } else {
    a.setData(AsBytes(data));
  }
  auto params = a.initParams(static_cast<unsigned>(c_.job.params.size()));
  unsigned p = 0;
  for (const auto& [k, v] : c_.job.params) {
    params[p].setKey(k);
    params[p].setValue(v);
    ++p;
  }
  const auto& node = c_.app.plan.graph[index];
  auto ns = a.initNeighbours(static_cast<unsigned>(node.edges.size()));
  for (size_t n = 0; n < node.edges.size(); ++n) {
    const TaskPlace& to = deployment.task(node.edges[n].first);
    ns[n].setTask(node.edges[n].first);
    ns[n].setAddress(to.address);
    ns[n].setDaemonId(to.daemon);
  }
  // Tasks named with the daemon that runs them: senders, backups, and hosted tasks.
  auto fill = [&](capnp::List<proto::Neighbour>::Builder list, const std::vector<uint32_t>& tasks) {
    for (size_t n = 0; n < tasks.size(); ++n) {
      list[n].setTask(tasks[n]);
      list[n].setAddress(deployment.task(tasks[n]).address);
      list[n].setDaemonId(deployment.task(tasks[n]).daemon);
    }
  };
  fill(a.initSenders(static_cast<unsigned>(deployment.senders(index).size())),
       deployment.senders(index));
  fill(a.initBackupDaemons(static_cast<unsigned>(deployment.backups(index).size())),
       deployment.backups(index));
  fill(a.initHosted(static_cast<unsigned>(deployment.hosted(index).size())),
       deployment.hosted(index));
  fill(a.initGroup(static_cast<unsigned>(supervisor_->group(index).size())),
       supervisor_->group(index));
  a.setCheckpointEvery(c_.job.checkpoint_every);
  a.setCheckpointMs(static_cast<uint64_t>(c_.job.checkpoint_period.count() * 1000));
  a.setMemoryMb(c_.job.memory_mb);
  // Without checkpoints no restore would use them, and nothing would trim them.
  if (supervisor_->sync_replaces()) a.setValueLogMb(c_.job.value_log_mb);
  a.setOrphanSeconds(static_cast<uint32_t>(c_.job.orphan_seconds));
  a.setSpawnerTimeoutS(static_cast<uint32_t>(c_.job.spawner_timeout_s));
  a.setSpawnerEpoch(c_.spawner_epoch);
  a.setCpuSeconds(c_.job.cpu_seconds);
  a.setAppStallMs(static_cast<uint64_t>(c_.job.app_stall.count() * 1000));
  a.setIncarnation(incarnation);
  a.setRestore(supervisor_->started());
  a.setTighten(supervisor_->tighten());
  if (const auto& identity = c_.options.net.identity) {
    checkpoint::FillCapability(
        checkpoint::GrantCapability(identity->key, c_.job_id, static_cast<uint32_t>(index),
                                    incarnation, deployment.task(index).daemon, daemon_key),
        a.initCapability());
  }
}

awaitable<void> DaemonLinks::ReplaceFromSupernode(size_t index, uint64_t incarnation,
                                                  std::string what) {
  const auto until = Clock::now() + c_.settings.replacement_wait.value_or(c_.options.wait_daemons);
  asio::steady_timer pause(co_await asio::this_coro::executor);
  for (;;) {
    auto answer = co_await c_.supernodes.Request(c_.job_id, 1, 0, until);
    if (!supervisor_->Current(index, incarnation)) co_return;  // the run is over
    if (!answer.ok()) {
      c_.fail(what + "; no daemon left to replace it: " + answer.status().message());
      co_return;
    }
    if (answer->error.empty() && !answer->daemons.empty()) {
      c_.log->info("job {}: daemon {} granted by {} for task {}", c_.job_id,
                   answer->daemons.front().id, c_.supernodes.Describe(), index);
      if (supervisor_->AddDaemons(index, incarnation, answer->daemons, Clock::now())) co_return;
    }
    if (Clock::now() >= until) {
      c_.fail(what + "; no daemon left to replace it" +
              (answer->error.empty() ? "" : ": " + answer->error));
      co_return;
    }
    pause.expires_after(std::chrono::milliseconds(500));
    co_await pause.async_wait(net::use_nothrow);
  }
}

bool DaemonLinks::AskToExit(const std::string& daemon) {
  if (!supervisor_) return false;
  auto task = supervisor_->TaskOn(daemon);
  if (!task || !conns_[*task] || !conns_[*task]->is_open()) return false;
  conns_[*task]->SendEnvelope([&](proto::Envelope::Builder e) { e.initExit().setJob(c_.job_id); });
  return true;
}

awaitable<void> DaemonLinks::CloseAll(SteadyTime deadline) {
  // A fixed pause before closing cost every run 50 ms, and an RST could still cut it short.
  auto left = [&] {
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    return std::max(std::chrono::milliseconds(0), ms);
  };
  for (auto& conn : conns_) {
    if (conn) conn->CloseWhenFlushed();
  }
  co_await c_.supernodes.Finish(left());
  for (auto& conn : conns_) {
    if (conn) co_await conn->Closed(left());
  }
  for (auto& conn : conns_) {
    if (conn) conn->Close();
  }
}

}  // namespace aiac::spawner
