#include "runtime/task_runner.h"

#include <algorithm>
#include <cstdlib>
#include <ctime>

#include "core/metrics.h"

namespace aiac::runtime {
namespace {

double Seconds(std::chrono::steady_clock::duration d) {
  return std::chrono::duration<double>(d).count();
}

// CPU time this thread has used: what an iteration costs, whatever else shares the cores.
std::chrono::nanoseconds ThreadCpuTime() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return std::chrono::seconds(ts.tv_sec) + std::chrono::nanoseconds(ts.tv_nsec);
}

}  // namespace

metrics::Counter& IterationsComputed() {
  static metrics::Counter& counter = metrics::Registry::Process().GetCounter(
      "aiac_task_iterations_total", "Iterations computed by the tasks this daemon ran");
  return counter;
}

TaskRunner::TaskRunner(std::unique_ptr<app::Task> task, std::vector<uint32_t> neighbours,
                       RunnerOptions options, RunnerCallbacks callbacks)
    : task_(std::move(task)),
      neighbours_(std::move(neighbours)),
      options_(options),
      cb_(std::move(callbacks)),
      mailbox_(options.sync),
      moves_(options_.moves) {
  mailbox_.set_own_incarnation(options.incarnation);
}

TaskRunner::~TaskRunner() {
  Halt();
  Join();
}

void TaskRunner::Start() {
  thread_ = std::thread([this] { Loop(); });
}

void TaskRunner::Query(uint64_t round) {
  query_.store(round);
  mailbox_.Wake();  // an idle loop answers at once
}

void TaskRunner::Snapshot(uint64_t round) {
  std::lock_guard<std::mutex> lock(commands_mu_);
  commands_.push_back({Command::kSnapshot, round, 1, {}});
  mailbox_.Wake();
}

void TaskRunner::Tighten(double factor) {
  std::lock_guard<std::mutex> lock(commands_mu_);
  commands_.push_back({Command::kTighten, 0, factor, {}});
  mailbox_.Wake();
}

void TaskRunner::Move(ItemMove move) {
  std::lock_guard<std::mutex> lock(commands_mu_);
  commands_.push_back({Command::kMove, 0, 1, std::move(move)});
  mailbox_.Wake();
}

TaskProfile& TaskProfile::operator+=(const TaskProfile& o) {
  compute_s += o.compute_s;
  wait_s += o.wait_s;
  checkpoint_s += o.checkpoint_s;
  move_s += o.move_s;
  messages_sent += o.messages_sent;
  bytes_sent += o.bytes_sent;
  messages_received += o.messages_received;
  bytes_received += o.bytes_received;
  return *this;
}

TaskMeasures TaskRunner::Measures() const {
  TaskProfile profile = profile_;
  profile.compute_s = Seconds(busy_);
  const double since = Seconds(options_.clock->Now() - started_);
  // At least compute_s: iterations, waits and moves are timed apart, so the difference falls
  // short of the iterations only by the clock's rounding.
  const double active = std::max(since - profile.wait_s - profile.move_s, profile.compute_s);
  return {
      task_->WorkDone(), task_->RemainingWork(), task_->ItemCount(), moves_.moves, profile, active};
}

void TaskRunner::Send(std::vector<OutgoingValue> values, uint64_t iteration, bool converged) {
  profile_.messages_sent += values.size();
  for (const auto& v : values) profile_.bytes_sent += v.bytes.size();
  if (options_.sync && cb_.checkpoint) {
    // Kept for the checkpoints: a neighbour of a restored task may wait for either.
    if (recent_sent_.size() == 2) recent_sent_.erase(recent_sent_.begin());
    SentValues sent{iteration, {}};
    sent.values.reserve(values.size());
    for (const auto& v : values) sent.values.push_back({v.to, v.bytes});
    recent_sent_.push_back(std::move(sent));
  }
  cb_.send(std::move(values), iteration, converged);
}

bool TaskRunner::AnswerAgain(const ItemMove& m, MoveReport& r) const {
  if (m.kind == MoveKind::kConfirm) return false;
  auto it = taken_.find(m.move);
  if (it == taken_.end()) return false;
  // A drop replays an export: answered when this runner made that export, or that drop.
  const MoveKind took = it->second.kind;
  if (m.kind == MoveKind::kDrop ? took == MoveKind::kImport : took != m.kind) return false;
  r.count = it->second.count;
  r.moves = it->second.moves;
  if (m.kind == MoveKind::kExport) {
    for (const ExportedItems& e : moves_.outbox) {
      if (e.move == m.move) r.items = e.items;
    }
  }
  return true;
}

