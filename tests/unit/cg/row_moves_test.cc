// Rows moving between neighbouring CG tasks while they iterate (row_moves.h), for a generated
// system and for the same system read from a Matrix Market file (whose rows travel with their
// entries, held_rows.h), its blocks sent or built by the daemons from the matrix's cache, each
// without overlap and with it (slabs): the answer stays right, every row stays with one task, a
// task restored from a checkpoint rebuilds the block the checkpoint belongs to, and bad moves
// change nothing.
#include "apps/cg/row_moves.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>

#include "apps/cg/cg_app.h"
#include "apps/cg/matrix_market.h"
#include "support/test_support.h"
#include "unit/cg/job_params.h"
#include "unit/cg/sweep.h"

namespace aiac::cg {
namespace {

// Where the system comes from; the ...Overlap ones have blocks with 2 layers of overlap (with a
// generated system the spawner builds them, and their rows travel with their entries).
enum class Source {
  kGenerated,
  kFileSent,
  kFileShared,
  kGeneratedOverlap,
  kFileSentOverlap,
  kFileSharedOverlap
};

bool WithOverlap(Source source) { return source >= Source::kGeneratedOverlap; }
// The fewest rows a block keeps in the systems below: bandwidth + 1, and 2 layers of a full band.
int FewestRows(Source source, int bandwidth) {
  return bandwidth + 1 + (WithOverlap(source) ? 2 * bandwidth : 0);
}

// The job parameters of a generated system (n, bandwidth, seed) as `source` gives it, with
// `extra`; a file is written into `dir`.
app::JobParams SystemParams(Source source, int n, int bandwidth, int seed,
                            std::map<std::string, std::string> extra, uint32_t tasks,
                            const aiac::testing::TempDir& dir) {
  if (WithOverlap(source)) extra["overlap"] = "2";
  if (source == Source::kGenerated || source == Source::kGeneratedOverlap) {
    extra["n"] = std::to_string(n);
    extra["bandwidth"] = std::to_string(bandwidth);
    extra["seed"] = std::to_string(seed);
    return Params(std::move(extra), tasks, dir.path());
  }
  EXPECT_OK(WriteMatrixMarketMatrix(dir / "a.mtx",
                                    Generate({n, bandwidth, static_cast<uint64_t>(seed)}).a));
  extra["matrix"] = "a.mtx";
  extra.emplace("partition", "contiguous");
  extra.emplace("overlap", "0");
  auto params = Params(std::move(extra), tasks, dir.path());
  params.shared_files = source == Source::kFileShared || source == Source::kFileSharedOverlap;
  return params;
}

const char* Name(Source source) {
  switch (source) {
    case Source::kGenerated:
      return "Generated";
    case Source::kFileSent:
      return "FileBlocksSent";
    case Source::kFileShared:
      return "FileBlocksFromCache";
    case Source::kGeneratedOverlap:
      return "GeneratedWithOverlap";
    case Source::kFileSentOverlap:
      return "FileBlocksSentWithOverlap";
    case Source::kFileSharedOverlap:
      return "FileBlocksFromCacheWithOverlap";
  }
  return "?";
}

std::string SourceName(const ::testing::TestParamInfo<Source>& info) { return Name(info.param); }
void PrintTo(Source source, std::ostream* os) { *os << Name(source); }

class CgRowMoveTest : public ::testing::TestWithParam<Source> {};

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

int64_t Rows(const Tasks& tasks) {
  int64_t rows = 0;
  for (const auto& t : tasks) rows += t->ItemCount();
  return rows;
}

// `rows` rows from task `from` to its neighbour `to`, asked for in work units (the source's
// remaining work per row). `sweeps_between`: iterations while the rows are in transit, whose
// values do not fit the blocks yet.
void MoveRows(Tasks& tasks, uint32_t from, uint32_t to, double rows, int sweeps_between = 0) {
  const double per_row =
      tasks[from]->RemainingWork() / static_cast<double>(tasks[from]->ItemCount());
  ASSERT_GT(per_row, 0);
  auto bytes = tasks[from]->ExportItems(rows * per_row, to);
  ASSERT_TRUE(bytes.ok()) << bytes.status().message();
  for (int k = 0; k < sweeps_between; ++k) Sweep(tasks);
  ASSERT_OK(tasks[to]->ImportItems(*bytes));
}

TEST_P(CgRowMoveTest, RowsMovingMidSolveLeaveTheAnswerRight) {
  CgApp app;
  aiac::testing::TempDir dir;
  auto params =
      SystemParams(GetParam(), 3000, 9, 4, {{"tolerance", "1e-11"}, {"output", "x.mtx"}}, 4, dir);
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
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
  // More than it can give: a block keeps bandwidth + 1 rows, and its overlap.
  MoveRows(tasks, 3, 2, 1e9);
  EXPECT_EQ(tasks[3]->ItemCount(), FewestRows(GetParam(), 9));
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
  EXPECT_EQ(report->status, app::GatherStatus::kConverged);
  EXPECT_LT(report->residual, 1e-9);
  if (GetParam() == Source::kGenerated) {
    EXPECT_LT(report->numbers["error_inf"], 1e-9);
  }
  // A result that lost a row, or holds one twice, is refused.
  std::swap(slices[1], slices[2]);
  slices[2] = slices[1];
  EXPECT_FALSE(app.Gather(params, slices).ok());
}

TEST_P(CgRowMoveTest, ARestoredTaskRebuildsItsCheckpointsBlockAndDropsWhatItGaveSince) {
  CgApp app;
  aiac::testing::TempDir dir;
  auto params = SystemParams(GetParam(), 600, 3, 1, {}, 3, dir);
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(plan->items_in_chain);
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
  // Task 2 now holds rows its first block did not: a replacement made with that block again
  // restores them from the checkpoint (for a file, their entries travel in it).
  Sweep(tasks);
  auto replaced = app.MakeTask(params, 2, plan->slices[2]);
  ASSERT_TRUE(replaced.ok());
  ASSERT_OK((*replaced)->RestoreState(tasks[2]->SaveState()));
  EXPECT_EQ((*replaced)->ItemCount(), 250);
  EXPECT_EQ((*replaced)->SaveState(), tasks[2]->SaveState());
  EXPECT_EQ((*replaced)->ResultSlice(), tasks[2]->ResultSlice());
  // Both take the same values and iterate alike: the same block.
  for (auto* t : {tasks[2].get(), replaced->get()}) {
    for (uint32_t m : {0u, 1u}) {
      for (auto& out : tasks[m]->TakeOutgoing()) {
        if (out.to == 2) EXPECT_OK(t->Absorb(m, out.bytes));
      }
    }
    ASSERT_TRUE(t->Iterate().ok());
  }
  EXPECT_EQ((*replaced)->ResultSlice(), tasks[2]->ResultSlice());
  EXPECT_NE(tasks[2]->ImportItems(*gone).message().find("held here already"), std::string::npos);
  EXPECT_NE(tasks[0]->ImportItems(*gone).message().find("not next to"), std::string::npos);
  EXPECT_NE(tasks[2]->ExportItems(10, 0).status().message().find("only to its neighbours"),
            std::string::npos);
  EXPECT_FALSE(tasks[2]->ImportItems("garbage").ok());
  EXPECT_EQ(tasks[0]->ItemCount() + tasks[1]->ItemCount() + tasks[2]->ItemCount(), 600);
  // A checkpoint of other rows than a task can hold is refused.
  std::string bad = after;
  const int32_t range[2] = {590, 700};
  std::memcpy(bad.data(), range, sizeof range);
  EXPECT_FALSE((*restored)->RestoreState(bad).ok());
}

INSTANTIATE_TEST_SUITE_P(Sources, CgRowMoveTest,
                         ::testing::Values(Source::kGenerated, Source::kFileSent,
                                           Source::kFileShared, Source::kGeneratedOverlap,
                                           Source::kFileSentOverlap, Source::kFileSharedOverlap),
                         SourceName);

TEST(CgRowMoveSourceTest, OnlySlicesWiderThanTheBandwidthAndTheOverlapMove) {
  struct Case {
    std::map<std::string, std::string> values;
    uint32_t tasks;
    bool movable;
  };
  const std::vector<Case> cases = {
      {{{"n", "20"}, {"bandwidth", "9"}}, 2, true},   // 10 rows each: bandwidth + 1
      {{{"n", "20"}, {"bandwidth", "9"}}, 4, false},  // 5 rows each
      {{{"n", "400"}, {"bandwidth", "3"}, {"partition", "metis"}}, 2, false},  // shipped blocks
      {{{"n", "400"}, {"bandwidth", "3"}, {"overlap", "2"}}, 2, true},
      {{{"n", "40"}, {"bandwidth", "3"}, {"overlap", "5"}},
       2,
       true},  // 20 rows each: 3 + 15 + 1 kept
      {{{"n", "40"}, {"bandwidth", "3"}, {"overlap", "5"}}, 3, false},  // 13 rows each
  };
  for (const Case& c : cases) {
    CgApp app;
    auto params = Params(c.values, c.tasks);
    auto plan = app.Prepare(params);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->items_in_chain, c.movable)
        << c.values.at("n") << " rows, " << c.tasks << " tasks";
    auto t = app.MakeTask(params, 0, plan->slices[0]);
    ASSERT_TRUE(t.ok());
    EXPECT_EQ((*t)->ItemCount() >= 0, c.movable);
    EXPECT_EQ((*t)->ExportItems(1, 1).ok(), c.movable);
  }
}

TEST(CgRowMoveSourceTest, AFilesRowsMoveOnlyInSlicesOfASymmetricPattern) {
  aiac::testing::TempDir dir;
  const SpMat a = Generate({1200, 3, 2}).a;
  ASSERT_OK(WriteMatrixMarketMatrix(dir / "a.mtx", a));
  SpMat skew = a;  // one entry more above the diagonal: the pattern is not symmetric
  skew.coeffRef(10, 20) = -0.01;
  skew.makeCompressed();
  ASSERT_OK(WriteMatrixMarketMatrix(dir / "skew.mtx", skew));
  struct Case {
    std::map<std::string, std::string> values;
    uint32_t tasks;
    bool movable;
  };
  const std::vector<Case> cases = {
      {{{"matrix", "a.mtx"}, {"partition", "contiguous"}, {"overlap", "0"}}, 4, true},
      {{{"matrix", "a.mtx"}, {"overlap", "0"}}, 4, true},  // auto: slices cut little
      {{{"matrix", "a.mtx"}, {"partition", "contiguous"}, {"overlap", "0"}},
       300,
       true},  // 4 rows: bandwidth + 1
      {{{"matrix", "a.mtx"}, {"partition", "contiguous"}, {"overlap", "0"}}, 301, false},
      {{{"matrix", "a.mtx"}, {"partition", "contiguous"}}, 4, true},  // auto overlap: slabs
      {{{"matrix", "a.mtx"}, {"partition", "contiguous"}, {"overlap", "50"}},
       8,
       false},  // 150 rows, 150 overlap
      {{{"matrix", "a.mtx"}, {"partition", "metis"}, {"overlap", "0"}}, 4, false},
      {{{"matrix", "skew.mtx"}, {"partition", "contiguous"}, {"overlap", "0"}}, 4, false},
  };
  for (const Case& c : cases) {
    CgApp app;
    auto params = Params(c.values, c.tasks, dir.path());
    auto plan = app.Prepare(params);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->items_in_chain, c.movable)
        << c.values.at("matrix") << ", " << c.tasks << " tasks";
    const bool says =
        std::any_of(plan->notes.begin(), plan->notes.end(), [](const std::string& note) {
          return note.find("rows stay in their blocks while the job runs") != std::string::npos;
        });
    EXPECT_EQ(says, !c.movable) << ::testing::PrintToString(plan->notes);
    auto t = app.MakeTask(params, 0, plan->slices[0]);
    ASSERT_TRUE(t.ok()) << t.status().message();
    EXPECT_EQ((*t)->ItemCount() >= 0, c.movable);
    EXPECT_EQ((*t)->ExportItems(1, 1).ok(), c.movable);
  }
}

