// The CG app through the real spawner, super-node and daemons, checked against Eigen.
#include <Eigen/SparseCholesky>
#include <Eigen/SparseLU>
#include <regex>

#include "apps/cg/cg_problem.h"
#include "apps/cg/matrix_market.h"
#include "integration/cluster_fixture.h"

namespace aiac::testing {
namespace {

double MaxDiff(const std::vector<double>& x, const Eigen::VectorXd& y) {
  double d = 0;
  for (size_t i = 0; i < x.size(); ++i)
    d = std::max(d, std::abs(x[i] - y[static_cast<Eigen::Index>(i)]));
  return d;
}

// A symmetric tridiagonal matrix (`diag` on the diagonal, `off` beside it) as a Matrix Market
// file (lower triangle) and as the matrix itself.
std::string TridiagonalFile(int n, double diag = 4, double off = -1) {
  char entry[64];
  std::string text = "%%MatrixMarket matrix coordinate real symmetric\n" + std::to_string(n) + " " +
                     std::to_string(n) + " " + std::to_string(2 * n - 1) + "\n";
  for (int i = 1; i <= n; ++i) {
    std::snprintf(entry, sizeof entry, "%d %d %.17g\n", i, i, diag);
    text += entry;
    if (i < n) {
      std::snprintf(entry, sizeof entry, "%d %d %.17g\n", i + 1, i, off);
      text += entry;
    }
  }
  return text;
}

Eigen::SparseMatrix<double> Tridiagonal(int n, double diag, double off) {
  std::vector<Eigen::Triplet<double>> t;
  for (int i = 0; i < n; ++i) {
    t.emplace_back(i, i, diag);
    if (i + 1 < n) {
      t.emplace_back(i + 1, i, off);
      t.emplace_back(i, i + 1, off);
    }
  }
  Eigen::SparseMatrix<double> m(n, n);
  m.setFromTriplets(t.begin(), t.end());
  return m;
}

class CgRunTest : public ClusterFixture {
 protected:
  void CheckGenerated(const std::string& mode_flag, int daemons);
};

void CgRunTest::CheckGenerated(const std::string& mode_flag, int daemons) {
  WriteJob("cg.toml", "name = \"cg-it\"\napp = \"cg\"\ntasks = " + std::to_string(daemons) +
                          "\ntimeout_s = 120\n[params]\nn = 20000\nbandwidth = 8\nseed = 3\n"
                          "tolerance = 1e-10\noutput = \"x.mtx\"\n");
  std::vector<std::string> args{
      "run", "--local", std::to_string(daemons), dir_ / "cg.toml", "--json", dir_ / "cg.json"};
  if (!mode_flag.empty()) args.push_back(mode_flag);
  ASSERT_EQ(RunSpawner(args), 0) << Log("spawner");
  auto j = Json("cg.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["mode"], mode_flag.empty() ? "async" : "sync");
  EXPECT_EQ(j["mapping"], "maheve");
  EXPECT_EQ(j["tasks"], daemons);
  EXPECT_EQ(j["failures"], 0);  // a healthy run never declares a daemon dead
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  EXPECT_EQ(j["iterations"]["per_task"].size(), static_cast<size_t>(daemons));
  EXPECT_GT(j["iterations"]["min"].get<int>(), 1);
  auto x = cg::ReadMatrixMarketVector(j["output"].get<std::string>());
  ASSERT_TRUE(x.ok()) << x.status().message();
  cg::Problem p = cg::Generate({20000, 8, 3});
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(Eigen::SparseMatrix<double>(p.a));
  EXPECT_LT(MaxDiff(*x, direct.solve(p.b)), 1e-8);
  EXPECT_TRUE(ProcessesMatching(dir_.path()).empty());
}

TEST_F(CgRunTest, GeneratedSystemAsyncMatchesEigen) { CheckGenerated("", 4); }
TEST_F(CgRunTest, GeneratedSystemSyncMatchesEigen) { CheckGenerated("--sync", 5); }

// An app's own log lines (JobParams::logger) reach the daemon's log, tagged with the job, the
// task and its incarnation.
TEST_F(CgRunTest, TheAppsLogLinesAreTaggedWithJobTaskAndIncarnation) {
  const std::string sn = StartSupernode("sn1");
  for (auto d : {"d1", "d2"}) StartDaemon(d, {sn});
  WriteJob("cg.toml",
           "name = \"cg-log\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\n"
           "n = 2000\nbandwidth = 4\nseed = 1\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "cg.toml",
                        "--json", dir_ / "cg.json", "--history", dir_ / "h.csv"}),
            0)
      << Log("spawner");
  const std::string job = Json("cg.json")["job_id"].get<std::string>();
  // The history (run --history) has the residual of the result checked (this run ends before
  // the tasks' first progress reports; FaultTest checks those).
  const std::string history = ReadFile(dir_ / "h.csv");
  EXPECT_EQ(history.rfind("seconds,event,task,incarnation,iteration,change,residual\n", 0), 0u);
  EXPECT_NE(history.find(",residual,,,,,"), std::string::npos) << history;
  const std::string logs = Log("d1") + Log("d2");
  for (int task : {0, 1}) {
    const std::string line = "job " + job + " task " + std::to_string(task) +
                             ".1: cg: block of task " + std::to_string(task) + " built";
    EXPECT_NE(logs.find(line), std::string::npos) << line << "\n" << logs;
  }
}

TEST_F(CgRunTest, MatrixMarketFilesMatchEigen) {
  // A symmetric file (lower triangle) of an SPD, diagonally dominant matrix, and a coordinate rhs.
  const int n = 3000;
  std::string a = "%%MatrixMarket matrix coordinate real symmetric\n% test system\n";
  std::vector<Eigen::Triplet<double>> t;
  std::string entries;
  int nnz = 0;
  for (int i = 0; i < n; ++i) {
    entries += std::to_string(i + 1) + " " + std::to_string(i + 1) + " 6.5\n";
    t.emplace_back(i, i, 6.5);
    ++nnz;
    for (int k : {1, 7}) {
      if (i + k < n) {
        entries += std::to_string(i + k + 1) + " " + std::to_string(i + 1) + " -1.25\n";
        t.emplace_back(i + k, i, -1.25);
        t.emplace_back(i, i + k, -1.25);
        ++nnz;
      }
    }
  }
  WriteFile(dir_ / "A.mtx", a + std::to_string(n) + " " + std::to_string(n) + " " +
                                std::to_string(nnz) + "\n" + entries);
  std::string b = "%%MatrixMarket matrix coordinate real general\n" + std::to_string(n) + " 1 " +
                  std::to_string(n / 2) + "\n";
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n);
  for (int i = 0; i < n; i += 2) {
    b += std::to_string(i + 1) + " 1 " + std::to_string(1.0 + i % 5) + "\n";
    rhs[i] = 1.0 + i % 5;
  }
  WriteFile(dir_ / "b.mtx", b);
  WriteJob("mm.toml",
           "name = \"mm\"\napp = \"cg\"\n[params]\nmatrix = \"A.mtx\"\nrhs = \"b.mtx\"\ntolerance "
           "= 1e-11\noutput = \"x.mtx\"\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "5", dir_ / "mm.toml", "--json", dir_ / "mm.json"}), 0)
      << Log("spawner");
  auto j = Json("mm.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_EQ(j["tasks"], 5);  // tasks left out: one per --local daemon
  // Where the time went: the file was read, and the phases add up to the wall time.
  const auto& phases = j["phases"];
  double sum = 0;
  for (const char* phase : {"read", "prepare", "assign", "iterate", "gather"}) {
    ASSERT_TRUE(phases.contains(phase)) << j.dump();
    EXPECT_GE(phases[phase].get<double>(), 0) << phase;
    sum += phases[phase].get<double>();
  }
  EXPECT_GT(phases["read"].get<double>(), 0);
  EXPECT_GT(phases["iterate"].get<double>(), 0);
  EXPECT_NEAR(sum, j["wall_seconds"].get<double>(), 0.02 * j["wall_seconds"].get<double>() + 0.01)
      << j.dump();
  EXPECT_NE(Log("spawner").find(", phases read "), std::string::npos);
  auto x = cg::ReadMatrixMarketVector(dir_ / "x.mtx");
  ASSERT_TRUE(x.ok());
  Eigen::SparseMatrix<double> m(n, n);
  m.setFromTriplets(t.begin(), t.end());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(m);
  EXPECT_LT(MaxDiff(*x, direct.solve(rhs)), 1e-9);
}

// The same system with b scaled by 1e-6: the solution is 1e-6 times smaller, and the run must
// reach the same relative residual (an absolute local test would stop far too early).
TEST_F(CgRunTest, ScaledRightHandSideReachesTheSameRelativeResidual) {
  const int n = 3000;
  WriteFile(dir_ / "A.mtx", TridiagonalFile(n, 4.5, -2));
  std::string b = "%%MatrixMarket matrix array real general\n" + std::to_string(n) + " 1\n";
  Eigen::VectorXd rhs(n);
  for (int i = 0; i < n; ++i) {
    rhs[i] = 1e-6 * (1.0 + i % 3);
    char v[32];
    std::snprintf(v, sizeof v, "%.17g\n", rhs[i]);
    b += v;
  }
  WriteFile(dir_ / "b.mtx", b);
  WriteJob("small.toml",
           "name = \"small\"\napp = \"cg\"\ntimeout_s = 120\n[params]\nmatrix = \"A.mtx\"\n"
           "rhs = \"b.mtx\"\noutput = \"x.mtx\"\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "4", dir_ / "small.toml", "--json", dir_ / "s.json"}), 0)
      << Log("spawner");
  auto j = Json("s.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  auto x = cg::ReadMatrixMarketVector(dir_ / "x.mtx");
  ASSERT_TRUE(x.ok());
  Eigen::SimplicialLDLT<Eigen::SparseMatrix<double>> direct(Tridiagonal(n, 4.5, -2));
  const Eigen::VectorXd exact = direct.solve(rhs);
  EXPECT_LT(MaxDiff(*x, exact) / exact.cwiseAbs().maxCoeff(), 1e-7);
}

// A local test far looser than the residual asked for: every task converges early, the gathered
// residual falls short, and the run goes on with tightened local tests until it is met.
TEST_F(CgRunTest, LooseLocalTestIsTightenedUntilTheResidualIsMet) {
  WriteJob("loose.toml",
           "name = \"loose\"\napp = \"cg\"\ntimeout_s = 120\n[params]\nn = 20000\nbandwidth = 8\n"
           "seed = 3\ntolerance = 1e-2\nresidual_tolerance = 1e-10\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "4", dir_ / "loose.toml", "--json", dir_ / "l.json"}), 0)
      << Log("spawner");
  auto j = Json("l.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_LE(j["residual"].get<double>(), 1e-10);
  EXPECT_GE(j["tightenings"].get<int>(), 1);
  EXPECT_FALSE(j["partial"].get<bool>());
  EXPECT_TRUE(LogHas("spawner", "tightening the local tests")) << Log("spawner");
}

// A residual no double-precision solve can reach: the run ends failed, early, saying why, with
// the last result it gathered written and marked partial.
TEST_F(CgRunTest, UnreachableResidualFailsEarlyWithThePartialResult) {
  WriteJob("tight.toml",
           "name = \"tight\"\napp = \"cg\"\ntimeout_s = 300\n[params]\nn = 20000\nbandwidth = 8\n"
           "seed = 3\nresidual_tolerance = 1e-19\noutput = \"x.mtx\"\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "4", dir_ / "tight.toml", "--json", dir_ / "t.json"}), 1)
      << Log("spawner");
  auto j = Json("t.json");
  EXPECT_EQ(j["status"], "failed");
  EXPECT_NE(j["error"].get<std::string>().find("stagnates"), std::string::npos) << j["error"];
  EXPECT_TRUE(j["partial"].get<bool>());
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  EXPECT_LT(j["wall_seconds"].get<double>(), 60);
  auto x = cg::ReadMatrixMarketVector(dir_ / "x.mtx");
  ASSERT_TRUE(x.ok()) << x.status().message();
  EXPECT_EQ(x->size(), 20000u);
}

// Block Jacobi on [[1, 2], [2, 1]] in two blocks of one row: each iteration doubles the error,
// and a block whose iterate grows without bound ends the run "diverged" (a typed failure of the
// task, kDiverged, carried in its Result), not "failed", within seconds.
TEST_F(CgRunTest, ASystemThatDivergesEndsTheRunDiverged) {
  WriteFile(dir_ / "A.mtx", TridiagonalFile(2, 1, 2));
  WriteJob(
      "div.toml",
      "name = \"div\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\nmatrix = \"A.mtx\"\n"
      "partition = \"contiguous\"\noverlap = 0\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "2", dir_ / "div.toml", "--json", dir_ / "div.json"}), 1)
      << Log("spawner");
  auto j = Json("div.json");
  EXPECT_EQ(j["status"], "diverged") << j.dump();
  EXPECT_NE(j["error"].get<std::string>().find("grew without bound"), std::string::npos)
      << j["error"];
}

// A system block Jacobi converges on far too slowly for the time allowed (the 1-D Poisson problem
// on two blocks without overlap: about 1 - 4e-5 per iteration; the forecast said 700 s for a
// 60 s timeout): the run ends failed well before timeout_s, saying at what rate it went, with
// its last iterate written and marked partial. (It ends after about 15 s alone, 51 s under
// ctest -j4 beside two busy loops on 2 cores: anything short of the 60 s is an early end.)
TEST_F(CgRunTest, AHopelessSystemEndsEarlyWithItsLastIterate) {
  WriteFile(dir_ / "A.mtx", TridiagonalFile(50000, 2, -1));
  WriteJob(
      "hope.toml",
      "name = \"hope\"\napp = \"cg\"\ntimeout_s = 60\ntasks = 2\n[params]\nmatrix = \"A.mtx\"\n"
      "overlap = 0\ntolerance = 1e-12\noutput = \"x.mtx\"\n"
      "coarse = \"none\"\n");  // (two levels solve it at once)
  // Unbalanced: rows moving between the two blocks shift their boundary, which puts the rows
  // where block Jacobi's error lingers inside a block, and this system then converges after all.
  ASSERT_EQ(RunSpawner({"run", "--local", "2", dir_ / "hope.toml", "--balance", "off", "--json",
                        dir_ / "h.json"}),
            1)
      << Log("spawner");
  auto j = Json("h.json");
  EXPECT_EQ(j["status"], "failed");
  // ("at the rate of the last ..." or, on a slow sanitizer build, "the largest local change
  // stopped falling ...")
  EXPECT_NE(j["error"].get<std::string>().find("the run cannot converge in time: "),
            std::string::npos)
      << j["error"];
  EXPECT_LT(j["wall_seconds"].get<double>(), 57) << "it did not wait for timeout_s";
  EXPECT_TRUE(j["partial"].get<bool>());
  EXPECT_GT(j["residual"].get<double>(), 1e-8);
  EXPECT_TRUE(LogHas("spawner", "last iterate gathered")) << Log("spawner");
  auto x = cg::ReadMatrixMarketVector(dir_ / "x.mtx");
  ASSERT_TRUE(x.ok()) << x.status().message();
  EXPECT_EQ(x->size(), 50000u);
  // Its daemons closing when the spawner ended the run are not failures.
  EXPECT_EQ(j["failures"], 0) << j.dump();
}

// The same hopeless system with an acceptance test its iterates meet early: its local tests
// never settle, but the last iterate the early end gathers passes residual_tolerance, and that
// is the answer, said to be one.
TEST_F(CgRunTest, ALastIterateThatMeetsTheResidualToleranceIsConverged) {
  WriteFile(dir_ / "A.mtx", TridiagonalFile(50000, 2, -1));
  WriteJob("hope.toml",
           "name = \"hope\"\napp = \"cg\"\ntimeout_s = 60\ntasks = 2\n[params]\nmatrix = "
           "\"A.mtx\"\noverlap = 0\ntolerance = 1e-12\nresidual_tolerance = 0.5\noutput = "
           "\"x.mtx\"\ncoarse = \"none\"\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "2", dir_ / "hope.toml", "--balance", "off", "--json",
                        dir_ / "h.json"}),
            0)
      << Log("spawner");
  auto j = Json("h.json");
  EXPECT_EQ(j["status"], "converged") << j.dump();
  EXPECT_LE(j["residual"].get<double>(), 0.5);
  EXPECT_FALSE(j["partial"].get<bool>());
  ASSERT_TRUE(j.contains("notes")) << j.dump();
  EXPECT_NE(j["notes"].dump().find("the local tests had not settled"), std::string::npos)
      << j["notes"];
  EXPECT_EQ(j["failures"], 0);
}

// A symmetric singular system whose first block holds a singular 2 x 2 piece ([[1, 1], [1, 1]])
// and a negative entry: Cholesky cannot factor that block, LU finds it singular, and CG meets
// negative curvature on it. b = A 1 is consistent, so the block solved in the least-squares
// sense (direct), or by MINRES (inner CG), gives a run that converges, async and sync, with
// the run's notes saying how.
std::string SingularBlockFile(int n) {
  std::string entries = "1 1 1\n2 1 1\n2 2 1\n3 3 -2\n";
  int nnz = 4;
  for (int i = 4; i <= n; ++i) {
    entries += std::to_string(i) + " " + std::to_string(i) + " 4\n";
    ++nnz;
    if (i > 4) {
      entries += std::to_string(i) + " " + std::to_string(i - 1) + " -1\n";
      ++nnz;
    }
  }
  return "%%MatrixMarket matrix coordinate real symmetric\n" + std::to_string(n) + " " +
         std::to_string(n) + " " + std::to_string(nnz) + "\n" + entries;
}

TEST_F(CgRunTest, ASingularBlockIsSolvedInTheLeastSquaresSenseAndTheRunConverges) {
  WriteFile(dir_ / "S.mtx", SingularBlockFile(400));
  for (const char* inner : {"auto", "cg"}) {
    for (const char* mode : {"async", "sync"}) {
      const std::string name = std::string("sing-") + inner + "-" + mode;
      WriteJob(name + ".toml", "name = \"" + name +
                                   "\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\n"
                                   "matrix = \"S.mtx\"\npartition = \"contiguous\"\noverlap = 0\n"
                                   "inner = \"" +
                                   inner + "\"\n");
      std::vector<std::string> args{
          "run", "--local", "2", dir_ / (name + ".toml"), "--json", dir_ / (name + ".json")};
      if (std::string(mode) == "sync") args.push_back("--sync");
      ASSERT_EQ(RunSpawner(args, name), 0) << Log(name);
      auto j = Json(name + ".json");
      EXPECT_EQ(j["status"], "converged") << name << ": " << j.dump();
      EXPECT_LT(j["residual"].get<double>(), 1e-8) << name;
      ASSERT_TRUE(j.contains("notes")) << name << ": " << j.dump();
      EXPECT_NE(j["notes"].dump().find(std::string(inner) == "cg" ? "MINRES" : "least-squares"),
                std::string::npos)
          << name << ": " << j["notes"];
    }
  }
}

// A symmetric negative definite system (-tridiag(4, -1)): the factor path takes LU, the inner
// CG path MINRES; both converge where CG broke down at its first step.
TEST_F(CgRunTest, ANegativeDefiniteSystemConvergesWithEitherInnerSolver) {
  WriteFile(dir_ / "N.mtx", TridiagonalFile(2000, -4, 1));
  for (const char* inner : {"direct", "cg"}) {
    const std::string name = std::string("neg-") + inner;
    WriteJob(name + ".toml", "name = \"" + name +
                                 "\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\n"
                                 "matrix = \"N.mtx\"\ninner = \"" +
                                 inner + "\"\n");
    ASSERT_EQ(RunSpawner({"run", "--local", "2", dir_ / (name + ".toml"), "--json",
                          dir_ / (name + ".json")},
                         name),
              0)
        << Log(name);
    auto j = Json(name + ".json");
    EXPECT_EQ(j["status"], "converged") << j.dump();
    EXPECT_LT(j["residual"].get<double>(), 1e-8);
  }
}

// An unsymmetric system with zeros on its diagonal (a rotation of a diagonally dominant one):
// its rows are permuted to put the large entries on the diagonal (apps/cg/matching.h) and it
// runs, where it was refused with "zero on the diagonal".
TEST_F(CgRunTest, ASystemWithZerosOnItsDiagonalIsPermutedAndConverges) {
  const int n = 600;
  std::string entries;
  int nnz = 0;
  // Row i holds what would be row (i + 1) mod n of a diagonally dominant matrix.
  for (int i = 0; i < n; ++i) {
    const int r = (i + 1) % n;
    entries += std::to_string(i + 1) + " " + std::to_string(r + 1) + " 5\n";
    ++nnz;
    for (int c : {r - 1, r + 1}) {
      if (c < 0 || c >= n) continue;
      entries += std::to_string(i + 1) + " " + std::to_string(c + 1) + " -1\n";
      ++nnz;
    }
  }
  WriteFile(dir_ / "Z.mtx", "%%MatrixMarket matrix coordinate real general\n" + std::to_string(n) +
                                " " + std::to_string(n) + " " + std::to_string(nnz) + "\n" +
                                entries);
  WriteJob("zero.toml",
           "name = \"zero\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\nmatrix = "
           "\"Z.mtx\"\noutput = \"z.mtx\"\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "2", dir_ / "zero.toml", "--json", dir_ / "z.json"}), 0)
      << Log("spawner");
  auto j = Json("z.json");
  EXPECT_EQ(j["status"], "converged") << j.dump();
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  EXPECT_TRUE(LogHas("spawner", "rows permuted")) << Log("spawner");
  // The solution is the system's own (b = A 1): permuting rows changes no unknown.
  auto x = cg::ReadMatrixMarketVector(dir_ / "z.mtx");
  ASSERT_TRUE(x.ok()) << x.status().message();
  for (double v : *x) EXPECT_NEAR(v, 1, 1e-6);
}

// A 2-D Poisson grid (5-point stencil, rows numbered along the grid) as a Matrix Market file.
std::string GridFile(int side) {
  const int n = side * side;
  std::string entries;
  int nnz = 0;
  for (int i = 0; i < n; ++i) {
    entries += std::to_string(i + 1) + " " + std::to_string(i + 1) + " 4\n";
    ++nnz;
    if (i % side + 1 < side) {
      entries += std::to_string(i + 2) + " " + std::to_string(i + 1) + " -1\n";
      ++nnz;
    }
    if (i + side < n) {
      entries += std::to_string(i + side + 1) + " " + std::to_string(i + 1) + " -1\n";
      ++nnz;
    }
  }
  return "%%MatrixMarket matrix coordinate real symmetric\n" + std::to_string(n) + " " +
         std::to_string(n) + " " + std::to_string(nnz) + "\n" + entries;
}

// Daemons of powers 1, 1 and 3: the blocks follow the powers (about 3x the rows on the fast
// one), from a file (METIS with target weights) and for a generated system (uneven slices whose
// starts the daemons are sent), and the answers are still right.
TEST_F(CgRunTest, BlocksFollowThePowersOfTheirDaemons) {
  const std::string sn = StartSupernode("sn1");
  StartDaemon("d1", {sn}, "key.toml", "1");
  StartDaemon("d2", {sn}, "key.toml", "1");
  StartDaemon("d3", {sn}, "key.toml", "3");
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("d1", "registered") && LogHas("d2", "registered") && LogHas("d3", "registered");
  })) << Log("d3");
  WriteFile(dir_ / "grid.mtx", GridFile(60));
  WriteJob(
      "grid.toml",
      "name = \"grid\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n[params]\nmatrix = \"grid.mtx\"\n"
      "partition = \"metis\"\n");
  WriteJob("gen.toml",
           "name = \"gen\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n[params]\nn = "
           "30000\nbandwidth = 6\n"
           "seed = 5\ntolerance = 1e-10\n");
  // The last "... partition into 3 blocks of A to B rows" (the reweighed one): B / A is about 3.
  auto spread = [&](const std::string& log, const std::string& kind) {
    const std::string text = Log(log);
    const std::regex blocks(kind + " partition into 3 blocks of ([0-9]+) to ([0-9]+) rows");
    double ratio = -1;
    for (std::sregex_iterator m(text.begin(), text.end(), blocks), end; m != end; ++m) {
      ratio = std::stod((*m)[2]) / std::stod((*m)[1]);
    }
    return ratio;
  };
  for (const std::string job : {"grid", "gen"}) {
    SCOPED_TRACE(job);
    ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn,
                          dir_ / (job + ".toml"), "--json", dir_ / (job + ".json")},
                         job),
              0)
        << Log(job);
    auto j = Json(job + ".json");
    EXPECT_EQ(j["status"], "converged");
    EXPECT_LT(j["residual"].get<double>(), 1e-8);
    EXPECT_TRUE(LogHas(job, "blocks weighted by the powers of their daemons (1 to 3)")) << Log(job);
    const double ratio = spread(job, job == "grid" ? "METIS" : "contiguous");
    EXPECT_GT(ratio, 2.5) << Log(job);
    EXPECT_LT(ratio, 3.5) << Log(job);
  }
  // The generated system's error against its known solution (all ones).
  EXPECT_LT(Json("gen.json")["result"]["error_inf"].get<double>(), 1e-8) << Json("gen.json").dump();
}

// The bytes of task data the spawner sent in chunks, from its "sending task N's data (B bytes)"
// lines (data under 1 MiB goes inline, unlogged).
uint64_t TaskDataBytes(const std::string& log) {
  const std::regex sent("sending task [0-9]+'s data \\(([0-9]+) bytes\\)");
  uint64_t bytes = 0;
  for (std::sregex_iterator m(log.begin(), log.end(), sent), end; m != end; ++m)
    bytes += std::stoull((*m)[1]);
  return bytes;
}

// Daemons that see the spawner's files build their own blocks from the matrix's cache
// (docs/user-guide.md, daemons that read the matrix themselves): by default on --local, when the
// job says so elsewhere. The METIS blocks with overlap they build give the answer the shipped
// blocks give, and what travels is a fraction of them.
TEST_F(CgRunTest, DaemonsThatSeeTheFileBuildTheirOwnBlocksFromItsCache) {
  WriteFile(dir_ / "grid.mtx", GridFile(300));
  const std::string params =
      "[params]\nmatrix = \"grid.mtx\"\npartition = \"metis\"\ntolerance = 1e-10\n";
  WriteJob("shared.toml", "name = \"shared\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n" + params +
                              "output = \"x1.mtx\"\n");
  WriteJob("sent.toml", "name = \"sent\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n" + params +
                            "output = \"x2.mtx\"\nshared_input = false\n");
  for (const std::string job : {"shared", "sent"}) {
    ASSERT_EQ(
        RunSpawner(
            {"run", "--local", "3", dir_ / (job + ".toml"), "--json", dir_ / (job + ".json")}, job),
        0)
        << Log(job);
    EXPECT_EQ(Json(job + ".json")["status"], "converged") << Log(job);
    EXPECT_LT(Json(job + ".json")["residual"].get<double>(), 1e-8);
  }
  EXPECT_TRUE(LogHas("shared", "the daemons build their own blocks from")) << Log("shared");
  EXPECT_FALSE(LogHas("sent", "the daemons build their own blocks")) << Log("sent");
  // Each block (about 30,000 rows of 5 entries and their overlap) is over the 1 MiB the spawner
  // sends inline, so it goes in chunks and says so; each outline is under it.
  EXPECT_GT(TaskDataBytes(Log("sent")), 3u << 20) << Log("sent");
  EXPECT_EQ(TaskDataBytes(Log("shared")), 0u) << Log("shared");
  auto x1 = cg::ReadMatrixMarketVector(dir_ / "x1.mtx");
  auto x2 = cg::ReadMatrixMarketVector(dir_ / "x2.mtx");
  ASSERT_TRUE(x1.ok() && x2.ok());
  EXPECT_LT(MaxDiff(*x1, Eigen::Map<const Eigen::VectorXd>(x2->data(),
                                                           static_cast<Eigen::Index>(x2->size()))),
            1e-7);

  // Daemons started by hand on this host: the job says they see the file.
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2", "d3"}) StartDaemon(d, {sn});
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("d1", "registered") && LogHas("d2", "registered") && LogHas("d3", "registered");
  }));
  WriteJob("told.toml", "name = \"told\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n" + params +
                            "shared_input = true\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "told.toml",
                        "--json", dir_ / "told.json"},
                       "told"),
            0)
      << Log("told");
  EXPECT_EQ(Json("told.json")["status"], "converged");
  EXPECT_TRUE(LogHas("told", "the daemons build their own blocks from")) << Log("told");
  // Without the cache the daemons could not read the matrix: the blocks are sent, and the run says
  // so.
  WriteJob("nocache.toml", "name = \"nocache\"\napp = \"cg\"\ntasks = 3\ntimeout_s = 120\n" +
                               params + "matrix_cache = false\n");
  ASSERT_EQ(
      RunSpawner({"run", "--local", "3", dir_ / "nocache.toml", "--json", dir_ / "nocache.json"},
                 "nocache"),
      0)
      << Log("nocache");
  EXPECT_TRUE(LogHas("nocache", "the blocks are sent: the daemons need the matrix's cache"))
      << Log("nocache");
}

