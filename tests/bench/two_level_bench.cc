// One level against two (params.coarse, docs/user-guide.md "Two-level"): the CG app's tasks run
// in one process (app::RunLocally, async and sync) on a 2-D and a 3-D Poisson problem, with
// coarse = "none" and "harmonic"; prints the outer iterations and the time of each, and the
// ratios two-level / one-level.
//   two_level_bench [K2 [TASKS]]     K2 x K2 grid (default 200) and a 3-D grid of about as many
//                                    rows; TASKS tasks (default 5)
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "app/local_run.h"
#include "apps/cg/cg_app.h"
#include "apps/cg/matrix_market.h"

namespace {

struct Outcome {
  uint64_t iterations = 0;
  double seconds = 0;
  double residual = 0;
};

Outcome Run(const std::string& matrix, const char* coarse, bool sync, uint32_t tasks) {
  aiac::cg::CgApp app;
  aiac::app::LocalRunOptions o;
  o.tasks = tasks;
  o.params = {{"matrix", matrix}, {"coarse", coarse}, {"matrix_cache", "false"}};
  o.sync = sync;
  o.log = [](aiac::app::LogLevel, std::string_view) {};
  const auto start = std::chrono::steady_clock::now();
  auto r = aiac::app::RunLocally(app, o);
  if (!r.ok()) {
    std::fprintf(stderr, "two_level_bench: %s\n", r.status().message().c_str());
    std::exit(1);
  }
  Outcome out;
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (uint64_t i : r->iterations) out.iterations = std::max(out.iterations, i);
  out.residual = r->report.residual;
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const int k2 = argc > 1 ? std::atoi(argv[1]) : 200;
  const auto tasks = static_cast<uint32_t>(argc > 2 ? std::atoi(argv[2]) : 5);
  if (k2 < 8 || tasks < 2) {
    std::fprintf(stderr, "usage: two_level_bench [K2 >= 8 [TASKS >= 2]]\n");
    return 2;
  }
  const int k3 = static_cast<int>(std::lround(std::cbrt(double(k2) * k2)));
  const auto dir =
      std::filesystem::temp_directory_path() / ("two_level_bench." + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  const std::string p2 = dir / "poisson2d.mtx", p3 = dir / "poisson3d.mtx";
  if (!aiac::cg::WriteMatrixMarketMatrix(p2, aiac::cg::GridLaplacian(k2, k2), true).ok() ||
      !aiac::cg::WriteMatrixMarketMatrix(p3, aiac::cg::GridLaplacian3d(k3), true).ok()) {
    std::fprintf(stderr, "two_level_bench: cannot write the systems in %s\n", dir.c_str());
    return 1;
  }
  std::printf("CG app in one process, %u tasks, coarse = \"none\" against \"harmonic\"\n", tasks);
  std::printf("%-22s %-5s | %10s %8s | %10s %8s | %9s %7s\n", "system", "mode", "one-level", "s",
              "two-level", "s", "its ratio", "s ratio");
  const std::pair<std::string, std::string> systems[] = {
      {"poisson2d " + std::to_string(k2) + "^2", p2},
      {"poisson3d " + std::to_string(k3) + "^3", p3}};
  for (const auto& [name, path] : systems) {
    for (bool sync : {true, false}) {
      const Outcome one = Run(path, "none", sync, tasks), two = Run(path, "harmonic", sync, tasks);
      std::printf(
          "%-22s %-5s | %10llu %8.2f | %10llu %8.2f | %8.2fx %6.2fx   (residuals %.1e, %.1e)\n",
          name.c_str(), sync ? "sync" : "async", (unsigned long long)one.iterations, one.seconds,
          (unsigned long long)two.iterations, two.seconds,
          double(two.iterations) / double(one.iterations), two.seconds / one.seconds, one.residual,
          two.residual);
    }
  }
  std::filesystem::remove_all(dir);
  return 0;
}
