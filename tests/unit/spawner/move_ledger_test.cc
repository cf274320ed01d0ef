// The move ledger against simulated tasks that apply its steps, checkpoint at random moments
// and are lost at random moments (replies and steps in flight lost with them, the task
// restored from its last checkpoint), with moves of disjoint pairs of tasks under way at once:
// whatever happens, once everyone is back and every step delivered, each item is held by
// exactly one task. The spawner too may be lost at random moments (the replies in flight with
// it) and resumed from its stored ledger.
#include "spawner/move_ledger.h"

#include <gtest/gtest.h>

#include <deque>
#include <map>
#include <random>
#include <set>
#include <tuple>

namespace aiac::spawner {
namespace {

using runtime::MoveKind;

// Items are numbers; a step's bytes are the numbers in text, one per line.
std::string Encode(const std::set<int>& items) {
  std::string out;
  for (int i : items) out += std::to_string(i) + "\n";
  return out;
}
std::set<int> Decode(const std::string& bytes) {
  std::set<int> out;
  size_t at = 0;
  while (at < bytes.size()) {
    const size_t end = bytes.find('\n', at);
    out.insert(std::stoi(bytes.substr(at, end - at)));
    at = end + 1;
  }
  return out;
}

struct SimTask {
  std::set<int> items;
  runtime::MoveState moves;
  // The last checkpoint its backups hold.
  std::set<int> saved_items;
  runtime::MoveState saved_moves;
  bool up = true;
  std::deque<runtime::ItemMove> inbox;  // steps sent to it, not yet applied
  // The steps its runner applied (move -> kind, count, moves after), gone with a restore, and
  // its move sequence when that runner started.
  std::map<uint64_t, std::tuple<MoveKind, uint64_t, uint64_t>> taken;
  uint64_t life_start = 0;

  // One step, as TaskRunner::RunMove does it with an app whose work unit is one item: a step it
  // took already is answered again as it was.
  MoveReply Apply(const runtime::ItemMove& m) {
    MoveReply r;
    r.move = m.move;
    r.kind = m.kind;
    r.items_after = static_cast<int64_t>(items.size());
    if (auto it = taken.find(m.move);
        m.kind != MoveKind::kConfirm && it != taken.end() &&
        (m.kind == MoveKind::kDrop ? std::get<0>(it->second) != MoveKind::kImport
                                   : std::get<0>(it->second) == m.kind)) {
      r.count = std::get<1>(it->second);
      r.moves = std::get<2>(it->second);
      for (const auto& e : moves.outbox) {
        if (e.move == m.move && m.kind == MoveKind::kExport) r.items = e.items;
      }
      return r;
    }
    if (m.kind == MoveKind::kConfirm) {
      std::erase_if(moves.outbox, [&](const auto& e) { return e.move == m.move; });
    } else if (m.kind == MoveKind::kExport) {
      std::set<int> out;
      while (!items.empty() && out.size() < static_cast<size_t>(m.work)) {
        out.insert(*items.rbegin());
        items.erase(std::prev(items.end()));
      }
      r.items = Encode(out);
      r.count = out.size();
      moves.outbox.push_back({m.move, moves.moves + 1, r.count, r.items});
    } else {
      const std::set<int> in = Decode(m.items);
      for (int i : in) {
        const bool held = items.count(i) > 0;
        if (m.kind == MoveKind::kImport ? held : !held)
          r.error = "item " + std::to_string(i) + (held ? " held" : " missing");
      }
      if (r.error.empty()) {
        for (int i : in) m.kind == MoveKind::kImport ? (void)items.insert(i) : (void)items.erase(i);
        r.count = in.size();
      }
    }
    if (r.error.empty() && m.kind != MoveKind::kConfirm) ++moves.moves;
    if (r.error.empty() && m.kind != MoveKind::kConfirm)
      taken[m.move] = {m.kind, r.count, moves.moves};
    r.moves = moves.moves;
    r.items_after = static_cast<int64_t>(items.size());
    return r;
  }
};

class Simulation {
 public:
  Simulation(size_t tasks, int items_per_task, uint64_t seed, bool spawner_losses = false)
      : ledger_(tasks), tasks_(tasks), rng_(seed), spawner_losses_(spawner_losses) {
    int next = 0;
    for (auto& t : tasks_) {
      for (int i = 0; i < items_per_task; ++i) t.items.insert(next++);
      t.saved_items = t.items;
    }
    total_ = next;
  }

  void Send(const LedgerOutcome& o) {
    ASSERT_TRUE(o.error.empty()) << o.error;
    for (const auto& s : o.send) {
      if (tasks_[s.task].up)
        tasks_[s.task].inbox.push_back(s.move);  // a task being replaced gets none
    }
    if (o.completed) ++completed_;
  }

