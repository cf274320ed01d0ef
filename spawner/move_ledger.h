// The spawner's account of the items moved between running tasks (docs/balancing.md), so that every
// item is owned by exactly one task at every moment, whichever daemons are lost on the way.
//
// A move goes in steps: the source exports items worth some work (the reply carries them), the
// spawner confirms it has them (the source may forget its copy) and the target imports them.
// Moves run side by side as long as no task takes part in two at once (DistPM's channels run in
// parallel), so a task's steps stay in the order the ledger gave them. Every export, import and
// drop a task applies counts one in its move sequence, which its checkpoints carry
// (aiac/task_state.h). The ledger keeps, per task, the journal of the steps it applied (with the
// items) and, for the move under way, its stage.
//
// A replaced task tells at which move its checkpoint was (TaskReady.restoredMoves) and which
// exports it holds unconfirmed (TaskReady.outbox). OnRestored then answers with the steps that
// bring it back: the journal's steps after that point again (an export as a drop of the same
// items, an import as the same import), and for the move under way, the export found in the
// outbox (its reply was lost), the import resent (it never became durable) or the move
// abandoned (the export never did). Pure: the supervisor sends the steps.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "runtime/task_runner.h"
#include "runtime/task_state.h"

namespace aiac::spawner {

// A MoveItems to send to `task`.
struct MoveStep {
  size_t task = 0;
  runtime::ItemMove move;
};

// A task's ItemsMoved, as read from the wire.
struct MoveReply {
  uint64_t move = 0;
  runtime::MoveKind kind = runtime::MoveKind::kExport;
  std::string error;  // empty: done
  std::string items;  // export: the items
  uint64_t count = 0;
  int64_t items_after = -1;
  uint64_t moves = 0;
};

// A move that ended: `count` items went from `from` to `to` (0 when abandoned).
struct CompletedMove {
  uint64_t move = 0;
  size_t from = 0, to = 0;
  double work = 0;  // work units asked
  uint64_t count = 0;
  uint64_t bytes = 0;  // the items' encoded size
  bool abandoned = false;
  std::string why{};  // when abandoned
};

struct LedgerOutcome {
  std::vector<MoveStep> send;
  std::optional<CompletedMove> completed;
  std::string error;  // the ledger cannot keep every item with one owner: the run must fail
};

// The ledger as a resumed spawner needs it (spawner/job_state.h): its journal entries are only
// ever appended, so they are stored one by one; the rest is rewritten at each change.
struct LedgerEntry {
  uint64_t moves = 0;  // the task's sequence number after this step
  runtime::MoveKind kind = runtime::MoveKind::kExport;
  uint64_t move = 0;
  std::string items;
};
struct PendingMove {
  uint64_t move = 0;
  size_t from = 0, to = 0;
  double work = 0;
  bool importing = false;  // exported: the items are here, the import is out
  std::string items;
  uint64_t count = 0;
  uint64_t expect = 0;  // importing: the target's sequence number once it applied them
};
struct LedgerHead {
  uint64_t next_move = 1;
  int64_t total_items = -1;
  std::vector<uint64_t> applied;  // per task
  std::vector<PendingMove> pending;
};

class MoveLedger {
 public:
  explicit MoveLedger(size_t tasks) : tasks_(tasks) {}
  // A ledger as a lost spawner left it: `journals` per task (as many as head.applied).
  static MoveLedger Restore(LedgerHead head, std::vector<std::vector<LedgerEntry>> journals);

  // ---- For the job state.
  LedgerHead head() const;
  size_t journal_size(size_t task) const { return tasks_[task].journal.size(); }
  const LedgerEntry& journal_entry(size_t task, size_t i) const { return tasks_[task].journal[i]; }
  // A resumed spawner's first steps: every move under way's step whose reply the lost spawner
  // may not have read (the export, or the import), sent again; the runners answer a step they
  // took already as they did (runtime/task_runner.h).
  std::vector<MoveStep> Resend() const;
  // The steps task `task` took after move sequence `moves` as the journal has them, again (an
  // export as a drop of the same items, an import as the same import): for a task restored at
  // `moves` (OnRestored), and for one a resumed spawner adopts, which says how far it is as its
  // daemon last heard (a step it took already is answered again, not taken twice).
  std::vector<MoveStep> Replay(size_t task, uint64_t moves) const;

  // A move is under way (exported, not yet imported or abandoned).
  bool busy() const { return !pending_.empty(); }
  // Task `task` takes part in a move under way.
  bool busy(size_t task) const;
  // Starts moving items worth `work` from `from` to `to` (from != to): the export to send.
  // Requires !busy(from) and !busy(to).
  MoveStep Begin(size_t from, size_t to, double work);
  // Task `task`'s reply to a step (its current incarnation).
  LedgerOutcome OnReply(size_t task, const MoveReply& reply);
  // Task `task` runs again on a new daemon, restored at move `restored_moves` with `outbox`.
  LedgerOutcome OnRestored(size_t task, uint64_t restored_moves,
                           const std::vector<runtime::ExportedItems>& outbox);
  // The import of move `move`, when it is under way, its items are here and the target has yet
  // to take them.
  std::optional<MoveStep> ImportInFlight(uint64_t move) const;
  // Moves applied by `task` as far as the ledger knows.
  uint64_t applied(size_t task) const { return tasks_[task].applied; }

  // The owner check: given each task's latest (items held, moves applied) report, an error when
  // the items held add up to another total than the first complete report's, at a moment when
  // nothing is in transit and every report is as of the ledger's moves; empty otherwise.
  std::string CheckCounts(const std::vector<std::pair<int64_t, uint64_t>>& reports);
  int64_t total_items() const { return total_items_; }

 private:
  using Entry = LedgerEntry;
  using Pending = PendingMove;
  struct Task {
    uint64_t applied = 0;
    std::vector<Entry> journal;
  };

  // The source's export of move `p` is done (a reply, or found in an outbox).
  LedgerOutcome Exported(Pending& p, const std::string& items, uint64_t count, uint64_t moves);
  static MoveStep ImportStep(const Pending& p);
  // Move `p` ended: it leaves pending_.
  CompletedMove Complete(const Pending& p, bool abandoned, std::string why);
  // The move under way task `task` takes part in, or null.
  Pending* PendingOf(size_t task);

  std::vector<Task> tasks_;
  std::map<uint64_t, Pending> pending_;  // by move
  uint64_t next_move_ = 1;
  int64_t total_items_ = -1;
};

}  // namespace aiac::spawner
