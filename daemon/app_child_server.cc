#include "daemon/app_child_server.h"

#include <capnp/message.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <memory>
#include <mutex>

#include "app/app.h"
#include "daemon/app_child_wire.h"
#include "proto/app_child.capnp.h"
#include "runtime/move_kind_wire.h"
#include "runtime/plugin.h"
#include "runtime/task_profile_wire.h"
#include "runtime/task_runner.h"

namespace aiac::daemon {

namespace {

// The bytes where the message holds them: the app's calls take views, so nothing is copied.
std::string_view View(capnp::Data::Reader d) {
  return {reinterpret_cast<const char*>(d.begin()), d.size()};
}

// Whole messages to the daemon, from the main thread, the runner's and the app's log alike.
class Writer {
 public:
  explicit Writer(int fd) : fd_(fd) {}
  void Send(capnp::MessageBuilder& m) {
    std::lock_guard lock(mu_);
    (void)SendChildMessage(fd_, m);  // the daemon gone: this process ends at its next read
  }

 private:
  int fd_;
  std::mutex mu_;
};

// The app's log lines go to the daemon as they are written (before the call's reply).
class ChildLog final : public app::Log {
 public:
  explicit ChildLog(std::shared_ptr<Writer> out) : out_(std::move(out)) {}
  void Write(app::LogLevel level, std::string_view line) const override {
    capnp::MallocMessageBuilder m;
    auto log = m.initRoot<proto::ChildMessage>().initLog();
    log.setLevel(static_cast<uint8_t>(level));
    log.setLine(capnp::Text::Reader(line.data(), line.size()));
    out_->Send(m);
  }