  // One random event; `faults`: losses may happen.
  void Step(bool faults) {
    const size_t n = tasks_.size();
    const size_t t = rng_() % n;
    SimTask& task = tasks_[t];
    switch (rng_() % (spawner_losses_ ? 9 : 8)) {
      case 0: {  // a new move, beside those under way that involve neither task
        const size_t to = (t + 1 + rng_() % (n - 1)) % n;
        if (!ledger_.busy(t) && !ledger_.busy(to) && task.up && tasks_[to].up) {
          Send({{ledger_.Begin(t, to, 1 + rng_() % 4)}, std::nullopt, ""});
        }
        break;
      }
      case 1:
      case 2:
      case 3:  // a task applies its next step; the reply reaches the spawner, or not (then lost)
        if (task.up && !task.inbox.empty()) {
          const runtime::ItemMove m = task.inbox.front();
          task.inbox.pop_front();
          const MoveReply r = task.Apply(m);
          ASSERT_TRUE(r.error.empty()) << r.error;
          replies_.push_back({t, r});
        }
        break;
      case 4:  // a reply arrives
        if (!replies_.empty()) {
          auto [from, r] = replies_.front();
          replies_.pop_front();
          if (tasks_[from].up) Send(ledger_.OnReply(from, r));  // an older incarnation's: dropped
        }
        break;
      case 5:  // a checkpoint becomes durable
        if (task.up) {
          task.saved_items = task.items;
          task.saved_moves = task.moves;
        }
        break;
      case 6:  // lost: its queue, its replies in flight and its state since the checkpoint go
        if (faults && task.up) {
          task.up = false;
          task.inbox.clear();
          std::erase_if(replies_, [&](const auto& r) { return r.first == t; });
        }
        break;
      case 7:  // back, restored from its checkpoint
        if (!task.up) Restore(t);
        break;
      case 8:  // the spawner is lost, and resumed
        ResumeSpawner();
        break;
    }
  }

  // The spawner is lost with the replies on their way to it and the last steps it sent to each
  // task (a connection's unsent tail); another takes over from the ledger as stored (its head and
  // journals) and sends the steps of the moves under way again.
  void ResumeSpawner() {
    for (auto& task : tasks_)
      task.inbox.resize(task.inbox.size() - rng_() % (task.inbox.size() + 1));
    std::vector<std::vector<LedgerEntry>> journals(tasks_.size());
    for (size_t t = 0; t < tasks_.size(); ++t) {
      for (size_t i = 0; i < ledger_.journal_size(t); ++i)
        journals[t].push_back(ledger_.journal_entry(t, i));
    }
    ledger_ = MoveLedger::Restore(ledger_.head(), std::move(journals));
    replies_.clear();
    // Each running task is adopted, saying how far it is as its daemon last heard (maybe a step
    // behind its runner); the journal's steps after that go again. Then the moves under way.
    for (size_t t = 0; t < tasks_.size(); ++t) {
      if (!tasks_[t].up) continue;
      // (never below where its runner started: its daemon knows that much)
      const uint64_t heard =
          std::max(tasks_[t].life_start,
                   tasks_[t].moves.moves - std::min<uint64_t>(tasks_[t].moves.moves, rng_() % 2));
      Send({ledger_.Replay(t, heard), std::nullopt, ""});
    }
    Send({ledger_.Resend(), std::nullopt, ""});
    ++resumes_;
  }

  void Restore(size_t t) {
    SimTask& task = tasks_[t];
    task.up = true;
    task.taken.clear();  // a new runner
    task.items = task.saved_items;
    task.moves = task.saved_moves;
    task.life_start = task.moves.moves;
    Send(ledger_.OnRestored(t, task.moves.moves, task.moves.outbox));
  }

  // Everyone back, every step and reply delivered.
  void Drain() {
    for (size_t t = 0; t < tasks_.size(); ++t) {
      if (!tasks_[t].up) Restore(t);
    }
    for (int guard = 0; guard < 100000; ++guard) {
      bool any = false;
      for (size_t t = 0; t < tasks_.size(); ++t) {
        while (!tasks_[t].inbox.empty()) {
          any = true;
          const runtime::ItemMove m = tasks_[t].inbox.front();
          tasks_[t].inbox.pop_front();
          const MoveReply r = tasks_[t].Apply(m);
          ASSERT_TRUE(r.error.empty()) << r.error;
          replies_.push_back({t, r});
        }
      }
      while (!replies_.empty()) {
        any = true;
        auto [from, r] = replies_.front();
        replies_.pop_front();
        Send(ledger_.OnReply(from, r));
      }
      if (!any) break;
    }
  }

