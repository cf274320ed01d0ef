#include "daemon/neighbour_channel.h"

#include "core/printable.h"

namespace aiac::daemon {

using net::awaitable;

awaitable<void> NeighbourChannel::Serve() {
  for (;;) {
    auto msg = co_await conn_->Receive();
    if (!msg.ok()) {
      if (net::PeerMisbehaved(msg.status()))
        host_.log_->warn("closed {}: {}", conn_->Describe(), msg.status().message());
      co_return;
    }
    if (co_await Dispatch((*msg)->root()) == Next::kClose) co_return;
  }
}

awaitable<NeighbourChannel::Next> NeighbourChannel::Dispatch(proto::Envelope::Reader env) {
  switch (env.which()) {
    case proto::Envelope::CHECKPOINT_PUT:
    case proto::Envelope::CHECKPOINT_GET:
      co_return OnCheckpoint(env);
    case proto::Envelope::RELAY_ITEMS:
      co_return OnRelayItems(env.getRelayItems());
    case proto::Envelope::LINK_PROBE:
      co_return Ack();
    case proto::Envelope::TASK_PROGRESS:
      co_return OnTaskProgress(env.getTaskProgress());
    case proto::Envelope::DEPENDENCY_DATA:
      co_return co_await OnDependencyData(env.getDependencyData());
    default:
      host_.log_->warn("closed {}: unexpected message from a daemon", conn_->Describe());
      conn_->Refuse("unexpected message");
      co_return Next::kClose;
  }
}

NeighbourChannel::Next NeighbourChannel::Ack() {
  conn_->SendEnvelope([](proto::Envelope::Builder e) { e.initLinkAck().setFrames(1); });
  return Next::kGoOn;
}

NeighbourChannel::Next NeighbourChannel::OnCheckpoint(proto::Envelope::Reader env) {
  const bool allowed = env.isCheckpointPut()
                           ? host_.checkpoints_.OnPut(conn_, env.getCheckpointPut())
                           : host_.checkpoints_.OnGet(conn_, env.getCheckpointGet());
  if (allowed) return Next::kGoOn;
  conn_->Refuse("you do not run that task");
  return Next::kClose;
}

NeighbourChannel::Next NeighbourChannel::OnRelayItems(proto::RelayItems::Reader items) {
  if (host_.relay_.OnRelayed(*conn_, items)) return Ack();
  conn_->Refuse("relay items: the route does not start here");
  return Next::kClose;
}

NeighbourChannel::Next NeighbourChannel::OnTaskProgress(proto::TaskProgress::Reader report) {
  // A member of the group this daemon's task coordinates (report_group.h).
  if (host_.job_ && host_.job_->GatherReport(conn_->peer().id, report)) return Ack();
  host_.log_->debug("closed {}: a progress report for a group not coordinated here",
                    conn_->Describe());
  conn_->Refuse("this daemon does not gather your task's reports");
  return Next::kClose;
}

awaitable<NeighbourChannel::Next> NeighbourChannel::OnDependencyData(
    proto::DependencyData::Reader dep) {
  const auto& setting_up = host_.setting_up_;
  if (!host_.job_ && setting_up && setting_up->first == dep.getJob().cStr() &&
      setting_up->second == dep.getToTask()) {
    // The task is being set up here: hold the values (and this connection) until it runs.
    auto done = host_.setup_done_;
    co_await done->async_wait(net::use_nothrow);
  }
  const auto& job = host_.job_;
  // Data for a job (or task) this daemon does not, or no longer, run: the sender has not heard
  // that the task moved or ended. Close, so that it dials again, wherever the task is now.
  if (!job || job->job() != dep.getJob().cStr() || dep.getToTask() != job->task()) {
    host_.log_->debug("closed {}: values for task {} of job {}, not run here", conn_->Describe(),
                      dep.getToTask(), Printable(dep.getJob().cStr(), 64));
    conn_->Refuse("that task does not run here");
    co_return Next::kClose;
  }
  // Only the daemon that runs the sending task may speak for it.
  if (!job->Deliver(conn_->peer().id, dep)) {
    host_.log_->warn("closed {}: sent values of task {} of job {}, which it does not run",
                     conn_->Describe(), dep.getFromTask(), job->job());
    conn_->Refuse("you do not run that task");
    co_return Next::kClose;
  }
  co_return Ack();
}

}  // namespace aiac::daemon
