// The two-level CG app (coarse_space.h, coarse_rounds.h): the coarse matrix and corrections the
// tasks assemble by exchanging sections are the dense Z^T A Z and Z e, damaged sections are
// refused, and on a 2-D Poisson problem the second level takes far fewer outer iterations, also
// when tasks are restored from checkpoints.
#include <gtest/gtest.h>

#include <Eigen/SparseCholesky>
#include <cstring>
#include <numeric>
#include <random>

#include "app/local_run.h"
#include "apps/cg/cg_app.h"
#include "apps/cg/coarse_rounds.h"
#include "apps/cg/coarse_space.h"
#include "apps/cg/matrix_market.h"
#include "apps/cg/partition.h"
#include "support/test_support.h"
#include "unit/cg/job_params.h"

namespace aiac::cg {
namespace {

// Blocks of `a` in `tasks` slices with `layers` of overlap, as the spawner builds them.
std::vector<Block> SliceBlocks(const SpMat& a, int tasks, int layers, RowPartition& part) {
  part = ContiguousPartition(static_cast<int>(a.rows()), tasks);
  std::vector<std::vector<int>> rows;
  for (const auto& own : part.rows) rows.push_back(Extend(a, own, layers));
  const auto sends = SendLists(a, part.owner, rows);
  const RowFn row = MatrixRows(a);
  std::vector<Block> blocks;
  for (int l = 0; l < tasks; ++l) {
    std::vector<double> b_rows;
    std::vector<int> own;
    for (size_t k = 0; k < rows[l].size(); ++k) {
      b_rows.push_back(1.0 + 0.01 * rows[l][k]);
      if (part.owner[static_cast<size_t>(rows[l][k])] == static_cast<uint32_t>(l))
        own.push_back(static_cast<int>(k));
    }
    blocks.push_back(BuildBlock(
        row, b_rows, static_cast<int>(a.rows()), rows[l], own,
        [&](int r) { return part.owner[static_cast<size_t>(r)]; }, sends[l]));
  }
  return blocks;
}

struct Coarse {
  std::vector<CoarseBasis> bases;
  std::vector<std::unique_ptr<CoarseRounds>> rounds;
};

// Every task's coarse state, with its block solved exactly.
Coarse MakeCoarse(const std::vector<Block>& blocks, int pieces) {
  Coarse c;
  const auto tasks = static_cast<uint32_t>(blocks.size());
  for (uint32_t l = 0; l < tasks; ++l) {
    const Block& b = blocks[l];
    Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver{Eigen::SparseMatrix<double>(b.local)};
    auto basis = HarmonicBasis(b, pieces, [&](const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x) {
      x = solver.solve(rhs);
      return Status::Ok();
    });
    EXPECT_OK(basis.status());
    c.bases.push_back(*basis);
    std::vector<int> own_rows, position(static_cast<size_t>(b.size()), -1);
    for (size_t k = 0; k < b.own.size(); ++k) {
      own_rows.push_back(b.rows[static_cast<size_t>(b.own[k])]);
      position[static_cast<size_t>(b.own[k])] = static_cast<int>(k);
    }
    CoarseRounds::Sends sends;
    for (const auto& s : b.out) {
      std::vector<int> at;
      for (int r : s.rows) at.push_back(position[static_cast<size_t>(r)]);
      sends.emplace_back(s.task, at);
    }
    c.rounds.push_back(std::make_unique<CoarseRounds>(l, tasks, *basis, own_rows, sends));
  }
  return c;
}

// Every task sends every other its section.
void Send(Coarse& c) {
  const auto tasks = static_cast<uint32_t>(c.rounds.size());
  for (uint32_t l = 0; l < tasks; ++l) {
    for (uint32_t m = 0; m < tasks; ++m) {
      if (m != l) EXPECT_OK(c.rounds[m]->Absorb(l, c.rounds[l]->SectionFor(m)));
    }
  }
}

// One exchange: every task advances, then sends.
void Exchange(Coarse& c) {
  for (auto& r : c.rounds) EXPECT_OK(r->Advance().status());
  Send(c);
}

TEST(CoarseSpaceTest, TheTasksCorrectionIsTheDenseTwoLevelOne) {
  const SpMat a = GridLaplacian(14, 12);
  const int n = static_cast<int>(a.rows());
  for (int layers : {0, 1, 2}) {
    RowPartition part;
    const auto blocks = SliceBlocks(a, 4, layers, part);
    Coarse c = MakeCoarse(blocks, 3);
    for (int k = 0; k < 3; ++k) Exchange(c);  // sizes and A Z, block rows, A_0
    for (const auto& r : c.rounds) ASSERT_TRUE(r->ready()) << layers;
    // The global Z, from each task's functions on its own rows.
    int total = 0;
    for (const auto& b : c.bases) total += b.size();
    Eigen::MatrixXd z = Eigen::MatrixXd::Zero(n, total);
    std::vector<int> offset;
    for (size_t l = 0, at = 0; l < blocks.size(); ++l) {
      offset.push_back(static_cast<int>(at));
      for (size_t k = 0; k < blocks[l].own.size(); ++k)
        z.row(blocks[l].rows[static_cast<size_t>(blocks[l].own[k])])
            .segment(static_cast<Eigen::Index>(at), c.bases[l].size()) =
            c.bases[l].z.row(static_cast<Eigen::Index>(k));
      at += static_cast<size_t>(c.bases[l].size());
    }
    // Some iterate x: each task contributes from its own rows; the round then completes.
    std::mt19937 rng(3);
    std::uniform_real_distribution<double> u(-1, 1);
    Eigen::VectorXd x(n), b(n);
    for (int i = 0; i < n; ++i) x[i] = u(rng), b[i] = 1.0 + 0.01 * i;
    for (size_t l = 0; l < blocks.size(); ++l) {
      Eigen::VectorXd xl(blocks[l].size());
      for (int k = 0; k < blocks[l].size(); ++k) xl[k] = x[blocks[l].rows[static_cast<size_t>(k)]];
      c.rounds[l]->Contribute(xl, blocks[l].own);
    }
    Send(c);
    for (auto& r : c.rounds) {
      auto due = r->Advance();
      ASSERT_OK(due.status());
      EXPECT_TRUE(*due);
    }
    // What the dense two-level step adds to x: Z e, A_0 e = Z^T (b - A x).
    const Eigen::MatrixXd a0 = z.transpose() * (a * z);
    const Eigen::VectorXd e =
        a0.completeOrthogonalDecomposition().solve(z.transpose() * (b - a * x));
    const Eigen::VectorXd dx = z * e;
    for (size_t l = 0; l < blocks.size(); ++l) {
      EXPECT_EQ(c.rounds[l]->corrections(), 1u);
      std::vector<Eigen::VectorXd> inputs;
      std::vector<uint32_t> from;
      for (const auto& in : blocks[l].in) {
        inputs.push_back(Eigen::VectorXd::Zero(static_cast<Eigen::Index>(in.cols.size())));
        from.push_back(in.task);
      }
      c.rounds[l]->CorrectInputs(inputs, from);
      for (size_t k = 0; k < inputs.size(); ++k) {
        for (size_t j = 0; j < blocks[l].in[k].cols.size(); ++j) {
          EXPECT_NEAR(inputs[k][static_cast<Eigen::Index>(j)], dx[blocks[l].in[k].cols[j]],
                      1e-9 * (1 + dx.cwiseAbs().maxCoeff()))
              << "layers " << layers << ", task " << l;
        }
      }
    }
  }
}

TEST(CoarseSpaceTest, TheBlocksResponsesAreSolvedInBatchesAndAreTheSameAsOneByOne) {
  const SpMat a = GridLaplacian(60, 40);
  RowPartition part;
  const auto blocks = SliceBlocks(a, 3, 2, part);
  const Block& middle = blocks[1];  // two couplings
  ASSERT_EQ(middle.in.size(), 2u);
  const int pieces = 20;  // 40 right-hand sides: a batch of kBasisBatch and one of the rest
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> solver{
      Eigen::SparseMatrix<double>(middle.local)};
  std::vector<Eigen::Index> batches;
  auto batched = HarmonicBasis(middle, pieces, [&](const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x) {
    batches.push_back(rhs.cols());
    x = solver.solve(rhs);
    return Status::Ok();
  });
  ASSERT_OK(batched.status());
  EXPECT_EQ(batches,
            (std::vector<Eigen::Index>{static_cast<Eigen::Index>(kBasisBatch),
                                       2 * pieces - static_cast<Eigen::Index>(kBasisBatch)}));
  auto single = HarmonicBasis(middle, pieces, [&](const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x) {
    x.resize(rhs.rows(), rhs.cols());
    for (Eigen::Index j = 0; j < rhs.cols(); ++j)
      x.col(j) = solver.solve(Eigen::VectorXd(rhs.col(j)));
    return Status::Ok();
  });
  ASSERT_OK(single.status());
  ASSERT_EQ(batched->size(), 1 + 2 * pieces);
  EXPECT_LT((batched->z - single->z).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((batched->w_far - single->w_far).cwiseAbs().maxCoeff(), 1e-12);
  // Batches shrink for large blocks, so that one holds at most kBasisBatchEntries values.
  EXPECT_EQ(BasisBatch(150'000), kBasisBatch);
  EXPECT_EQ(BasisBatch(300'000), kBasisBatchEntries / 300'000);
  EXPECT_EQ(BasisBatch(100'000'000), 1u);
  EXPECT_EQ(BasisBatch(0), kBasisBatch);
  // A solve that loses the batch's shape is an error, not a basis.
  auto lost = HarmonicBasis(middle, pieces, [](const Eigen::MatrixXd& rhs, Eigen::MatrixXd& x) {
    x = Eigen::MatrixXd::Zero(rhs.rows(), 1);
    return Status::Ok();
  });
  EXPECT_FALSE(lost.ok());
}

TEST(CoarseSpaceTest, CoarseProblemIsAPseudoInverseAndRefusesWhatIsNotSpd) {
  // Two equal functions: A_0 is singular; the solution is the minimum-norm one.
  Eigen::MatrixXd a0(3, 3);
  a0 << 2, 2, -1, 2, 2, -1, -1, -1, 3;
  auto p = CoarseProblem::Make({a0.topRows(1), a0.bottomRows(2)});
  ASSERT_OK(p.status());
  const Eigen::VectorXd r = Eigen::Vector3d(1, 1, 2);
  const Eigen::VectorXd e = p->Solve(r);
  EXPECT_LT((a0 * e - r).norm(), 1e-12);
  EXPECT_NEAR(e[0], e[1], 1e-12);
  Eigen::MatrixXd unsymmetric = a0;
  unsymmetric(0, 2) = 5;
  EXPECT_FALSE(CoarseProblem::Make({unsymmetric}).ok());
  EXPECT_FALSE(CoarseProblem::Make({Eigen::MatrixXd(-a0)}).ok());
  EXPECT_FALSE(CoarseProblem::Make({a0.topRows(1), a0.bottomRows(2).leftCols(2)}).ok());
}

TEST(CoarseSpaceTest, AutoTurnsOnForSymmetricEllipticMatricesOnly) {
  EXPECT_TRUE(WantsCoarseSpace(GridLaplacian(20, 20)));
  const SpMat cube = GridLaplacian3d(6);
  EXPECT_EQ(cube.nonZeros(), 216 + 6 * 6 * 5 * 6);  // 6 neighbours along each of 3 axes, twice
  EXPECT_TRUE(WantsCoarseSpace(cube));
  EXPECT_FALSE(WantsCoarseSpace(Generate({2000, 8, 1}).a));  // dominant by 1 / (1 + sum)
  SpMat skew = GridLaplacian(20, 20);
  skew.coeffRef(0, 1) = -1.5;
  EXPECT_FALSE(IsSymmetric(skew));
  EXPECT_FALSE(WantsCoarseSpace(skew));
}

TEST(CoarseRoundsTest, DamagedSectionsAreRefusedAndChangeNothing) {
  const SpMat a = GridLaplacian(10, 8);
  RowPartition part;
  const auto blocks = SliceBlocks(a, 3, 1, part);
  Coarse c = MakeCoarse(blocks, 2);
  Exchange(c);
  Exchange(c);
  const std::string good = c.rounds[0]->SectionFor(1);
  for (size_t cut = 0; cut < good.size(); cut += 7)
    EXPECT_FALSE(c.rounds[1]->Absorb(0, good.substr(0, cut)).ok()) << cut;
  EXPECT_FALSE(c.rounds[1]->Absorb(0, good + "x").ok());
  std::string huge = good;
  huge[2] = huge[3] = huge[4] = huge[5] = '\xff';  // a function count far too large
  EXPECT_FALSE(c.rounds[1]->Absorb(0, huge).ok());
  // A count of rows far beyond the bytes that follow: refused before anything is sized.
  std::string forged("\x01\x00", 2);  // A Z on rows follows
  const uint32_t one = 1, many = 1u << 27;
  forged.append(reinterpret_cast<const char*>(&one), sizeof one);
  forged.append(reinterpret_cast<const char*>(&many), sizeof many);
  EXPECT_FALSE(c.rounds[1]->Absorb(0, forged).ok());
  EXPECT_FALSE(c.rounds[1]->Absorb(1, good).ok());  // from itself
  EXPECT_FALSE(c.rounds[1]->Absorb(7, good).ok());  // from no task of the job
  EXPECT_OK(c.rounds[1]->Absorb(0, good));
  Exchange(c);
  for (const auto& r : c.rounds) EXPECT_TRUE(r->ready());
}

// A task sends its A Z and block row to a peer until the peer says it holds them, and no more
// after: they are as large as its interface, and an asynchronous task sends a section at every
// iteration. A replacement, which holds nothing, gets them again.
TEST(CoarseRoundsTest, APartIsSentUntilThePeerHoldsItAndAgainToAReplacement) {
  const SpMat a = GridLaplacian(12, 10);
  RowPartition part;
  const auto blocks = SliceBlocks(a, 3, 1, part);
  Coarse c = MakeCoarse(blocks, 2);
  const size_t first = c.rounds[0]->SectionFor(1).size();
  for (int k = 0; k < 4; ++k) Exchange(c);
  for (const auto& r : c.rounds) {
    EXPECT_TRUE(r->ready());
    EXPECT_FALSE(r->PeerNeedsSetup());
  }
  const size_t after = c.rounds[0]->SectionFor(1).size();
  EXPECT_LT(4 * after, first) << "a section of " << after << " bytes, " << first << " at first";

  Coarse fresh = MakeCoarse(blocks, 2);
  c.rounds[1] = std::move(fresh.rounds[1]);
  EXPECT_OK(c.rounds[0]->Absorb(1, c.rounds[1]->SectionFor(0)));
  EXPECT_TRUE(c.rounds[0]->PeerNeedsSetup());  // it lacks task 0's part: task 0 must iterate
  EXPECT_GT(c.rounds[0]->SectionFor(1).size(), 2 * after);
  EXPECT_FALSE(c.rounds[0]->PeerNeedsSetup());  // sent; every section holds it until held
  for (int k = 0; k < 4 && !c.rounds[1]->ready(); ++k) Exchange(c);
  EXPECT_TRUE(c.rounds[1]->ready());
}

// A task that contributed to the current round awaits its completion only while every peer
// still missing is working: one that says it is locally converged contributes only when its
// input changes.
TEST(CoarseRoundsTest, ARoundAwaitsOnlyPeersThatAreNotConverged) {
  const SpMat a = GridLaplacian(12, 10);
  RowPartition part;
  const auto blocks = SliceBlocks(a, 3, 1, part);
  Coarse c = MakeCoarse(blocks, 2);
  for (int k = 0; k < 4; ++k) Exchange(c);
  auto contribute = [&](uint32_t l) {
    const auto own = static_cast<int>(blocks[l].own.size());
    std::vector<int> at(static_cast<size_t>(own));
    std::iota(at.begin(), at.end(), 0);
    c.rounds[l]->Contribute(Eigen::VectorXd::Constant(own, 0.5), at);
  };
  ASSERT_TRUE(c.rounds[0]->ready());
  EXPECT_FALSE(c.rounds[0]->AwaitsWorkingPeers());  // it has not contributed
  contribute(0);
  EXPECT_TRUE(c.rounds[0]->contributed());
  EXPECT_TRUE(c.rounds[0]->AwaitsWorkingPeers());
  // Task 1 contributes; task 2 says it is converged.
  contribute(1);
  EXPECT_OK(c.rounds[0]->Absorb(1, c.rounds[1]->SectionFor(0)));
  EXPECT_TRUE(c.rounds[0]->AwaitsWorkingPeers());
  EXPECT_OK(c.rounds[0]->Absorb(2, c.rounds[2]->SectionFor(0, /*converged=*/true)));
  EXPECT_FALSE(c.rounds[0]->AwaitsWorkingPeers());
  // Working again, it is awaited; its contribution completes the round.
  EXPECT_OK(c.rounds[0]->Absorb(2, c.rounds[2]->SectionFor(0)));
  EXPECT_TRUE(c.rounds[0]->AwaitsWorkingPeers());
  const uint64_t round = c.rounds[0]->round();
  contribute(2);
  EXPECT_OK(c.rounds[0]->Absorb(2, c.rounds[2]->SectionFor(0)));
  auto due = c.rounds[0]->Advance();
  ASSERT_OK(due.status());
  EXPECT_TRUE(*due);
  EXPECT_EQ(c.rounds[0]->round(), round + 1);
  EXPECT_FALSE(c.rounds[0]->AwaitsWorkingPeers());
}

// A symmetric indefinite matrix (1 on the diagonal, 2 beside it): A_0 is indefinite too. A job
// that asked for the coarse space fails; one that chose it itself (auto) stays on one level.
TEST(CoarseRoundsTest, AnIndefiniteCoarseMatrixFailsOrIsGivenUp) {
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < 12; ++i) {
    t.emplace_back(i, i, 1.0);
    if (i > 0) t.emplace_back(i, i - 1, 2.0), t.emplace_back(i - 1, i, 2.0);
  }
  SpMat a(12, 12);
  a.setFromTriplets(t.begin(), t.end());
  for (bool optional : {false, true}) {
    RowPartition part;
    const auto blocks = SliceBlocks(a, 3, 0, part);
    Coarse c = MakeCoarse(blocks, 1);
    for (auto& r : c.rounds) r->set_optional(optional);
    Status failed;
    for (int k = 0; k < 4; ++k) {
      for (auto& r : c.rounds) {
        if (auto due = r->Advance(); !due.ok()) failed = due.status();
      }
      Send(c);
    }
    for (const auto& r : c.rounds) {
      EXPECT_FALSE(r->ready());
      EXPECT_EQ(r->gave_up(), optional);
    }
    EXPECT_EQ(failed.ok(), optional) << failed.message();
    if (!optional) {
      EXPECT_NE(failed.message().find("not positive semi-definite"), std::string::npos);
    }
  }
}

// A 2-D Poisson problem's file, `k` x `k`.
std::string WriteGrid(const aiac::testing::TempDir& dir, int k) {
  const std::string path = dir / "grid.mtx";
  EXPECT_OK(WriteMatrixMarketMatrix(path, GridLaplacian(k, k), true));
  return path;
}

Result<app::LocalRunResult> RunCg(const std::string& matrix, const std::string& coarse, bool sync,
                                  uint64_t restore_every = 0,
                                  const std::map<std::string, std::string>& more = {}) {
  CgApp app;
  app::LocalRunOptions o;
  o.tasks = 5;
  o.params = {{"matrix", matrix}, {"coarse", coarse}, {"matrix_cache", "false"}};
  for (const auto& [key, value] : more) o.params[key] = value;
  o.sync = sync;
  o.restore_every = restore_every;
  o.log = [](app::LogLevel, std::string_view) {};
  return app::RunLocally(app, o);
}

uint64_t Most(const std::vector<uint64_t>& v) { return *std::max_element(v.begin(), v.end()); }

TEST(CgAppTest, TwoLevelTakesFarFewerOuterIterationsOnPoisson) {
  aiac::testing::TempDir dir;
  const std::string matrix = WriteGrid(dir, 60);
  for (bool sync : {true, false}) {
    auto one = RunCg(matrix, "none", sync);
    auto two = RunCg(matrix, "harmonic", sync);
    ASSERT_OK(one.status());
    ASSERT_OK(two.status());
    EXPECT_LE(two->report.residual, 1e-8);
    EXPECT_LE(one->report.residual, 1e-8);
    EXPECT_LT(3 * Most(two->iterations), Most(one->iterations))
        << (sync ? "sync: " : "async: ") << Most(two->iterations) << " against "
        << Most(one->iterations);
  }
  // "auto" chooses the second level for this matrix.
  auto chosen = RunCg(matrix, "auto", true);
  ASSERT_OK(chosen.status());
  EXPECT_EQ(Most(chosen->iterations), Most(RunCg(matrix, "harmonic", true)->iterations));
}

// The two-stage method (inner CG stopped at a reduction of the block's residual) on a k^3 grid,
// preconditioned as asked: the same answer as exact block solves, one level or two, sync or
// async, also for tasks restored from checkpoints; and the coarse functions computed by the
// inner CG still cut the iterations.
void ExpectTwoStageReachesTheSameAnswer(int k, const std::string& preconditioner) {
  aiac::testing::TempDir dir;
  const std::string matrix = dir / "cube.mtx";
  ASSERT_OK(WriteMatrixMarketMatrix(matrix, GridLaplacian3d(k), true));
  const std::map<std::string, std::string> two_stage = {
      {"inner", "cg"}, {"inner_reduction", "0.2"}, {"inner_preconditioner", preconditioner}};
  for (bool sync : {true, false}) {
    auto one = RunCg(matrix, "none", sync, 0, two_stage);
    auto two = RunCg(matrix, "harmonic", sync, 0, two_stage);
    auto restored = RunCg(matrix, "harmonic", sync, 7, two_stage);
    for (auto* run : {&one, &two, &restored}) {
      ASSERT_OK(run->status());
      EXPECT_LE((*run)->report.residual, 1e-8) << sync;
    }
    EXPECT_GT(restored->restores, 0u);
    EXPECT_LT(Most(two->iterations), Most(one->iterations))
        << (sync ? "sync: " : "async: ") << Most(two->iterations) << " against "
        << Most(one->iterations);
  }
}

TEST(CgAppTest, TwoStageInnerSolvesReachTheSameAnswer) {
  ExpectTwoStageReachesTheSameAnswer(16, "ic");
}

// (14^3 in 5 blocks: more than SmoothedAggregation::kCoarsestRows rows each, two levels.)
TEST(CgAppTest, MultigridTwoStageInnerSolvesReachTheSameAnswer) {
  ExpectTwoStageReachesTheSameAnswer(14, "amg");
}

// An inexact solve leaves work that needs no new input: a task whose neighbours never speak
// solves its block again until the local test holds, and ends with the block solved, not cut
// by the reduction once and then left waiting as an exact solve would be.
TEST(CgAppTest, ATwoStageTaskWithoutNewInputSolvesItsBlockToTheEnd) {
  aiac::testing::TempDir dir;
  const SpMat a = GridLaplacian3d(12);
  ASSERT_OK(WriteMatrixMarketMatrix(dir / "cube.mtx", a, true));
  CgApp app;
  auto params = Params({{"matrix", "cube.mtx"},
                        {"inner", "cg"},
                        {"inner_reduction", "0.5"},
                        {"inner_preconditioner", "ic"},
                        {"coarse", "none"},
                        {"overlap", "0"},
                        {"partition", "contiguous"},
                        {"matrix_cache", "false"}},
                       2, dir.path());
  auto plan = app.Prepare(params);
  ASSERT_OK(plan.status());
  auto task = app.MakeTask(params, 0, plan->slices[0]);
  ASSERT_OK(task.status());
  int iterations = 0;
  while (iterations < 1000) {
    auto more = (*task)->Iterate();
    ASSERT_OK(more.status());
    if (!*more) break;
    ++iterations;
  }
  ASSERT_TRUE((*task)->LocallyConverged());
  const std::string slice = (*task)->ResultSlice();
  int32_t head[2];
  std::memcpy(head, slice.data(), sizeof head);
  ASSERT_EQ(head[1], 0);
  const int n = head[0];
  Eigen::VectorXd x(n);
  std::memcpy(x.data(), slice.data() + sizeof head, sizeof(double) * static_cast<size_t>(n));
  // Its neighbour's values are the zeros it started from: x solves A_00 x = b_0, b = A 1.
  const Eigen::VectorXd b = (a * Eigen::VectorXd::Ones(a.rows())).head(n);
  const SpMat block = a.topLeftCorner(n, n);
  EXPECT_LT((b - block * x).norm(), 1e-6 * b.norm()) << "after " << iterations << " iterations";
}

// A replacement starts without the coarse problem: the others send it what it lacks again.
TEST(CgAppTest, TwoLevelTasksRestoredFromCheckpointsSetUpAgainAndConverge) {
  aiac::testing::TempDir dir;
  const std::string matrix = WriteGrid(dir, 40);
  for (bool sync : {true, false}) {
    auto run = RunCg(matrix, "harmonic", sync, 5);
    ASSERT_OK(run.status());
    EXPECT_GT(run->restores, 0u);
    EXPECT_LE(run->report.residual, 1e-8) << sync;
  }
}

// Blocks that inner = "auto" will iterate (a 3-D grid's, whose factors would fill too much) get
// what two-stage blocks want where coarse_pieces is "auto": 4 pieces, and with IC(0) where
// overlap is "auto" 2 layers (multigrid blocks keep AutoLayers'); blocks it factors (a small 2-D
// grid's, or any with inner = "direct") keep AutoLayers and 8.
TEST(CgAppTest, BlocksThatWillBeIteratedGetFewCoarsePiecesAndWithIcLittleOverlap) {
  aiac::testing::TempDir dir;
  ASSERT_OK(WriteMatrixMarketMatrix(dir / "cube.mtx", GridLaplacian3d(32), true));
  const std::string grid = WriteGrid(dir, 100);
  struct Plan {
    std::string notes;
    int pieces = 0;  // in task 0's slice
  };
  auto prepare = [&](const std::string& matrix, std::map<std::string, std::string> values) {
    values["matrix"] = matrix;
    values["matrix_cache"] = "false";
    CgApp app;
    auto plan = app.Prepare(Params(std::move(values), 2, dir.path()));
    EXPECT_TRUE(plan.ok()) << plan.status().message();
    Plan out;
    if (!plan.ok()) return out;
    for (const auto& n : plan->notes) out.notes += n + "\n";
    const std::string& slice = plan->slices[0];
    EXPECT_EQ(slice.substr(0, 4), "acgc");  // a two-level slice: magic, then its pieces
    if (slice.size() >= 8) std::memcpy(&out.pieces, slice.data() + 4, sizeof out.pieces);
    return out;
  };
  // Multigrid blocks (the default) keep AutoLayers' overlap, predicted with it.
  const Plan iterated = prepare("cube.mtx", {});
  EXPECT_NE(iterated.notes.find("(24576 rows with 8 layers of overlap) would fill"),
            std::string::npos)
      << iterated.notes;
  EXPECT_NE(iterated.notes.find("inner = \"auto\" will iterate the blocks with AMG, so 4 coarse "
                                "pieces per coupling"),
            std::string::npos)
      << iterated.notes;
  EXPECT_NE(iterated.notes.find("with overlap 8 (auto)"), std::string::npos) << iterated.notes;
  EXPECT_NE(iterated.notes.find("responses to 4 pieces of each coupling"), std::string::npos)
      << iterated.notes;
  EXPECT_EQ(iterated.pieces, 4);
  // IC(0) blocks take at most 2 layers when they will be iterated.
  const Plan ic = prepare("cube.mtx", {{"inner_preconditioner", "ic"}});
  EXPECT_NE(ic.notes.find("inner = \"auto\" will iterate the blocks, so overlap 2 and 4 "
                          "coarse pieces per coupling"),
            std::string::npos)
      << ic.notes;
  EXPECT_NE(ic.notes.find("with overlap 2 (auto)"), std::string::npos) << ic.notes;
  EXPECT_EQ(ic.pieces, 4);
  // What the job says stays: only the pieces follow the prediction.
  const Plan given = prepare("cube.mtx", {{"overlap", "1"}});
  EXPECT_NE(given.notes.find("will iterate the blocks with AMG, so 4 coarse pieces per coupling"),
            std::string::npos)
      << given.notes;
  EXPECT_NE(given.notes.find("with overlap 1\n"), std::string::npos) << given.notes;
  EXPECT_EQ(given.pieces, 4);
  EXPECT_EQ(prepare("cube.mtx", {{"overlap", "1"}, {"coarse_pieces", "6"}}).pieces, 6);
  for (const Plan& factored : {prepare("cube.mtx", {{"inner", "direct"}}), prepare(grid, {})}) {
    EXPECT_EQ(factored.notes.find("will iterate"), std::string::npos) << factored.notes;
    EXPECT_EQ(factored.notes.find("with overlap 2 (auto)"), std::string::npos) << factored.notes;
    EXPECT_NE(factored.notes.find("(auto)"), std::string::npos) << factored.notes;
    EXPECT_NE(factored.notes.find("responses to 8 pieces of each coupling"), std::string::npos)
        << factored.notes;
    EXPECT_EQ(factored.pieces, 8);
  }
}

TEST(CgAppTest, TwoLevelParametersAreCheckedInOneLine) {
  aiac::testing::TempDir dir;
  const std::string matrix = WriteGrid(dir, 12);
  auto refused = [&](std::map<std::string, std::string> values) {
    CgApp app;
    auto plan = app.Prepare(Params(std::move(values), 3, dir.path()));
    EXPECT_FALSE(plan.ok());
    return plan.ok() ? std::string() : plan.status().message();
  };
  EXPECT_EQ(refused({{"matrix", matrix}, {"coarse", "multigrid"}}),
            "cg: params.coarse must be \"auto\", \"none\" or \"harmonic\"");
  EXPECT_EQ(refused({{"matrix", matrix}, {"coarse_pieces", "0"}}),
            "cg: params.coarse_pieces must be \"auto\" or in 1..64");
  for (const char* wait : {"-1", "soon", "1e9"}) {
    EXPECT_EQ(refused({{"matrix", matrix}, {"coarse_wait", wait}}),
              "cg: params.coarse_wait must be a number of block solves in 0..1000");
  }
  EXPECT_NE(refused({{"n", "100"}, {"coarse", "harmonic"}}).find("goes with params.matrix"),
            std::string::npos);
  SpMat skew = GridLaplacian(12, 12);
  skew.coeffRef(0, 1) = -1.5;
  ASSERT_OK(WriteMatrixMarketMatrix(dir / "skew.mtx", skew));
  EXPECT_NE(refused({{"matrix", "skew.mtx"}, {"coarse", "harmonic"}}).find("symmetric"),
            std::string::npos);
}

}  // namespace
}  // namespace aiac::cg
