#include "daemon/app_child_runner.h"

#include <capnp/message.h>
#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>

#include "core/logging.h"
#include "daemon/app_child_wire.h"
#include "net/capnp_bytes.h"
#include "proto/app_child.capnp.h"
#include "runtime/move_kind_wire.h"
#include "runtime/task_profile_wire.h"

namespace aiac::daemon {

using net::AsString;
using net::error_code;
namespace asio = net::asio;
using Clock = std::chrono::steady_clock;

namespace {

// A command on its way to the child: its message and the bytes the message points at.
struct Outgoing {
  explicit Outgoing(size_t payload)
      : message(std::make_unique<capnp::MallocMessageBuilder>(FirstSegmentWords(payload))) {}
  std::unique_ptr<capnp::MallocMessageBuilder> message;
  std::string bytes;  // referenced by `message` when large (BytesFor)
  // A neighbour's value (Put): a newer one of the same sender replaces it while it waits.
  bool put = false;
  uint32_t from = 0;
  uint64_t incarnation = 0, iteration = 0;
  std::vector<uint32_t> table;  // the framing, made when it is written
};

// Jobs run in order on the runner's side thread. Not an asio::thread_pool (as TaskHost's worker
// is): a stopped pool keeps the jobs not begun until it is destroyed, and with them the channel
// that owns the queue; Stop here drops them.
class SideQueue {
 public:
  void Post(std::function<void()> job) {
    std::lock_guard lock(mu_);
    if (stopped_) return;
    jobs_.push_back(std::move(job));
    cv_.notify_one();
  }
  // Runs the jobs until Stop.
  void Serve() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mu_);
        cv_.wait(lock, [&] { return stopped_ || !jobs_.empty(); });
        if (stopped_) return;
        job = std::move(jobs_.front());
        jobs_.pop_front();
      }
      job();
    }
  }
  // The jobs not begun are dropped; Serve returns after the one under way.
  void Stop() {
    std::lock_guard lock(mu_);
    stopped_ = true;
    jobs_.clear();
    cv_.notify_all();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> jobs_;
  bool stopped_ = false;
};

}  // namespace

// Everything on the io thread, but `side`, `closing` and the task's kill.
class ChildRunner::Channel : public std::enable_shared_from_this<Channel> {
 public:
  Channel(asio::io_context& io, int fd, std::unique_ptr<ChildTask> task,
          runtime::RunnerCallbacks callbacks, bool sync, uint64_t start_iteration)
      : io_(io),
        socket_(io, asio::local::stream_protocol(), fd),
        timer_(io),
        task_(std::move(task)),
        cb_(std::move(callbacks)),
        sync_(sync),
        last_iteration_(start_iteration) {}

  asio::io_context& io() { return io_; }
  SideQueue& side() { return side_; }
  ChildTask& task() { return *task_; }

  // Reading, and the stall watch.
  void Open() {
    Read();
    if (task_->spec().stall.count() > 0) Watch();
  }

  void Send(Outgoing out) {
    if (closed_) return;
    if (out.put && !sync_) {
      // Not one being written.
      for (size_t i = writing_; i < queue_.size(); ++i) {
        Outgoing& q = queue_[i];
        if (q.put && q.from == out.from &&
            std::pair(out.incarnation, out.iteration) >= std::pair(q.incarnation, q.iteration)) {
          q = std::move(out);
          return;
        }
      }
    }
    queue_.push_back(std::move(out));
    if (writing_ == 0) WriteQueued();
  }

  void Started() { started_at_ = Clock::now(); }

  // The runner is being destroyed: nothing more is read, written or called back.
  void Close() {
    closing = true;
    Stop();
  }

  std::atomic<bool> closing{false};

 private:
  // Everything queued, in one write.
  void WriteQueued() {
    std::vector<asio::const_buffer> buffers;
    for (Outgoing& out : queue_) {
      auto segments = out.message->getSegmentsForOutput();
      // The standard framing: segment count - 1, each size, padding to a word.
      out.table.assign(1 + segments.size() + (segments.size() % 2 == 0 ? 1 : 0), 0);
      out.table[0] = static_cast<uint32_t>(segments.size() - 1);
      buffers.push_back(asio::buffer(out.table));
      for (size_t i = 0; i < segments.size(); ++i) {
        out.table[i + 1] = static_cast<uint32_t>(segments[i].size());
        buffers.push_back(
            asio::buffer(segments[i].begin(), segments[i].size() * sizeof(capnp::word)));
      }
    }
    writing_ = queue_.size();
    asio::async_write(socket_, buffers, [self = shared_from_this()](error_code ec, size_t) {
      const size_t written = std::exchange(self->writing_, 0);
      if (ec || self->closed_) return;  // the child is gone: the reader tells
      self->queue_.erase(self->queue_.begin(), self->queue_.begin() + written);
      if (!self->queue_.empty()) self->WriteQueued();
    });
  }