void TaskRunner::RunMove(ItemMove m, uint64_t iteration, bool& converged) {
  MoveReport r;
  r.move = m.move;
  r.kind = m.kind;
  if (cb_.moved && AnswerAgain(m, r)) {
    r.items_after = task_->ItemCount();
    cb_.moved(std::move(r));
    // The spawner forgets the convergence of a move's target when the move completes, which this
    // answer may do (a resumed spawner sent an import the lost one saw through): told again after
    // it, or a converged task that changes nothing is never counted converged again and the run
    // stalls.
    cb_.local_convergence(converged, iteration);
    return;
  }
  const int64_t before = task_->ItemCount();
  if (!cb_.moved) {
    r.error = InvalidArgument("this runtime does not move items");
  } else if (m.kind == MoveKind::kConfirm) {
    std::erase_if(moves_.outbox, [&](const ExportedItems& e) { return e.move == m.move; });
  } else if (m.kind == MoveKind::kExport) {
    auto items = task_->ExportItems(m.work, m.to);
    if (items.ok()) {
      r.items = std::move(*items);
      r.count = static_cast<uint64_t>(std::max<int64_t>(0, before - task_->ItemCount()));
      // Kept with the checkpoints until the spawner confirms it has them: a daemon lost after
      // its checkpoint but before this reply left would otherwise take them along.
      moves_.outbox.push_back({m.move, moves_.moves + 1, r.count, r.items});
    } else {
      r.error = items.status();
    }
  } else {
    r.error = m.kind == MoveKind::kImport ? task_->ImportItems(m.items) : task_->DropItems(m.items);
    if (r.error.ok()) r.count = static_cast<uint64_t>(std::abs(task_->ItemCount() - before));
  }
  const bool applied = r.error.ok() && m.kind != MoveKind::kConfirm;
  if (applied) ++moves_.moves;
  if (applied) {
    taken_[m.move] = {m.kind, r.count, moves_.moves};
    if (taken_.size() > kMaxStepsKept) taken_.erase(taken_.begin());
  }
  r.items_after = task_->ItemCount();
  r.moves = moves_.moves;
  if (cb_.moved) cb_.moved(std::move(r));
  if (!applied) return;
  // The task holds other items now: its local convergence and its figures are new, and its
  // backups get its new state at once.
  converged = task_->LocallyConverged();
  cb_.local_convergence(converged, iteration);
  cb_.progress(iteration, task_->LocalChange(), converged, Measures());
  MaybeCheckpoint(iteration, /*now=*/true);
}

Status TaskRunner::RunCommands(uint64_t iteration, bool& converged) {
  std::vector<Command> commands;
  {
    std::lock_guard<std::mutex> lock(commands_mu_);
    commands.swap(commands_);
  }
  for (auto& c : commands) {
    if (c.kind == Command::kSnapshot) {
      if (cb_.snapshot) cb_.snapshot(c.round, task_->ResultSlice(), iteration);
    } else if (c.kind == Command::kMove) {
      const auto start = options_.clock->Now();
      RunMove(std::move(c.move), iteration, converged);
      profile_.move_s += Seconds(options_.clock->Now() - start);
    } else {
      // The gathered result fell short although every local test passed: an app whose local
      // tests can pass before its global test does must implement Tighten (docs/app-api.md).
      if (Status t = task_->Tighten(c.factor); !t.ok()) {
        return Status(t.code(), "Task::Tighten: " + t.message());
      }
      converged = task_->LocallyConverged();
      cb_.local_convergence(converged, iteration);
    }
  }
  return Status::Ok();
}

void TaskRunner::Halt() {
  halt_.store(true);
  mailbox_.Close();
}

bool TaskRunner::Read(std::chrono::milliseconds wait) {
  if (!options_.input || options_.input(wait)) return true;
  Halt();
  return false;
}

void TaskRunner::WaitForChange(uint64_t since, std::chrono::milliseconds timeout) {
  if (!options_.input) {
    mailbox_.WaitForChange(since, timeout);
    return;
  }
  // Real time, whatever options_.clock says: this is how long the thread sleeps.
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (!halt_.load() && mailbox_.changes() == since) {
    const auto left =
        std::chrono::ceil<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
    if (left.count() <= 0 || !Read(left)) return;
  }
}

void TaskRunner::Join() {
  if (thread_.joinable()) thread_.join();
}