// Blocks of about 10 MB against daemons that accept 4 MiB frames: the data goes in chunks.
// (The plugin still travels in one frame: 2 MB under ASan.)
TEST_F(CgRunTest, BlocksLargerThanTheFrameLimitAreSentInChunks) {
  WriteFile(dir_ / "small-frames.toml",
            ReadFile(dir_ / "key.toml") + "max_frame_bytes = 4194304\n");
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {sn}, "small-frames.toml");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "registered") && LogHas("d2", "registered"); }))
      << Log("d1");
  WriteFile(dir_ / "T.mtx", TridiagonalFile(400000));
  WriteJob(
      "big.toml",
      "name = \"big\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\nmatrix = \"T.mtx\"\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "small-frames.toml", "--supernode", sn,
                        dir_ / "big.toml", "--json", dir_ / "big.json"}),
            0)
      << Log("spawner") << Log("d1");
  EXPECT_EQ(Json("big.json")["status"], "converged");
  EXPECT_LT(Json("big.json")["residual"].get<double>(), 1e-8);
  EXPECT_TRUE(LogHas("spawner", "chunks")) << Log("spawner");
}

// Frames of 1 MiB everywhere and 200,000 rows a task: each result, snapshot and checkpoint (1.6 MB
// and more) is larger than a frame, goes in parts (lib/net/message_parts.h), and the run
// converges with every checkpoint acknowledged.
TEST_F(CgRunTest, ResultsAndCheckpointsLargerThanAFrameGoInParts) {
  WriteFile(dir_ / "mib-frames.toml", ReadFile(dir_ / "key.toml") + "max_frame_bytes = 1048576\n");
  const std::string sn = StartSupernode("sn1", {}, "127.0.0.1:0", "mib-frames.toml");
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {sn}, "mib-frames.toml");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "registered") && LogHas("d2", "registered"); }))
      << Log("d1");
  WriteFile(dir_ / "T.mtx", TridiagonalFile(400000));
  WriteJob("parts.toml",
           "name = \"parts\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\ncheckpoint_every = 2\n"
           "[params]\nmatrix = \"T.mtx\"\noutput = \"x.mtx\"\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "mib-frames.toml", "--supernode", sn,
                        dir_ / "parts.toml", "--json", dir_ / "parts.json"}),
            0)
      << Log("spawner") << Log("d1");
  auto j = Json("parts.json");
  EXPECT_EQ(j["status"], "converged");
  EXPECT_LT(j["residual"].get<double>(), 1e-8);
  const auto written = j["checkpoints"]["written"].get<uint64_t>();
  ASSERT_GT(written, 0u) << j.dump();
  EXPECT_GT(j["checkpoints"]["bytes"].get<uint64_t>() / written, 1u << 20) << j.dump();
  for (const char* log : {"spawner", "d1", "d2", "sn1"})
    EXPECT_FALSE(LogHas(log, "exceeds")) << Log(log);
  auto x = cg::ReadMatrixMarketVector(dir_ / "x.mtx");
  ASSERT_TRUE(x.ok()) << x.status().message();
  EXPECT_EQ(x->size(), 400000u);
}

