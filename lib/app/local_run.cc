#include "app/local_run.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <memory>
#include <optional>

#include "core/splitmix.h"

namespace aiac::app {
namespace {

class CallbackLog final : public Log {
 public:
  explicit CallbackLog(std::function<void(LogLevel, std::string_view)> write)
      : write_(std::move(write)) {}
  void Write(LogLevel level, std::string_view line) const override {
    if (write_) {
      write_(level, line);
    } else {
      static constexpr const char* kNames[] = {"debug", "info", "warn", "error"};
      std::fprintf(stderr, "app %s: %.*s\n", kNames[static_cast<int>(level)],
                   static_cast<int>(line.size()), line.data());
    }
  }

 private:
  std::function<void(LogLevel, std::string_view)> write_;
};

Status Named(const Status& s, const std::string& hook, uint32_t task) {
  return Status(s.code(), hook + " (task " + std::to_string(task) + "): " + s.message());
}

// A value on its way: the newest one of its sender for its receiver.
struct InFlight {
  std::string bytes;
  uint64_t arrives = 0;       // the step from which it may be delivered
  bool sender_final = false;  // its sender was locally converged when it sent it
};

class LocalJob {
 public:
  LocalJob(App& app, const LocalRunOptions& o) : app_(app), o_(o), rng_(o.seed) {}

  Result<LocalRunResult> Run() {
    params_.values = o_.params;
    params_.tasks = o_.tasks;
    params_.base_dir = o_.base_dir;
    params_.shared_files = true;
    params_.logger = std::make_shared<CallbackLog>(o_.log);
    AIAC_ASSIGN_OR_RETURN(plan_, app_.Prepare(params_));
    if (plan_.graph.size() != o_.tasks || plan_.slices.size() != o_.tasks) {
      return InvalidArgument("Prepare planned " + std::to_string(plan_.graph.size()) +
                             " tasks, not " + std::to_string(o_.tasks));
    }
    result_.iterations.assign(o_.tasks, 0);
    for (uint32_t t = 0; t < o_.tasks; ++t) {
      AIAC_ASSIGN_OR_RETURN(auto task, Make(t, nullptr));
      tasks_.push_back(std::move(task));
      dependencies_.push_back(tasks_.back()->Dependencies());
    }
    last_sent_.assign(o_.tasks, {});
    inbox_.assign(o_.tasks, {});
    for (;;) {
      AIAC_RETURN_IF_ERROR(o_.sync ? SyncRound() : AsyncUntilConverged());
      std::vector<std::string> slices;
      for (const auto& task : tasks_) slices.push_back(task->ResultSlice());
      AIAC_ASSIGN_OR_RETURN(result_.report, app_.Gather(params_, slices));
      if (result_.report.status != GatherStatus::kUnconverged) return result_;
      ++result_.tightenings;
      tighten_ *= 10;
      for (uint32_t t = 0; t < o_.tasks; ++t) {
        if (Status s = tasks_[t]->Tighten(10); !s.ok()) return Named(s, "Task::Tighten", t);
      }
    }
  }

 private:
  uint64_t Random() { return rng_ = SplitMix64(rng_); }

  Result<std::unique_ptr<Task>> Make(uint32_t t, const std::string* state) {
    auto task = app_.MakeTask(params_, t, plan_.slices[t]);
    if (!task.ok()) return Named(task.status(), "App::MakeTask", t);
    if (!*task) return InvalidArgument("App::MakeTask (task " + std::to_string(t) + ") gave null");
    if (state) {
      if (Status s = (*task)->RestoreState(*state); !s.ok()) {
        return Named(s, "Task::RestoreState", t);
      }
      if (tighten_ > 1) {
        if (Status s = (*task)->Tighten(tighten_); !s.ok()) return Named(s, "Task::Tighten", t);
      }
    }
    return std::move(*task);
  }

  bool AllConverged() const {
    return std::all_of(tasks_.begin(), tasks_.end(),
                       [](const auto& t) { return t->LocallyConverged(); });
  }