Status TaskRunner::Step(uint64_t next_iteration, bool& did_work) {
  // An emulated iteration is timed from when its inputs are there: a synchronous step's wait for
  // them is not part of it, nor the CPU its thread burns waking for each message meanwhile
  // (multiplied by a slow node's slowdown, that alone stretched the steps without bound).
  auto wall_start = options_.clock->Now();
  auto cpu_start = ThreadCpuTime();
  if (options_.sync) {
    // Iteration k uses every neighbour's iteration k-1 (iteration 1 starts from the initial
    // values).
    if (next_iteration > 1 && !neighbours_.empty()) {
      std::optional<std::vector<Mailbox::Value>> values;
      const auto wait_start = options_.clock->Now();
      const auto wait = std::chrono::milliseconds(options_.input ? 0 : 100);
      while (!halt_.load() &&
             !(values = mailbox_.TakeIteration(neighbours_, next_iteration - 1, wait))) {
        Read(std::chrono::milliseconds(100));
      }
      wall_start = options_.clock->Now();
      cpu_start = ThreadCpuTime();
      profile_.wait_s += Seconds(wall_start - wait_start);
      if (!values) return Status::Ok();  // halted while waiting
      for (auto& v : *values) {
        Received(v);
        AIAC_RETURN_IF_ERROR(task_->Absorb(v.from, v.bytes));
      }
    }
  } else {
    for (auto& v : mailbox_.TakeNew()) {
      Received(v);
      AIAC_RETURN_IF_ERROR(task_->Absorb(v.from, v.bytes));
    }
    task_->InputsFinal(mailbox_.AllConverged(neighbours_, need_seen_));
  }
  if (halt_.load()) return Status::Ok();
  const auto iterate_start = options_.clock->Now();
  auto did = task_->Iterate();
  iterate_time_ = options_.clock->Now() - iterate_start;
  if (!did.ok()) return did.status();
  did_work =
      *did || options_.sync;  // a synchronous iteration always counts: neighbours wait for it
  if (did_work && options_.iteration_time) {
    // An emulated node: the iteration lasts what the node would take, its values go out then.
    iterate_time_ = options_.iteration_time(ThreadCpuTime() - cpu_start);
    const auto until = wall_start + iterate_time_;
    while (!halt_.load() && options_.clock->Now() < until) {
      std::this_thread::sleep_for(
          std::min<Clock::duration>(until - options_.clock->Now(), std::chrono::milliseconds(20)));
    }
  }
  return Status::Ok();
}

std::vector<OutgoingValue> TaskRunner::Track(std::vector<app::Outgoing> out, uint64_t iteration,
                                             bool converged) {
  std::vector<OutgoingValue> values;
  values.reserve(out.size());
  for (auto& o : out) {
    auto last = last_sent_.find(o.to);
    const bool changed = last == last_sent_.end() || last->second != o.bytes;
    if (changed) {
      last_sent_[o.to] = o.bytes;
      // Only a neighbour that also sends to us can acknowledge what it absorbed.
      if (std::find(neighbours_.begin(), neighbours_.end(), o.to) != neighbours_.end()) {
        need_seen_[o.to] = iteration;
      }
    }
    const std::pair<uint64_t, uint64_t> seen{mailbox_.Taken(o.to), mailbox_.IncarnationOf(o.to)};
    // An asynchronous receiver takes nothing from a value it has already, sent again with the
    // same acknowledgement and convergence (Mailbox::Put): an iteration without new input makes
    // one, and each would cross every hop to the neighbour's app for nothing. (A synchronous
    // neighbour waits for every iteration's value.)
    if (!options_.sync && !changed && told_seen_[o.to] == seen &&
        told_converged_[o.to] == converged) {
      continue;
    }
    told_seen_[o.to] = seen;
    told_converged_[o.to] = converged;
    values.push_back({o.to, std::move(o.bytes), seen.first, seen.second});
  }
  return values;
}

void TaskRunner::Acknowledge(uint64_t iteration, bool converged) {
  std::vector<OutgoingValue> values;
  for (const auto& [to, bytes] : last_sent_) {
    if (std::find(neighbours_.begin(), neighbours_.end(), to) == neighbours_.end()) continue;
    const std::pair<uint64_t, uint64_t> now{mailbox_.Taken(to), mailbox_.IncarnationOf(to)};
    auto told = told_seen_.find(to);
    if (told != told_seen_.end() && told->second == now) continue;
    told_seen_[to] = now;
    told_converged_[to] = converged;
    values.push_back({to, bytes, now.first, now.second});
  }
  if (!values.empty()) Send(std::move(values), iteration, converged);
}

void TaskRunner::MaybeCheckpoint(uint64_t iteration, bool now) {
  if (!cb_.checkpoint) return;
  const bool by_count =
      options_.checkpoint_every > 0 && iteration - last_checkpoint_ >= options_.checkpoint_every;
  const bool by_time =
      options_.checkpoint_period.count() > 0 && options_.clock->Now() >= next_checkpoint_;
  if (!by_count && !by_time && !now) return;
  // Serialising is the only cost on this thread: storing happens on the backups, and sending
  // on the network thread, so iterations go on meanwhile.
  const auto start = options_.clock->Now();
  std::string state = EncodeTaskState(moves_, task_->SaveState(), recent_sent_);
  profile_.checkpoint_s += Seconds(options_.clock->Now() - start);
  cb_.checkpoint(std::move(state), iteration);
  last_checkpoint_ = iteration;
  next_checkpoint_ = options_.clock->Now() + options_.checkpoint_period;
}

