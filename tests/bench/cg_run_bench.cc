// Whole run: the CG job on N local daemons, asynchronous and synchronous, against a
// single-process Eigen ConjugateGradient solve of the same generated system, all measured in
// this run. Prints wall times and ratios; never fails on a time.
// Run: build/bin/cg_run_bench [n bandwidth daemons]
#include <unistd.h>

#include <Eigen/IterativeLinearSolvers>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "apps/cg/cg_problem.h"
#include "spawner/child_process.h"

using namespace aiac;
using Clock = std::chrono::steady_clock;

namespace {

struct RunResult {
  double wall = -1;  // spawner process, start to exit (local cluster included)
  double job = -1;   // the summary's wall_seconds (daemons granted to result gathered)
  double residual = -1;
  std::string iterations;
};

RunResult RunSpawner(const std::string& dir, const std::string& job, int daemons, bool sync) {
  const std::string json = dir + (sync ? "/sync.json" : "/async.json");
  std::vector<std::string> argv{spawner::SelfDirectory() + "/aiac-spawner",
                                "run",
                                "--local",
                                std::to_string(daemons),
                                job,
                                "--json",
                                json,
                                "--log-level",
                                "warn"};
  if (sync) argv.push_back("--sync");
  const auto t0 = Clock::now();
  auto child = spawner::ChildProcess::Spawn(argv, dir + (sync ? "/sync.log" : "/async.log"));
  RunResult r;
  if (!child.ok() || child->WaitFor(std::chrono::minutes(10)).value_or(-1) != 0) return r;
  r.wall = std::chrono::duration<double>(Clock::now() - t0).count();
  std::ifstream in(json);
  auto j = nlohmann::json::parse(in);
  r.job = j["wall_seconds"].get<double>();
  r.residual = j["residual"].get<double>();
  r.iterations = std::to_string(j["iterations"]["min"].get<int>()) + ".." +
                 std::to_string(j["iterations"]["max"].get<int>());
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const int n = argc > 1 ? std::atoi(argv[1]) : 200000;
  const int bw = argc > 2 ? std::atoi(argv[2]) : 12;
  const int daemons = argc > 3 ? std::atoi(argv[3]) : 4;
  const double tolerance = 1e-9;
  const std::string dir = std::filesystem::temp_directory_path().string() + "/aiac-cg-bench-" +
                          std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string job = dir + "/cg.toml";
  std::ofstream(job) << "name = \"cg-bench\"\napp = \"cg\"\ntimeout_s = 600\n[params]\nn = " << n
                     << "\nbandwidth = " << bw << "\nseed = 7\ntolerance = " << tolerance << "\n";

  // Single process: generate and solve with Eigen to the residual the distributed run reaches.
  auto t0 = Clock::now();
  cg::Problem p = cg::Generate({n, bw, 7});
  const double generate = std::chrono::duration<double>(Clock::now() - t0).count();
  t0 = Clock::now();
  Eigen::ConjugateGradient<cg::SpMat, Eigen::Lower | Eigen::Upper,
                           Eigen::DiagonalPreconditioner<double>>
      solver;
  solver.setTolerance(1e-11);
  solver.compute(p.a);
  Eigen::VectorXd x = solver.solve(p.b);
  const double solve = std::chrono::duration<double>(Clock::now() - t0).count();
  const double eigen_residual = (p.b - p.a * x).norm() / p.b.norm();

  RunResult async = RunSpawner(dir, job, daemons, false);
  RunResult sync = RunSpawner(dir, job, daemons, true);
  std::filesystem::remove_all(dir);

  std::printf("system n = %d, bandwidth %d; %d daemons on %u cores\n", n, bw, daemons,
              std::thread::hardware_concurrency());
  std::printf("%-28s %8.3f s (generate %.3f s + solve %.3f s), residual %.2e, %ld iterations\n",
              "Eigen CG, one process", generate + solve, generate, solve, eigen_residual,
              static_cast<long>(solver.iterations()));
  std::printf("%-28s %8.3f s (job %.3f s), residual %.2e, iterations %s\n",
              "aiac async, local daemons", async.wall, async.job, async.residual,
              async.iterations.c_str());
  std::printf("%-28s %8.3f s (job %.3f s), residual %.2e, iterations %s\n",
              "aiac sync, local daemons", sync.wall, sync.job, sync.residual,
              sync.iterations.c_str());
  if (async.job > 0 && sync.job > 0) {
    std::printf("async / sync job time: %.2fx\n", async.job / sync.job);
    std::printf("aiac async job time / Eigen one-process time: %.2fx\n",
                async.job / (generate + solve));
  } else {
    std::printf("a distributed run failed: see the logs above\n");
  }
  return 0;
}