  void ExpectEveryItemOnce() {
    EXPECT_FALSE(ledger_.busy());
    std::multiset<int> all;
    for (const auto& t : tasks_) all.insert(t.items.begin(), t.items.end());
    ASSERT_EQ(all.size(), static_cast<size_t>(total_));
    for (int i = 0; i < total_; ++i) EXPECT_EQ(all.count(i), 1u) << "item " << i;
    std::vector<std::pair<int64_t, uint64_t>> counts;
    for (const auto& t : tasks_)
      counts.emplace_back(static_cast<int64_t>(t.items.size()), t.moves.moves);
    for (size_t t = 0; t < tasks_.size(); ++t) EXPECT_EQ(tasks_[t].moves.moves, ledger_.applied(t));
    EXPECT_EQ(ledger_.CheckCounts(counts), "");
  }

  MoveLedger ledger_;
  std::vector<SimTask> tasks_;
  std::deque<std::pair<size_t, MoveReply>> replies_;
  std::mt19937_64 rng_;
  bool spawner_losses_ = false;
  int total_ = 0;
  int completed_ = 0;
  int resumes_ = 0;
};

TEST(MoveLedgerTest, AMoveGoesExportConfirmImport) {
  MoveLedger ledger(2);
  const MoveStep exp = ledger.Begin(0, 1, 5);
  EXPECT_EQ(exp.task, 0u);
  EXPECT_EQ(exp.move.kind, MoveKind::kExport);
  EXPECT_TRUE(ledger.busy());
  LedgerOutcome o = ledger.OnReply(0, {exp.move.move, MoveKind::kExport, "", "abc", 3, 7, 1});
  ASSERT_EQ(o.send.size(), 2u);
  EXPECT_EQ(o.send[0].move.kind, MoveKind::kConfirm);
  EXPECT_EQ(o.send[1].task, 1u);
  EXPECT_EQ(o.send[1].move.kind, MoveKind::kImport);
  EXPECT_EQ(o.send[1].move.items, "abc");
  EXPECT_FALSE(o.completed);
  o = ledger.OnReply(1, {exp.move.move, MoveKind::kImport, "", "", 3, 13, 1});
  ASSERT_TRUE(o.completed);
  EXPECT_EQ(o.completed->count, 3u);
  EXPECT_FALSE(ledger.busy());
  EXPECT_EQ(ledger.applied(0), 1u);
  EXPECT_EQ(ledger.applied(1), 1u);
}

TEST(MoveLedgerTest, ARefusedExportAbandonsTheMoveAndARefusedImportFailsTheRun) {
  MoveLedger ledger(2);
  MoveStep s = ledger.Begin(0, 1, 5);
  LedgerOutcome o = ledger.OnReply(0, {s.move.move, MoveKind::kExport, "no items", "", 0, 7, 0});
  ASSERT_TRUE(o.completed);
  EXPECT_TRUE(o.completed->abandoned);
  EXPECT_FALSE(ledger.busy());
  s = ledger.Begin(0, 1, 5);
  ledger.OnReply(0, {s.move.move, MoveKind::kExport, "", "abc", 3, 4, 1});
  o = ledger.OnReply(1,
                     {s.move.move, MoveKind::kImport, "item 3 is already held here", "", 0, 10, 0});
  EXPECT_NE(o.error.find("refused the 3 items"), std::string::npos) << o.error;
}

TEST(MoveLedgerTest, ARestoredTaskTakesTheStepsSinceItsCheckpointAgain) {
  MoveLedger ledger(2);
  MoveStep s = ledger.Begin(0, 1, 5);
  ledger.OnReply(0, {s.move.move, MoveKind::kExport, "", "abc", 3, 4, 1});
  ledger.OnReply(1, {s.move.move, MoveKind::kImport, "", "", 3, 10, 1});
  // Task 0 back from a checkpoint before its export: it drops the items again.
  LedgerOutcome o = ledger.OnRestored(0, 0, {});
  ASSERT_EQ(o.send.size(), 1u);
  EXPECT_EQ(o.send[0].move.kind, MoveKind::kDrop);
  EXPECT_EQ(o.send[0].move.items, "abc");
  // Task 1 back from before its import: it imports them again.
  o = ledger.OnRestored(1, 0, {});
  ASSERT_EQ(o.send.size(), 1u);
  EXPECT_EQ(o.send[0].move.kind, MoveKind::kImport);
  // Restored past what the spawner knows: refused with the reason.
  o = ledger.OnRestored(1, 5, {});
  EXPECT_NE(o.error.find("past the 1 moves"), std::string::npos) << o.error;
}

TEST(MoveLedgerTest, AnExportWhoseReplyWasLostComesFromTheOutbox) {
  MoveLedger ledger(2);
  MoveStep s = ledger.Begin(0, 1, 5);
  // The source exported, checkpointed, and died before the reply left.
  LedgerOutcome o = ledger.OnRestored(0, 1, {{s.move.move, 1, 3, "abc"}});
  ASSERT_GE(o.send.size(), 2u);
  EXPECT_EQ(o.send[1].task, 1u);
  EXPECT_EQ(o.send[1].move.kind, MoveKind::kImport);
  EXPECT_EQ(o.send[1].move.items, "abc");
  // The source died before its export was durable: the items are still its own.
  MoveLedger other(2);
  s = other.Begin(0, 1, 5);
  o = other.OnRestored(0, 0, {});
  ASSERT_TRUE(o.completed);
  EXPECT_TRUE(o.completed->abandoned);
}

TEST(MoveLedgerTest, CountsThatDoNotAddUpAreReported) {
  MoveLedger ledger(2);
  EXPECT_EQ(ledger.CheckCounts({{10, 0}, {10, 0}}),
            "");  // the first complete report sets the total
  EXPECT_EQ(ledger.total_items(), 20);
  EXPECT_EQ(ledger.CheckCounts({{10, 0}, {-1, 0}}), "");  // incomplete: no verdict
  EXPECT_NE(ledger.CheckCounts({{10, 0}, {11, 0}}).find("duplicated"), std::string::npos);
  EXPECT_NE(ledger.CheckCounts({{9, 0}, {10, 0}}).find("lost"), std::string::npos);
}

TEST(MoveLedgerTest, EveryItemStaysWithOneTaskWithoutFaults) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    Simulation sim(3, 6, seed);
    for (int i = 0; i < 300; ++i) sim.Step(false);
    sim.Drain();
    sim.ExpectEveryItemOnce();
    if (HasFailure()) FAIL() << "seed " << seed;
  }
}

