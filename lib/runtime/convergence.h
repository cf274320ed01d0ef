// Global convergence detection, centralised at the spawner (docs/architecture.md, the life of a
// job).
//
// Tasks report changes of their local convergence. When every task is locally converged the
// detector opens a confirmation round: each task answers after one more iteration of its own,
// and an asynchronous task only once the neighbours that send to it have absorbed its newest
// changed value and stayed converged (runtime::TaskRunner::Query), so no value that could still
// unsettle a task is in flight when the round ends, however slow the link. Convergence is
// declared when every answer of that round says "still converged" and no task reported a loss
// meanwhile; any loss cancels the round, and a new one opens when all are converged again.
// Pure: the caller moves the messages.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace aiac::runtime {

class ConvergenceDetector {
 public:
  // Rounds are numbered from `first_round` + 1. A task answers each round number once, so a
  // spawner that takes a job over (spawner incarnation k) numbers its rounds above every round
  // an earlier incarnation could have opened: RoundBase(k).
  explicit ConvergenceDetector(uint32_t tasks, uint64_t first_round = 0)
      : converged_(tasks, false), answered_(tasks, false), round_(first_round) {}

  // The rounds of spawner incarnation `incarnation` (1, 2, ...) are numbered from this + 1:
  // 0 for the first, so a job that was never resumed numbers them 1, 2, ...
  static constexpr uint64_t RoundBase(uint64_t incarnation) {
    return incarnation > 0 ? (incarnation - 1) << 32 : 0;
  }

  // A task's local convergence changed (or was repeated).
  void OnLocal(uint32_t task, bool converged);
  // A task's answer to round `round`.
  void OnAnswer(uint32_t task, uint64_t round, bool converged);
  // The round to announce now, if one should open (every task converged, none open).
  std::optional<uint64_t> RoundToOpen();
  // Task `task`'s convergence no longer counts (its daemon was replaced): cancels an open round
  // and a declared convergence, until the task reports convergence again and a round confirms it.
  void Withdraw(uint32_t task);
  // Forgets every task's local convergence and any declared or open round: the tasks' local
  // tests were tightened, so what they said before no longer counts. Rounds keep their
  // numbers, so answers to an earlier round stay stale.
  void Reset();
  // True once a round completed with every task still converged.
  bool converged() const { return declared_; }
  uint32_t converged_count() const;
  // Whether task `task` last said it is locally converged.
  bool locally_converged(uint32_t task) const {
    return task < converged_.size() && converged_[task];
  }
  uint64_t rounds_cancelled() const { return cancelled_; }

 private:
  void Cancel();

  std::vector<bool> converged_;
  std::vector<bool> answered_;
  uint64_t round_;  // last round opened
  bool open_ = false;
  bool declared_ = false;
  uint64_t cancelled_ = 0;
};

}  // namespace aiac::runtime