  // One iteration of task t, if it has anything to do; sends what it returns.
  Status Step(uint32_t t) {
    bool final = true;
    for (uint32_t from : dependencies_[t]) {
      // Of the values of `from` that arrived, only the newest is handed over (as the runtime's
      // mailbox does).
      auto& queue = inbox_[t][from];
      std::optional<InFlight> newest;
      while (!queue.empty() && queue.front().arrives <= step_) {
        newest = std::move(queue.front());
        queue.pop_front();
      }
      if (newest) {
        if (Status s = tasks_[t]->Absorb(from, newest->bytes); !s.ok()) {
          return Named(s, "Task::Absorb", t);
        }
        final_[{t, from}] = newest->sender_final;
      }
      auto f = final_.find({t, from});
      final = final && f != final_.end() && f->second;
    }
    if (!o_.sync) tasks_[t]->InputsFinal(final);
    auto iterated = tasks_[t]->Iterate();
    if (!iterated.ok()) return Named(iterated.status(), "Task::Iterate", t);
    // As in the runtime, a synchronous iteration counts even when the task had nothing to do:
    // its neighbours wait for it.
    if (!*iterated && !o_.sync) return Status::Ok();
    if (++result_.iterations[t] > o_.max_iterations) {
      return InvalidArgument("task " + std::to_string(t) + " did not converge in " +
                             std::to_string(o_.max_iterations) + " iterations");
    }
    const bool converged = tasks_[t]->LocallyConverged();
    for (Outgoing& out : tasks_[t]->TakeOutgoing()) {
      if (out.to >= o_.tasks) {
        return InvalidArgument("Task::TakeOutgoing (task " + std::to_string(t) +
                               ") sends to task " + std::to_string(out.to));
      }
      const uint64_t delay = o_.sync || o_.max_delay == 0 ? 0 : Random() % (o_.max_delay + 1);
      last_sent_[t][out.to] = out.bytes;
      // In order, as over one connection: never before the value sent before it.
      auto& queue = inbox_[out.to][t];
      const uint64_t arrives =
          std::max(step_ + 1 + delay, queue.empty() ? uint64_t{0} : queue.back().arrives);
      queue.push_back({std::move(out.bytes), arrives, converged});
    }
    if (o_.restore_every > 0 && result_.iterations[t] % o_.restore_every == 0) {
      return Restore(t);
    }
    return Status::Ok();
  }

  // Task t is lost and made again from a checkpoint of its state now; its senders' newest values
  // reach it again.
  Status Restore(uint32_t t) {
    const std::string state = tasks_[t]->SaveState();
    AIAC_ASSIGN_OR_RETURN(tasks_[t], Make(t, &state));
    ++result_.restores;
    for (uint32_t from : dependencies_[t]) {
      auto sent = last_sent_[from].find(t);
      auto& queue = inbox_[t][from];
      if (sent != last_sent_[from].end() && queue.empty()) {
        queue.push_back({sent->second, step_ + 1, false});
      }
      final_.erase({t, from});
    }
    return Status::Ok();
  }

  // Until every task has stayed locally converged long enough for every value sent before to
  // have arrived (the runtime confirms global convergence with a round of its own for the same
  // reason). Quiescence is no test: converged tasks go on answering each new value.
  Status AsyncUntilConverged() {
    uint64_t converged_steps = 0;
    for (;;) {
      // Every task gets its turn in a random order each pass, and the values in flight arrive.
      std::vector<uint32_t> order(o_.tasks);
      for (uint32_t t = 0; t < o_.tasks; ++t) order[t] = t;
      for (uint32_t i = o_.tasks; i > 1; --i) std::swap(order[i - 1], order[Random() % i]);
      for (uint32_t t : order) {
        AIAC_RETURN_IF_ERROR(Step(t));
        ++step_;
      }
      converged_steps = AllConverged() ? converged_steps + o_.tasks : 0;
      if (converged_steps >= o_.max_delay + 1 + o_.tasks) return Status::Ok();
    }
  }

  // Synchronous: rounds until every task is converged after one.
  Status SyncRound() {
    for (;;) {
      for (uint32_t t = 0; t < o_.tasks; ++t) AIAC_RETURN_IF_ERROR(Step(t));
      step_ += 1;  // the round's values arrive together, for the next round
      if (AllConverged()) return Status::Ok();
    }
  }

  App& app_;
  const LocalRunOptions& o_;
  uint64_t rng_;
  JobParams params_;
  JobPlan plan_;
  LocalRunResult result_;
  std::vector<std::unique_ptr<Task>> tasks_;
  std::vector<std::vector<uint32_t>> dependencies_;
  std::vector<std::map<uint32_t, std::deque<InFlight>>> inbox_;  // per receiver, by sender
  std::vector<std::map<uint32_t, std::string>> last_sent_;       // per sender, by receiver
  std::map<std::pair<uint32_t, uint32_t>, bool> final_;          // (receiver, sender)
  uint64_t step_ = 0;
  double tighten_ = 1;
};

}  // namespace

Result<LocalRunResult> RunLocally(App& app, const LocalRunOptions& options) {
  if (options.tasks == 0) return InvalidArgument("RunLocally: tasks must be at least 1");
  return LocalJob(app, options).Run();
}

}  // namespace aiac::app