 private:
  std::shared_ptr<Writer> out_;
};

// The runner's callbacks as events to the daemon (proto RunnerEvent), sent from its thread.
runtime::RunnerCallbacks EventsTo(std::shared_ptr<Writer> out) {
  auto send = [out](const auto& fill, size_t payload = 0) {
    capnp::MallocMessageBuilder m(FirstSegmentWords(payload));
    fill(m, m.initRoot<proto::ChildMessage>().initEvent());
    out->Send(m);
  };
  runtime::RunnerCallbacks cb;
  cb.send = [send](std::vector<runtime::OutgoingValue> values, uint64_t iteration, bool converged) {
    size_t payload = 0;  // the values' bytes, and a few words each besides
    for (const auto& v : values) payload += v.bytes.size() + 64;
    send(
        [&](capnp::MessageBuilder& m, proto::RunnerEvent::Builder e) {
          auto v = e.initValues();
          v.setIteration(iteration);
          v.setConverged(converged);
          auto list = v.initValues(static_cast<unsigned>(values.size()));
          for (unsigned i = 0; i < list.size(); ++i) {
            list[i].setTo(values[i].to);
            list[i].adoptBytes(BytesFor(m, values[i].bytes));
            list[i].setSeen(values[i].seen);
            list[i].setSeenIncarnation(values[i].seen_incarnation);
          }
        },
        payload);
  };
  cb.local_convergence = [send](bool converged, uint64_t iteration) {
    send([&](capnp::MessageBuilder&, proto::RunnerEvent::Builder e) {
      auto c = e.initLocalConvergence();
      c.setConverged(converged);
      c.setIteration(iteration);
    });
  };
  cb.progress = [send](uint64_t iteration, double change, bool converged,
                       const runtime::TaskMeasures& measures) {
    send([&](capnp::MessageBuilder&, proto::RunnerEvent::Builder e) {
      auto p = e.initProgress();
      p.setIteration(iteration);
      p.setChange(change);
      p.setConverged(converged);
      p.setWorkDone(measures.work_done);
      p.setRemaining(measures.remaining);
      p.setItems(measures.items);
      p.setMoves(measures.moves);
      runtime::ToProto(measures.profile, p.initProfile());
      p.setActiveSeconds(measures.active_s);
    });
  };
  cb.answer = [send](uint64_t round, bool converged) {
    send([&](capnp::MessageBuilder&, proto::RunnerEvent::Builder e) {
      auto a = e.initAnswer();
      a.setRound(round);
      a.setConverged(converged);
    });
  };
  cb.snapshot = [send](uint64_t round, std::string slice, uint64_t iteration) {
    send([&](capnp::MessageBuilder& m, proto::RunnerEvent::Builder e) {
      auto d = e.initSnapshot();
      d.setRound(round);
      d.adoptSlice(BytesFor(m, slice));
      d.setIteration(iteration);
    });
  };
  cb.checkpoint = [send](std::string state, uint64_t iteration) {
    send([&](capnp::MessageBuilder& m, proto::RunnerEvent::Builder e) {
      auto c = e.initCheckpoint();
      c.adoptState(BytesFor(m, state));
      c.setIteration(iteration);
    });
  };
  cb.moved = [send](runtime::MoveReport r) {
    send([&](capnp::MessageBuilder& m, proto::RunnerEvent::Builder e) {
      auto d = e.initMoved();
      d.setMove(r.move);
      d.setKind(runtime::ToProto(r.kind));
      if (!r.error.ok()) {
        d.setError(r.error.message());
        d.setErrorCode(static_cast<uint8_t>(r.error.code()));
      }
      d.adoptItems(BytesFor(m, r.items));
      d.setCount(r.count);
      d.setItemsAfter(r.items_after);
      d.setMoves(r.moves);
    });
  };
  cb.finished = [send](Result<std::string> slice, uint64_t iterations) {
    send([&](capnp::MessageBuilder& m, proto::RunnerEvent::Builder e) {
      auto f = e.initFinished();
      f.setIterations(iterations);
      if (slice.ok()) {
        f.adoptSlice(BytesFor(m, *slice));
      } else {
        f.setError(slice.status().message());
        f.setErrorCode(static_cast<uint8_t>(slice.status().code()));
      }
    });
  };
  return cb;
}

runtime::RunnerOptions OptionsOf(proto::ChildCall::RunOptions::Reader o) {
  runtime::RunnerOptions options;
  options.sync = o.getSync();
  options.progress_period = std::chrono::milliseconds(o.getProgressMs());
  options.checkpoint_every = o.getCheckpointEvery();
  options.checkpoint_period = std::chrono::milliseconds(o.getCheckpointMs());
  options.start_iteration = o.getStartIteration();
  options.incarnation = o.getIncarnation();
  options.moves.moves = o.getMoves();
  for (auto x : o.getOutbox()) {
    options.moves.outbox.push_back(
        {x.getMove(), x.getMoves(), x.getCount(), std::string(View(x.getItems()))});
  }
  for (auto sent : o.getResend()) {
    runtime::SentValues r{sent.getIteration(), {}};
    for (auto v : sent.getValues())
      r.values.push_back({v.getTo(), std::string(View(v.getBytes()))});
    options.resend.push_back(std::move(r));
  }
  return options;
}

class Server {
 public:
  explicit Server(int fd)
      : fd_(fd), out_(std::make_shared<Writer>(fd)), log_(std::make_shared<ChildLog>(out_)) {}

  int Run() {
    int code = 0;
    for (;;) {
      auto in = ReceiveChildMessage(fd_);
      if (!in.ok()) break;  // the daemon closed: the task is over
      auto call = (*in)->root<proto::ChildCall>();
      if (runner_ && call.isStart()) {
        // From here on the runner's thread reads the socket itself (RunnerOptions::input): a
        // neighbour's value wakes the thread that absorbs it, not this one first.
        runner_->Start();
        runner_->Join();
        code = broken_ ? 1 : 0;
        break;
      }
      if (!(runner_ ? Command(call) : call.isRun() ? StartRunner(call) : Answer(call))) {
        code = 1;
        break;
      }
    }
    if (runner_) runner_->Halt();
    runner_.reset();  // joins its thread
    return code;
  }

 private:
  // From the `run` call on, the runner iterates on its own thread; the daemon's commands go to it.
  bool StartRunner(proto::ChildCall::Reader call) {
    if (!task_) return false;
    const auto dependencies = task_->Dependencies();
    runtime::RunnerOptions options = OptionsOf(call.getRun());
    options.input = [this](std::chrono::milliseconds wait) { return Read(wait); };
    runner_ = std::make_unique<runtime::TaskRunner>(std::move(task_), dependencies, options,
                                                    EventsTo(out_));
    return true;
  }

