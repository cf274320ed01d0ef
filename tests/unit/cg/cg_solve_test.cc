// The CG app against Eigen: the inner block solve, blocks built by the spawner and by the
// daemons, and the whole multisplitting iteration run in-process (async and sync runners).
#include <gtest/gtest.h>

#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>
#include <atomic>
#include <cstring>
#include <mutex>
#include <numeric>
#include <random>
#include <set>
#include <thread>

#include "apps/cg/block_cg.h"
#include "apps/cg/block_direct.h"
#include "apps/cg/cg_app.h"
#include "apps/cg/matrix_market.h"
#include "apps/cg/partition.h"
#include "runtime/convergence.h"
#include "runtime/task_runner.h"
#include "support/test_support.h"
#include "unit/cg/job_params.h"
#include "unit/cg/sweep.h"

namespace aiac::cg {
namespace {

// Strongly unsymmetric, diagonally dominant: plain CG is not made for it.
SpMat UnsymmetricBlock(int n) {
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, 5);
    if (i + 1 < n) t.emplace_back(i, i + 1, -3.9);
    if (i >= 3) t.emplace_back(i, i - 3, 0.9);
  }
  SpMat a(n, n);
  a.setFromTriplets(t.begin(), t.end());
  return a;
}

TEST(BlockCgTest, SolvesABlockLikeEigen) {
  Problem p = Generate({2000, 6, 3});
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2000);
  BlockCg solver(p.a);
  auto out = solver.Solve(p.b, x, 1e-12, 1000);
  EXPECT_LT(out.relative_residual, 1e-12);
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(Eigen::SparseMatrix<double>(p.a));
  Eigen::VectorXd exact = direct.solve(p.b);
  EXPECT_LT((x - exact).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT((x - Eigen::VectorXd::Ones(2000)).cwiseAbs().maxCoeff(), 1e-9);
  // Warm start from the answer: no iteration needed.
  EXPECT_EQ(solver.Solve(p.b, x, 1e-12, 1000).iterations, 0);
}

