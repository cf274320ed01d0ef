#include "spawner/move_ledger.h"

#include <algorithm>

#include "core/status.h"

namespace aiac::spawner {

using runtime::MoveKind;

namespace {

std::string Name(size_t task) { return "task " + std::to_string(task); }

}  // namespace

MoveStep MoveLedger::Begin(size_t from, size_t to, double work) {
  AIAC_CHECK(!pending_ && from != to && from < tasks_.size() && to < tasks_.size());
  pending_ = Pending{next_move_++, from, to, work, false, {}, 0, 0};
  return {from, {pending_->move, MoveKind::kExport, work, {}, static_cast<uint32_t>(to)}};
}

MoveStep MoveLedger::ImportStep() const { return {pending_->to, {pending_->move, MoveKind::kImport, 0, pending_->items}}; }

std::optional<MoveStep> MoveLedger::ImportInFlight() const {
  if (!pending_ || !pending_->importing) return std::nullopt;
  return ImportStep();
}

CompletedMove MoveLedger::Complete(bool abandoned, std::string why) {
  CompletedMove c{pending_->move,
                  pending_->from,
                  pending_->to,
                  pending_->work,
                  abandoned ? 0 : pending_->count,
                  abandoned ? 0 : pending_->items.size(),
                  abandoned,
                  std::move(why)};
  pending_.reset();
  return c;
}

LedgerOutcome MoveLedger::Exported(const std::string& items, uint64_t count, uint64_t moves) {
  LedgerOutcome out;
  Task& from = tasks_[pending_->from];
  from.journal.push_back({moves, MoveKind::kExport, pending_->move, items});
  from.applied = moves;
  // The items are safe here now: the source may drop its copy from its checkpoints.
  out.send.push_back({pending_->from, {pending_->move, MoveKind::kConfirm, 0, {}}});
  if (count == 0) {
    out.completed = Complete(false, "");
    return out;
  }
  pending_->importing = true;
  pending_->items = items;
  pending_->count = count;
  pending_->expect = tasks_[pending_->to].applied + 1;
  out.send.push_back(ImportStep());
  return out;
}

LedgerOutcome MoveLedger::OnReply(size_t task, const MoveReply& r) {
  LedgerOutcome out;
  if (task >= tasks_.size() || r.kind == MoveKind::kConfirm) return out;
  const bool ours = pending_ && pending_->move == r.move;
  if (ours && !pending_->importing && task == pending_->from && r.kind == MoveKind::kExport) {
    if (!r.error.empty()) {
      out.completed = Complete(true, Name(task) + " could not export: " + r.error);
      return out;
    }
    return Exported(r.items, r.count, r.moves);
  }
  if (ours && pending_->importing && task == pending_->to && r.kind == MoveKind::kImport) {
    if (!r.error.empty()) {
      out.error = Name(task) + " refused the " + std::to_string(pending_->count) + " items of move " +
                  std::to_string(r.move) + ": " + r.error;
      return out;
    }
    Task& to = tasks_[task];
    to.journal.push_back({r.moves, MoveKind::kImport, r.move, pending_->items});
    to.applied = r.moves;
    out.completed = Complete(false, "");
    return out;
  }
  // A step replayed on a restored task: it must land where the journal says.
  const Task& t = tasks_[task];
  auto entry = std::find_if(t.journal.begin(), t.journal.end(), [&](const Entry& e) { return e.move == r.move; });
  if (entry == t.journal.end()) return out;  // from an earlier incarnation's pending step: stale
  const MoveKind replayed = entry->kind == MoveKind::kExport ? MoveKind::kDrop : MoveKind::kImport;
  if (r.kind != replayed) return out;
  if (!r.error.empty() || r.moves != entry->moves) {
    out.error = Name(task) + " could not take move " + std::to_string(r.move) + " again after its restore: " +
                (r.error.empty() ? "it is at move " + std::to_string(r.moves) + ", not " + std::to_string(entry->moves)
                                 : r.error);
  }
  return out;
}

LedgerOutcome MoveLedger::OnRestored(size_t task, uint64_t restored, const std::vector<runtime::ExportedItems>& outbox) {
  LedgerOutcome out;
  if (task >= tasks_.size()) return out;
  Task& t = tasks_[task];
  // The steps it had applied after its checkpoint, again, in order.
  for (const Entry& e : t.journal) {
    if (e.moves <= restored) continue;
    out.send.push_back({task, {e.move, e.kind == MoveKind::kExport ? MoveKind::kDrop : MoveKind::kImport, 0, e.items}});
  }
  // Where the replays leave it: the last step the ledger knows it applied.
  uint64_t now = t.journal.empty() ? 0 : t.journal.back().moves;
  if (pending_ && !pending_->importing && pending_->from == task) {
    auto found = std::find_if(outbox.begin(), outbox.end(), [&](const auto& x) { return x.move == pending_->move; });
    if (found != outbox.end()) {
      // The export became durable (its checkpoint holds it) but its reply was lost with the daemon.
      LedgerOutcome exported = Exported(found->items, found->count, found->moves);
      out.send.insert(out.send.end(), exported.send.begin(), exported.send.end());
      out.completed = exported.completed;
      now = std::max(now, found->moves);
    } else {
      out.completed = Complete(true, Name(task) + " was lost before its export of the move became durable");
    }
  } else if (pending_ && pending_->importing && pending_->to == task) {
    if (restored >= pending_->expect) {
      // The import became durable but its reply was lost with the daemon.
      t.journal.push_back({pending_->expect, MoveKind::kImport, pending_->move, pending_->items});
      now = pending_->expect;
      out.completed = Complete(false, "");
    } else {
      out.send.push_back(ImportStep());  // applied again after the replays: the same expect
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
  if (pending_ || reports.size() != tasks_.size()) return "";
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
  return "the tasks hold " + std::to_string(total) + " items, not the job's " + std::to_string(total_items_) +
         ": items were " + (total < total_items_ ? "lost" : "duplicated") + " in a move";
}

}  // namespace aiac::spawner
