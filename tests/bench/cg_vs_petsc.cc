// The CG app against PETSc (docs/results.md), on the same Matrix Market files, the same number
// of processes and the same machine, in one run: aiac async and sync (`aiac-spawner run --local
// P`, a first run: the matrix parsed from the text, its cache written, the daemons building
// their blocks from it), aiac async again from the matrix's binary cache (a second run), and
// PETSc's KSPCG + block Jacobi with ICC(0) sub-blocks (petsc_cg_driver under `mpiexec -n P`;
// `--pc gamg`: its algebraic multigrid, the best PETSc has for Poisson problems), both stopping
// at a relative residual of 1e-8. Whole-process wall times, printed as ratios to
// PETSc's; every solution's residual ||b - A x|| / ||b|| is computed here again, from the files.
// Also the input side against PETSc's read of the file (the input-side goal, docs/results.md):
// aiac's read + prepare + assign phases over the driver's "read" time. Each configuration runs
// twice (PETSc last, then first) and the faster run is shown. Never fails on a time; fails when a
// run fails or a residual is not met.
//
//   cg_vs_petsc [--tasks P] [--pc bjacobi|gamg] [--systems LIST]
//
// LIST: comma-separated, of bandedN (N thousand rows, bandwidth 8), poissonK (the 2-D Poisson
// problem of a K x K grid) and cubeK (3-D, K x K x K); default
// banded50k,banded200k,banded800k,poisson300,poisson700.
//
// Built only when PETSc is installed (`conf/bootstrap.sh --with-petsc`).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "apps/cg/cg_app.h"
#include "apps/cg/cg_problem.h"
#include "apps/cg/matrix_cache.h"
#include "apps/cg/matrix_market.h"
#include "bench/shared_tunables.h"
#include "spawner/child_process.h"

using namespace aiac;
using Clock = std::chrono::steady_clock;