TEST(BlockCgTest, UnsymmetricBlockIsSolvedToo) {
  const int n = 500;
  const SpMat a = UnsymmetricBlock(n);
  Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(n, -1, 1);
  BlockCg solver(a);
  EXPECT_FALSE(solver.symmetric());
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  auto out = solver.Solve(b, x, 1e-12, 10000);
  EXPECT_LT(out.relative_residual, 1e-10);
  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu{Eigen::SparseMatrix<double>(a)};
  EXPECT_LT((x - lu.solve(b)).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_TRUE(BlockCg(Generate({50, 2, 1}).a).symmetric());
}

// BlockCg takes a block for symmetric (CG) exactly when ||A - A^T||_F <= 1e-14 max(1, ||A||_F),
// computed here from a dense copy: on random patterns, symmetric or not, with mirrored values
// equal, off by rounding, or off by more.
TEST(BlockCgTest, SymmetryIsJudgedAsADenseTransposeWould) {
  for (uint64_t seed = 1; seed <= 600; ++seed) {
    std::mt19937_64 rng(seed);
    auto next = [&rng](uint64_t below) { return rng() % below; };
    const int n = 2 + static_cast<int>(next(12));
    const bool mirrored = next(4) != 0;
    const double skew = next(3) == 0 ? 0.0 : next(2) == 0 ? 1e-17 : 1e-6;
    Eigen::MatrixXd dense = Eigen::MatrixXd::Zero(n, n);
    for (int i = 0; i < n; ++i) dense(i, i) = 4;
    for (int k = 0; k < 2 * n; ++k) {
      const int i = static_cast<int>(next(n)), j = static_cast<int>(next(n));
      if (i == j) continue;
      dense(i, j) = -1.0 - static_cast<double>(next(10)) / 10;
      if (mirrored) dense(j, i) = dense(i, j) + (next(2) == 0 ? skew : 0.0);
    }
    const SpMat a = dense.sparseView();
    const bool expected = (dense - dense.transpose()).norm() <= 1e-14 * std::max(1.0, dense.norm());
    EXPECT_EQ(BlockCg(a).symmetric(), expected) << "seed " << seed << "\n" << dense;
  }
}

TEST(CgProblemTest, GeneratedMatrixIsSymmetricAndDiagonallyDominant) {
  Problem p = Generate({300, 5, 11});
  Eigen::SparseMatrix<double> a(p.a), at = a.transpose();
  EXPECT_EQ((a - at).norm(), 0);
  for (int i = 0; i < 300; ++i) {
    double off = 0;
    for (SpMat::InnerIterator it(p.a, i); it; ++it)
      if (it.col() != i) off += std::abs(it.value());
    EXPECT_GT(p.a.coeff(i, i), off);
  }
}

// Block l of a contiguous partition without overlap, from the whole matrix's rows and send
// lists, as the spawner builds it.
Block SpawnerBlock(const Problem& p, const RowPartition& part,
                   const std::vector<std::vector<Block::Send>>& sends, uint32_t l) {
  const RowFn full = MatrixRows(p.a);
  std::vector<double> b;
  std::vector<int> own;
  for (size_t k = 0; k < part.rows[l].size(); ++k) {
    b.push_back(p.b[part.rows[l][k]]);
    own.push_back(static_cast<int>(k));
  }
  return BuildBlock(
      full, b, static_cast<int>(p.a.rows()), part.rows[l], own,
      [&](int r) { return part.owner[static_cast<size_t>(r)]; }, sends[l]);
}

TEST(CgProblemTest, DaemonRebuildsTheSameBlockAsTheSpawner) {
  const GeneratedSpec spec{500, 7, 5};
  Problem p = Generate(spec);
  const auto starts = Partition(500, 4);
  const RowPartition part = ContiguousPartition(500, 4);
  const auto sends = SendLists(p.a, part.owner, part.rows);
  RowFn gen = [&](int i, std::vector<int>& c, std::vector<double>& v) {
    GeneratedRow(spec, i, c, v);
  };
  for (uint32_t l = 0; l < 4; ++l) {
    std::vector<double> b(p.b.data() + starts[l], p.b.data() + starts[l + 1]);
    std::vector<int> own(b.size());
    for (size_t k = 0; k < own.size(); ++k) own[k] = static_cast<int>(k);
    Block d = BuildBlock(
        gen, b, 500, part.rows[l], own,
        [&](int r) { return static_cast<uint32_t>(OwnerOf(starts, r)); },
        SymmetricSendLists(gen, 500, starts, l));
    EXPECT_EQ(EncodeBlock(SpawnerBlock(p, part, sends, l)), EncodeBlock(d)) << "block " << l;
  }
}

TEST(CgProblemTest, BlockEncodingRoundTripsAndRejectsCorruption) {
  Problem p = Generate({100, 3, 1});
  const RowPartition part = ContiguousPartition(100, 3);
  const auto sends = SendLists(p.a, part.owner, part.rows);
  const std::string bytes = EncodeBlock(SpawnerBlock(p, part, sends, 1));
  auto back = DecodeBlock(bytes);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(EncodeBlock(*back), bytes);
  EXPECT_FALSE(DecodeBlock(bytes.substr(0, bytes.size() - 3)).ok());
  EXPECT_FALSE(DecodeBlock(bytes + "x").ok());
  for (size_t at : {size_t{8}, size_t{20}, size_t{40}, bytes.size() / 2}) {
    std::string flipped = bytes;
    flipped[at] ^= 0x7f;
    // A flipped value may decode, as the value it now is; a flipped size or index must not
    // decode into something else: whatever is accepted encodes back to the very bytes read.
    auto maybe = DecodeBlock(flipped);
    if (maybe.ok()) {
      EXPECT_EQ(EncodeBlock(*maybe), flipped) << "flipped byte " << at;
    }
  }
  EXPECT_FALSE(DecodeBlock("").ok());
}

// The tasks of `params`' plan, made in-process; fewer, with a failure recorded, when one cannot be.
std::vector<std::unique_ptr<app::Task>> MakeTasks(CgApp& app, const app::JobParams& params,
                                                  uint32_t count) {
  std::vector<std::unique_ptr<app::Task>> tasks;
  auto plan = app.Prepare(params);
  if (!plan.ok()) {
    ADD_FAILURE() << plan.status().message();
    return tasks;
  }
  for (uint32_t l = 0; l < count; ++l) {
    auto t = app.MakeTask(params, l, plan->slices[l]);
    if (!t.ok()) {
      ADD_FAILURE() << t.status().message();
      return tasks;
    }
    tasks.push_back(std::move(*t));
  }
  return tasks;
}

// Runs every task's iterations round-robin in-process, delivering each value at once.
// `powers`, when given: the plan reweighed for daemons of those powers (App::Reweigh), and
// `owned` gets each task's row count.
app::GatherReport SolveInProcess(CgApp& app, const app::JobParams& params, int* sweeps,
                                 const std::vector<double>& powers = {},
                                 std::vector<int>* owned = nullptr) {
  auto plan = app.Prepare(params);
  EXPECT_TRUE(plan.ok()) << plan.status().message();
  if (!powers.empty()) {
    auto reweighed = app.Reweigh(params, powers);
    EXPECT_TRUE(reweighed.ok() && reweighed->has_value()) << reweighed.status().message();
    plan = std::move(**reweighed);
  }
  std::vector<std::unique_ptr<app::Task>> tasks;
  for (uint32_t l = 0; l < params.tasks; ++l) {
    auto t = app.MakeTask(params, l, plan->slices[l]);
    EXPECT_TRUE(t.ok()) << t.status().message();
    tasks.push_back(std::move(*t));
  }
  for (*sweeps = 0; *sweeps < 10000; ++*sweeps) {
    if (Sweep(tasks)) break;
  }
  std::vector<std::string> slices;
  for (auto& t : tasks) slices.push_back(t->ResultSlice());
  if (owned) {
    owned->clear();
    for (const auto& slice : slices)
      owned->push_back(
          static_cast<int>((slice.size() - 8) / sizeof(double)));  // after count, first row
  }
  auto report = app.Gather(params, slices);
  EXPECT_TRUE(report.ok());
  EXPECT_LT(report->residual, 1e-9);
  return *report;
}

TEST(CgAppTest, GeneratedSystemMatchesEigenDirectSolve) {
  CgApp app;
  int sweeps = 0;
  aiac::testing::TempDir dir;
  auto params = Params({{"n", "3000"},
                        {"bandwidth", "9"},
                        {"seed", "4"},
                        {"tolerance", "1e-11"},
                        {"output", "x.mtx"}},
                       5, dir.path());
  auto report = SolveInProcess(app, params, &sweeps);
  EXPECT_LT(sweeps, 10000);
  // Against Eigen's direct solve of the same system (whose exact solution is all ones).
  Problem p = Generate({3000, 9, 4});
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(Eigen::SparseMatrix<double>(p.a));
  Eigen::VectorXd exact = direct.solve(p.b);
  auto x = ReadMatrixMarketVector(dir / "x.mtx");
  ASSERT_TRUE(x.ok());
  EXPECT_LT((Eigen::Map<Eigen::VectorXd>(x->data(), 3000) - exact).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_LT(report.numbers["error_inf"], 1e-9);
}

// A 2-D Poisson problem (an M-matrix), numbered along the grid or scrambled, as a file.
std::string GridFile(int k, bool scrambled) {
  std::vector<int> at(static_cast<size_t>(k * k));
  std::iota(at.begin(), at.end(), 0);
  if (scrambled) std::shuffle(at.begin(), at.end(), std::mt19937(11));
  std::string text;
  int entries = 0;
  for (int i = 0; i < k; ++i) {
    for (int j = 0; j < k; ++j) {
      const int r = at[static_cast<size_t>(i * k + j)] + 1;
      auto add = [&](int c, const char* v) {
        text += std::to_string(r) + " " + std::to_string(at[static_cast<size_t>(c)] + 1) + " " + v +
                "\n";
        ++entries;
      };
      add(i * k + j, "4");
      if (i > 0) add((i - 1) * k + j, "-1");
      if (i + 1 < k) add((i + 1) * k + j, "-1");
      if (j > 0) add(i * k + j - 1, "-1");
      if (j + 1 < k) add(i * k + j + 1, "-1");
    }
  }
  return "%%MatrixMarket matrix coordinate real general\n" + std::to_string(k * k) + " " +
         std::to_string(k * k) + " " + std::to_string(entries) + "\n" + text;
}

// Overlap (partition.h): on an M-matrix, blocks extended by a layer of the matrix graph need
// fewer outer iterations than blocks without, and the answer is the same.
TEST(CgAppTest, OverlapTakesFewerOuterIterationsOnAnMMatrix) {
  aiac::testing::TempDir dir;
  aiac::testing::WriteFile(dir / "grid.mtx", GridFile(30, false));
  std::map<int, int> sweeps;
  std::map<int, double> residual;
  for (int overlap : {0, 1, 2}) {
    CgApp app;
    auto params = Params({{"matrix", "grid.mtx"},
                          {"tolerance", "1e-10"},
                          {"partition", "contiguous"},
                          {"overlap", std::to_string(overlap)},
                          {"matrix_cache", "false"}},
                         4, dir.path());
    residual[overlap] = SolveInProcess(app, params, &sweeps[overlap]).residual;
  }
  EXPECT_LT(sweeps[1], sweeps[0]) << sweeps[1] << " against " << sweeps[0];
  EXPECT_LT(sweeps[2], sweeps[1]) << sweeps[2] << " against " << sweeps[1];
  for (const auto& [overlap, r] : residual) EXPECT_LT(r, 1e-9) << overlap;
}

// A scrambled numbering: contiguous slices couple every block with every other on almost every
// row; METIS finds the grid again, and the blocks converge in far fewer outer iterations.
TEST(CgAppTest, MetisBlocksOfAScrambledGridConvergeInFewerIterations) {
  aiac::testing::TempDir dir;
  aiac::testing::WriteFile(dir / "grid.mtx", GridFile(24, true));
  std::map<std::string, int> sweeps;
  for (const char* partition : {"contiguous", "metis"}) {
    CgApp app;
    auto params = Params({{"matrix", "grid.mtx"},
                          {"tolerance", "1e-10"},
                          {"partition", partition},
                          {"overlap", "0"},
                          {"matrix_cache", "false"}},
                         4, dir.path());
    EXPECT_LT(SolveInProcess(app, params, &sweeps[partition]).residual, 1e-9) << partition;
  }
  EXPECT_LT(sweeps["metis"] * 2, sweeps["contiguous"])
      << sweeps["metis"] << " against " << sweeps["contiguous"];
}

// A random graph of n rows, each joined to 3 others at random (no numbering makes it banded), as
// a symmetric, diagonally dominant Matrix Market file.
std::string RandomGraphFile(int n) {
  std::mt19937 rng(5);
  std::set<std::pair<int, int>> edges;
  for (int i = 0; i < n; ++i) {
    for (int k = 0; k < 3; ++k) {
      const int j = static_cast<int>(rng() % static_cast<unsigned>(n));
      if (j != i) edges.insert({std::max(i, j), std::min(i, j)});
    }
  }
  std::string text;
  for (int i = 0; i < n; ++i) text += std::to_string(i + 1) + " " + std::to_string(i + 1) + " 8\n";
  for (const auto& [i, j] : edges)
    text += std::to_string(i + 1) + " " + std::to_string(j + 1) + " -1\n";
  return "%%MatrixMarket matrix coordinate real symmetric\n" + std::to_string(n) + " " +
         std::to_string(n) + " " + std::to_string(n + static_cast<int>(edges.size())) + "\n" + text;
}

// partition = "auto": slices when they already cut few couplings (a grid in its own numbering),
// slices of the rows in reverse Cuthill-McKee order when those do (the same grid scrambled; its
// rows can then move), METIS when neither does (a random graph).
TEST(CgAppTest, AutoPartitionRunsMetisOnlyWhereNoSlicesCutLittle) {
  aiac::testing::TempDir dir;
  // 150 x 150 on 3 tasks: slices cut 2 x 2 x 150 of 112,000 entries (0.5 %); 60 x 60, 240 of
  // 17,760 (1.35 %, as slabs of a 3-D grid cut: slices still beat METIS's blocks there).
  aiac::testing::WriteFile(dir / "grid.mtx", GridFile(150, false));
  aiac::testing::WriteFile(dir / "small.mtx", GridFile(60, false));
  aiac::testing::WriteFile(dir / "scrambled.mtx", GridFile(150, true));
  aiac::testing::WriteFile(dir / "random.mtx", RandomGraphFile(3000));
  auto notes = [&](const char* file, bool movable) {
    CgApp app;
    // (One level: the rows of a two-level job stay in their blocks.)
    auto plan = app.Prepare(
        Params({{"matrix", file}, {"matrix_cache", "false"}, {"coarse", "none"}}, 3, dir.path()));
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    EXPECT_EQ(plan->items_in_chain, movable) << file;
    std::string all;
    for (const auto& n : plan->notes) all += n + "\n";
    return all;
  };
  const std::string grid = notes("grid.mtx", true), scrambled = notes("scrambled.mtx", true),
                    random = notes("random.mtx", false), small = notes("small.mtx", true);
  EXPECT_NE(small.find("slices of consecutive rows cut 1.35 %"), std::string::npos) << small;
  EXPECT_NE(grid.find("no METIS partition needed"), std::string::npos) << grid;
  EXPECT_NE(grid.find("contiguous partition into 3 blocks"), std::string::npos) << grid;
  EXPECT_EQ(grid.find("Cuthill-McKee"), std::string::npos) << grid;
  EXPECT_NE(scrambled.find("once renumbered in reverse Cuthill-McKee order (bandwidth"),
            std::string::npos)
      << scrambled;
  EXPECT_NE(scrambled.find("contiguous partition into 3 blocks"), std::string::npos) << scrambled;
  EXPECT_NE(random.find("METIS partition into 3 blocks"), std::string::npos) << random;
}

// A scrambled grid solved in slices of its renumbered rows: the answer comes back in the file's
// numbering (b = A x for x = 1, 2, ..., n, so a row put back in the wrong place shows), and
// rows moved between the renumbered slices keep it right.
TEST(CgAppTest, RenumberedRowsSolveAndComeBackInTheFilesOrder) {
  aiac::testing::TempDir dir;
  const std::string text = GridFile(150, true);  // (a smaller grid's slices cut over 1 %: METIS)
  aiac::testing::WriteFile(dir / "grid.mtx", text);
  auto a = ReadMatrixMarket(dir / "grid.mtx");
  ASSERT_TRUE(a.ok());
  const int n = a->rows;
  SpMat m(n, n);
  std::vector<Eigen::Triplet<double>> entries;
  for (const auto& e : a->entries) entries.emplace_back(e.row, e.col, e.value);
  m.setFromTriplets(entries.begin(), entries.end());
  const Eigen::VectorXd x_true = Eigen::VectorXd::LinSpaced(n, 1, n);
  const Eigen::VectorXd b = m * x_true;
  ASSERT_OK(WriteMatrixMarketVector(dir / "b.mtx", std::vector<double>(b.data(), b.data() + n)));
  CgApp app;
  auto params = Params({{"matrix", "grid.mtx"},
                        {"rhs", "b.mtx"},
                        {"tolerance", "1e-12"},
                        {"output", "x.mtx"},
                        {"overlap", "2"},
                        {"matrix_cache", "false"},
                        {"coarse", "none"}},  // (rows that may move: one level)
                       3, dir.path());
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_TRUE(plan->items_in_chain);
  std::vector<std::unique_ptr<app::Task>> tasks;
  for (uint32_t l = 0; l < 3; ++l) {
    auto t = app.MakeTask(params, l, plan->slices[l]);
    ASSERT_TRUE(t.ok()) << t.status().message();
    tasks.push_back(std::move(*t));
  }
  for (int k = 0; k < 5; ++k) Sweep(tasks);
  // A tenth of task 1's rows to task 2, mid-solve.
  const double per_row = tasks[1]->RemainingWork() / static_cast<double>(tasks[1]->ItemCount());
  auto moved = tasks[1]->ExportItems(0.1 * static_cast<double>(tasks[1]->ItemCount()) * per_row, 2);
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  ASSERT_OK(tasks[2]->ImportItems(*moved));
  int sweeps = 0;
  while (!Sweep(tasks) && ++sweeps < 10000) {
  }
  std::vector<std::string> slices;
  for (auto& t : tasks) slices.push_back(t->ResultSlice());
  auto report = app.Gather(params, slices);
  ASSERT_TRUE(report.ok()) << report.status().message();
  EXPECT_EQ(report->status, app::GatherStatus::kConverged);
  auto x = ReadMatrixMarketVector(dir / "x.mtx");
  ASSERT_TRUE(x.ok());
  ASSERT_EQ(x->size(), static_cast<size_t>(n));
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR((*x)[static_cast<size_t>(i)], x_true[i], 1e-6 * x_true[i]) << "row " << i + 1;
}

// A generated system split by METIS or with overlap is built by the spawner and shipped, and
// reaches the same answer as the blocks the daemons build for themselves.
TEST(CgAppTest, GeneratedSystemsSplitOtherwiseAreShippedAndAgree) {
  for (const auto& [partition, overlap] :
       {std::pair{"contiguous", "0"}, {"metis", "0"}, {"contiguous", "2"}}) {
    CgApp app;
    auto params = Params({{"n", "2000"},
                          {"bandwidth", "5"},
                          {"tolerance", "1e-11"},
                          {"partition", partition},
                          {"overlap", overlap}},
                         3);
    auto plan = app.Prepare(params);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    const bool shipped = !plan->slices[0].empty();
    EXPECT_EQ(shipped, std::string(partition) != "contiguous" || std::string(overlap) != "0")
        << partition << overlap;
    int sweeps = 0;
    auto report = SolveInProcess(app, params, &sweeps);
    EXPECT_LT(report.numbers["error_inf"], 1e-9) << partition << " overlap " << overlap;
  }
}

// Daemons of unequal power (App::Reweigh): each task's rows follow its daemon's power, by METIS
// target weights, by uneven slices of a file, and by uneven slices of a generated system whose
// daemons build their own blocks from the starts they are sent; the answers stay right.
TEST(CgAppTest, ReweighedBlocksFollowThePowersAndStillSolve) {
  aiac::testing::TempDir dir;
  aiac::testing::WriteFile(dir / "grid.mtx", GridFile(40, true));
  const std::vector<double> powers{1, 2, 1, 4};
  const std::vector<std::map<std::string, std::string>> jobs{
      {{"matrix", "grid.mtx"}, {"partition", "metis"}, {"matrix_cache", "false"}},
      {{"matrix", "grid.mtx"},
       {"partition", "contiguous"},
       {"overlap", "1"},
       {"matrix_cache", "false"}},
      {{"n", "4000"}, {"bandwidth", "5"}},  // daemons build their blocks
  };
  for (auto values : jobs) {
    values["tolerance"] = "1e-11";
    const auto params = Params(values, 4, dir.path());
    SCOPED_TRACE(values.count("n") ? "generated" : values["partition"]);
    CgApp app;
    int sweeps = 0;
    std::vector<int> owned;
    auto report = SolveInProcess(app, params, &sweeps, powers, &owned);
    EXPECT_LT(report.residual, 1e-9);
    ASSERT_EQ(owned.size(), 4u);
    const double total = std::accumulate(owned.begin(), owned.end(), 0.0);
    for (size_t l = 0; l < 4; ++l)
      EXPECT_NEAR(owned[l] / total, powers[l] / 8, 0.1 * powers[l] / 8) << "task " << l;
  }
  // The generated system's daemons were sent their starts, not a block.
  CgApp app;
  const auto params = Params({{"n", "4000"}, {"bandwidth", "5"}}, 4);
  ASSERT_TRUE(app.Prepare(params).ok());
  auto plan = app.Reweigh(params, powers);
  ASSERT_TRUE(plan.ok() && plan->has_value());
  EXPECT_EQ((**plan).slices[0].size(), 4 + 5 * sizeof(int32_t));
  // Powers that are no powers are refused with the reason.
  EXPECT_FALSE(app.Reweigh(params, {1, 2, 0, 1}).ok());
  EXPECT_FALSE(app.Reweigh(params, {1, 2}).ok());
  // A daemon given starts that do not split its system refuses them.
  EXPECT_FALSE(app.MakeTask(params, 0, EncodeSliceStarts({0, 10, 20, 4001, 4000})).ok());
}

TEST(CgAppTest, MatrixMarketGeneralSystemMatchesEigen) {
  aiac::testing::TempDir dir;
  // An unsymmetric, diagonally dominant system with a given right-hand side.
  const int n = 400;
  std::string a = "%%MatrixMarket matrix coordinate real general\n" + std::to_string(n) + " " +
                  std::to_string(n) + " " + std::to_string(3 * n - 2) + "\n";
  Eigen::SparseMatrix<double> dense_a(n, n);
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    a += std::to_string(i + 1) + " " + std::to_string(i + 1) + " 4\n";
    t.emplace_back(i, i, 4);
    if (i + 1 < n) {
      a += std::to_string(i + 1) + " " + std::to_string(i + 2) + " -1.5\n";
      t.emplace_back(i, i + 1, -1.5);
      a += std::to_string(i + 2) + " " + std::to_string(i + 1) + " -0.5\n";
      t.emplace_back(i + 1, i, -0.5);
    }
  }
  dense_a.setFromTriplets(t.begin(), t.end());
  aiac::testing::WriteFile(dir / "a.mtx", a);
  std::vector<double> b(n);
  for (int i = 0; i < n; ++i) b[i] = std::sin(i);
  ASSERT_OK(WriteMatrixMarketVector(dir / "b.mtx", b));
  CgApp app;
  auto params =
      Params({{"matrix", "a.mtx"}, {"rhs", "b.mtx"}, {"tolerance", "1e-12"}, {"output", "x.mtx"}},
             3, dir.path());
  int sweeps = 0;
  SolveInProcess(app, params, &sweeps);
  auto x = ReadMatrixMarketVector(dir / "x.mtx");
  ASSERT_TRUE(x.ok());
  Eigen::SparseLU<Eigen::SparseMatrix<double>> lu(dense_a);
  Eigen::VectorXd exact = lu.solve(Eigen::Map<Eigen::VectorXd>(b.data(), n));
  EXPECT_LT((Eigen::Map<Eigen::VectorXd>(x->data(), n) - exact).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(CgAppTest, BadInputIsOneLineBeforeAnyDaemon) {
  aiac::testing::TempDir dir;
  aiac::testing::WriteFile(dir / "rect.mtx",
                           "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n");
  aiac::testing::WriteFile(dir / "zero.mtx",
                           "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 1 1\n");
  aiac::testing::WriteFile(dir / "ok.mtx",
                           "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n2 2 1\n");
  aiac::testing::WriteFile(dir / "b3.mtx",
                           "%%MatrixMarket matrix array real general\n3 1\n1\n1\n1\n");
  const std::vector<std::pair<app::JobParams, std::string>> cases = {
      {Params({{"matrix", "rect.mtx"}}, 1, dir.path()), "is 2 x 3, not square"},
      {Params({{"matrix", "zero.mtx"}}, 1, dir.path()),
       "zero on the diagonal at row 2, and the matrix is structurally singular"},
      {Params({{"matrix", "ok.mtx"}}, 3, dir.path()), "3 tasks for 2 rows"},
      {Params({{"matrix", "ok.mtx"}, {"rhs", "b3.mtx"}}, 1, dir.path()),
       "vector of 3 rows for a matrix of 2"},
      {Params({{"matrix", "missing.mtx"}}, 1, dir.path()), "cannot read matrix file"},
      {Params({{"n", "10"}, {"matrix", "ok.mtx"}}, 1), "either params.matrix"},
      {Params({}, 1), "either params.matrix"},
      {Params({{"n", "10"}, {"colour", "red"}}, 1), "unknown parameter params.colour"},
      {Params({{"n", "10"}, {"tolerence", "1e-9"}}, 1),
       "unknown parameter params.tolerence (did you mean 'tolerance'?)"},
      {Params({{"n", "-4"}}, 1), "params.n must be in"},
      {Params({{"n", "10"}, {"bandwidth", "10"}}, 1), "bandwidth must be in 0..n-1"},
      {Params({{"n", "10"}, {"tolerance", "abc"}}, 1), "tolerance must be a number"},
      {Params({{"n", "10"}}, 11), "11 tasks for 10 rows"},
  };
  for (const auto& [params, message] : cases) {
    CgApp app;
    auto plan = app.Prepare(params);
    ASSERT_FALSE(plan.ok()) << message;
    EXPECT_NE(plan.status().message().find(message), std::string::npos) << plan.status().message();
    EXPECT_EQ(plan.status().message().find('\n'), std::string::npos);
  }
}

TEST(BlockCgTest, AnIndefiniteBlockGoesOnWithMinres) {
  // Symmetric with a positive diagonal, eigenvalues 3 and -1: CG meets p'Ap < 0 at once, and
  // used to end the task there ("CG broke down").
  SpMat a(2, 2);
  std::vector<Eigen::Triplet<double>> t = {{0, 0, 1}, {0, 1, 2}, {1, 0, 2}, {1, 1, 1}};
  a.setFromTriplets(t.begin(), t.end());
  BlockCg solver(a);
  ASSERT_TRUE(solver.symmetric());
  EXPECT_STREQ(solver.method(), "CG");
  Eigen::VectorXd x = Eigen::VectorXd::Zero(2);
  Eigen::VectorXd b(2);
  b << 1, -1;
  auto out = solver.Solve(b, x, 1e-12, 100);
  EXPECT_EQ(out.breakdown, "");
  EXPECT_LT(out.relative_residual, 1e-10);
  EXPECT_STREQ(solver.method(), "MINRES");
  EXPECT_NEAR(x[0], -1, 1e-10);  // [[1, 2], [2, 1]] x = (1, -1): x = (-1, 1)
  EXPECT_NEAR(x[1], 1, 1e-10);
}

TEST(BlockCgTest, NegativeDefiniteAndSingularBlocksAreSolvedByMinres) {
  // -tridiag(-1, 4, -1): a negative diagonal, so MINRES from the start.
  SpMat neg = -GridLaplacian(30, 1);
  BlockCg solver(neg);
  EXPECT_STREQ(solver.method(), "MINRES");
  Eigen::VectorXd x = Eigen::VectorXd::Zero(30), b = neg * Eigen::VectorXd::Ones(30);
  auto out = solver.Solve(b, x, 1e-12, 500);
  EXPECT_EQ(out.breakdown, "");
  EXPECT_LT((x - Eigen::VectorXd::Ones(30)).cwiseAbs().maxCoeff(), 1e-9);
  // Singular and consistent ([[1, 1], [1, 1]] beside -2): a solution all the same.
  SpMat sing(3, 3);
  std::vector<Eigen::Triplet<double>> t = {{0, 0, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 1}, {2, 2, -2}};
  sing.setFromTriplets(t.begin(), t.end());
  BlockCg s2(sing);
  Eigen::VectorXd y = Eigen::VectorXd::Zero(3), c = sing * Eigen::VectorXd::Ones(3);
  out = s2.Solve(c, y, 1e-12, 100);
  EXPECT_EQ(out.breakdown, "");
  EXPECT_LT((c - sing * y).norm(), 1e-10);
}

TEST(BlockDirectTest, NotPositiveDefiniteGoesToLuAndSingularToLeastSquares) {
  // Indefinite, nonsingular: LU.
  SpMat ind(2, 2);
  std::vector<Eigen::Triplet<double>> t = {{0, 0, 1}, {0, 1, 2}, {1, 0, 2}, {1, 1, 1}};
  ind.setFromTriplets(t.begin(), t.end());
  auto lu = BlockDirect::Factor(ind, true);
  ASSERT_TRUE(lu.ok()) << lu.status().message();
  EXPECT_STREQ((*lu)->method(), "LU");
  Eigen::VectorXd x(2), b(2);
  b << 1, -1;
  EXPECT_EQ((*lu)->Solve(b, x).breakdown, "");
  EXPECT_NEAR(x[0], -1, 1e-12);
  // Singular: least squares, exact on a consistent right-hand side; and one the block cannot
  // meet gets its best fit, not a failure.
  SpMat sing(3, 3);
  t = {{0, 0, 1}, {0, 1, 1}, {1, 0, 1}, {1, 1, 1}, {2, 2, -2}};
  sing.setFromTriplets(t.begin(), t.end());
  auto qr = BlockDirect::Factor(sing, true);
  ASSERT_TRUE(qr.ok()) << qr.status().message();
  EXPECT_STREQ((*qr)->method(), "least-squares QR");
  Eigen::VectorXd y(3), c = sing * Eigen::VectorXd::Ones(3);
  auto out = (*qr)->Solve(c, y);
  EXPECT_EQ(out.breakdown, "");
  EXPECT_LT(out.relative_residual, 1e-12);
  Eigen::VectorXd d(3);
  d << 1, 3, 4;  // rows 1 and 2 disagree: the best is x1 + x2 = 2
  out = (*qr)->Solve(d, y);
  EXPECT_EQ(out.breakdown, "");
  EXPECT_NEAR(y[0] + y[1], 2, 1e-12);
  EXPECT_NEAR(y[2], -2, 1e-12);
  // Negative definite: LU too, from the band path and from CHOLMOD's (a 2-D grid is neither
  // banded nor a profile in its natural order).
  for (const SpMat& negative : {SpMat(-GridLaplacian(30, 1)), SpMat(-GridLaplacian(40, 40))}) {
    auto neg = BlockDirect::Factor(negative, true);
    ASSERT_TRUE(neg.ok()) << neg.status().message();
    EXPECT_STREQ((*neg)->method(), "LU");
    Eigen::VectorXd z(negative.rows()), e = negative * Eigen::VectorXd::Ones(negative.rows());
    EXPECT_LT((*neg)->Solve(e, z).relative_residual, 1e-12);
  }
}

// Two uncoupled indefinite blocks: [[1, 2], [2, 1]] twice, b = (1, -1, 1, -1). The blocks used
// to end the task with "inner solver breakdown": they are factored by LU now, and the task says
// so in its notes.
TEST(CgAppTest, AnIndefiniteBlockIsFactoredByLuAndItsTaskSaysSo) {
  testing::TempDir dir;
  testing::WriteFile(dir.path() + "/A.mtx",
                     "%%MatrixMarket matrix coordinate real general\n4 4 8\n"
                     "1 1 1\n1 2 2\n2 1 2\n2 2 1\n3 3 1\n3 4 2\n4 3 2\n4 4 1\n");
  testing::WriteFile(dir.path() + "/b.mtx",
                     "%%MatrixMarket matrix array real general\n4 1\n1\n-1\n1\n-1\n");
  CgApp app;
  auto params = Params({{"matrix", "A.mtx"}, {"rhs", "b.mtx"}}, 2, dir.path());
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto task = app.MakeTask(params, 0, plan->slices[0]);
  ASSERT_TRUE(task.ok()) << task.status().message();
  EXPECT_NE((*task)->Notes().find("rows 1..2: not positive definite, factored by LU"),
            std::string::npos)
      << (*task)->Notes();
  auto step = (*task)->Iterate();
  ASSERT_TRUE(step.ok()) << step.status().message();
}

TEST(BlockDirectTest, FactorsOnceAndSolvesLikeEigen) {
  Problem p = Generate({3000, 8, 2});
  auto d = BlockDirect::Factor(p.a, true);
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_GE((*d)->factor_nonzeros(), 3000);
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> ldlt(Eigen::SparseMatrix<double>(p.a));
  // The same factor for every right-hand side, as the outer iterations use it.
  for (int k = 0; k < 3; ++k) {
    Eigen::VectorXd b = p.b + Eigen::VectorXd::LinSpaced(3000, -k, k);
    Eigen::VectorXd x = Eigen::VectorXd::Zero(3000);
    auto out = (*d)->Solve(b, x);
    EXPECT_EQ(out.breakdown, "");
    EXPECT_LT(out.relative_residual, 1e-13);
    EXPECT_LT((x - ldlt.solve(b)).cwiseAbs().maxCoeff(), 1e-10);
  }
}

// A tridiagonal block whose last row also reaches back to the first column (and the first row to
// the last): a profile (its envelope about 3n) that is not a band (its bandwidth is n - 1).
SpMat ProfileBlock(int n) {
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, 4.0);
    if (i > 0) t.emplace_back(i, i - 1, -1.0), t.emplace_back(i - 1, i, -1.0);
  }
  t.emplace_back(n - 1, 0, -0.5);
  t.emplace_back(0, n - 1, -0.5);
  SpMat a(n, n);
  a.setFromTriplets(t.begin(), t.end());
  return a;
}

// A banded block is factored in its own order (its fill cannot exceed its envelope) by LAPACK's
// band Cholesky, a profile block in its own order by SimplicialLLT, a 2-D grid with AMD (in its
// own order it would fill its whole band of width sqrt(n)); all solve, as Eigen's LDLT does.
TEST(BlockDirectTest, BandedBlocksKeepTheirOrderOthersAreReorderedByAmd) {
  Problem banded = Generate({4000, 6, 3});
  EXPECT_LE(BlockDirect::LowerEnvelope(banded.a), 4000.0 * 7);
  EXPECT_EQ(BlockDirect::LowerBandwidth(banded.a), 6);
  const SpMat profile = ProfileBlock(1000);
  EXPECT_EQ(BlockDirect::LowerBandwidth(profile), 999);
  EXPECT_LE(BlockDirect::LowerEnvelope(profile), 3000);
  const int n = 60 * 60;
  const SpMat grid = GridLaplacian(60, 60);
  EXPECT_GT(BlockDirect::LowerEnvelope(grid), 10.0 * (grid.nonZeros() + n) / 2);
  struct Case {
    const SpMat* a;
    std::string ordering;
    bool banded;
  };
  for (const Case& c : {Case{&banded.a, "natural", true}, Case{&profile, "natural", false},
                        Case{&grid, "amd", false}}) {
    auto d = BlockDirect::Factor(*c.a, true);
    ASSERT_TRUE(d.ok()) << d.status().message();
    EXPECT_EQ((*d)->ordering(), c.ordering);
    EXPECT_EQ((*d)->banded(), c.banded) << c.ordering;
    const Eigen::SparseMatrix<double> columns = *c.a;
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> reference(columns);
    // Twice with the same factor.
    Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(c.a->rows(), -1, 2), x;
    for (int k = 0; k < 2; ++k, b *= -3) {
      auto out = (*d)->Solve(b, x);
      EXPECT_EQ(out.breakdown, "");
      EXPECT_LT(out.relative_residual, 1e-12) << c.ordering;
      EXPECT_LT((x - reference.solve(b)).cwiseAbs().maxCoeff(), 1e-10) << c.ordering;
    }
    // Many right-hand sides at once (the coarse space's), whichever factor holds the block.
    Eigen::MatrixXd many(c.a->rows(), 3), xs;
    for (Eigen::Index j = 0; j < many.cols(); ++j)
      many.col(j) = Eigen::VectorXd::LinSpaced(c.a->rows(), -1.0 * j, 1.0 + j);
    EXPECT_EQ((*d)->SolveMany(many, xs).breakdown, "");
    ASSERT_EQ(xs.cols(), many.cols());
    EXPECT_LT((xs - Eigen::MatrixXd(reference.solve(many))).cwiseAbs().maxCoeff(), 1e-10)
        << c.ordering;
  }
  // The band factor holds the band: n x (bandwidth + 1).
  auto band = BlockDirect::Factor(banded.a, true);
  ASSERT_TRUE(band.ok());
  EXPECT_EQ((*band)->factor_nonzeros(), 4000.0 * 7);
  // AMD keeps the grid's factor far below its envelope.
  auto amd = BlockDirect::Factor(grid, true);
  ASSERT_TRUE(amd.ok());
  EXPECT_LT((*amd)->factor_nonzeros(), BlockDirect::LowerEnvelope(grid) / 2);
}

// The fill the spawner predicts is the one the factor would have: a banded or profile block's
// at most 2 (factored as it is), a grid's CHOLMOD's AMD count, well above for a 3-D grid.
TEST(BlockDirectTest, PredictedFillFollowsTheFactorsPath) {
  Problem banded = Generate({4000, 6, 3});
  auto band = BlockDirect::PredictedFill(banded.a);
  ASSERT_TRUE(band.ok());
  EXPECT_DOUBLE_EQ(*band, 4000.0 * 7 / LowerNonzeros(banded.a));
  auto profile = BlockDirect::PredictedFill(ProfileBlock(1000));
  ASSERT_TRUE(profile.ok());
  EXPECT_LE(*profile, 2);
  const SpMat flat = GridLaplacian(60, 60), deep = GridLaplacian3d(20);
  for (const SpMat* a : {&flat, &deep}) {
    auto predicted = BlockDirect::PredictedFill(*a);
    auto amd = CholmodFactor::AmdFill(*a);
    ASSERT_TRUE(predicted.ok() && amd.ok());
    EXPECT_EQ(*predicted, *amd);
  }
  EXPECT_GT(*BlockDirect::PredictedFill(deep), 2 * *BlockDirect::PredictedFill(flat));
}

TEST(BlockDirectTest, UnsymmetricBlocksAreFactoredByLuAndHardOnesNotRefused) {
  const int n = 300;
  const SpMat a = UnsymmetricBlock(n);
  auto lu = BlockDirect::Factor(a, false);
  ASSERT_TRUE(lu.ok()) << lu.status().message();
  EXPECT_STREQ((*lu)->ordering(), "umfpack");
  EXPECT_GT((*lu)->factor_nonzeros(), static_cast<double>(a.nonZeros()));
  Eigen::VectorXd b = Eigen::VectorXd::LinSpaced(n, -1, 1), x(n);
  // Twice with the same factor, against Eigen's SparseLU of the same block.
  const Eigen::SparseMatrix<double> columns = a;
  Eigen::SparseLU<Eigen::SparseMatrix<double>> reference(columns);
  for (int k = 0; k < 2; ++k) {
    EXPECT_LT((*lu)->Solve(b, x).relative_residual, 1e-12);
    EXPECT_LT((x - reference.solve(b)).cwiseAbs().maxCoeff(), 1e-10);
    b *= -2;
  }
  // A banded block made indefinite far from its first rows: LAPACK's band Cholesky fails on it,
  // LU takes it.
  Problem banded = Generate({2000, 4, 5});
  banded.a.coeffRef(1500, 1500) = -1;
  auto indefinite = BlockDirect::Factor(banded.a, true);
  ASSERT_TRUE(indefinite.ok()) << indefinite.status().message();
  EXPECT_STREQ((*indefinite)->method(), "LU");
  Eigen::VectorXd y(2000);
  EXPECT_LT((*indefinite)->Solve(banded.b, y).relative_residual, 1e-12);
  // Singular and unsymmetric ([[1, 2], [2, 4]] as a general block): least squares.
  SpMat singular(2, 2);
  std::vector<Eigen::Triplet<double>> v = {{0, 0, 1}, {0, 1, 2}, {1, 0, 2}, {1, 1, 4}};
  singular.setFromTriplets(v.begin(), v.end());
  auto qr = BlockDirect::Factor(singular, false);
  ASSERT_TRUE(qr.ok()) << qr.status().message();
  EXPECT_STREQ((*qr)->method(), "least-squares QR");
  Eigen::VectorXd c(2), z(2);
  c << 3, 6;  // consistent: (1, 1) solves it
  EXPECT_LT((*qr)->Solve(c, z).relative_residual, 1e-12);
}

// inner = "direct" and inner = "cg" reach the same answer; an indefinite block is factored by LU
// (it was refused when the task was built), and the task says so.
TEST(CgAppTest, DirectAndIterativeInnerSolvesAgree) {
  CgApp app;
  std::map<std::string, double> error;
  for (const std::string inner : {"direct", "cg", "auto", "cg-amg"}) {
    auto params = Params({{"n", "3000"},
                          {"bandwidth", "9"},
                          {"seed", "4"},
                          {"tolerance", "1e-11"},
                          {"inner", inner.substr(0, inner.find('-'))},
                          {"inner_preconditioner", inner == "cg-amg" ? "amg" : "auto"}},
                         4);
    int sweeps = 0;
    auto report = SolveInProcess(app, params, &sweeps);
    error[inner] = report.numbers["error_inf"];
    EXPECT_LT(error[inner], 1e-9) << inner;
  }
  testing::TempDir dir;
  testing::WriteFile(dir.path() + "/A.mtx",
                     "%%MatrixMarket matrix coordinate real general\n4 4 8\n"
                     "1 1 1\n1 2 2\n2 1 2\n2 2 1\n3 3 1\n3 4 2\n4 3 2\n4 4 1\n");
  testing::WriteFile(dir.path() + "/b.mtx",
                     "%%MatrixMarket matrix array real general\n4 1\n1\n-1\n1\n-1\n");
  auto direct = Params({{"matrix", "A.mtx"}, {"rhs", "b.mtx"}, {"inner", "direct"}}, 2, dir.path());
  auto plan = app.Prepare(direct);
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  auto task = app.MakeTask(direct, 0, plan->slices[0]);
  ASSERT_TRUE(task.ok()) << task.status().message();
  EXPECT_NE((*task)->Notes().find("factored by LU"), std::string::npos) << (*task)->Notes();
  auto bad = Params({{"n", "100"}, {"inner", "lu"}}, 2);
  EXPECT_NE(app.Prepare(bad).status().message().find("params.inner must be"), std::string::npos);
  auto ilu = Params({{"n", "100"}, {"inner_preconditioner", "ilu"}}, 2);
  EXPECT_EQ(app.Prepare(ilu).status().message(),
            "cg: params.inner_preconditioner must be \"auto\", \"jacobi\", \"ic\" or \"amg\"");
  for (const char* reduction : {"1", "-0.1", "fast"}) {
    auto wrong = Params({{"n", "100"}, {"inner_reduction", reduction}}, 2);
    EXPECT_EQ(app.Prepare(wrong).status().message().substr(0, 31),
              "cg: params.inner_reduction must")
        << reduction;
  }
}

// inner = "auto" iterates a block that would fill more than 8x with the multigrid cycle, but a
// block with a diagonal entry that is not positive (not positive definite: neither CG nor the
// cycle applies) is factored, by LU, up to 30x as before the cycle.
TEST(CgAppTest, AutoFactorsABlockThatIsNotPositiveDefiniteUpToItsOwnFill) {
  testing::TempDir dir;
  ASSERT_OK(WriteMatrixMarketMatrix(dir.path() + "/pos.mtx", GridLaplacian3d(14), true));
  ASSERT_OK(WriteMatrixMarketMatrix(dir.path() + "/neg.mtx", -GridLaplacian3d(14), true));
  CgApp app;
  std::map<std::string, std::string> notes;
  for (const char* matrix : {"pos.mtx", "neg.mtx"}) {
    auto params = Params(
        {{"matrix", matrix}, {"coarse", "none"}, {"overlap", "1"}, {"matrix_cache", "false"}}, 2,
        dir.path());
    auto plan = app.Prepare(params);
    ASSERT_TRUE(plan.ok()) << plan.status().message();
    auto task = app.MakeTask(params, 0, plan->slices[0]);
    ASSERT_TRUE(task.ok()) << task.status().message();
    notes[matrix] = (*task)->Notes();
  }
  EXPECT_NE(notes["pos.mtx"].find("(more than 8x); solved by an inner CG with AMG"),
            std::string::npos)
      << notes["pos.mtx"];
  EXPECT_NE(notes["neg.mtx"].find("not positive definite, factored by LU"), std::string::npos)
      << notes["neg.mtx"];
}

// The work a task reports is rows x what its solves cost: one per row with the factor, the inner
// CG's iterations and the solve's own passes over the block otherwise, so that a task's speed
// (work over time) is its host's whichever inputs it solved for. The remaining work weighs the rows
// the same way, so that the work asked of an export still turns into the rows it was worth.
TEST(CgAppTest, WorkCountsTheInnerIterationsOfEachSolve) {
  CgApp app;
  std::map<std::string, double> per_row_done;
  for (const char* inner : {"direct", "cg"}) {
    auto params = Params({{"n", "4000"},
                          {"bandwidth", "9"},
                          {"seed", "4"},
                          {"tolerance", "1e-10"},
                          {"coarse", "none"},
                          {"inner", inner}},
                         2);
    auto tasks = MakeTasks(app, params, 2);
    ASSERT_EQ(tasks.size(), 2u);
    const auto rows = static_cast<double>(tasks[0]->ItemCount());
    ASSERT_GT(rows, 0);
    ASSERT_TRUE(tasks[0]->Iterate().ok());
    per_row_done[inner] = tasks[0]->WorkDone() / rows;
    // The remaining work per row is the horizon times the mean cost of a solve so far.
    const double per_row_left = tasks[0]->RemainingWork() / rows;
    EXPECT_GE(per_row_left, per_row_done[inner]) << inner;
    auto out = tasks[0]->ExportItems(per_row_left * 100, 1);
    ASSERT_TRUE(out.ok()) << out.status().message();
    ASSERT_OK(tasks[1]->ImportItems(*out));
    EXPECT_NEAR(rows - static_cast<double>(tasks[0]->ItemCount()), 100, 1) << inner;
  }
  EXPECT_EQ(per_row_done["direct"], 1);
  EXPECT_GT(per_row_done["cg"], 5);  // a cold inner CG to 1e-10 takes many iterations
}

// A warm-started solve near the end takes a few inner iterations, but its right-hand side,
// initial residual and change still pass over the block: it costs them too
// (CgTask::kSolveOverhead, 4 inner iterations; here the last solves took 2), else the task's
// speed would fall by half as it converges, as if its host had slowed.
TEST(CgAppTest, ASolveNearTheEndCostsItsPassesOverTheBlock) {
  CgApp app;
  auto params = Params({{"n", "4000"},
                        {"bandwidth", "9"},
                        {"seed", "4"},
                        {"tolerance", "1e-10"},
                        {"coarse", "none"},
                        {"inner", "cg"}},
                       2);
  auto tasks = MakeTasks(app, params, 2);
  ASSERT_EQ(tasks.size(), 2u);
  double least = 1e300, most = 0;
  for (int sweep = 0; sweep < 200; ++sweep) {
    for (uint32_t l = 0; l < 2; ++l) {
      const double before = tasks[l]->WorkDone();
      ASSERT_TRUE(tasks[l]->Iterate().ok());
      const double per_row =
          (tasks[l]->WorkDone() - before) / static_cast<double>(tasks[l]->ItemCount());
      if (per_row > 0) {
        least = std::min(least, per_row);
        most = std::max(most, per_row);
      }
      for (auto& o : tasks[l]->TakeOutgoing()) ASSERT_OK(tasks[o.to]->Absorb(l, o.bytes));
    }
  }
  EXPECT_GE(least, 4);
  EXPECT_GT(most, 4 + 5);  // the first solves took many
}

// The work a task expects to have left is what it then does: its warm-started solves cost fewer
// inner iterations as its change falls, and the solves to go are costed on that fall (the mean
// of the last solves put the work left here 2.4 to 3.4 times above what the task then did; now
// 1.1 to 1.4 times). From the fourth change on: with fewer than 8, the work left was "as many
// iterations again" at the mean cost, 0.58 to 0.84 times what the task then did.
TEST(CgAppTest, TheWorkLeftIsWhatTheTaskThenDoes) {
  CgApp app;
  auto params = Params({{"n", "40000"},
                        {"bandwidth", "12"},
                        {"seed", "7"},
                        {"tolerance", "1e-10"},
                        {"coarse", "none"},
                        {"inner", "cg"}},
                       2);
  auto tasks = MakeTasks(app, params, 2);
  ASSERT_EQ(tasks.size(), 2u);
  const auto rows = static_cast<double>(tasks[0]->ItemCount());
  std::vector<double> expected, done;  // task 0's, per row, after each sweep
  for (int sweep = 0; sweep < 400; ++sweep) {
    const bool all = Sweep(tasks);
    expected.push_back(tasks[0]->RemainingWork() / rows);
    done.push_back(tasks[0]->WorkDone() / rows);
    if (all) break;
  }
  ASSERT_TRUE(tasks[0]->LocallyConverged());
  ASSERT_GT(done.size(), 20u);
  // From the first sweep with 4 changes to the last quarter of the run; closer while the run is
  // young, where a balancer's first decision falls.
  int checked = 0;
  for (size_t k = 3; k < done.size() * 3 / 4; ++k) {
    const double left = done.back() - done[k];
    ASSERT_GT(left, 0);
    const bool young = k < done.size() / 4;
    EXPECT_GT(expected[k], (young ? 0.8 : 0.5) * left) << "after sweep " << k;
    EXPECT_LT(expected[k], (young ? 1.3 : 1.8) * left) << "after sweep " << k;
    ++checked;
  }
  EXPECT_GE(checked, 6);
}

// A task that gives or takes rows goes on from its iterate: the iterations it expects still
// (RemainingWork per row over the cost of its solves) stay what its changes say, where they
// used to restart at "as many again as so far".
TEST(CgAppTest, TheIterationsToGoSurviveAMoveOfRows) {
  CgApp app;
  auto params = Params({{"n", "6000"},
                        {"bandwidth", "9"},
                        {"seed", "4"},
                        {"tolerance", "1e-12"},
                        {"coarse", "none"},
                        {"inner", "direct"}},
                       3);
  auto tasks = MakeTasks(app, params, 3);
  ASSERT_EQ(tasks.size(), 3u);
  for (int sweep = 0; sweep < 12; ++sweep) {
    for (uint32_t l = 0; l < 3; ++l) {
      ASSERT_TRUE(tasks[l]->Iterate().ok());
      for (auto& out : tasks[l]->TakeOutgoing()) ASSERT_OK(tasks[out.to]->Absorb(l, out.bytes));
    }
  }
  ASSERT_FALSE(tasks[1]->LocallyConverged());
  auto per_row = [&](size_t l) {
    return tasks[l]->RemainingWork() / static_cast<double>(tasks[l]->ItemCount());
  };
  const double before = per_row(1);
  auto moved = tasks[1]->ExportItems(0.1 * static_cast<double>(tasks[1]->ItemCount()) * before, 2);
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  ASSERT_OK(tasks[2]->ImportItems(*moved));
  EXPECT_NEAR(per_row(1), before, 0.2 * before);
}

// A change that rises for a while (new inputs far from the last: a neighbour restored, rows
// moved) is expected to fall again at the rate it fell before, not to need as many iterations
// again as the task made so far.
TEST(CgAppTest, AChangeThatRisesForAWhileFallsAtItsFormerRate) {
  CgApp app;
  auto params = Params({{"n", "6000"},
                        {"bandwidth", "9"},
                        {"seed", "4"},
                        {"tolerance", "1e-14"},
                        {"coarse", "none"},
                        {"inner", "direct"}},
                       3);
  auto tasks = MakeTasks(app, params, 3);
  ASSERT_EQ(tasks.size(), 3u);
  auto sweep = [&](bool shake) {
    for (uint32_t l = 0; l < 3; ++l) {
      ASSERT_TRUE(tasks[l]->Iterate().ok());
      for (auto& out : tasks[l]->TakeOutgoing()) {
        if (shake && out.to == 1) {  // values far from the last: the change jumps
          for (size_t b = sizeof(int32_t); b + sizeof(double) <= out.bytes.size();
               b += sizeof(double)) {
            double v;
            std::memcpy(&v, out.bytes.data() + b, sizeof v);
            v = v * 1.5 + 1;
            std::memcpy(out.bytes.data() + b, &v, sizeof v);
          }
        }
        ASSERT_OK(tasks[out.to]->Absorb(l, out.bytes));
      }
    }
  };
  for (int k = 0; k < 60; ++k) sweep(false);
  for (int k = 0; k < 6; ++k) sweep(k < 5);
  // Iterations to go (a factored block: a solve costs 1 per row). As many again as so far would
  // be 66 + the stable iterations; the former rate says about 37.
  const double per_row = tasks[1]->RemainingWork() / static_cast<double>(tasks[1]->ItemCount());
  EXPECT_GT(per_row, 10);
  EXPECT_LT(per_row, 50);
}

TEST(CgAppTest, CheckpointStateRoundTrips) {
  CgApp app;
  auto params = Params({{"n", "200"}, {"bandwidth", "3"}}, 2);
  ASSERT_TRUE(app.Prepare(params).ok());
  auto a = app.MakeTask(params, 0, "");
  auto b = app.MakeTask(params, 0, "");
  ASSERT_TRUE(a.ok() && b.ok());
  ASSERT_TRUE((*a)->Iterate().ok());
  ASSERT_OK((*b)->RestoreState((*a)->SaveState()));
  EXPECT_EQ((*b)->ResultSlice(), (*a)->ResultSlice());
  EXPECT_FALSE((*b)->RestoreState("short").ok());
}

// A converged task is not woken by changes of its neighbour's values smaller than its local test
// looks for (tolerance x the max norm of its block's iterate): they wait for its next solve,
// counted from the values that solve used, so changes that add up to more than that are new
// input again; so is any larger change.
TEST(CgAppTest, ANeighboursChangeBelowTheLocalTestIsNoNewInputUntilTheChangesAddUp) {
  CgApp app;
  auto params = Params({{"n", "400"}, {"bandwidth", "3"}, {"tolerance", "1e-8"}}, 2);
  ASSERT_OK(app.Prepare(params).status());
  std::vector<std::unique_ptr<app::Task>> tasks;
  for (uint32_t l = 0; l < 2; ++l) {
    auto t = app.MakeTask(params, l, "");
    ASSERT_OK(t.status());
    tasks.push_back(std::move(*t));
  }
  std::string from_1;  // task 1's newest values for task 0
  // Sweeps until neither task has work left: both converged, their values settled.
  for (int sweep = 0; sweep < 500; ++sweep) {
    bool worked = false;
    for (uint32_t l = 0; l < 2; ++l) {
      auto more = tasks[l]->Iterate();
      ASSERT_OK(more.status());
      if (!*more) continue;
      worked = true;
      for (auto& out : tasks[l]->TakeOutgoing()) {
        if (l == 1) from_1 = out.bytes;
        ASSERT_OK(tasks[out.to]->Absorb(l, out.bytes));
      }
    }
    if (!worked) break;
  }
  ASSERT_TRUE(tasks[0]->LocallyConverged() && tasks[1]->LocallyConverged());
  ASSERT_GT(from_1.size(), sizeof(int32_t) + sizeof(double));
  // The solution is all ones, so the block's max norm is 1 and the test's threshold 1e-8.
  auto nudged = [&](double by) {
    std::string bytes = from_1;
    double v;
    std::memcpy(&v, bytes.data() + sizeof(int32_t), sizeof v);
    v += by;
    std::memcpy(bytes.data() + sizeof(int32_t), &v, sizeof v);
    return bytes;
  };
  // Iterations without new input until the task has nothing to do.
  auto settle = [&] {
    for (int k = 0; k < 20; ++k) {
      auto more = tasks[0]->Iterate();
      ASSERT_OK(more.status());
      if (!*more) return;
    }
    FAIL() << "task 0 did not settle";
  };
  // Task 0 solves once with exactly task 1's newest values (a large change first, then back).
  ASSERT_OK(tasks[0]->Absorb(1, nudged(1e-3)));
  ASSERT_TRUE(*tasks[0]->Iterate());
  ASSERT_OK(tasks[0]->Absorb(1, from_1));
  ASSERT_TRUE(*tasks[0]->Iterate());
  settle();
  ASSERT_OK(tasks[0]->Absorb(1, nudged(6e-9)));
  auto quiet = tasks[0]->Iterate();
  ASSERT_OK(quiet.status());
  EXPECT_FALSE(*quiet) << "a change below the local test woke the task";
  // Another 6e-9 on top: 1.2e-8 from what the last solve used.
  ASSERT_OK(tasks[0]->Absorb(1, nudged(1.2e-8)));
  auto woken = tasks[0]->Iterate();
  ASSERT_OK(woken.status());
  EXPECT_TRUE(*woken) << "changes that add up past the local test did not wake the task";
  EXPECT_GT(tasks[0]->LocalChange(), 0);
  settle();
  ASSERT_OK(tasks[0]->Absorb(1, nudged(1e-3)));
  auto moved = tasks[0]->Iterate();
  ASSERT_OK(moved.status());
  EXPECT_TRUE(*moved);
  EXPECT_GT(tasks[0]->LocalChange(), 1e-6);
}

// Three runners wired together in-process, as three daemons would be, with the spawner's
// convergence detector deciding when to stop (a snapshot of local flags is not enough: a task
// may still hold a neighbour's new value it has not absorbed). Asynchronous runners then fall
// quiet: converged blocks do not send each other their unchanged values over and over, each
// copy waking the other for a solve that changes nothing.
void RunWithRunners(bool sync) {
  CgApp app;
  auto params = Params({{"n", "1000"}, {"bandwidth", "5"}, {"tolerance", "1e-10"}}, 3);
  auto plan = app.Prepare(params);
  ASSERT_TRUE(plan.ok());
  const uint32_t n = 3;
  std::vector<std::unique_ptr<runtime::TaskRunner>> runners(n);
  std::mutex mu;
  runtime::ConvergenceDetector detector(n);
  std::vector<std::string> slices(n);
  std::atomic<uint64_t> iterations_sent{0};
  std::vector<std::atomic<uint64_t>> last_sent(n);
  for (uint32_t l = 0; l < n; ++l) {
    auto task = app.MakeTask(params, l, "");
    ASSERT_TRUE(task.ok());
    auto deps = (*task)->Dependencies();
    runtime::RunnerCallbacks cb;
    cb.send = [&, l](std::vector<runtime::OutgoingValue> out, uint64_t it, bool converged) {
      iterations_sent += it > last_sent[l].exchange(it) ? 1 : 0;  // not an acknowledgement
      for (auto& o : out)
        runners[o.to]->mailbox().Put(l, it, o.bytes, converged, o.seen, 1, o.seen_incarnation);
    };
    cb.local_convergence = [&, l](bool c, uint64_t) {
      std::lock_guard lock(mu);
      detector.OnLocal(l, c);
    };
    cb.progress = [](uint64_t, double, bool, const runtime::TaskMeasures&) {};
    cb.answer = [&, l](uint64_t round, bool c) {
      std::lock_guard lock(mu);
      detector.OnAnswer(l, round, c);
    };
    cb.finished = [&, l](Result<std::string> s, uint64_t) {
      std::lock_guard lock(mu);
      ASSERT_TRUE(s.ok());
      slices[l] = *s;
    };
    runtime::RunnerOptions options;
    options.sync = sync;
    options.progress_period = std::chrono::milliseconds(10);
    runners[l] = std::make_unique<runtime::TaskRunner>(std::move(*task), deps, options, cb);
  }
  for (auto& r : runners) r->Start();
  ASSERT_TRUE(aiac::testing::WaitUntil(
      [&] {
        std::lock_guard lock(mu);
        if (auto round = detector.RoundToOpen()) {
          for (auto& r : runners) r->Query(*round);
        }
        return detector.converged();
      },
      std::chrono::seconds(60)));
  if (!sync) {
    // Fifty passes of every runner's loop: looping, they would send fifty values each.
    const uint64_t before = iterations_sent.load();
    std::vector<uint64_t> from;
    for (auto& r : runners) from.push_back(r->passes());
    ASSERT_TRUE(aiac::testing::WaitUntil([&] {
      for (size_t l = 0; l < runners.size(); ++l) {
        if (runners[l]->passes() < from[l] + 50) return false;
      }
      return true;
    }));
    EXPECT_LE(iterations_sent.load() - before, 2 * n)
        << "converged blocks kept sending each other values";
  }
  for (auto& r : runners) r->Halt();
  for (auto& r : runners) r->Join();
  auto report = app.Gather(params, slices);
  ASSERT_TRUE(report.ok());
  EXPECT_LT(report->residual, 1e-8) << (sync ? "sync" : "async");
}

TEST(TaskRunnerTest, AsyncRunnersConverge) { RunWithRunners(false); }
TEST(TaskRunnerTest, SyncRunnersConverge) { RunWithRunners(true); }

}  // namespace
}  // namespace aiac::cg