  // What came, as far as it goes: every whole message is dispatched before the next read.
  void Read() {
    auto space = reader_.Space();
    socket_.async_read_some(asio::buffer(space.begin(), space.size()),
                            [self = shared_from_this()](error_code ec, size_t n) {
                              if (ec) return self->Lost("");
                              if (self->closed_) return;
                              self->heard_ = Clock::now();
                              self->reader_.Filled(n);
                              while (auto in = self->reader_.Next()) {
                                if (!self->Dispatch(std::move(in))) return;
                              }
                              if (!self->reader_.status().ok()) return self->Lost("");
                              self->Read();
                            });
  }

  // Polled at most every second, so that a hang right after Start (no event at all) is seen too.
  void Watch() {
    const auto stall = task_->spec().stall;
    timer_.expires_after(std::min<Clock::duration>(stall, std::chrono::seconds(1)));
    timer_.async_wait([self = shared_from_this(), stall](error_code ec) {
      if (ec || self->closed_) return;
      // Before Start the task waits for the spawner, however long: no stall then.
      const auto started = self->started_at_;
      if (started != Clock::time_point{} &&
          Clock::now() - std::max(self->heard_, started) >= stall) {
        return self->Lost(fmt::format("hung (no progress in {:g} s)",
                                      std::chrono::duration<double>(stall).count()));
      }
      self->Watch();
    });
  }

  // Nothing more is read or written here; the side thread ends what is left.
  void Stop() {
    if (closed_) return;
    closed_ = true;
    timer_.cancel();
    error_code ignored;
    socket_.close(ignored);
  }

  // The child died or hung before its result: a crash, reaped on the side thread (a child that
  // closed its end may take a while to exit), then `finished`.
  void Lost(const std::string& hung) {
    if (closed_) return;
    Stop();
    if (closing) return;  // the runner is being destroyed: nothing to report
    side_.Post([self = shared_from_this(), hung, last = last_iteration_] {
      const Status crash = self->task_->Died(hung);
      self->cb_.finished(crash, last);
    });
  }

  // Counts the iterations up to `iteration` in the daemon's aiac_task_iterations_total.
  void Reached(uint64_t iteration) {
    if (iteration <= last_iteration_) return;
    runtime::IterationsComputed().Add(iteration - last_iteration_);
    last_iteration_ = iteration;
  }