TEST(CgRowMoveSourceTest, HeldRowsAreTheMatrixRowsAndSurviveTheirEncoding) {
  const GeneratedSpec spec{60, 4, 3};
  const Block block = GeneratedBlock(spec, {0, 20, 45, 60}, 1);
  const HeldRows held = HeldRowsOf(block, 20, 45);
  std::vector<int> cols, want_cols;
  std::vector<double> vals, want_vals;
  for (int r = 20; r < 45; ++r) {
    held.Row(r, cols, vals);
    GeneratedRow(spec, r, want_cols, want_vals);
    EXPECT_EQ(cols, want_cols) << "row " << r;
    EXPECT_EQ(vals, want_vals) << "row " << r;
    EXPECT_DOUBLE_EQ(held.b[r - 20], block.b[r - 20]);
  }
  // Split and joined again, rebuilt into the same block.
  auto joined = JoinRows(held.Part(20, 31), held.Part(31, 45));
  ASSERT_TRUE(joined.ok());
  const Block again = HeldBlock(*joined, 60, {0, 20, 45, 60}, 1);
  EXPECT_EQ(EncodeBlock(again), EncodeBlock(block));
  EXPECT_FALSE(JoinRows(held.Part(20, 30), held.Part(31, 45)).ok());  // a gap
  EXPECT_TRUE(held.Part(50, 70).empty());

  RowMove m{60, 20, 25, {1, 2, 3, 4, 5}, 25, {6, 7, 8, 9}, held.Part(20, 25)};
  auto back = DecodeRowMove(EncodeRowMove(m), 60);
  ASSERT_TRUE(back.ok()) << back.status().message();
  EXPECT_EQ(back->entries.cols, m.entries.cols);
  EXPECT_EQ(back->entries.vals, m.entries.vals);
  EXPECT_EQ(back->entries.b, m.entries.b);
  const std::string bytes = EncodeRowMove(m);
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_FALSE(DecodeRowMove(bytes.substr(0, cut), 60).ok());
  m.entries = held.Part(21, 25);  // entries without a row that moves
  EXPECT_FALSE(DecodeRowMove(EncodeRowMove(m), 60).ok());
  m.entries = held.Part(20, 27);  // and of rows next to them, which a block with overlap holds
  EXPECT_TRUE(DecodeRowMove(EncodeRowMove(m), 60).ok());
  m.entries = held.Part(20, 25);
  m.entries.cols[3] = 70;  // a column past the system
  EXPECT_FALSE(DecodeRowMove(EncodeRowMove(m), 60).ok());
}

