#include "spawner/move_ledger.h"

#include <algorithm>

#include "core/status.h"

namespace aiac::spawner {

using runtime::MoveKind;

namespace {

std::string Name(size_t task) { return "task " + std::to_string(task); }

}  // namespace

bool MoveLedger::busy(size_t task) const {
  return std::any_of(pending_.begin(), pending_.end(),
                     [&](const auto& p) { return p.second.from == task || p.second.to == task; });
}

MoveLedger::Pending* MoveLedger::PendingOf(size_t task) {
  for (auto& [move, p] : pending_) {
    if (p.from == task || p.to == task) return &p;
  }
  return nullptr;
}

MoveStep MoveLedger::Begin(size_t from, size_t to, double work) {
  AIAC_CHECK(from != to && from < tasks_.size() && to < tasks_.size() && !busy(from) && !busy(to));
  const uint64_t move = next_move_++;
  pending_[move] = Pending{move, from, to, work, false, {}, 0, 0};
  return {from, {move, MoveKind::kExport, work, {}, static_cast<uint32_t>(to)}};
}

MoveLedger MoveLedger::Restore(LedgerHead head, std::vector<std::vector<LedgerEntry>> journals) {
  MoveLedger ledger(head.applied.size());
  ledger.next_move_ = head.next_move;
  ledger.total_items_ = head.total_items;
  for (size_t t = 0; t < ledger.tasks_.size(); ++t) {
    ledger.tasks_[t].applied = head.applied[t];
    if (t < journals.size()) ledger.tasks_[t].journal = std::move(journals[t]);
  }
  for (auto& p : head.pending) ledger.pending_[p.move] = std::move(p);
  return ledger;
}

LedgerHead MoveLedger::head() const {
  LedgerHead h;
  h.next_move = next_move_;
  h.total_items = total_items_;
  for (const Task& t : tasks_) h.applied.push_back(t.applied);
  for (const auto& [move, p] : pending_) h.pending.push_back(p);
  return h;
}

std::vector<MoveStep> MoveLedger::Replay(size_t task, uint64_t moves) const {
  std::vector<MoveStep> steps;
  if (task >= tasks_.size()) return steps;
  for (const Entry& e : tasks_[task].journal) {
    if (e.moves <= moves) continue;
    steps.push_back(
        {task,
         {e.move, e.kind == MoveKind::kExport ? MoveKind::kDrop : MoveKind::kImport, 0, e.items}});
  }
  return steps;
}

std::vector<MoveStep> MoveLedger::Resend() const {
  std::vector<MoveStep> steps;
  for (const auto& [move, p] : pending_) {
    if (p.importing) {
      steps.push_back(ImportStep(p));
    } else {
      steps.push_back(
          {p.from, {p.move, MoveKind::kExport, p.work, {}, static_cast<uint32_t>(p.to)}});
    }
  }
  return steps;
}

MoveStep MoveLedger::ImportStep(const Pending& p) {
  return {p.to, {p.move, MoveKind::kImport, 0, p.items}};
}

std::optional<MoveStep> MoveLedger::ImportInFlight(uint64_t move) const {
  auto p = pending_.find(move);
  if (p == pending_.end() || !p->second.importing) return std::nullopt;
  return ImportStep(p->second);
}

CompletedMove MoveLedger::Complete(const Pending& p, bool abandoned, std::string why) {
  CompletedMove c{p.move,
                  p.from,
                  p.to,
                  p.work,
                  abandoned ? 0 : p.count,
                  abandoned ? 0 : p.items.size(),
                  abandoned,
                  std::move(why)};
  const uint64_t move = p.move;  // (p is the entry erased)
  pending_.erase(move);
  return c;
}

LedgerOutcome MoveLedger::Exported(Pending& p, const std::string& items, uint64_t count,
                                   uint64_t moves) {
  LedgerOutcome out;
  Task& from = tasks_[p.from];
  from.journal.push_back({moves, MoveKind::kExport, p.move, items});
  from.applied = moves;
  // The items are safe here now: the source may drop its copy from its checkpoints.
  out.send.push_back({p.from, {p.move, MoveKind::kConfirm, 0, {}}});
  if (count == 0) {
    out.completed = Complete(p, false, "");
    return out;
  }
  p.importing = true;
  p.items = items;
  p.count = count;
  p.expect = tasks_[p.to].applied + 1;
  out.send.push_back(ImportStep(p));
  return out;
}

LedgerOutcome MoveLedger::OnReply(size_t task, const MoveReply& r) {
  LedgerOutcome out;
  if (task >= tasks_.size() || r.kind == MoveKind::kConfirm) return out;
  auto found = pending_.find(r.move);
  Pending* p = found == pending_.end() ? nullptr : &found->second;
  if (p && !p->importing && task == p->from && r.kind == MoveKind::kExport) {
    if (!r.error.empty()) {
      out.completed = Complete(*p, true, Name(task) + " could not export: " + r.error);
      return out;
    }
    return Exported(*p, r.items, r.count, r.moves);
  }
  if (p && p->importing && task == p->to && r.kind == MoveKind::kImport) {
    if (!r.error.empty()) {
      out.error = Name(task) + " refused the " + std::to_string(p->count) + " items of move " +
                  std::to_string(r.move) + ": " + r.error;
      return out;
    }
    Task& to = tasks_[task];
    to.journal.push_back({r.moves, MoveKind::kImport, r.move, p->items});
    to.applied = r.moves;
    out.completed = Complete(*p, false, "");
    return out;
  }
  // A step replayed on a restored task: it must land where the journal says.
  const Task& t = tasks_[task];
  auto entry = std::find_if(t.journal.begin(), t.journal.end(),
                            [&](const Entry& e) { return e.move == r.move; });
  if (entry == t.journal.end()) return out;  // from an earlier incarnation's pending step: stale
  const MoveKind replayed = entry->kind == MoveKind::kExport ? MoveKind::kDrop : MoveKind::kImport;
  if (r.kind != replayed) return out;
  if (!r.error.empty() || r.moves != entry->moves) {
    out.error = Name(task) + " could not take move " + std::to_string(r.move) +
                " again after its restore: " +
                (r.error.empty() ? "it is at move " + std::to_string(r.moves) + ", not " +
                                       std::to_string(entry->moves)
                                 : r.error);
  }
  return out;
}

LedgerOutcome MoveLedger::OnRestored(size_t task, uint64_t restored,
                                     const std::vector<runtime::ExportedItems>& outbox) {
  LedgerOutcome out;
  if (task >= tasks_.size()) return out;
  Task& t = tasks_[task];
  // The steps it had applied after its checkpoint, again, in order.
  out.send = Replay(task, restored);
  // Where the replays leave it: the last step the ledger knows it applied.
  uint64_t now = t.journal.empty() ? 0 : t.journal.back().moves;
  // The move under way it takes part in (one at most).
  Pending* p = PendingOf(task);
  if (p && !p->importing && p->from == task) {
    auto found = std::find_if(outbox.begin(), outbox.end(),
                              [&](const auto& x) { return x.move == p->move; });
    if (found != outbox.end()) {
      // The export became durable (its checkpoint holds it) but its reply was lost with the daemon.
      LedgerOutcome exported = Exported(*p, found->items, found->count, found->moves);
      out.send.insert(out.send.end(), exported.send.begin(), exported.send.end());
      out.completed = exported.completed;
      now = std::max(now, found->moves);
    } else {
      out.completed =
          Complete(*p, true, Name(task) + " was lost before its export of the move became durable");
    }
  } else if (p && p->importing && p->to == task) {
    if (restored >= p->expect) {
      // The import became durable but its reply was lost with the daemon.
      t.journal.push_back({p->expect, MoveKind::kImport, p->move, p->items});
      now = p->expect;
      out.completed = Complete(*p, false, "");
    } else {
      out.send.push_back(ImportStep(*p));  // applied again after the replays: the same expect
    }
  }
  if (restored > now) {
    out.error = Name(task) + " was restored at move " + std::to_string(restored) + ", past the " +
                std::to_string(now) + " moves the spawner knows of";
    return out;
  }
  t.applied = now;
  // Whatever else its outbox holds, the spawner has it already.
  for (const auto& x : outbox) out.send.push_back({task, {x.move, MoveKind::kConfirm, 0, {}}});
  return out;
}

std::string MoveLedger::CheckCounts(const std::vector<std::pair<int64_t, uint64_t>>& reports) {
  if (!pending_.empty() || reports.size() != tasks_.size()) return "";
  int64_t total = 0;
  for (size_t t = 0; t < reports.size(); ++t) {
    if (reports[t].first < 0 || reports[t].second != tasks_[t].applied) return "";  // not as of now
    total += reports[t].first;
  }
  if (total_items_ < 0) {
    total_items_ = total;
    return "";
  }
  if (total == total_items_) return "";
  return "the tasks hold " + std::to_string(total) + " items, not the job's " +
         std::to_string(total_items_) + ": items were " +
         (total < total_items_ ? "lost" : "duplicated") + " in a move";
}

}  // namespace aiac::spawner