// A plugin larger than a frame (the cg plugin: about 0.5 MB, 2 MB under ASan) goes in chunks
// too, and is checked whole against the hash the task names.
TEST_F(CgRunTest, APluginLargerThanTheFrameLimitIsSentInChunks) {
  WriteFile(dir_ / "tiny-frames.toml", ReadFile(dir_ / "key.toml") + "max_frame_bytes = 262144\n");
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2"}) StartDaemon(d, {sn}, "tiny-frames.toml");
  ASSERT_TRUE(WaitUntil([&] { return LogHas("d1", "registered") && LogHas("d2", "registered"); }))
      << Log("d1");
  WriteJob("p.toml",
           "name = \"p\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\nn = 20000\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "tiny-frames.toml", "--supernode", sn,
                        dir_ / "p.toml", "--json", dir_ / "p.json"}),
            0)
      << Log("spawner") << Log("d1");
  EXPECT_EQ(Json("p.json")["status"], "converged");
  EXPECT_TRUE(std::regex_search(
      Log("spawner"), std::regex("sending plugin .* bytes in [0-9]+ chunks\\) to daemon d1")))
      << Log("spawner");
}

// A spawner whose frames are larger than the daemons accept: the daemon says why it closes,
// and the run fails naming the limit instead of replacing daemon after daemon.
TEST_F(CgRunTest, AFrameOverTheDaemonsLimitFailsTheRunSayingWhy) {
  WriteFile(dir_ / "small-frames.toml",
            ReadFile(dir_ / "key.toml") + "max_frame_bytes = 1048576\n");
  const std::string sn = StartSupernode("sn1");
  for (const char* d : {"d1", "d2", "d3"}) StartDaemon(d, {sn}, "small-frames.toml");
  ASSERT_TRUE(WaitUntil([&] {
    return LogHas("d1", "registered") && LogHas("d2", "registered") && LogHas("d3", "registered");
  }));
  WriteFile(dir_ / "T.mtx", TridiagonalFile(400000));
  WriteJob(
      "big.toml",
      "name = \"big\"\napp = \"cg\"\ntasks = 2\ntimeout_s = 120\n[params]\nmatrix = \"T.mtx\"\n");
  ASSERT_EQ(RunSpawner({"run", "--config", dir_ / "key.toml", "--supernode", sn, dir_ / "big.toml",
                        "--json", dir_ / "f.json"}),
            1)
      << Log("spawner");
  const std::string error = Json("f.json")["error"];
  EXPECT_NE(error.find("exceeds the limit of 1048576"), std::string::npos) << error;
  EXPECT_TRUE(LogHas("d1", "exceeds the limit") || LogHas("d2", "exceeds the limit") ||
              LogHas("d3", "exceeds the limit"))
      << Log("d1");
}