// What a task builds alone after moves (its slice's slab, LocalStarts, SymmetricSendLists) is the
// block the spawner builds from the whole partition (BuildBlock with SendLists), on random
// symmetric patterns, slices and overlaps that keep MinBlockRows.
TEST(CgRowMoveSourceTest, SlabBlocksATaskBuildsAloneAreThoseOfTheWholePartition) {
  for (uint64_t seed = 1; seed <= 300; ++seed) {
    std::mt19937_64 rng(seed);
    auto next = [&rng](uint64_t below) { return rng() % below; };
    const int bandwidth = 1 + static_cast<int>(next(5)), overlap = static_cast<int>(next(8));
    const int tasks = 2 + static_cast<int>(next(4)), fewest = MinBlockRows(bandwidth, overlap);
    std::vector<int> starts{0};
    for (int l = 0; l < tasks; ++l)
      starts.push_back(starts.back() + fewest + static_cast<int>(next(3 * fewest)));
    const int n = starts.back();
    // A random symmetric pattern within the band (not every diagonal full), dominant diagonal.
    std::vector<Eigen::Triplet<double>> entries;
    for (int i = 0; i < n; ++i) {
      entries.emplace_back(i, i, 4.0 * bandwidth);
      for (int j = i + 1; j <= std::min(n - 1, i + bandwidth); ++j) {
        if (next(3) == 0) continue;
        const double v = -1.0 - static_cast<double>(next(100)) / 100;
        entries.emplace_back(i, j, v);
        entries.emplace_back(j, i, v);
      }
    }
    SpMat a(n, n);
    a.setFromTriplets(entries.begin(), entries.end());
    a.makeCompressed();
    const RowFn row = MatrixRows(a);
    std::vector<uint32_t> owner(static_cast<size_t>(n));
    std::vector<std::vector<int>> block_rows(static_cast<size_t>(tasks));
    for (int l = 0; l < tasks; ++l) {
      for (int r = starts[l]; r < starts[l + 1]; ++r)
        owner[static_cast<size_t>(r)] = static_cast<uint32_t>(l);
      const auto [lo, hi] = SlabRows(n, starts[l], starts[l + 1], overlap);
      for (int r = lo; r < hi; ++r) block_rows[static_cast<size_t>(l)].push_back(r);
    }
    const auto sends = SendLists(a, owner, block_rows);
    const Eigen::VectorXd b = a * Eigen::VectorXd::Ones(n);
    for (int l = 0; l < tasks; ++l) {
      const std::vector<int>& rows = block_rows[static_cast<size_t>(l)];
      std::vector<double> b_rows;
      std::vector<int> own;
      for (size_t k = 0; k < rows.size(); ++k) {
        b_rows.push_back(b[rows[k]]);
        if (owner[static_cast<size_t>(rows[k])] == static_cast<uint32_t>(l))
          own.push_back(static_cast<int>(k));
      }
      const Block whole = BuildBlock(
          row, b_rows, n, rows, own, [&](int r) { return owner[static_cast<size_t>(r)]; },
          sends[static_cast<size_t>(l)]);
      HeldRows held;
      held.lo = rows.front();
      held.ptr.clear();
      held.ptr.push_back(0);
      for (int r : rows) {
        std::vector<int> cols;
        std::vector<double> vals;
        row(r, cols, vals);
        held.cols.insert(held.cols.end(), cols.begin(), cols.end());
        held.vals.insert(held.vals.end(), vals.begin(), vals.end());
        held.ptr.push_back(static_cast<int64_t>(held.cols.size()));
        held.b.push_back(b[r]);
      }
      const auto lu = static_cast<uint32_t>(l), tu = static_cast<uint32_t>(tasks);
      const Block alone =
          HeldBlock(held, n, LocalStarts(n, tu, lu, starts[l], starts[l + 1]), lu, overlap);
      EXPECT_EQ(EncodeBlock(alone), EncodeBlock(whole))
          << "seed " << seed << ", task " << l << " of " << tasks << ", bandwidth " << bandwidth
          << ", overlap " << overlap;
    }
  }
}