TEST(MoveLedgerTest, EveryItemStaysWithOneTaskWhateverIsLostAndWhen) {
  int moves = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    Simulation sim(2 + seed % 5, 5, seed);  // up to 6 tasks: up to 3 moves at once
    for (int i = 0; i < 400; ++i) sim.Step(true);
    sim.Drain();
    sim.ExpectEveryItemOnce();
    moves += sim.completed_;
    if (HasFailure()) FAIL() << "seed " << seed;
  }
  EXPECT_GT(moves, 2000);  // the runs did move things
}

TEST(MoveLedgerTest, EveryItemStaysWithOneTaskWhenTheSpawnerIsLostAndResumed) {
  int moves = 0, resumes = 0;
  for (uint64_t seed = 1; seed <= 2000; ++seed) {
    Simulation sim(2 + seed % 5, 5, seed, /*spawner_losses=*/true);
    for (int i = 0; i < 400; ++i) sim.Step(seed % 2 == 0);  // half of them lose daemons too
    sim.Drain();
    sim.ExpectEveryItemOnce();
    moves += sim.completed_;
    resumes += sim.resumes_;
    if (HasFailure()) FAIL() << "seed " << seed;
  }
  EXPECT_GT(moves, 2000);
  EXPECT_GT(resumes, 2000);
}

TEST(MoveLedgerTest, ARestoredLedgerIsTheSameLedger) {
  MoveLedger ledger(3);
  const MoveStep begun = ledger.Begin(0, 2, 4);
  MoveReply exported{begun.move.move, MoveKind::kExport, "", "items", 2, 3, 1};
  ledger.OnReply(0, exported);  // importing now
  std::vector<std::vector<LedgerEntry>> journals(3);
  journals[0].push_back(ledger.journal_entry(0, 0));
  MoveLedger again = MoveLedger::Restore(ledger.head(), journals);
  EXPECT_TRUE(again.busy(0));
  EXPECT_TRUE(again.busy(2));
  EXPECT_FALSE(again.busy(1));
  EXPECT_EQ(again.applied(0), 1u);
  const auto resend = again.Resend();
  ASSERT_EQ(resend.size(), 1u);
  EXPECT_EQ(resend[0].task, 2u);
  EXPECT_EQ(resend[0].move.kind, MoveKind::kImport);
  EXPECT_EQ(resend[0].move.items, "items");
  // The next move gets a new number, as it would have from the lost spawner.
  again.OnReply(2, MoveReply{begun.move.move, MoveKind::kImport, "", "", 2, 7, 1});
  EXPECT_FALSE(again.busy());
  EXPECT_EQ(again.Begin(1, 2, 1).move.move, begun.move.move + 1);
}

}  // namespace
}  // namespace aiac::spawner
