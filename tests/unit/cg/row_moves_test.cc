// Rows of a generated system moving between neighbouring CG tasks while they iterate
// (row_moves.h): the answer stays right, every row stays with one task, a task restored from a
// checkpoint rebuilds the block the checkpoint belongs to, and bad moves change nothing.
#include "apps/cg/row_moves.h"

#include <gtest/gtest.h>

#include <numeric>

#include "apps/cg/cg_app.h"
#include "unit/cg/job_params.h"
#include "support/test_support.h"

namespace aiac::cg {
namespace {

using Tasks = std::vector<std::unique_ptr<app::Task>>;

Tasks MakeTasks(CgApp& app, const app::JobParams& params, const app::JobPlan& plan) {
  Tasks tasks;
  for (uint32_t l = 0; l < params.tasks; ++l) {
    auto t = app.MakeTask(params, l, plan.slices[l]);
    EXPECT_TRUE(t.ok()) << t.status().message();
    tasks.push_back(std::move(*t));
  }
  return tasks;
}

// One iteration of every task, each value delivered at once. Whether all are locally converged.
bool Sweep(Tasks& tasks) {
  bool all = true;
  for (uint32_t l = 0; l < tasks.size(); ++l) {
    EXPECT_TRUE(tasks[l]->Iterate().ok());
    for (auto& out : tasks[l]->TakeOutgoing()) EXPECT_OK(tasks[out.to]->Absorb(l, out.bytes));
    all = all && tasks[l]->LocallyConverged();
  }
  return all;
}

int64_t Rows(const Tasks& tasks) {
  int64_t rows = 0;
  for (const auto& t : tasks) rows += t->ItemCount();
  return rows;
}

// `rows` rows from task `from` to its neighbour `to`, asked for in work units (the source's
// remaining work per row). `sweeps_between`: iterations while the rows are in transit, whose
// values do not fit the blocks yet.
void MoveRows(Tasks& tasks, uint32_t from, uint32_t to, double rows, int sweeps_between = 0) {
  const double per_row = tasks[from]->RemainingWork() / static_cast<double>(tasks[from]->ItemCount());
  ASSERT_GT(per_row, 0);
  auto bytes = tasks[from]->ExportItems(rows * per_row, to);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  for (int k = 0; k < sweeps_between; ++k) Sweep(tasks);
  ASSERT_OK(tasks[to]->ImportItems(*bytes));
}

TEST(CgRowMoveTest, RowsMovingMidSolveLeaveTheAnswerRight) {
  CgApp app;
  aiac::testing::TempDir dir;
  auto params = Params({{"n", "3000"}, {"bandwidth", "9"}, {"seed", "4"}, {"tolerance", "1e-11"}, {"output", "x.mtx"}},
                       4, dir.path());
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok());
  EXPECT_TRUE(plan->items_in_chain);
  Tasks tasks = MakeTasks(app, params, *plan);
  for (int k = 0; k < 15; ++k) Sweep(tasks);
  MoveRows(tasks, 1, 2, 300, /*sweeps_between=*/2);
  EXPECT_EQ(tasks[1]->ItemCount(), 450);
  EXPECT_EQ(tasks[2]->ItemCount(), 1050);
  EXPECT_EQ(Rows(tasks), 3000);
  Sweep(tasks);
  MoveRows(tasks, 2, 1, 100);
  MoveRows(tasks, 0, 1, 200, 1);
  // More than it can give: a block keeps bandwidth + 1 rows.
  MoveRows(tasks, 3, 2, 1e9);
  EXPECT_EQ(tasks[3]->ItemCount(), 10);
  EXPECT_EQ(Rows(tasks), 3000);
  for (auto& t : tasks) EXPECT_FALSE(t->LocallyConverged());  // each one's rows changed
  int sweeps = 0;
  while (!Sweep(tasks) && ++sweeps < 10000) {
  }
  ASSERT_LT(sweeps, 10000);
  std::vector<std::string> slices;
  for (auto& t : tasks) slices.push_back(t->ResultSlice());
  auto report = app.Gather(params, slices);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->status, "converged");
  EXPECT_LT(report->residual, 1e-9);
  EXPECT_LT(report->numbers["error_inf"], 1e-9);
  // A result that lost a row, or holds one twice, is refused.
  std::swap(slices[1], slices[2]);
  slices[2] = slices[1];
  EXPECT_FALSE(app.Gather(params, slices).ok());
}