TEST_F(CgRunTest, BadInputFailsBeforeAnyDaemonStarts) {
  WriteFile(dir_ / "rect.mtx", "%%MatrixMarket matrix coordinate real general\n2 3 1\n1 1 1\n");
  WriteFile(dir_ / "zero.mtx",
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 1\n1 2 1\n");
  WriteFile(dir_ / "sparse.mtx", "%%MatrixMarket matrix coordinate real general\n2 2 1\n1 1 1\n");
  WriteFile(dir_ / "garbage.mtx",
            "%%MatrixMarket matrix coordinate real general\n2 2 2\n1 1 one\n2 2 1\n");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"matrix = \"rect.mtx\"", "not square"},
      {"matrix = \"zero.mtx\"", "zero on the diagonal at row 2"},
      {"matrix = \"sparse.mtx\"", "some diagonal entry is missing"},
      {"matrix = \"garbage.mtx\"", "garbage.mtx:3: entry must be 'ROW COL VALUE'"},
      {"matrix = \"absent.mtx\"", "cannot read matrix file"},
      {"n = 3", "4 tasks for 3 rows"},
  };
  for (const auto& [param, message] : cases) {
    WriteJob("bad.toml", "name = \"bad\"\napp = \"cg\"\n[params]\n" + param + "\n");
    ASSERT_EQ(RunSpawner({"run", "--local", "4", dir_ / "bad.toml"}, "bad"), 2) << message;
    const std::string out = Log("bad");
    EXPECT_NE(out.find(message), std::string::npos) << out;
    EXPECT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    EXPECT_EQ(out.find("local cluster"), std::string::npos) << "a daemon was started";
  }
  WriteJob("ring.toml", "name = \"r\"\napp = \"ring\"\n[params]\nrounds = 3\n");
  ASSERT_EQ(RunSpawner({"run", "--local", "2", dir_ / "ring.toml", "--sync"}, "bad"), 2);
  EXPECT_NE(Log("bad").find("--sync: app ring has no synchronous mode"), std::string::npos)
      << Log("bad");
}

}  // namespace
}  // namespace aiac::testing