  // On the runner's thread once it runs: every whole command that came, passed to the runner;
  // waits up to `wait` for one when none has. False once the daemon closed or broke the
  // protocol (then nothing more is read).
  bool Read(std::chrono::milliseconds wait) {
    if (gone_) return false;
    bool got = false;
    for (;;) {
      while (auto in = reader_.Next()) {
        auto call = in->root<proto::ChildCall>();
        if (!Command(call)) {
          broken_ = gone_ = true;
          return false;
        }
        got = true;
      }
      if (!reader_.status().ok()) {
        broken_ = gone_ = true;
        return false;
      }
      auto space = reader_.Space();
      const ssize_t n = ::recv(fd_, space.begin(), space.size(), MSG_DONTWAIT);
      if (n > 0) {
        reader_.Filled(static_cast<size_t>(n));
        continue;
      }
      if (n == 0) return !(gone_ = true);  // the daemon closed: the task is over
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return !(gone_ = true);
      if (got || wait.count() <= 0) return true;
      pollfd p{fd_, POLLIN, 0};
      const int ready = ::poll(&p, 1, static_cast<int>(std::min<int64_t>(wait.count(), INT32_MAX)));
      if (ready == 0) return true;
      if (ready < 0 && errno != EINTR) return !(gone_ = true);
      wait = std::chrono::milliseconds(0);  // what came is read above, without waiting again
    }
  }

  bool Command(proto::ChildCall::Reader call) {
    switch (call.which()) {
      case proto::ChildCall::PUT: {
        auto p = call.getPut();
        runner_->Put(p.getFrom(), p.getIteration(), std::string(View(p.getBytes())),
                     p.getConverged(), p.getSeen(), p.getIncarnation(), p.getSeenIncarnation());
        return true;
      }
      case proto::ChildCall::QUERY:
        runner_->Query(call.getQuery());
        return true;
      case proto::ChildCall::SNAPSHOT:
        runner_->Snapshot(call.getSnapshot());
        return true;
      case proto::ChildCall::TIGHTEN_RUN:
        runner_->Tighten(call.getTightenRun());
        return true;
      case proto::ChildCall::MOVE: {
        auto m = call.getMove();
        runner_->Move({m.getMove(), runtime::FromProto(m.getKind()), m.getWork(),
                       std::string(View(m.getItems())), m.getTo()});
        return true;
      }
      case proto::ChildCall::HALT:
        runner_->Halt();
        return true;
      default:
        return false;  // a set-up call, or a second start, once the task runs
    }
  }

  // One call; false when the daemon broke the protocol.
  bool Answer(proto::ChildCall::Reader call) {
    capnp::MallocMessageBuilder m;
    auto reply = m.initRoot<proto::ChildMessage>().initReply();
    std::string bytes;  // referenced by the reply, not copied into it
    std::vector<app::Outgoing> outgoing;
    Status status = Status::Ok();
    if (call.isMake()) {
      status = Make(call.getMake(), reply);
    } else if (!task_) {
      return false;
    } else {
      for (auto v : call.getAbsorb()) {
        if (!status.ok()) break;
        status = task_->Absorb(v.getFrom(), View(v.getBytes()));
      }
      if (status.ok() && call.getSetFinal()) task_->InputsFinal(call.getInputsFinal());
      if (status.ok()) status = Call(call, m, reply, bytes, outgoing);
    }
    if (!status.ok()) {
      reply.setError(status.message());
      reply.setErrorCode(static_cast<uint8_t>(status.code()));
    }
    if (task_) {
      auto f = reply.initFigures();
      f.setLocalChange(task_->LocalChange());
      f.setLocallyConverged(task_->LocallyConverged());
      f.setWorkDone(task_->WorkDone());
      f.setRemainingWork(task_->RemainingWork());
      f.setItemCount(task_->ItemCount());
    }
    out_->Send(m);
    return true;
  }