TEST(CgRowMoveTest, ARestoredTaskRebuildsItsCheckpointsBlockAndDropsWhatItGaveSince) {
  CgApp app;
  auto params = Params({{"n", "600"}, {"bandwidth", "3"}}, 3);
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok());
  Tasks tasks = MakeTasks(app, params, *plan);
  for (int k = 0; k < 3; ++k) Sweep(tasks);
  const std::string before = tasks[1]->SaveState();
  const double per_row = tasks[1]->RemainingWork() / 200;
  auto gone = tasks[1]->ExportItems(50 * per_row, 2);
  ASSERT_TRUE(gone.ok());
  ASSERT_EQ(tasks[1]->ItemCount(), 150);
  const std::string after = tasks[1]->SaveState();

  // A new daemon restores the checkpoint taken after the export: rows 201..350.
  auto restored = app.MakeTask(params, 1, plan->slices[1]);
  ASSERT_TRUE(restored.ok());
  ASSERT_OK((*restored)->RestoreState(after));
  EXPECT_EQ((*restored)->ItemCount(), 150);
  EXPECT_EQ((*restored)->ResultSlice(), tasks[1]->ResultSlice());
  // One restores the checkpoint from before: it holds the rows it gave until it drops them.
  auto older = app.MakeTask(params, 1, plan->slices[1]);
  ASSERT_TRUE(older.ok());
  ASSERT_OK((*older)->RestoreState(before));
  EXPECT_EQ((*older)->ItemCount(), 200);
  ASSERT_OK((*older)->DropItems(*gone));
  EXPECT_EQ((*older)->ResultSlice(), tasks[1]->ResultSlice());
  EXPECT_FALSE((*older)->DropItems(*gone).ok());  // not at an end of its rows any more
  EXPECT_EQ((*older)->ItemCount(), 150);

  // Rows go only next to a block, once, and only to a neighbour.
  ASSERT_OK(tasks[2]->ImportItems(*gone));
  EXPECT_NE(tasks[2]->ImportItems(*gone).message().find("held here already"), std::string::npos);
  EXPECT_NE(tasks[0]->ImportItems(*gone).message().find("not next to"), std::string::npos);
  EXPECT_NE(tasks[2]->ExportItems(10, 0).status().message().find("only to its neighbours"), std::string::npos);
  EXPECT_FALSE(tasks[2]->ImportItems("garbage").ok());
  EXPECT_EQ(tasks[0]->ItemCount() + tasks[1]->ItemCount() + tasks[2]->ItemCount(), 600);
  // A checkpoint of other rows than a task can hold is refused.
  std::string bad = after;
  const int32_t range[2] = {590, 700};
  std::memcpy(bad.data(), range, sizeof range);
  EXPECT_FALSE((*restored)->RestoreState(bad).ok());
}

TEST(CgRowMoveTest, OnlyGeneratedSlicesWiderThanTheBandwidthMove) {
  struct Case {
    std::map<std::string, std::string> values;
    uint32_t tasks;
    bool movable;
  };
  const std::vector<Case> cases = {
      {{{"n", "20"}, {"bandwidth", "9"}}, 2, true},                         // 10 rows each: bandwidth + 1
      {{{"n", "20"}, {"bandwidth", "9"}}, 4, false},                        // 5 rows each
      {{{"n", "400"}, {"bandwidth", "3"}, {"partition", "metis"}}, 2, false},  // shipped blocks
      {{{"n", "400"}, {"bandwidth", "3"}, {"overlap", "2"}}, 2, false},
  };
  for (const Case& c : cases) {
    CgApp app;
    auto params = Params(c.values, c.tasks);
    auto plan = app.Prepare(params);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->items_in_chain, c.movable) << c.values.at("n") << " rows, " << c.tasks << " tasks";
    auto t = app.MakeTask(params, 0, plan->slices[0]);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ((*t)->ItemCount() >= 0, c.movable);
    EXPECT_EQ((*t)->ExportItems(1, 1).ok(), c.movable);
  }
}

TEST(CgRowMoveTest, MovesRoundTripAndDamagedOnesAreRefused) {
  RowMove m{100, 40, 43, {1, 2, 3}, 36, {4, 5, 6, 7}};
  auto back = DecodeRowMove(EncodeRowMove(m), 100);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->lo, 40);
  EXPECT_EQ(back->x, m.x);
  EXPECT_EQ(back->halo_lo, 36);
  EXPECT_EQ(back->halo, m.halo);
  EXPECT_FALSE(DecodeRowMove(EncodeRowMove(m), 99).ok());  // another system
  const std::string bytes = EncodeRowMove(m);
  for (size_t cut = 0; cut < bytes.size(); ++cut) EXPECT_FALSE(DecodeRowMove(bytes.substr(0, cut), 100).ok());
  m.hi = 44;  // three values for four rows
  EXPECT_FALSE(DecodeRowMove(EncodeRowMove(m), 100).ok());
  EXPECT_EQ(LocalStarts(50, 4, 1, 10, 30), (std::vector<int>{0, 10, 30, 50, 50}));
}

}  // namespace
}  // namespace aiac::cg
