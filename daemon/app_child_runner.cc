#include "daemon/app_child_runner.h"

#include <capnp/message.h>
#include <sys/socket.h>

#include "core/logging.h"
#include "daemon/app_child_wire.h"
#include "net/capnp_bytes.h"
#include "proto/app_child.capnp.h"
#include "runtime/move_kind_wire.h"
#include "runtime/task_profile_wire.h"

namespace aiac::daemon {

using net::AsString;

ChildRunner::ChildRunner(std::unique_ptr<ChildTask> task, runtime::RunnerCallbacks callbacks,
                         uint64_t start_iteration)
    : task_(std::move(task)), cb_(std::move(callbacks)), last_iteration_(start_iteration) {}

Result<std::unique_ptr<ChildRunner>> ChildRunner::Run(std::unique_ptr<ChildTask> task,
                                                      const runtime::RunnerOptions& options,
                                                      runtime::RunnerCallbacks callbacks) {
  AIAC_RETURN_IF_ERROR(task->state()->health());
  std::unique_ptr<ChildRunner> runner(
      new ChildRunner(std::move(task), std::move(callbacks), options.start_iteration));
  runner->Command([&](capnp::MessageBuilder& m, proto::ChildCall::Builder c) {
    auto o = c.initRun();
    o.setSync(options.sync);
    o.setProgressMs(static_cast<uint64_t>(options.progress_period.count()));
    o.setCheckpointEvery(options.checkpoint_every);
    o.setCheckpointMs(static_cast<uint64_t>(options.checkpoint_period.count()));
    o.setStartIteration(options.start_iteration);
    o.setIncarnation(options.incarnation);
    o.setMoves(options.moves.moves);
    auto out = o.initOutbox(static_cast<unsigned>(options.moves.outbox.size()));
    for (unsigned i = 0; i < out.size(); ++i) {
      const auto& x = options.moves.outbox[i];
      out[i].setMove(x.move);
      out[i].setMoves(x.moves);
      out[i].setCount(x.count);
      out[i].adoptItems(BytesFor(m, x.items));
    }
    auto resend = o.initResend(static_cast<unsigned>(options.resend.size()));
    for (unsigned i = 0; i < resend.size(); ++i) {
      const auto& sent = options.resend[i];
      resend[i].setIteration(sent.iteration);
      auto values = resend[i].initValues(static_cast<unsigned>(sent.values.size()));
      for (unsigned k = 0; k < values.size(); ++k) {
        values[k].setTo(sent.values[k].to);
        values[k].adoptBytes(BytesFor(m, sent.values[k].bytes));
      }
    }
  });
  runner->reader_ = std::thread([r = runner.get()] { r->Read(); });
  return runner;
}

ChildRunner::~ChildRunner() {
  // The reader wakes from its read at once; then the child is killed and reaped.
  closing_ = true;
  ::shutdown(task_->fd_, SHUT_RDWR);
  if (reader_.joinable()) reader_.join();
}

template <typename Fill>
void ChildRunner::Command(const Fill& fill) {
  capnp::MallocMessageBuilder m;
  fill(m, m.initRoot<proto::ChildCall>());
  std::lock_guard lock(write_mu_);
  (void)SendChildMessage(task_->fd_, m);
}

void ChildRunner::Start() {
  started_at_ = std::chrono::steady_clock::now();
  Command([](capnp::MessageBuilder&, proto::ChildCall::Builder c) { c.setStart(); });
}

void ChildRunner::Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged,
                      uint64_t seen, uint64_t incarnation, uint64_t seen_incarnation) {
  Command([&](capnp::MessageBuilder& m, proto::ChildCall::Builder c) {
    auto p = c.initPut();
    p.setFrom(from);
    p.setIteration(iteration);
    p.adoptBytes(BytesFor(m, bytes));
    p.setConverged(sender_converged);
    p.setSeen(seen);
    p.setIncarnation(incarnation);
    p.setSeenIncarnation(seen_incarnation);
  });
}

void ChildRunner::Query(uint64_t round) {
  Command([&](capnp::MessageBuilder&, proto::ChildCall::Builder c) { c.setQuery(round); });
}

void ChildRunner::Snapshot(uint64_t round) {
  Command([&](capnp::MessageBuilder&, proto::ChildCall::Builder c) { c.setSnapshot(round); });
}

void ChildRunner::Tighten(double factor) {
  Command([&](capnp::MessageBuilder&, proto::ChildCall::Builder c) { c.setTightenRun(factor); });
}

void ChildRunner::Move(runtime::ItemMove move) {
  Command([&](capnp::MessageBuilder& m, proto::ChildCall::Builder c) {
    auto d = c.initMove();
    d.setMove(move.move);
    d.setKind(runtime::ToProto(move.kind));
    d.setWork(move.work);
    d.adoptItems(BytesFor(m, move.items));
    d.setTo(move.to);
  });
}