TEST(CgRowMoveSourceTest, SymmetricBandwidthAgreesWithEveryEntry) {
  for (uint64_t seed = 1; seed <= 400; ++seed) {
    // A random pattern on 12 rows, made symmetric unless seed is odd.
    std::vector<Eigen::Triplet<double>> entries;
    uint64_t h = seed * 0x9e3779b97f4a7c15ULL;
    auto next = [&h] { return (h = h * 6364136223846793005ULL + 1442695040888963407ULL) >> 33; };
    for (int i = 0; i < 12; ++i) entries.emplace_back(i, i, 4.0);
    for (int k = 0; k < 10; ++k) {
      const int i = static_cast<int>(next() % 12), j = static_cast<int>(next() % 12);
      if (i == j) continue;
      entries.emplace_back(i, j, -1.0);
      if (seed % 2 == 0) entries.emplace_back(j, i, -1.0);
    }
    SpMat a(12, 12);
    a.setFromTriplets(entries.begin(), entries.end());
    a.makeCompressed();
    bool symmetric = true;
    int bandwidth = 0;
    for (int i = 0; i < 12; ++i) {
      for (int j = 0; j < 12; ++j) {
        const bool ij = a.coeff(i, j) != 0, ji = a.coeff(j, i) != 0;
        symmetric = symmetric && ij == ji;
        if (ij) bandwidth = std::max(bandwidth, std::abs(i - j));
      }
    }
    const auto got = SymmetricBandwidth(a);
    EXPECT_EQ(got.has_value(), symmetric) << "seed " << seed;
    if (got && symmetric) {
      EXPECT_EQ(*got, bandwidth) << "seed " << seed;
    }
  }
}

TEST(CgRowMoveSourceTest, MovesRoundTripAndDamagedOnesAreRefused) {
  RowMove m{100, 40, 43, {1, 2, 3}, 36, {4, 5, 6, 7}, {}};
  auto back = DecodeRowMove(EncodeRowMove(m), 100);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->lo, 40);
  EXPECT_EQ(back->x, m.x);
  EXPECT_EQ(back->halo_lo, 36);
  EXPECT_EQ(back->halo, m.halo);
  EXPECT_FALSE(DecodeRowMove(EncodeRowMove(m), 99).ok());  // another system
  const std::string bytes = EncodeRowMove(m);
  for (size_t cut = 0; cut < bytes.size(); ++cut)
    EXPECT_FALSE(DecodeRowMove(bytes.substr(0, cut), 100).ok());
  m.hi = 44;  // three values for four rows
  EXPECT_FALSE(DecodeRowMove(EncodeRowMove(m), 100).ok());
  EXPECT_EQ(LocalStarts(50, 4, 1, 10, 30), (std::vector<int>{0, 10, 30, 50, 50}));
}

}  // namespace
}  // namespace aiac::cg