namespace {

constexpr double kResidual = 1e-8;

struct Run {
  bool ok = false;
  double wall = 0;
  double residual = -1;  // recomputed here from the solution file
  double input = 0;      // aiac: read + prepare + assign phases; PETSc: its read of the file
  std::string detail;    // iterations, phases
};

// Keeps in `best` the faster of the runs of one configuration; a failed run, once kept, stays
// (so the failure shows).
void Keep(std::optional<Run>& best, Run run) {
  if (!best || (best->ok && (!run.ok || run.wall < best->wall))) best = std::move(run);
}

double Seconds(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double ResidualOf(const cg::SpMat& a, const Eigen::VectorXd& b, const std::string& solution) {
  auto x = cg::ReadMatrixMarketVector(solution, a.rows());
  if (!x.ok()) return -1;
  const Eigen::VectorXd r = b - a * Eigen::Map<Eigen::VectorXd>(x->data(), a.rows());
  return r.norm() / b.norm();
}

std::string Fixed(double v, int digits = 2) {
  char s[32];
  std::snprintf(s, sizeof s, "%.*f", digits, v);
  return s;
}

Run RunAiac(const std::string& dir, const std::string& name, const std::string& matrix, int tasks,
            bool sync, bool cache, const cg::SpMat& a, const Eigen::VectorXd& b) {
  const std::string tag = name + (sync ? "-sync" : cache ? "-cached" : "-async");
  const std::string job = dir + "/" + tag + ".toml", json = dir + "/" + tag + ".json",
                    x = dir + "/" + tag + ".x.mtx";
  std::ofstream(job) << "name = \"" << tag
                     << "\"\napp = \"cg\"\ntimeout_s = 900\n[params]\nmatrix = \"" << matrix
                     << "\"\nresidual_tolerance = " << kResidual << "\noutput = \"" << x << "\"\n";
  // A first run parses the text (and writes the cache); a second one finds the cache.
  if (!cache) std::filesystem::remove(cg::MatrixCachePath(matrix));
  std::vector<std::string> argv{spawner::SelfDirectory() + "/aiac-spawner",
                                "run",
                                "--local",
                                std::to_string(tasks),
                                job,
                                "--json",
                                json,
                                "--log-level",
                                "warn"};
  if (sync) argv.push_back("--sync");
  Run r;
  const auto t0 = Clock::now();
  auto child = spawner::ChildProcess::Spawn(argv, dir + "/" + tag + ".log");
  if (!child.ok() || child->WaitFor(std::chrono::minutes(15)).value_or(-1) != 0) {
    r.detail = "failed: see " + dir + "/" + tag + ".log";
    return r;
  }
  r.wall = Seconds(t0);
  std::ifstream in(json);
  const auto j = nlohmann::json::parse(in);
  const auto& p = j["phases"];
  r.detail = "iterations " + std::to_string(j["iterations"]["min"].get<int>()) + ".." +
             std::to_string(j["iterations"]["max"].get<int>()) + ", phases read " +
             Fixed(p["read"]) + " / prepare " + Fixed(p["prepare"]) + " / assign " +
             Fixed(p["assign"]) + " / iterate " + Fixed(p["iterate"]) + " / gather " +
             Fixed(p["gather"]) + " s";
  r.input = p["read"].get<double>() + p["prepare"].get<double>() + p["assign"].get<double>();
  r.residual = ResidualOf(a, b, x);
  r.ok = j["status"] == "converged";
  return r;
}

Run RunPetsc(const std::string& dir, const std::string& name, const std::string& matrix, int tasks,
             const std::string& pc, const cg::SpMat& a, const Eigen::VectorXd& b) {
  const std::string x = dir + "/" + name + ".petsc.x.mtx", log = dir + "/" + name + ".petsc.log";
  std::vector<std::string> argv{MPIEXEC,
                                "-n",
                                std::to_string(tasks),
                                "--oversubscribe",
                                spawner::SelfDirectory() + "/petsc_cg_driver",
                                matrix,
                                "1e-8",
                                x};
  if (pc == "gamg") argv.insert(argv.end(), {"-pc_type", "gamg"});
  Run r;
  const auto t0 = Clock::now();
  auto child = spawner::ChildProcess::Spawn(argv, log);
  if (!child.ok() || child->WaitFor(std::chrono::minutes(15)).value_or(-1) != 0) {
    r.detail = "failed: see " + log;
    return r;
  }
  r.wall = Seconds(t0);
  std::ifstream in(log);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("{", 0) != 0) continue;
    const auto j = nlohmann::json::parse(line);
    r.detail = "iterations " + std::to_string(j["iterations"].get<int>()) + ", read " +
               Fixed(j["read"]) + " / assemble " + Fixed(j["assemble"]) + " / solve " +
               Fixed(j["solve"]) + " s";
    r.ok = j["reason"].get<int>() > 0;
    r.input = j["read"].get<double>();
  }
  r.residual = ResidualOf(a, b, x);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  int tasks = 4;
  std::string systems = "banded50k,banded200k,banded800k,poisson300,poisson700", pc = "bjacobi";
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--tasks")) tasks = std::atoi(argv[i + 1]);
    if (!std::strcmp(argv[i], "--systems")) systems = argv[i + 1];
    if (!std::strcmp(argv[i], "--pc")) pc = argv[i + 1];
  }
  if (pc != "bjacobi" && pc != "gamg") {
    std::fprintf(stderr, "cg_vs_petsc: --pc is bjacobi or gamg, not %s\n", pc.c_str());
    return 2;
  }
  // mpiexec as root (the bench machine) must be allowed; 4 processes on 2 cores oversubscribe.
  setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
  setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
  const std::string dir = std::filesystem::temp_directory_path().string() + "/aiac-petsc-bench-" +
                          std::to_string(getpid());
  std::filesystem::create_directories(dir);
  const std::string tunables = bench::ShareMallocTunables();
  std::printf(
      "aiac CG vs PETSc KSPCG + %s, %d processes each, %u cores, relative residual %.0e, both "
      "with GLIBC_TUNABLES=%s\n",
      pc == "gamg" ? "GAMG" : "bjacobi/ICC(0)", tasks, std::thread::hardware_concurrency(),
      kResidual, tunables.c_str());
  std::printf("%-12s %9s | %8s %8s %8s %8s | %11s %10s %12s\n", "system", "rows", "async", "sync",
              "cached", "PETSc", "async/PETSc", "sync/PETSc", "cached/PETSc");
  bool all_ok = true;
  std::stringstream details;
  std::stringstream list(systems);
  for (std::string name; std::getline(list, name, ',');) {
    cg::SpMat a;
    if (name.rfind("banded", 0) == 0) {
      const int n = std::atoi(name.c_str() + 6) * 1000;
      a = cg::Generate({n, 8, 7}).a;
    } else if (name.rfind("poisson", 0) == 0) {
      const int k = std::atoi(name.c_str() + 7);
      a = cg::GridLaplacian(k, k);
    } else if (name.rfind("cube", 0) == 0) {
      a = cg::GridLaplacian3d(std::atoi(name.c_str() + 4));
    } else {
      std::fprintf(stderr, "cg_vs_petsc: unknown system %s\n", name.c_str());
      return 2;
    }
    a.makeCompressed();
    const Eigen::VectorXd b = a * Eigen::VectorXd::Ones(a.cols());
    const std::string matrix = dir + "/" + name + ".mtx";
    if (Status written = cg::WriteMatrixMarketMatrix(matrix, a, /*symmetric=*/true);
        !written.ok()) {
      std::fprintf(stderr, "%s\n", written.message().c_str());
      return 1;
    }
    // Each run starts with nothing left to write back to the disk (neither the file just written
    // nor the cache the run before wrote). That alone did not even the order out: on this VM
    // whichever ran first after the file was written was still slowed, aiac's first run by up to
    // 2x. So two rounds, PETSc last then first, and the faster of each pair is kept (the order of
    // the aiac runs stays: a cached run needs the cache a first run wrote).
    std::optional<Run> best_petsc, best_async, best_sync, best_cached;
    for (int round = 0; round < 2; ++round) {
      if (round == 1) Keep(best_petsc, (::sync(), RunPetsc(dir, name, matrix, tasks, pc, a, b)));
      Keep(best_async, (::sync(), RunAiac(dir, name, matrix, tasks, false, false, a, b)));
      Keep(best_sync, (::sync(), RunAiac(dir, name, matrix, tasks, true, false, a, b)));
      Keep(best_cached, (::sync(), RunAiac(dir, name, matrix, tasks, false, true, a, b)));
      if (round == 0) Keep(best_petsc, (::sync(), RunPetsc(dir, name, matrix, tasks, pc, a, b)));
    }
    const Run &petsc = *best_petsc, &async = *best_async, &sync = *best_sync,
              &cached = *best_cached;
    auto ratio = [&](const Run& r) {
      return r.ok && petsc.ok ? Fixed(r.wall / petsc.wall) + "x" : std::string("-");
    };
    std::printf("%-12s %9ld | %7.2fs %7.2fs %7.2fs %7.2fs | %11s %10s %12s\n", name.c_str(),
                static_cast<long>(a.rows()), async.wall, sync.wall, cached.wall, petsc.wall,
                ratio(async).c_str(), ratio(sync).c_str(), ratio(cached).c_str());
    std::fflush(stdout);
    for (const auto& [what, r] : {std::pair<const char*, const Run&>{"aiac async", async},
                                  {"aiac sync", sync},
                                  {"aiac cached", cached},
                                  {"PETSc", petsc}}) {
      details << "  " << name << ", " << what << ": residual " << r.residual << ", " << r.detail;
      if (&r != &petsc && r.ok && petsc.ok) {
        details << "; read+prepare+assign " << Fixed(r.input)
                << " s = " << Fixed(r.input / petsc.input) << "x PETSc's read";
      }
      details << "\n";
      if (!r.ok || !(r.residual >= 0 && r.residual <= 1.01 * kResidual)) {
        details << "    ^ FAILED: not converged to the residual\n";
        all_ok = false;
      }
    }
  }
  std::printf("%s", details.str().c_str());
  std::filesystem::remove_all(dir);
  return all_ok ? 0 : 1;
}