void TaskRunner::Loop() {
  uint64_t iteration = options_.start_iteration;
  started_ = options_.clock->Now();
  last_checkpoint_ = iteration;
  next_checkpoint_ = options_.clock->Now() + options_.checkpoint_period;
  bool converged = false;
  uint64_t answered = 0;
  // The round waiting for its answer, and what of ours each neighbour must have absorbed first:
  // the values sent before the round was known (those sent since come from a converged task).
  uint64_t pending = 0;
  std::map<uint32_t, uint64_t> round_need;
  auto next_progress = options_.clock->Now() + options_.progress_period;
  Status failure;
  // A restored synchronous task first sends again what it sent after its checkpoint's last
  // iterations (they may have died unsent with its previous daemon).
  if (options_.sync) {
    for (SentValues& sent : options_.resend) {
      std::vector<OutgoingValue> values;
      for (auto& v : sent.values) values.push_back({v.to, std::move(v.bytes), 0, 0});
      Send(std::move(values), sent.iteration, false);
    }
  }
  options_.resend.clear();
  while (Read(std::chrono::milliseconds(0)) && !halt_.load()) {
    // Read before anything this pass looks at: whatever comes after wakes the idle wait below.
    const uint64_t changes = mailbox_.changes();
    failure = RunCommands(iteration, converged);
    if (!failure.ok()) break;
    bool did_work = false;
    // A round is answered only after a whole step that began once the query was known, so values
    // in flight when the round opened have been absorbed.
    const uint64_t round = query_.load();
    if (round != answered && round != pending) {
      pending = round;
      round_need = need_seen_;
    }
    failure = Step(iteration + 1, did_work);
    if (!failure.ok() || halt_.load()) break;
    if (did_work) {
      busy_ += iterate_time_;  // not the wait for a synchronous step's inputs
      ++iteration;
      IterationsComputed().Add();
      const bool now = task_->LocallyConverged();
      auto out = Track(task_->TakeOutgoing(), iteration, now);
      if (!out.empty() || options_.sync) Send(std::move(out), iteration, now);
      if (now != converged || iteration == options_.start_iteration + 1)
        cb_.local_convergence(now, iteration);
      converged = now;
      MaybeCheckpoint(iteration);
    } else if (!options_.sync) {
      Acknowledge(iteration, converged);
    }
    // A converged task answers only once every neighbour that sends to it has absorbed the
    // newest changed value it had sent when the round became known, and was still converged
    // after it: a value still in flight (on a slow link) could unsettle its receiver after the
    // round ended. (Not the values sent since: an asynchronous task's values keep changing in
    // their last bits, and chasing them would hold the answer back for as long as it iterates.)
    // Until then the answer waits; a task no longer converged answers at once (the round is
    // lost anyway). Nor while a neighbour's value waits untaken that a sender not converged
    // sent: it came during this pass (a changed one, then, from a neighbour quick to settle
    // again, the same bytes marked converged), and absorbing it may unsettle this task. (Values
    // converged senders sent since wait all the time when every task sends to every other at
    // each iteration, as two-level CG tasks do: waiting for a pass without one held a round for
    // 10 s.) Synchronous steps wait for their inputs, so nothing they depend on is in flight.
    if (round != answered &&
        (!converged || options_.sync ||
         (mailbox_.AbsorbedByConverged(round_need) && !mailbox_.HasNewFromUnconverged()))) {
      answered = round;
      cb_.answer(round, converged);
    }
    if (options_.clock->Now() >= next_progress) {
      cb_.progress(iteration, task_->LocalChange(), converged, Measures());
      next_progress = options_.clock->Now() + options_.progress_period;
    }
    ++passes_;
    if (!did_work) {
      // Nothing to compute until a neighbour sends something new: wait, once this pass's round
      // is answered, for a change of what it saw (a value, a sender's convergence or
      // acknowledgement, a command, a query) or for the next progress report, not a fixed poll:
      // 256 idle tasks of a ring polling every 5 ms kept two cores busy and starved the
      // daemons' heartbeats (issue 37).
      const auto wait_start = options_.clock->Now();
      const auto until_progress =
          std::chrono::ceil<std::chrono::milliseconds>(next_progress - wait_start);
      const auto longest = std::max(options_.progress_period, std::chrono::milliseconds(1));
      WaitForChange(changes, std::clamp(until_progress, std::chrono::milliseconds(1), longest));
      profile_.wait_s += Seconds(options_.clock->Now() - wait_start);
    }
  }
  // The last figures, before the result: its daemon sends them with it.
  cb_.progress(iteration, task_->LocalChange(), converged, Measures());
  if (!failure.ok()) {
    cb_.finished(failure, iteration);
  } else {
    cb_.finished(task_->ResultSlice(), iteration);
  }
}

}  // namespace aiac::runtime