  // One message; false after the last (the result).
  bool Dispatch(std::shared_ptr<ChildMessageIn> in) {
    if (closing) return false;
    auto message = in->root<proto::ChildMessage>();
    if (message.isLog()) {
      task_->Forward(message.getLog());
      return true;
    }
    if (!message.isEvent()) {
      Lost("");
      return false;
    }
    auto e = message.getEvent();
    switch (e.which()) {
      case proto::RunnerEvent::VALUES: {
        auto v = e.getValues();
        std::vector<runtime::OutgoingValue> values;
        values.reserve(v.getValues().size());
        for (auto x : v.getValues()) {
          values.push_back(
              {x.getTo(), AsString(x.getBytes()), x.getSeen(), x.getSeenIncarnation()});
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
        m.active_s = p.getActiveSeconds();
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
        // Hashed and signed on the side thread (the session's callback): a large state would
        // hold the io thread up. The message goes along, so nothing is copied here.
        Reached(e.getCheckpoint().getIteration());
        if (cb_.checkpoint) {
          side_.Post([self = shared_from_this(), in] {
            auto c = in->root<proto::ChildMessage>().getEvent().getCheckpoint();
            self->cb_.checkpoint(AsString(c.getState()), c.getIteration());
          });
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
        // After the checkpoints still being hashed, as a runner here would call it.
        Reached(e.getFinished().getIterations());
        Stop();
        side_.Post([self = shared_from_this(), in] {
          auto f = in->root<proto::ChildMessage>().getEvent().getFinished();
          self->cb_.finished(f.getError().size() > 0
                                 ? Result<std::string>(ChildError(f.getError(), f.getErrorCode()))
                                 : Result<std::string>(AsString(f.getSlice())),
                             f.getIterations());
        });
        return false;
      }
    }
    Lost("");
    return false;
  }

  asio::io_context& io_;
  // A socket, not a plain descriptor: its writes never raise SIGPIPE when the child is gone.
  asio::local::stream_protocol::socket socket_;
  asio::steady_timer timer_;
  std::unique_ptr<ChildTask> task_;
  runtime::RunnerCallbacks cb_;
  const bool sync_;
  SideQueue side_;
  bool closed_ = false;  // reading and writing stopped
  std::deque<Outgoing> queue_;
  size_t writing_ = 0;  // the first entries of queue_ being written
  ChildMessageReader reader_;
  Clock::time_point started_at_{};  // Start (the epoch before): the stall counts from then
  Clock::time_point heard_ = Clock::now();
  uint64_t last_iteration_;
};

namespace {

// A command to the child, made on the calling thread, queued on the io thread.
template <typename Fill>
void Command(const std::shared_ptr<ChildRunner::Channel>& channel, size_t payload,
             const Fill& fill) {
  Outgoing out(payload);
  fill(out, out.message->initRoot<proto::ChildCall>());
  asio::dispatch(channel->io(),
                 [channel, out = std::move(out)]() mutable { channel->Send(std::move(out)); });
}

}  // namespace

ChildRunner::ChildRunner(std::shared_ptr<Channel> channel) : channel_(std::move(channel)) {
  side_ = std::thread([c = channel_] { c->side().Serve(); });
}

Result<std::unique_ptr<ChildRunner>> ChildRunner::Run(asio::io_context& io,
                                                      std::unique_ptr<ChildTask> task,
                                                      const runtime::RunnerOptions& options,
                                                      runtime::RunnerCallbacks callbacks) {
  AIAC_RETURN_IF_ERROR(task->state()->health());
  // The io thread's own descriptor of the socket (made non-blocking: the task's calls are over).
  const int fd = ::dup(task->fd_);
  if (fd < 0) return IoError(std::string("cannot duplicate the app's socket: ") + strerror(errno));
  auto channel = std::make_shared<Channel>(io, fd, std::move(task), std::move(callbacks),
                                           options.sync, options.start_iteration);
  std::unique_ptr<ChildRunner> runner(new ChildRunner(channel));
  Command(channel, 0, [&](Outgoing&, proto::ChildCall::Builder c) {
    auto o = c.initRun();
    o.setSync(options.sync);
    o.setProgressMs(static_cast<uint64_t>(options.progress_period.count()));
    o.setCheckpointEvery(options.checkpoint_every);
    o.setCheckpointMs(static_cast<uint64_t>(options.checkpoint_period.count()));
    o.setStartIteration(options.start_iteration);
    o.setIncarnation(options.incarnation);
    o.setMoves(options.moves.moves);
    // Copied into the message: `options` does not outlive this call.
    auto list = o.initOutbox(static_cast<unsigned>(options.moves.outbox.size()));
    for (unsigned i = 0; i < list.size(); ++i) {
      const auto& x = options.moves.outbox[i];
      list[i].setMove(x.move);
      list[i].setMoves(x.moves);
      list[i].setCount(x.count);
      list[i].setItems(net::AsBytes(x.items));
    }
    auto resend = o.initResend(static_cast<unsigned>(options.resend.size()));
    for (unsigned i = 0; i < resend.size(); ++i) {
      const auto& sent = options.resend[i];
      resend[i].setIteration(sent.iteration);
      auto values = resend[i].initValues(static_cast<unsigned>(sent.values.size()));
      for (unsigned k = 0; k < values.size(); ++k) {
        values[k].setTo(sent.values[k].to);
        values[k].setBytes(net::AsBytes(sent.values[k].bytes));
      }
    }
  });
  asio::dispatch(io, [channel] { channel->Open(); });
  return runner;
}

ChildRunner::~ChildRunner() {
  channel_->closing = true;
  asio::post(channel_->io(), [c = channel_] { c->Close(); });
  channel_->side().Stop();
  if (side_.joinable()) side_.join();
  // Reaped here, so the child is gone when this returns (a crash was reaped on the side thread).
  channel_->task().Kill();
}

void ChildRunner::Start() {
  auto channel = channel_;
  asio::dispatch(channel->io(), [channel] { channel->Started(); });
  Command(channel_, 0, [](Outgoing&, proto::ChildCall::Builder c) { c.setStart(); });
}

void ChildRunner::Put(uint32_t from, uint64_t iteration, std::string bytes, bool sender_converged,
                      uint64_t seen, uint64_t incarnation, uint64_t seen_incarnation) {
  Command(channel_, bytes.size(), [&](Outgoing& out, proto::ChildCall::Builder c) {
    out.put = true;
    out.from = from;
    out.incarnation = incarnation;
    out.iteration = iteration;
    out.bytes = std::move(bytes);
    auto p = c.initPut();
    p.setFrom(from);
    p.setIteration(iteration);
    p.adoptBytes(BytesFor(*out.message, out.bytes));
    p.setConverged(sender_converged);
    p.setSeen(seen);
    p.setIncarnation(incarnation);
    p.setSeenIncarnation(seen_incarnation);
  });
}

void ChildRunner::Query(uint64_t round) {
  Command(channel_, 0, [&](Outgoing&, proto::ChildCall::Builder c) { c.setQuery(round); });
}

void ChildRunner::Snapshot(uint64_t round) {
  Command(channel_, 0, [&](Outgoing&, proto::ChildCall::Builder c) { c.setSnapshot(round); });
}

void ChildRunner::Tighten(double factor) {
  Command(channel_, 0, [&](Outgoing&, proto::ChildCall::Builder c) { c.setTightenRun(factor); });
}

void ChildRunner::Move(runtime::ItemMove move) {
  Command(channel_, move.items.size(), [&](Outgoing& out, proto::ChildCall::Builder c) {
    out.bytes = std::move(move.items);
    auto d = c.initMove();
    d.setMove(move.move);
    d.setKind(runtime::ToProto(move.kind));
    d.setWork(move.work);
    d.adoptItems(BytesFor(*out.message, out.bytes));
    d.setTo(move.to);
  });
}

void ChildRunner::Halt() {
  Command(channel_, 0, [](Outgoing&, proto::ChildCall::Builder c) { c.setHalt(); });
}

}  // namespace aiac::daemon
