#include "daemon/spawner_channel.h"

#include <cmath>
#include <cstdlib>

#include "core/hex.h"
#include "core/names.h"
#include "core/printable.h"
#include "net/capnp_bytes.h"
#include "net/hello.h"
#include "net/identity.h"
#include "runtime/move_kind_wire.h"

namespace aiac::daemon {

SpawnerChannel::SpawnerChannel(TaskHost& host, net::ConnectionPtr conn)
    : host_(host), conn_(std::move(conn)), incoming_(host_.options_.net.budget.get()) {}

using net::AsString;
using net::awaitable;

awaitable<void> SpawnerChannel::Serve() {
  for (;;) {
    auto msg = co_await conn_->Receive();
    if (!msg.ok()) {
      if (net::PeerMisbehaved(msg.status()))
        host_.log_->warn("closed {}: {}", conn_->Describe(), msg.status().message());
      break;
    }
    if (FromJobSpawner()) host_.SpawnerHeard();
    if (co_await Dispatch((*msg)->root()) == Next::kClose) break;
  }
  if (FromJobSpawner()) host_.Orphan();
  host_.waiting_for_plugin_.reset();
}

awaitable<SpawnerChannel::Next> SpawnerChannel::Dispatch(proto::Envelope::Reader env) {
  switch (env.which()) {
    case proto::Envelope::TASK_DATA:
      co_return OnTaskData(env.getTaskData());
    case proto::Envelope::ASSIGN_TASK:
      co_return co_await OnAssignTask(env.getAssignTask());
    case proto::Envelope::PLUGIN_DATA:
      co_return co_await OnPluginData(env.getPluginData());
    case proto::Envelope::EXIT:
      OnExit(env.getExit());
      co_return Next::kGoOn;
    case proto::Envelope::NEIGHBOUR_MOVED:
      OnNeighbourMoved(env.getNeighbourMoved());
      co_return Next::kGoOn;
    case proto::Envelope::START_TASK:
      if (FromJobSpawner()) host_.job_->Start();
      co_return Next::kGoOn;
    case proto::Envelope::CONVERGENCE_QUERY:
      if (FromJobSpawner()) host_.job_->Query(env.getConvergenceQuery().getRound());
      co_return Next::kGoOn;
    case proto::Envelope::SNAPSHOT:
      if (FromJobSpawner()) host_.job_->Snapshot(env.getSnapshot().getRound());
      co_return Next::kGoOn;
    case proto::Envelope::TIGHTEN:
      co_return OnTighten(env.getTighten());
    case proto::Envelope::TRIM_VALUES:
      if (!conn_->Speaks(net::kSyncReplaceVersion, host_.log_)) co_return Next::kClose;
      // Only ever lets go of values no restore asks for: one that comes during the set-up
      // (dropped here) is made up for by the next.
      if (FromJobSpawner() && env.getTrimValues().getJob() == host_.job_->job()) {
        host_.job_->TrimValues(env.getTrimValues().getTask(), env.getTrimValues().getIteration());
      }
      co_return Next::kGoOn;
    case proto::Envelope::ADOPT_TASK:
      if (!conn_->Speaks(net::kSpawnerResumeVersion, host_.log_)) co_return Next::kClose;
      co_return OnAdoptTask(env.getAdoptTask());
    case proto::Envelope::SPAWNER_ALIVE:
      // Nothing to do but to have heard it (Serve).
      co_return conn_->Speaks(net::kSpawnerAliveVersion, host_.log_) ? Next::kGoOn : Next::kClose;
    case proto::Envelope::MOVE_ITEMS:
      co_return OnMoveItems(env.getMoveItems());
    case proto::Envelope::HALT:
      OnHalt(env.getHalt().getDropped());
      co_return Next::kGoOn;
    default:
      co_return Refuse("unexpected message from a spawner", "unexpected message");
  }
}

SpawnerChannel::Next SpawnerChannel::Refuse(const std::string& what, const std::string& reason) {
  host_.log_->warn("closed {}: {}", conn_->Describe(), what);
  conn_->Refuse(reason);
  return Next::kClose;
}

SpawnerChannel::Next SpawnerChannel::OnTaskData(proto::TaskData::Reader chunk) {
  if (Status s = incoming_.Add(chunk); !s.ok())
    return Refuse("task data: " + s.message(), "task data: " + s.message());
  return Next::kGoOn;
}

awaitable<SpawnerChannel::Next> SpawnerChannel::OnAssignTask(proto::AssignTask::Reader in) {
  early_moves_.clear();
  auto read = ParseAssignment(in, host_.options_.trust, host_.options_.id);
  if (read.ok() && in.getDataSize() > 0) {
    auto data =
        incoming_.Take(read->job, read->task, in.getDataSize(), AsString(in.getDataSha256()));
    if (data.ok()) {
      read->slice = std::move(*data);
    } else {
      read = data.status();
    }
  }
  if (!read.ok()) {
    host_.log_->warn("task {} from {} refused: {}", in.getTask(), conn_->Describe(),
                     read.status().message());
    host_.Reply(*conn_, "", in.getTask(),
                read.status().message());  // the job id may be what is wrong
    co_return Next::kGoOn;
  }
  Assignment a = std::move(*read);
  if (Status granted = CheckCapability(a); !granted.ok()) {
    host_.log_->warn("task {} of job {} from {} refused: {}", a.task, a.job, conn_->Describe(),
                     granted.message());
    host_.Reply(*conn_, a.job, a.task, granted.message());
    co_return Next::kGoOn;
  }
  if (host_.busy()) {
    host_.Reply(*conn_, a.job, a.task,
                "daemon " + host_.options_.id + " is busy with job " +
                    (host_.job_ ? host_.job_->job() : std::string("being set up")));
    co_return Next::kGoOn;
  }
  auto plugin = host_.FindPlugin(a.plugin_hash);
  if (!plugin.ok() && plugin.status().code() == StatusCode::kNotFound) {
    host_.log_->info("job {}: plugin {} ({}) not stored here, asking the spawner", a.job,
                     Printable(a.plugin_name, 64), Hex(a.plugin_hash).substr(0, 12));
    host_.Reply(*conn_, a.job, a.task, "", true);
    host_.waiting_for_plugin_ = std::make_unique<Assignment>(std::move(a));
    co_return Next::kGoOn;
  }
  if (!plugin.ok()) {
    host_.log_->warn("job {}: task {} refused: {}", a.job, a.task, plugin.status().message());
    host_.Reply(*conn_, a.job, a.task, plugin.status().message());
    co_return Next::kGoOn;
  }
  co_await host_.Accept(std::move(a), *plugin, conn_);
  co_return Next::kGoOn;
}

Status SpawnerChannel::CheckCapability(const Assignment& a) const {
  const auto& identity = host_.options_.net.identity;
  if (!identity) return Status::Ok();  // (tests without identities)
  if (!a.capability) return Unauthenticated("the assignment carries no capability");
  AIAC_RETURN_IF_ERROR(checkpoint::VerifyCapability(*a.capability, conn_->peer().public_key));
  if (a.capability->daemon_key != identity->key.PublicKey()) {
    return Unauthenticated("the capability names another key than this daemon's");
  }
  return Status::Ok();
}

std::optional<std::string> SpawnerChannel::PluginBytes(proto::PluginData::Reader pd) {
  if (pd.getTotal() == 0) return AsString(pd.getBytes());
  // One chunk of a plugin larger than a frame: wait for the rest.
  if (incoming_.received() < incoming_.total()) return std::nullopt;
  auto whole = incoming_.Take("plugin", incoming_.total(), host_.waiting_for_plugin_->plugin_hash);
  if (whole.ok()) return std::move(*whole);
  auto a = std::move(host_.waiting_for_plugin_);
  host_.log_->warn("job {}: task {} refused: plugin {}", a->job, a->task, whole.status().message());
  host_.Reply(*conn_, a->job, a->task, "plugin " + whole.status().message());
  return std::nullopt;
}

awaitable<SpawnerChannel::Next> SpawnerChannel::OnPluginData(proto::PluginData::Reader pd) {
  if (!host_.waiting_for_plugin_) co_return Next::kGoOn;  // not asked for: ignore
  if (pd.getTotal() > 0) {
    auto data = pd.getBytes();
    if (Status s = incoming_.Add(
            "plugin", pd.getOffset(), pd.getTotal(),
            std::string_view(reinterpret_cast<const char*>(data.begin()), data.size()));
        !s.ok()) {
      co_return Refuse("plugin data: " + s.message(), "plugin data: " + s.message());
    }
  }
  std::optional<std::string> bytes = PluginBytes(pd);
  if (!bytes) co_return Next::kGoOn;
  auto a = std::move(host_.waiting_for_plugin_);
  // The bytes must hash to what the (checked, maybe signed) task names, before anything is
  // written or loaded: PluginStore::Add hashes them against a->plugin_hash.
  auto plugin = AsString(pd.getSha256()) != a->plugin_hash
                    ? Result<PluginRef>(InvalidArgument(
                          "plugin hash mismatch: the plugin sent is not the one the task names"))
                    : host_.AddPlugin(a->plugin_hash, *bytes);
  if (!plugin.ok()) {
    host_.log_->warn("job {}: task {} refused: {}", a->job, a->task, plugin.status().message());
    host_.Reply(*conn_, a->job, a->task, plugin.status().message());
    co_return Next::kGoOn;
  }
  host_.EvictPlugins();
  co_await host_.Accept(std::move(*a), *plugin, conn_);
  for (const auto& move : early_moves_) {
    if (FromJobSpawner()) host_.OnNeighbourMoved(move);
  }
  early_moves_.clear();
  co_return Next::kGoOn;
}

SpawnerChannel::Next SpawnerChannel::OnAdoptTask(proto::AdoptTask::Reader adopt) {
  const std::string job = adopt.getJob().cStr();
  if (Status bad = CheckName("job id", job); !bad.ok())
    return Refuse("adopt: " + bad.message(), "adopt: " + bad.message());
  host_.OnAdopt(conn_, job, adopt.getTask(), adopt.getIncarnation(), adopt.getSpawnerEpoch());
  return Next::kGoOn;
}

void SpawnerChannel::OnExit(proto::Exit::Reader exit) {
  if (!FromJobSpawner() || exit.getJob() != host_.job_->job()) return;
  // Fault injection: die as a SIGKILL would, without a goodbye to anyone.
  host_.log_->warn("job {}: exiting at once, as the spawner asked (fault injection)",
                   host_.job_->job());
  spdlog::default_logger()->flush();
  host_.log_->flush();
  std::_Exit(137);
}

void SpawnerChannel::OnNeighbourMoved(proto::NeighbourMoved::Reader moved) {
  if (FromJobSpawner()) {
    host_.OnNeighbourMoved(TaskHost::MoveOf(moved));
  } else if (host_.waiting_for_plugin_ && host_.waiting_for_plugin_->job == moved.getJob().cStr()) {
    early_moves_.push_back(TaskHost::MoveOf(moved));
  }
}

SpawnerChannel::Next SpawnerChannel::OnTighten(proto::Tighten::Reader tighten) {
  const double factor = tighten.getFactor();
  if (!(std::isfinite(factor) && factor > 1)) {
    return Refuse(fmt::format("tighten by {}", factor),
                  "tighten: the factor must be a finite number above 1");
  }
  if (FromJobSpawner()) host_.job_->Tighten(factor);
  return Next::kGoOn;
}

SpawnerChannel::Next SpawnerChannel::OnMoveItems(proto::MoveItems::Reader m) {
  if (!(FromJobSpawner() && m.getJob() == host_.job_->job() && m.getTask() == host_.job_->task())) {
    return Next::kGoOn;
  }
  const double work = m.getWork();
  if (!(std::isfinite(work) && work >= 0)) {
    return Refuse(fmt::format("move {} of {} work units", m.getMove(), work),
                  "move items: the work must be a finite number at least 0");
  }
  runtime::ItemMove move;
  move.move = m.getMove();
  move.work = work;
  move.to = m.getTo();
  move.items = AsString(m.getItems());
  move.kind = runtime::FromProto(m.getKind());
  if (move.kind == runtime::MoveKind::kImport) {
    const std::string sha256 = AsString(m.getSha256());
    if (!sha256.empty() && move.items.empty()) {
      // The items come daemon to daemon: imported when they are here and match.
      host_.relay_.Expect(move.move, sha256);
      return Next::kGoOn;
    }
    if (!host_.relay_.Direct(move.move)) {
      // The items came by their route already: the runner answers again with what their import
      // did (a resumed spawner waits for that answer, which the lost one may have had).
      host_.log_->debug("job {}: move {}: the items came by their route already", host_.job_->job(),
                        move.move);
    }
  }
  if (move.kind == runtime::MoveKind::kExport && m.getRoute().size() > 0) {
    host_.relay_.Route(move.move, move.to, m.getRoute());
  }
  host_.job_->Move(std::move(move));
  return Next::kGoOn;
}

void SpawnerChannel::OnHalt(bool dropped) {
  if (!FromJobSpawner()) return;
  if (dropped) {
    host_.EndJob("its spawner gave it to another daemon");
  } else if (host_.job_->started()) {
    host_.job_->Halt();  // the runner's `finished` sends the result, then ends the job
  } else {
    host_.EndJob("halted before it started");
  }
}

}  // namespace aiac::daemon