  Status Make(proto::ChildCall::MakeTask::Reader make, proto::ChildReply::Builder reply) {
    if (task_) return InvalidArgument("the task is built already");
    AIAC_ASSIGN_OR_RETURN(plugin_, runtime::Plugin::Load(make.getPlugin().cStr()));
    app_ = plugin_->NewApp();
    if (app_->name() != make.getApp().cStr()) {
      return InvalidArgument("plugin " + std::string(make.getPlugin().cStr()) + " holds app '" +
                             std::string(app_->name()) + "', not '" + make.getApp().cStr() + "'");
    }
    for (auto p : make.getParams()) params_.values[p.getKey().cStr()] = p.getValue().cStr();
    params_.tasks = make.getTasks();
    params_.base_dir = make.getBaseDir().cStr();
    params_.logger = log_;
    AIAC_ASSIGN_OR_RETURN(task_, app_->MakeTask(params_, make.getTask(), View(make.getSlice())));
    const auto deps = task_->Dependencies();
    auto list = reply.initMade().initDependencies(static_cast<unsigned>(deps.size()));
    for (unsigned i = 0; i < deps.size(); ++i) list.set(i, deps[i]);
    reply.setNotes(task_->Notes());
    return Status::Ok();
  }

  Status Call(proto::ChildCall::Reader call, capnp::MallocMessageBuilder& m,
              proto::ChildReply::Builder reply, std::string& bytes,
              std::vector<app::Outgoing>& outgoing) {
    switch (call.which()) {
      case proto::ChildCall::ITERATE: {
        AIAC_ASSIGN_OR_RETURN(bool did, task_->Iterate());
        reply.setIterated(did);
        outgoing = task_->TakeOutgoing();
        auto out = reply.initOutgoing(static_cast<unsigned>(outgoing.size()));
        for (unsigned i = 0; i < out.size(); ++i) {
          out[i].setTo(outgoing[i].to);
          out[i].adoptBytes(BytesFor(m, outgoing[i].bytes));
        }
        return Status::Ok();
      }
      case proto::ChildCall::SAVE_STATE:
        bytes = task_->SaveState();
        reply.adoptBytes(BytesFor(m, bytes));
        return Status::Ok();
      case proto::ChildCall::RESTORE_STATE:
        AIAC_RETURN_IF_ERROR(task_->RestoreState(View(call.getRestoreState())));
        reply.setNotes(task_->Notes());
        return Status::Ok();
      case proto::ChildCall::RESULT_SLICE:
        bytes = task_->ResultSlice();
        reply.adoptBytes(BytesFor(m, bytes));
        return Status::Ok();
      case proto::ChildCall::TIGHTEN:
        AIAC_RETURN_IF_ERROR(task_->Tighten(call.getTighten()));
        reply.setNotes(task_->Notes());
        return Status::Ok();
      case proto::ChildCall::EXPORT_ITEMS: {
        AIAC_ASSIGN_OR_RETURN(bytes, task_->ExportItems(call.getExportItems().getWork(),
                                                        call.getExportItems().getTo()));
        reply.adoptBytes(BytesFor(m, bytes));
        return Status::Ok();
      }
      case proto::ChildCall::IMPORT_ITEMS:
        return task_->ImportItems(View(call.getImportItems()));
      case proto::ChildCall::DROP_ITEMS:
        return task_->DropItems(View(call.getDropItems()));
      default:
        return InvalidArgument("unknown call");
    }
  }

  int fd_;
  std::shared_ptr<Writer> out_;
  std::shared_ptr<ChildLog> log_;
  std::shared_ptr<runtime::Plugin> plugin_;  // declared first: unloaded last
  std::unique_ptr<app::App> app_;
  app::JobParams params_;
  std::unique_ptr<app::Task> task_;
  std::unique_ptr<runtime::TaskRunner> runner_;  // from the `run` call on; holds the task then
  // Read and gone_ on the runner's thread once it runs, broken_ after it ended.
  ChildMessageReader reader_;
  bool gone_ = false;    // the daemon closed, or broke the protocol
  bool broken_ = false;  // it broke the protocol
};

}  // namespace

int ServeAppChild(int fd) { return Server(fd).Run(); }

}  // namespace aiac::daemon