void ChildRunner::Halt() {
  Command([](capnp::MessageBuilder&, proto::ChildCall::Builder c) { c.setHalt(); });
}

void ChildRunner::Reached(uint64_t iteration) {
  if (iteration <= last_iteration_) return;
  runtime::IterationsComputed().Add(iteration - last_iteration_);
  last_iteration_ = iteration;
}

void ChildRunner::Read() {
  using Clock = std::chrono::steady_clock;
  const auto stall = task_->spec().stall;
  // Polled at most this long at a time, so that a hang right after Start (no event at all) is
  // seen too.
  const auto poll = std::min<std::chrono::milliseconds>(stall, std::chrono::seconds(1));
  Clock::time_point heard = Clock::now();  // the last event, or Start
  for (;;) {
    auto in =
        ReceiveChildMessage(task_->fd_, stall.count() > 0 ? std::optional(poll) : std::nullopt);
    if (!in.ok() && in.status().code() == StatusCode::kTimeout && !closing_.load()) {
      // Before Start the task waits for the spawner, however long: no stall then.
      const auto started = started_at_.load();
      if (started == Clock::time_point{}) continue;
      heard = std::max(heard, started);
      if (Clock::now() - heard < stall) continue;
    }
    if (!in.ok()) {
      // Shut down by the destructor (the session ended): nothing to report. Else the child died
      // or hung before its result: a crash.
      if (closing_.load()) return;
      const Status crash =
          in.status().code() == StatusCode::kTimeout
              ? task_->Died(fmt::format("hung (no progress in {:g} s)",
                                        std::chrono::duration<double>(stall).count()))
              : task_->Died("");
      cb_.finished(crash, last_iteration_);
      return;
    }
    heard = Clock::now();
    auto message = (*in)->root<proto::ChildMessage>();
    if (message.isLog()) {
      task_->Forward(message.getLog());
      continue;
    }
    if (!message.isEvent() || !Dispatch(message.getEvent())) return;
  }
}

bool ChildRunner::Dispatch(proto::RunnerEvent::Reader e) {
  switch (e.which()) {
    case proto::RunnerEvent::VALUES: {
      auto v = e.getValues();
      std::vector<runtime::OutgoingValue> values;
      values.reserve(v.getValues().size());
      for (auto x : v.getValues()) {
        values.push_back({x.getTo(), AsString(x.getBytes()), x.getSeen(), x.getSeenIncarnation()});
      }
      Reached(v.getIteration());
      cb_.send(std::move(values), v.getIteration(), v.getConverged());
      return true;
    }
    case proto::RunnerEvent::LOCAL_CONVERGENCE:
      Reached(e.getLocalConvergence().getIteration());
      cb_.local_convergence(e.getLocalConvergence().getConverged(),
                            e.getLocalConvergence().getIteration());
      return true;
    case proto::RunnerEvent::PROGRESS: {
      auto p = e.getProgress();
      runtime::TaskMeasures m;
      m.work_done = p.getWorkDone();
      m.remaining = p.getRemaining();
      m.items = p.getItems();
      m.moves = p.getMoves();
      m.profile = runtime::FromProto(p.getProfile());
      Reached(p.getIteration());
      cb_.progress(p.getIteration(), p.getChange(), p.getConverged(), m);
      return true;
    }
    case proto::RunnerEvent::ANSWER:
      cb_.answer(e.getAnswer().getRound(), e.getAnswer().getConverged());
      return true;
    case proto::RunnerEvent::SNAPSHOT:
      Reached(e.getSnapshot().getIteration());
      if (cb_.snapshot) {
        cb_.snapshot(e.getSnapshot().getRound(), AsString(e.getSnapshot().getSlice()),
                     e.getSnapshot().getIteration());
      }
      return true;
    case proto::RunnerEvent::CHECKPOINT:
      Reached(e.getCheckpoint().getIteration());
      if (cb_.checkpoint) {
        cb_.checkpoint(AsString(e.getCheckpoint().getState()), e.getCheckpoint().getIteration());
      }
      return true;
    case proto::RunnerEvent::MOVED: {
      auto d = e.getMoved();
      runtime::MoveReport r;
      r.move = d.getMove();
      r.kind = runtime::FromProto(d.getKind());
      if (d.getError().size() > 0) r.error = ChildError(d.getError(), d.getErrorCode());
      r.items = AsString(d.getItems());
      r.count = d.getCount();
      r.items_after = d.getItemsAfter();
      r.moves = d.getMoves();
      if (cb_.moved) cb_.moved(std::move(r));
      return true;
    }
    case proto::RunnerEvent::FINISHED: {
      auto f = e.getFinished();
      Reached(f.getIterations());
      cb_.finished(f.getError().size() > 0
                       ? Result<std::string>(ChildError(f.getError(), f.getErrorCode()))
                       : Result<std::string>(AsString(f.getSlice())),
                   f.getIterations());
      return false;
    }
  }
  return false;
}

}  // namespace aiac::daemon
